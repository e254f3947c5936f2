//! Error paths and arithmetic of the CPU profiler, driven through the `PerfSys` seam by the
//! simulated perf kernel `hwcpipe::cpu::sim::FakePerf` (no bytes from outside: the records it returns are
//! built in the kernel's `PERF_FORMAT_GROUP` layout).

use std::sync::Arc;

use rustix::io::Errno;

use hwcpipe::cpu::group_read::GroupReadError;
use hwcpipe::cpu::sim::FakePerf;
use hwcpipe::cpu::{
    CpuConfig, CpuCounter, CpuError, CpuProfiler, CpuTarget, KernelCounting, UnavailableReason,
};
use hwcpipe::sys::perf_event_attr::{flag, PERF_TYPE_HARDWARE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use hwcpipe::{Availability, Counter, Error, GpuCounter, HwcPipe, Value};

const SOFTWARE: [CpuCounter; 7] = CpuCounter::SOFTWARE;
const TASK_CLOCK: u64 = 1;
const PAGE_FAULTS: u64 = 2;

fn profiler(fake: &Arc<FakePerf>, config: CpuConfig) -> Result<CpuProfiler, CpuError> {
    CpuProfiler::with_sys(config, fake.clone())
}

#[test]
fn software_counters_are_one_group_read_once_per_sample() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    assert_eq!(p.available_counters(), SOFTWARE);
    let leaders = fake.events().iter().filter(|e| e.leader.is_none()).count();
    assert_eq!(leaders, 1);
    p.run().unwrap();
    let before = fake.reads();
    fake.advance(1_000, 1_000, |config| config * 10 + 1);
    let s = p.sample().unwrap();
    assert_eq!(fake.reads() - before, 1);
    assert_eq!(s.get(CpuCounter::TaskClock), Some(TASK_CLOCK * 10 + 1));
    assert_eq!(s.get(CpuCounter::PageFaults), Some(PAGE_FAULTS * 10 + 1));
    assert!(!s.is_multiplexed());
}

#[test]
fn only_the_leader_starts_disabled_and_all_inherit() {
    let fake = Arc::new(FakePerf::new(2));
    let _p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    let opened = fake.opened();
    assert!(opened[0].has(flag::DISABLED));
    assert!(opened[1..].iter().all(|a| !a.has(flag::DISABLED)));
    assert!(opened
        .iter()
        .all(|a| a.has(flag::INHERIT) && !a.has(flag::EXCLUDE_KERNEL)));
}

#[test]
fn deltas_add_up_to_totals() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    p.run().unwrap();
    let mut sum = 0;
    for step in 1..=10u64 {
        fake.advance(100, 100, |_| step * 7);
        let r = *p.sample().unwrap().reading(CpuCounter::TaskClock).unwrap();
        assert_eq!(r.delta, step * 7);
        sum += r.delta;
        assert_eq!(r.total, sum);
    }
    // run() starts over.
    p.stop().unwrap();
    p.run().unwrap();
    fake.advance(100, 100, |_| 3);
    assert_eq!(p.sample().unwrap().total(CpuCounter::TaskClock), Some(3));
}

#[test]
fn stopped_groups_do_not_count() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    p.run().unwrap();
    p.stop().unwrap();
    fake.advance(100, 100, |_| 5);
    assert!(matches!(p.sample(), Err(CpuError::NotRunning)));
    p.stop().unwrap();
}

#[test]
fn multiplexed_counts_are_scaled_and_flagged() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    p.run().unwrap();
    fake.advance(1_000, 250, |_| 100);
    let r = *p.sample().unwrap().reading(CpuCounter::TaskClock).unwrap();
    assert_eq!((r.raw_delta, r.delta), (100, 400));
    assert!(r.is_multiplexed() && p.last_sample().is_multiplexed());
    fake.advance(1_000, 0, |_| 0);
    let r = *p.sample().unwrap().reading(CpuCounter::TaskClock).unwrap();
    assert_eq!(r.delta, 0);
    assert!(!r.was_counted());
    let mut pipe = HwcPipe::from_profilers(Some(Ok(p)), None);
    fake.advance(1_000, 500, |_| 1);
    let m = pipe.sample().unwrap();
    assert!(m.is_multiplexed());
    assert_eq!(m.get(CpuCounter::TaskClock), Some(Value::Int(2)));
}

#[test]
fn hardware_events_are_split_into_groups_of_the_configured_size() {
    let fake = Arc::new(FakePerf::new(2));
    let mut config = CpuConfig::new(&[
        CpuCounter::Cycles,
        CpuCounter::Instructions,
        CpuCounter::CacheReferences,
        CpuCounter::TaskClock,
        CpuCounter::CacheMisses,
        CpuCounter::BranchInstructions,
    ]);
    config.hardware_group_size = 2;
    let mut p = profiler(&fake, config).unwrap();
    let leaders = fake.events().iter().filter(|e| e.leader.is_none()).count();
    assert_eq!(leaders, 4, "3 hardware groups of 2 and 1 software group");
    p.run().unwrap();
    let before = fake.reads();
    fake.advance(10, 10, |c| c + 1);
    let s = p.sample().unwrap();
    assert_eq!(fake.reads() - before, 4);
    assert_eq!(s.get(CpuCounter::CacheMisses), Some(4));
    let order: Vec<_> = s.iter().map(|r| r.counter).collect();
    assert_eq!(
        order[3],
        CpuCounter::TaskClock,
        "reported in selection order"
    );
}

#[test]
fn unsupported_hardware_is_reported_with_the_errno_not_listed() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| {
        for n in 0..6 {
            f.open_errno
                .insert((PERF_TYPE_HARDWARE, n), Errno::NOENT.raw_os_error());
        }
        // The Arm raw events, which are opened on aarch64 only.
        for code in [
            0x04, 0x08, 0x16, 0x2b, 0x60, 0x61, 0x66, 0x67, 0x74, 0x75, 0x77,
        ] {
            f.open_errno
                .insert((PERF_TYPE_RAW, code), Errno::NOENT.raw_os_error());
        }
    });
    let p = profiler(&fake, CpuConfig::all()).unwrap();
    assert_eq!(p.available_counters(), SOFTWARE);
    for c in CpuCounter::HWCPIPE_DEFAULT {
        assert_eq!(
            p.availability(c),
            Err(UnavailableReason::Unsupported {
                errno: Errno::NOENT.raw_os_error()
            })
        );
    }
    if !cfg!(target_arch = "aarch64") {
        assert_eq!(
            p.availability(CpuCounter::BusReads),
            Err(UnavailableReason::NotOnThisArchitecture)
        );
    }
    let p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    assert_eq!(
        p.availability(CpuCounter::PageFaults),
        Err(UnavailableReason::NotSelected)
    );
}

#[test]
fn einval_is_a_rejection() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| {
        f.open_errno.insert(
            (PERF_TYPE_SOFTWARE, PAGE_FAULTS),
            Errno::INVAL.raw_os_error(),
        );
    });
    let p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    assert_eq!(
        p.availability(CpuCounter::PageFaults),
        Err(UnavailableReason::Rejected {
            errno: Errno::INVAL.raw_os_error()
        })
    );
    assert_eq!(p.available_counters().len(), 6);
}

#[test]
fn nothing_opens_lists_every_reason() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| {
        for n in 0..6 {
            f.open_errno
                .insert((PERF_TYPE_HARDWARE, n), Errno::OPNOTSUPP.raw_os_error());
        }
    });
    let err = profiler(&fake, CpuConfig::new(&CpuCounter::HWCPIPE_DEFAULT)).unwrap_err();
    match &err {
        CpuError::NoCounterAvailable { unavailable, .. } => {
            assert_eq!(unavailable.len(), 6);
            assert_eq!(unavailable[0].0, CpuCounter::Cycles);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("Cycles ("), "{err}");
    let err = profiler(&fake, CpuConfig::new(&[])).unwrap_err();
    assert!(matches!(err, CpuError::NothingSelected));
}

#[test]
fn eacces_falls_back_to_user_space_counting() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| f.deny_kernel = true);
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    assert!(p.kernel_excluded());
    assert_eq!(p.available_counters(), SOFTWARE);
    assert!(fake
        .opened()
        .iter()
        .all(|a| a.has(flag::EXCLUDE_KERNEL) && a.has(flag::EXCLUDE_HV)));
    p.run().unwrap();
    fake.advance(10, 10, |_| 1);
    assert_eq!(p.sample().unwrap().get(CpuCounter::CpuClock), Some(1));
}

#[test]
fn include_mode_does_not_fall_back() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| f.deny_kernel = true);
    let err = profiler(
        &fake,
        CpuConfig::new(&SOFTWARE).kernel(KernelCounting::Include),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::PermissionDenied {
                paranoid: Some(2),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn exclude_mode_sets_the_flags_from_the_start() {
    let fake = Arc::new(FakePerf::new(1));
    let p = profiler(
        &fake,
        CpuConfig::new(&SOFTWARE).kernel(KernelCounting::Exclude),
    )
    .unwrap();
    assert!(p.kernel_excluded());
    assert!(fake.opened().iter().all(|a| a.has(flag::EXCLUDE_KERNEL)));
}

#[test]
fn perf_harden_explains_itself() {
    let fake = Arc::new(FakePerf::new(3));
    fake.faults(|f| f.deny_all = true);
    let err = profiler(&fake, CpuConfig::all()).unwrap_err();
    let CpuError::PermissionDenied { paranoid, source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*paranoid, Some(3));
    assert_eq!(source.raw_os_error(), Some(Errno::ACCESS.raw_os_error()));
    let text = err.to_string();
    assert!(text.contains("security.perf_harden") && text.contains("perf_event_paranoid = 3"));
    let pipe = HwcPipe::from_profilers(Some(Err(err)), None);
    assert!(pipe.cpu_profiler().is_none());
    let why = pipe.availability(CpuCounter::TaskClock);
    assert!(!why.is_available());
    assert!(why.to_string().contains("perf_harden"), "{why}");
}

#[test]
fn a_cpu_target_opens_cpu_wide_events_without_inherit() {
    let fake = Arc::new(FakePerf::new(0));
    let config = CpuConfig::new(&SOFTWARE).target(CpuTarget::Cpu(1));
    let p = profiler(&fake, config).unwrap();
    assert_eq!(p.target_pid(), -1);
    let events = fake.events();
    assert_eq!(events.len(), SOFTWARE.len());
    assert!(
        events.iter().all(|e| e.pid == -1 && e.cpu == 1),
        "{events:?}"
    );
    assert!(events.iter().all(|e| !e.attr.has(flag::INHERIT)));
    // A task's events still inherit and follow any CPU.
    let fake = Arc::new(FakePerf::new(0));
    profiler(&fake, CpuConfig::new(&SOFTWARE).target(CpuTarget::Pid(42))).unwrap();
    assert!(fake
        .events()
        .iter()
        .all(|e| e.pid == 42 && e.cpu == -1 && e.attr.has(flag::INHERIT)));
}

#[test]
fn a_refused_cpu_target_names_the_settings_that_allow_it() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| f.deny_all = true);
    let err = profiler(&fake, CpuConfig::all().target(CpuTarget::Cpu(0))).unwrap_err();
    let CpuError::CpuWideDenied {
        cpu: 0,
        paranoid: Some(2),
        source,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(source.raw_os_error(), Some(Errno::ACCESS.raw_os_error()));
    let text = err.to_string();
    assert!(
        text.contains("perf_event_paranoid=0") && text.contains("CAP_PERFMON"),
        "{text}"
    );
    // Hardware events this kernel lacks (a VM) do not hide the refusal of the software ones.
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| {
        f.deny_all = true;
        for n in 0..6 {
            f.open_errno
                .insert((PERF_TYPE_HARDWARE, n), Errno::NOENT.raw_os_error());
        }
    });
    let mixed =
        CpuConfig::new(&[CpuCounter::Cycles, CpuCounter::TaskClock]).target(CpuTarget::Cpu(0));
    let err = profiler(&fake, mixed).unwrap_err();
    assert!(matches!(err, CpuError::CpuWideDenied { .. }), "{err:?}");
    let far = profiler(&fake, CpuConfig::all().target(CpuTarget::Cpu(u32::MAX))).unwrap_err();
    assert!(matches!(far, CpuError::NoSuchCpu(u32::MAX)), "{far:?}");
}

#[test]
fn short_read_is_a_typed_error() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    p.run().unwrap();
    fake.faults(|f| f.short_read = Some(20));
    let err = p.sample().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::ShortRead {
                expected: 136,
                got: 20
            }
        ),
        "{err:?}"
    );
}

#[test]
fn short_read_at_open_fails_the_profiler() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| f.short_read = Some(8));
    let err = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap_err();
    assert!(matches!(err, CpuError::ShortRead { got: 8, .. }), "{err:?}");
    assert_eq!(
        fake.events().len(),
        0,
        "every descriptor closed on the error path"
    );
}

#[test]
fn read_errno_is_kept() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    p.run().unwrap();
    fake.faults(|f| f.read_errno = Some(Errno::IO.raw_os_error()));
    let err = p.sample().unwrap_err();
    let CpuError::Read(source) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(source.raw_os_error(), Some(Errno::IO.raw_os_error()));
}

#[test]
fn enable_failure_names_the_ioctl() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_ENABLE", Errno::INVAL.raw_os_error());
    });
    let err = p.run().unwrap_err();
    assert!(
        matches!(&err, CpuError::Ioctl { request: "PERF_EVENT_IOC_ENABLE", source } if source.raw_os_error() == Some(Errno::INVAL.raw_os_error())),
        "{err:?}"
    );
    assert!(matches!(p.sample(), Err(CpuError::NotRunning)));
}

#[test]
fn missing_event_id_makes_the_counter_unavailable() {
    let fake = Arc::new(FakePerf::new(2));
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_ID", Errno::NOTTY.raw_os_error());
    });
    let err = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap_err();
    let CpuError::NoCounterAvailable { unavailable, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        unavailable[0].1,
        UnavailableReason::NoEventId {
            errno: Errno::NOTTY.raw_os_error()
        }
    );
    assert_eq!(fake.closed(), 1);
}

#[test]
fn foreign_event_id_in_the_record_is_detected() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    p.run().unwrap();
    fake.faults(|f| f.wrong_id = Some(9999));
    let err = p.sample().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::UnexpectedEventId {
                position: 1,
                found: 9999,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_count_going_backwards_is_an_error_and_changes_nothing() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(
        &fake,
        CpuConfig::new(&[CpuCounter::TaskClock, CpuCounter::PageFaults]),
    )
    .unwrap();
    p.run().unwrap();
    fake.advance(10, 10, |_| 50);
    p.sample().unwrap();
    fake.set_count(PAGE_FAULTS, 10);
    let err = p.sample().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::WentBackwards {
                what: "PageFaults",
                previous: 50,
                current: 10
            }
        ),
        "{err:?}"
    );
    fake.set_count(PAGE_FAULTS, 60);
    fake.advance(10, 10, |_| 0);
    let s = p.sample().unwrap();
    assert_eq!(s.get(CpuCounter::PageFaults), Some(10));
    assert_eq!(s.get(CpuCounter::TaskClock), Some(0));
}

#[test]
fn close_reports_the_close_error() {
    let fake = Arc::new(FakePerf::new(2));
    let p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    fake.faults(|f| f.close_errno = Some(Errno::IO.raw_os_error()));
    let err = p.close().unwrap_err();
    assert!(matches!(err, CpuError::Close(_)), "{err:?}");
    assert_eq!(fake.closed(), 7);
}

#[test]
fn drop_closes_every_descriptor_through_the_seam() {
    let fake = Arc::new(FakePerf::new(2));
    drop(profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap());
    assert_eq!(fake.closed(), 7);
    assert!(fake.events().is_empty());
}

#[test]
fn enabling_an_unavailable_counter_is_refused_and_changes_nothing() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    let err = p
        .set_enabled(&[CpuCounter::TaskClock, CpuCounter::Cycles])
        .unwrap_err();
    assert!(matches!(
        err,
        CpuError::Unavailable {
            counter: CpuCounter::Cycles,
            reason: UnavailableReason::NotSelected
        }
    ));
    assert_eq!(p.enabled_counters(), [CpuCounter::TaskClock]);
    p.set_enabled(&[]).unwrap();
    p.run().unwrap();
    fake.advance(1, 1, |_| 1);
    assert_eq!(p.sample().unwrap().iter().count(), 0);
}

#[test]
fn a_record_with_the_wrong_member_count_is_malformed() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    p.run().unwrap();
    fake.faults(|f| f.nr_override = Some(3));
    let err = p.sample().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::Malformed(GroupReadError::MemberCount {
                expected: 7,
                found: 3
            })
        ),
        "{err:?}"
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn time_going_backwards_is_an_error() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    p.run().unwrap();
    fake.advance(1_000, 1_000, |_| 1);
    p.sample().unwrap();
    fake.faults(|f| f.time_enabled_override = Some(5));
    let err = p.sample().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::WentBackwards {
                what: "time_enabled",
                previous: 1000,
                current: 5
            }
        ),
        "{err:?}"
    );
}

#[test]
fn disable_and_reset_failures_name_their_ioctl() {
    let fake = Arc::new(FakePerf::new(2));
    let mut p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    p.run().unwrap();
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_DISABLE", Errno::BADF.raw_os_error());
    });
    let err = p.stop().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::Ioctl {
                request: "PERF_EVENT_IOC_DISABLE",
                ..
            }
        ),
        "{err:?}"
    );
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_RESET", Errno::BADF.raw_os_error());
    });
    let err = p.run().unwrap_err();
    assert!(
        matches!(
            err,
            CpuError::Ioctl {
                request: "PERF_EVENT_IOC_RESET",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn hwcpipe_without_profilers_refuses_to_enable_counters() {
    let mut pipe = HwcPipe::from_profilers(None, None);
    assert!(matches!(
        pipe.set_enabled_cpu_counters(&[CpuCounter::TaskClock]),
        Err(Error::NoCpuProfiler)
    ));
    assert!(matches!(
        pipe.set_enabled_gpu_counters(&[GpuCounter::GpuCycles]),
        Err(Error::NoGpuProfiler)
    ));
    pipe.set_enabled_cpu_counters(&[]).unwrap();
    pipe.set_enabled_gpu_counters(&[]).unwrap();
    pipe.run().unwrap();
    let m = pipe.sample().unwrap();
    assert!(m.cpu().is_none() && m.gpu().is_none());
    assert_eq!(m.iter().count(), 0);
    pipe.stop().unwrap();
    assert!(pipe.enabled_counters().is_empty());
    assert!(pipe
        .counters()
        .all(|(_, _, a)| matches!(a, Availability::SideNotSelected)));
}

#[test]
fn hwcpipe_reports_cpu_errors_from_sampling() {
    let fake = Arc::new(FakePerf::new(2));
    let p = profiler(&fake, CpuConfig::new(&SOFTWARE)).unwrap();
    let mut pipe = HwcPipe::from_profilers(Some(Ok(p)), None);
    assert!(matches!(
        pipe.sample(),
        Err(Error::Cpu(CpuError::NotRunning))
    ));
    pipe.run().unwrap();
    pipe.set_enabled_cpu_counters(&[CpuCounter::PageFaults])
        .unwrap();
    assert_eq!(
        pipe.enabled_counters(),
        [Counter::Cpu(CpuCounter::PageFaults)]
    );
    fake.advance(10, 10, |c| c);
    let m = pipe.sample().unwrap();
    assert_eq!(m.get(CpuCounter::PageFaults), Some(Value::Int(PAGE_FAULTS)));
    assert_eq!(m.get(CpuCounter::TaskClock), None);
    let err = pipe
        .set_enabled_cpu_counters(&[CpuCounter::Cycles])
        .unwrap_err();
    assert!(err.to_string().contains("Cycles"), "{err}");
}

proptest::proptest! {
    /// Whatever the kernel reports, as long as counts and times only grow: each delta is the raw
    /// change scaled by enabled/running time, and the totals are the sums of the deltas.
    #[test]
    fn deltas_are_scaled_changes_and_sum_to_totals(
        steps in proptest::collection::vec((0u64..1 << 40, 1u64..1 << 30, 0u64..=100), 1..20)
    ) {
        let fake = Arc::new(FakePerf::new(2));
        let mut p = profiler(&fake, CpuConfig::new(&[CpuCounter::TaskClock, CpuCounter::PageFaults])).unwrap();
        p.run().unwrap();
        let mut totals = [0u64; 2];
        for (raw, enabled, percent) in steps {
            let running = enabled * percent / 100;
            fake.advance(enabled, running, |config| if config == TASK_CLOCK { raw } else { raw / 3 });
            let s = p.sample().unwrap();
            for (i, (c, raw)) in [(CpuCounter::TaskClock, raw), (CpuCounter::PageFaults, raw / 3)].into_iter().enumerate() {
                let r = *s.reading(c).unwrap();
                let want = hwcpipe::cpu::scaling::Interval { raw, enabled, running }.scaled();
                proptest::prop_assert_eq!(r.raw_delta, raw);
                proptest::prop_assert_eq!(r.delta, want);
                totals[i] = totals[i].saturating_add(want);
                proptest::prop_assert_eq!(r.total, totals[i]);
                proptest::prop_assert_eq!(r.is_multiplexed(), running < enabled);
            }
        }
    }
}

#[test]
fn common_events_the_pmu_does_not_list_are_never_opened() {
    let fake = Arc::new(FakePerf::new(1));
    // A PMU listing CPU_CYCLES and INST_RETIRED only, like QEMU's.
    fake.set_arm_events(
        pmu_regs::CommonEventSet::default()
            .with_event(0x11)
            .with_event(0x08),
    );
    let counters = [
        CpuCounter::L1Accesses,
        CpuCounter::InstrRetired,
        CpuCounter::BusReads,
        CpuCounter::TaskClock,
    ];
    let p = profiler(&fake, CpuConfig::new(&counters)).unwrap();
    if !cfg!(target_arch = "aarch64") {
        for c in &counters[..3] {
            let c = *c;
            assert_eq!(
                p.availability(c),
                Err(UnavailableReason::NotOnThisArchitecture)
            );
        }
        return;
    }
    assert_eq!(
        p.availability(CpuCounter::L1Accesses),
        Err(UnavailableReason::NotImplementedByCpu { event: 0x04 })
    );
    assert_eq!(p.availability(CpuCounter::InstrRetired), Ok(()));
    // BUS_ACCESS_RD is not a common event: no register says whether it exists, so it is opened.
    assert_eq!(p.availability(CpuCounter::BusReads), Ok(()));
    let raw: Vec<u64> = fake
        .opened()
        .iter()
        .filter(|a| a.kind == PERF_TYPE_RAW)
        .map(|a| a.config)
        .collect();
    assert_eq!(raw, [0x08, 0x60], "L1D_CACHE never reached the kernel");
}
