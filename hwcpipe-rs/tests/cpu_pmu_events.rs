//! Arm PMU events by name on a big.LITTLE system, through the simulated perf kernel (`FakePerf`): four
//! Cortex-A55 and four Cortex-A76, two PMUs with their own perf types and event lists, as Linux's Arm PMU
//! driver registers them. Each event is opened on every PMU that has it with that PMU's type (never
//! `PERF_TYPE_RAW`), counted per core type and summed; the time a task spends on the other core type is
//! not mistaken for multiplexing; more events than counters are multiplexed and scaled as perf scales,
//! with the share of time each was counted; and every refusal is unavailable with its reason.
//!
//! The real kernel and PMU judge the same code in the emulated Arm system (`tests/cpu_arm_pmu.rs`).

use std::sync::Arc;

use hwcpipe::cpu::sim::{FakePerf, FakePmu};
use hwcpipe::cpu::{
    Checked, CoreEvent, CpuConfig, CpuError, CpuPmus, CpuProfiler, CpuTarget, EventUnavailable,
    NotOnPmu, PartStatus, PmuEvent, UnavailableReason,
};
use hwcpipe::sys::arm_pmu::ArmPmu;
use hwcpipe::sys::perf_event_attr::{flag, PERF_TYPE_RAW};
use rustix::io::Errno;

const LITTLE: u32 = 8;
const BIG: u32 = 9;
const INST_RETIRED: u64 = 0x08;
const CPU_CYCLES: u64 = 0x11;
const L2D_CACHE_REFILL: u64 = 0x17;

/// The kernel's description of one PMU.
fn arm_pmu(name: &str, perf_type: u32, cpus: &[u32], events: &[(&str, u16)]) -> ArmPmu {
    let mut events: Vec<(String, u16)> = events.iter().map(|&(n, c)| (n.into(), c)).collect();
    events.sort();
    ArmPmu {
        name: name.into(),
        perf_type,
        cpus: cpus.to_vec(),
        events,
        formats: vec![("event".into(), "config:0-15".into())],
        slots: None,
    }
}

/// The little cores list STALL_BACKEND, the big ones STALL_FRONTEND too (PMCEID).
fn kernel(little_counters: usize, big_counters: usize) -> Arc<FakePerf> {
    let common = [
        ("cpu_cycles", 0x11),
        ("inst_retired", 0x08),
        ("l2d_cache_refill", 0x17),
        ("stall_backend", 0x24),
        ("br_mis_pred_retired", 0x22),
    ];
    let mut big_events = common.to_vec();
    big_events.push(("stall_frontend", 0x23));
    let kernel = FakePerf::new(2);
    kernel.set_arm_pmus(vec![
        FakePmu {
            pmu: arm_pmu("armv8_cortex_a55", LITTLE, &[0, 1, 2, 3], &common),
            midr: 0x412f_d050,
            counters: little_counters,
        },
        FakePmu {
            pmu: arm_pmu("armv8_cortex_a76", BIG, &[4, 5, 6, 7], &big_events),
            midr: 0x414f_d0b0,
            counters: big_counters,
        },
    ]);
    Arc::new(kernel)
}

/// The kernel's PMUs, with Arm's lists: an IMPLEMENTATION DEFINED event only the Cortex-A55 has (0xC0).
fn pmus(kernel: &FakePerf, counters: u8) -> CpuPmus {
    let described = CpuPmus::from_kernel(kernel).expect("the simulated kernel's PMUs");
    let mut pmus = described.pmus().to_vec();
    for pmu in &mut pmus {
        let little = pmu.perf_type == LITTLE;
        pmu.core = Some(if little { "Cortex-A55" } else { "Cortex-A76" }.into());
        pmu.counters = Some(counters);
        let mut list: Vec<CoreEvent> = pmu
            .kernel_events
            .iter()
            .map(|(name, code)| CoreEvent {
                code: *code,
                name: Some(name.to_ascii_uppercase()),
                description: format!("{name} of the core"),
            })
            .collect();
        if little {
            list.push(CoreEvent {
                code: 0xC0,
                name: Some("L3D_CACHE_REFILL_PREFETCH".into()),
                description: "Level 3 cache refill due to prefetch".into(),
            });
        }
        pmu.core_events = Some(list);
    }
    CpuPmus::new(pmus)
}

fn events(pmus: &CpuPmus, names: &[&str]) -> Vec<PmuEvent> {
    let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    pmus.resolve_all(&names).expect("known events")
}

fn profiler(kernel: &Arc<FakePerf>, events: Vec<PmuEvent>, target: CpuTarget) -> CpuProfiler {
    let config = CpuConfig::new(&[]).events(events).target(target);
    CpuProfiler::with_sys(config, kernel.clone()).expect("a profiler")
}

/// A rate per event number: instructions 2 per ns, cycles 3 per ns, refills 1 per 10 ns.
fn rate(config: u64) -> u64 {
    match config {
        INST_RETIRED => 2,
        CPU_CYCLES => 3,
        _ => 1,
    }
}

#[test]
fn an_event_is_opened_on_each_core_types_pmu_with_its_type_never_raw() {
    let kernel = kernel(6, 6);
    let pmus = pmus(&kernel, 6);
    let mut p = profiler(
        &kernel,
        events(&pmus, &["INST_RETIRED"]),
        CpuTarget::CallingThread,
    );
    let opened = kernel.opened();
    let types: Vec<(u32, u64)> = opened.iter().map(|a| (a.kind, a.config)).collect();
    assert_eq!(types, [(LITTLE, INST_RETIRED), (BIG, INST_RETIRED)]);
    assert!(opened.iter().all(|a| a.kind != PERF_TYPE_RAW));
    // A task on several core types: each PMU's first group is pinned, the reference of its time there.
    assert!(opened.iter().all(|a| a.has(flag::PINNED)));
    let status = &p.events()[0];
    assert!(status.is_counted());
    assert_eq!(
        status.parts,
        [
            PartStatus::Counted { part: 0 },
            PartStatus::Counted { part: 1 }
        ]
    );

    p.run().unwrap();
    // 1 µs on a little core, 3 µs on a big one.
    kernel.run_on(LITTLE, 1_000, |_, config| rate(config) * 1_000);
    kernel.run_on(BIG, 3_000, |_, config| rate(config) * 3_000);
    let sample = p.sample().unwrap();
    let parts: Vec<_> = sample.event_parts(0).copied().collect();
    assert_eq!(parts.len(), 2);
    let (little, big) = (parts[0], parts[1]);
    assert_eq!((little.pmu, little.delta), (0, 2_000));
    assert_eq!((big.pmu, big.delta), (1, 6_000));
    // The time on the other core type is neither counted nor multiplexing: 1 µs of 4 enabled, all of
    // it counted.
    assert_eq!(
        (little.time_enabled, little.time_running, little.time_on_pmu),
        (4_000, 1_000, 1_000)
    );
    assert!(!little.is_multiplexed() && !big.is_multiplexed());
    assert_eq!(little.counted_share(), Some(1.0));
    let sum = sample.event(0).unwrap();
    assert_eq!((sum.delta, sum.total, sum.pmus), (8_000, 8_000, 2));
    assert!(!sum.is_multiplexed());
    assert!(!sample.is_multiplexed());

    // The next sample is the change since this one; totals keep adding.
    kernel.run_on(BIG, 1_000, |_, config| rate(config) * 1_000);
    let sample = p.sample().unwrap();
    let sum = sample.event(0).unwrap();
    assert_eq!((sum.delta, sum.total, sum.pmus), (2_000, 10_000, 2));
    let little = sample.event_parts(0).find(|r| r.pmu == 0).unwrap();
    assert_eq!(
        (little.delta, little.counted_share()),
        (0, None),
        "not on a little core"
    );
}

#[test]
fn an_event_of_one_core_type_is_counted_there_and_says_why_not_on_the_other() {
    let kernel = kernel(6, 6);
    let pmus = pmus(&kernel, 6);
    let resolved = events(&pmus, &["L3D_CACHE_REFILL_PREFETCH", "stall_frontend"]);
    assert!(resolved.iter().all(PmuEvent::is_partial));
    let mut p = profiler(&kernel, resolved, CpuTarget::CallingThread);
    let prefetch = &p.events()[0];
    assert_eq!(prefetch.parts[0], PartStatus::Counted { part: 0 });
    assert_eq!(
        prefetch.parts[1],
        PartStatus::Unavailable(EventUnavailable::NotOnPmu(NotOnPmu::UnknownName {
            core: "Cortex-A76".into()
        }))
    );
    let not_counted: Vec<(&str, String)> = prefetch
        .not_counted()
        .map(|(pmu, why)| (pmu, why.to_string()))
        .collect();
    assert_eq!(
        not_counted,
        [("armv8_cortex_a76", "not an event of Cortex-A76".to_owned())]
    );
    let frontend = &p.events()[1];
    assert_eq!(
        frontend.parts[0],
        PartStatus::Unavailable(EventUnavailable::NotOnPmu(NotOnPmu::NotImplemented {
            core: "Cortex-A55".into(),
            code: 0x23
        }))
    );
    assert_eq!(frontend.parts[1], PartStatus::Counted { part: 1 });
    let types: Vec<(u32, u64)> = kernel.opened().iter().map(|a| (a.kind, a.config)).collect();
    assert_eq!(
        types,
        [(LITTLE, 0xC0), (BIG, 0x23)],
        "each only where it is"
    );

    p.run().unwrap();
    kernel.run_on(LITTLE, 1_000, |_, _| 50);
    kernel.run_on(BIG, 1_000, |_, _| 70);
    let sample = p.sample().unwrap();
    assert_eq!(
        (
            sample.event(0).unwrap().delta,
            sample.event(0).unwrap().pmus
        ),
        (50, 1)
    );
    assert_eq!(sample.event(1).unwrap().delta, 70);
}

#[test]
fn more_events_than_counters_share_them_and_are_scaled_against_the_time_on_the_core_type() {
    // Three counters on each core type, four events: the pinned group holds one, the other three share
    // the two counters it leaves, in groups of two at most.
    let kernel = kernel(3, 3);
    let pmus = pmus(&kernel, 3);
    let resolved = events(
        &pmus,
        &[
            "CPU_CYCLES",
            "INST_RETIRED",
            "L2D_CACHE_REFILL",
            "BR_MIS_PRED_RETIRED",
        ],
    );
    let mut p = profiler(&kernel, resolved, CpuTarget::CallingThread);
    let little_groups: Vec<bool> = kernel
        .opened()
        .iter()
        .filter(|a| a.kind == LITTLE && a.has(flag::DISABLED))
        .map(|a| a.has(flag::PINNED))
        .collect();
    assert_eq!(
        little_groups,
        [true, false, false],
        "a pinned leader, then groups that fit beside it"
    );
    p.run().unwrap();
    kernel.run_on(LITTLE, 3_000, |_, config| rate(config) * 3_000);
    kernel.run_on(BIG, 9_000, |_, config| rate(config) * 9_000);
    let sample = p.sample().unwrap();
    let little = |event: usize| *sample.event_parts(event).find(|r| r.pmu == 0).unwrap();
    // CPU_CYCLES, pinned: all its time on the little cores counted.
    assert_eq!(little(0).delta, 9_000);
    assert!(!little(0).is_multiplexed());
    // INST_RETIRED: on a counter two thirds of the 3 µs on the little cores; 4000 counted, scaled by
    // 3000 / 2000 to the 6000 it would have counted, as perf scales.
    let inst = little(1);
    assert_eq!((inst.time_running, inst.time_on_pmu), (2_000, 3_000));
    assert_eq!((inst.raw_delta, inst.delta), (4_000, 6_000));
    assert!(inst.is_multiplexed());
    let share = inst.counted_share().unwrap();
    assert!((share - 2.0 / 3.0).abs() < 1e-9, "{share}");
    // Summed over both core types, with the share of time counted over both.
    let sum = sample.event(1).unwrap();
    assert_eq!(sum.delta, 6_000 + 18_000);
    assert!(sum.is_multiplexed() && sample.is_multiplexed());
    assert!((sum.counted_share().unwrap() - 2.0 / 3.0).abs() < 1e-9);
}

#[test]
fn one_core_type_multiplexes_as_perf_does_against_the_enabled_time() {
    // A single PMU: no pinned group; eight events in groups of six, each on the PMU three quarters of
    // the time, scaled by enabled / running.
    let kernel = FakePerf::new(2);
    kernel.set_arm_pmus(vec![FakePmu {
        pmu: arm_pmu(
            "armv8_pmuv3",
            LITTLE,
            &[0],
            &[
                ("cpu_cycles", 0x11),
                ("inst_retired", 0x08),
                ("l1d_cache", 0x04),
                ("l1d_cache_refill", 0x03),
                ("l2d_cache", 0x16),
                ("l2d_cache_refill", 0x17),
                ("br_retired", 0x21),
                ("br_mis_pred_retired", 0x22),
            ],
        ),
        midr: 0x410f_d083,
        counters: 6,
    }]);
    let kernel = Arc::new(kernel);
    let pmus = CpuPmus::from_kernel(&*kernel).unwrap();
    let names = [
        "cpu_cycles",
        "inst_retired",
        "l1d_cache",
        "l1d_cache_refill",
        "l2d_cache",
        "l2d_cache_refill",
        "br_retired",
        "br_mis_pred_retired",
    ];
    let mut p = profiler(&kernel, events(&pmus, &names), CpuTarget::CallingThread);
    assert!(kernel.opened().iter().all(|a| !a.has(flag::PINNED)));
    p.run().unwrap();
    kernel.run_on(LITTLE, 8_000, |_, _| 8_000);
    let sample = p.sample().unwrap();
    for reading in sample.events() {
        assert_eq!(reading.raw_delta, 6_000, "event {}", reading.event);
        assert_eq!(reading.delta, 8_000, "event {}", reading.event);
        assert_eq!(reading.counted_share(), Some(0.75));
    }
    let part = sample.event_parts(0).next().unwrap();
    assert_eq!(part.time_on_pmu, part.time_enabled, "perf's reference");
}

#[test]
fn counting_one_cpu_opens_the_event_on_that_cpus_pmu_only() {
    let kernel = kernel(6, 6);
    let pmus = pmus(&kernel, 6);
    let resolved = events(&pmus, &["INST_RETIRED"]);
    let p = profiler(&kernel, resolved.clone(), CpuTarget::Cpu(5));
    assert_eq!(
        p.events()[0].parts,
        [PartStatus::OtherCpus, PartStatus::Counted { part: 0 }]
    );
    let opened = kernel.opened();
    assert_eq!(opened.len(), 1);
    assert_eq!((opened[0].kind, opened[0].config), (BIG, INST_RETIRED));
    assert!(!opened[0].has(flag::PINNED), "one CPU: no other core type");
    // An event only the other core type has is not counted on this CPU, and says so.
    let prefetch = events(&pmus, &["L3D_CACHE_REFILL_PREFETCH"]);
    let config = CpuConfig::new(&[])
        .events(prefetch)
        .target(CpuTarget::Cpu(5));
    match CpuProfiler::with_sys(config, kernel.clone()) {
        Err(CpuError::NoCounterAvailable { events, .. }) => {
            assert_eq!(events.len(), 1);
            assert_eq!(events[0].0, "L3D_CACHE_REFILL_PREFETCH");
            assert!(matches!(
                events[0].1,
                EventUnavailable::NotOnPmu(NotOnPmu::UnknownName { .. })
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_refusal_is_unavailable_with_its_reason() {
    let kernel = kernel(6, 6);
    let pmus = pmus(&kernel, 6);
    // The kernel refuses L2D_CACHE_REFILL on the big cores (as a driver without the event would).
    kernel.faults(|f| {
        f.open_errno
            .insert((BIG, L2D_CACHE_REFILL), Errno::NOENT.raw_os_error());
    });
    // 0xC1 is in neither core's list: unavailable on both before anything is opened.
    let resolved = events(&pmus, &["L2D_CACHE_REFILL", "0xc1"]);
    let p = profiler(&kernel, resolved, CpuTarget::CallingThread);
    let refill = &p.events()[0];
    assert_eq!(refill.parts[0], PartStatus::Counted { part: 0 });
    assert_eq!(
        refill.parts[1],
        PartStatus::Unavailable(EventUnavailable::Refused {
            pmu: "armv8_cortex_a76".into(),
            reason: UnavailableReason::Unsupported {
                errno: Errno::NOENT.raw_os_error()
            }
        })
    );
    let unlisted = &p.events()[1];
    assert!(!unlisted.is_counted());
    assert_eq!(
        unlisted.unavailable(),
        Some(EventUnavailable::NotOnPmu(NotOnPmu::NotInEventList {
            core: "Cortex-A55".into(),
            code: 0xC1
        }))
    );
    assert!(kernel.opened().iter().all(|a| a.config != 0xC1));

    // Without any Arm PMU (another architecture), an architected event resolves, and is unavailable.
    let none = Arc::new(FakePerf::new(2));
    let resolved = events(&CpuPmus::default(), &["STALL_BACKEND"]);
    match CpuProfiler::with_sys(CpuConfig::new(&[]).events(resolved), none) {
        Err(CpuError::NoCounterAvailable {
            events,
            unavailable,
        }) => {
            assert!(unavailable.is_empty());
            assert_eq!(
                events,
                [("STALL_BACKEND".to_owned(), EventUnavailable::NoArmPmu)]
            );
        }
        other => panic!("{other:?}"),
    }

    // A kernel that refuses everything: the permission error, with the paranoid level.
    let denied = self::kernel(6, 6);
    denied.faults(|f| f.deny_all = true);
    let resolved = events(&pmus, &["INST_RETIRED"]);
    match CpuProfiler::with_sys(CpuConfig::new(&[]).events(resolved), denied) {
        Err(CpuError::PermissionDenied { paranoid, .. }) => assert_eq!(paranoid, Some(2)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_pinned_group_the_kernel_cannot_keep_on_its_pmu_is_a_typed_error() {
    // The big cores' counters are all taken (none left for the pinned group): its read gives
    // end-of-file, the kernel's error state.
    let kernel = kernel(6, 0);
    let pmus = pmus(&kernel, 6);
    let mut p = profiler(
        &kernel,
        events(&pmus, &["INST_RETIRED"]),
        CpuTarget::CallingThread,
    );
    p.run().unwrap();
    kernel.run_on(BIG, 1_000, |_, _| 10);
    match p.sample() {
        Err(CpuError::PinnedGroupOff { pmu: 1 }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn counters_and_events_are_read_together() {
    use hwcpipe::CpuCounter;
    let kernel = kernel(6, 6);
    let pmus = pmus(&kernel, 6);
    let config = CpuConfig::new(&[CpuCounter::TaskClock]).events(events(&pmus, &["CPU_CYCLES"]));
    let mut p = CpuProfiler::with_sys(config, kernel.clone()).unwrap();
    p.run().unwrap();
    kernel.run_on(LITTLE, 1_000, |type_, config| {
        if type_ == LITTLE && config == CPU_CYCLES {
            3_000
        } else {
            1_000
        }
    });
    let sample = p.sample().unwrap();
    assert_eq!(sample.get(CpuCounter::TaskClock), Some(1_000));
    assert_eq!(sample.event(0).map(|e| e.delta), Some(3_000));
    assert_eq!(
        pmus.pmus()
            .iter()
            .map(|p| p.check(0x11))
            .collect::<Vec<_>>(),
        [Ok(Checked::Pmceid), Ok(Checked::Pmceid)]
    );
}
