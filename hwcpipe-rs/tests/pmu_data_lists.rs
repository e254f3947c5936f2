//! Arm's own per-core event lists (`pmu/*.json` and `cpus.json` of ARM-software/data, Apache-2.0, kept in
//! `../shared/data/arm-pmu-data/`), read through `PmuData` as `LIZARD_PMU_DATA` names them, on a simulated
//! big.LITTLE kernel with a Cortex-A55 and a Cortex-A76 PMU: each core is found by its MIDR, an
//! IMPLEMENTATION DEFINED event the A55's list has and the A76's lacks is counted on the little cores only
//! and says why not on the big ones, and every event of each list is named and described.

use std::sync::Arc;

use hwcpipe::cpu::sim::{FakePerf, FakePmu};
use hwcpipe::cpu::{
    CpuConfig, CpuPmus, CpuProfiler, EventUnavailable, NotOnPmu, PartStatus, PmuData, PmuDataError,
};
use hwcpipe::sys::arm_pmu::ArmPmu;

/// The data folder, or `None` after a skip message.
fn data() -> Option<PmuData> {
    let dir = test_data::path("arm-pmu-data")?;
    Some(PmuData::open(&dir).expect("Arm's PMU data"))
}

/// A kernel with a Cortex-A55 (r2p0) and a Cortex-A76 (r4p0) PMU, listing the same common events.
fn big_little() -> Arc<FakePerf> {
    let pmu = |name: &str, perf_type, cpus: &[u32]| ArmPmu {
        name: name.into(),
        perf_type,
        cpus: cpus.to_vec(),
        events: vec![
            ("cpu_cycles".into(), 0x11),
            ("inst_retired".into(), 0x08),
            ("l2d_cache_refill".into(), 0x17),
        ],
        formats: vec![("event".into(), "config:0-15".into())],
        slots: None,
    };
    let kernel = FakePerf::new(2);
    kernel.set_arm_pmus(vec![
        FakePmu {
            pmu: pmu("armv8_cortex_a55", 8, &[0, 1, 2, 3]),
            midr: 0x412f_d050,
            counters: 6,
        },
        FakePmu {
            pmu: pmu("armv8_cortex_a76", 9, &[4, 5, 6, 7]),
            midr: 0x414f_d0b0,
            counters: 6,
        },
    ]);
    Arc::new(kernel)
}

#[test]
fn each_core_gets_arms_list_for_its_midr() {
    let Some(data) = data() else { return };
    let kernel = big_little();
    let pmus = CpuPmus::discover_with(&*kernel, Some(&data)).expect("the PMUs with their lists");
    let cores: Vec<Option<&str>> = pmus.pmus().iter().map(|p| p.core.as_deref()).collect();
    assert_eq!(cores, [Some("Cortex-A55"), Some("Cortex-A76")]);
    assert!(pmus.pmus().iter().all(|p| p.counters == Some(6)));
    for pmu in pmus.pmus() {
        let listed = pmu.events();
        assert!(
            listed.len() > 100,
            "{}: {} events",
            pmu.label(),
            listed.len()
        );
        let inst = listed
            .iter()
            .find(|e| e.code == 0x08)
            .expect("INST_RETIRED");
        assert_eq!(inst.name, "INST_RETIRED");
        assert!(inst.description.is_some());
    }
    // 0xC0 is L3D_CACHE_REFILL_PREFETCH on the Cortex-A55 only.
    let names = ["L3D_CACHE_REFILL_PREFETCH".to_owned()];
    let events = pmus
        .resolve_all(&names)
        .expect("an event of the A55's list");
    assert!(events[0].is_partial());
    let config = CpuConfig::new(&[]).events(events);
    let profiler = CpuProfiler::with_sys(config, kernel.clone()).expect("a profiler");
    let status = &profiler.events()[0];
    assert_eq!(status.parts[0], PartStatus::Counted { part: 0 });
    assert_eq!(
        status.parts[1],
        PartStatus::Unavailable(EventUnavailable::NotOnPmu(NotOnPmu::UnknownName {
            core: "Cortex-A76".into()
        }))
    );
    let opened: Vec<(u32, u64)> = kernel.opened().iter().map(|a| (a.kind, a.config)).collect();
    assert_eq!(opened, [(8, 0xC0)]);
}

#[test]
fn a_core_without_a_list_is_described_by_the_kernel_alone_and_a_broken_list_is_an_error() {
    let Some(data) = data() else { return };
    // QEMU's `max` CPU: MIDR 0x000f0510, in no list.
    let kernel = FakePerf::new(2);
    kernel.set_arm_pmus(vec![FakePmu {
        pmu: ArmPmu {
            name: "armv8_pmuv3".into(),
            perf_type: 8,
            cpus: vec![0],
            events: vec![("cpu_cycles".into(), 0x11)],
            formats: Vec::new(),
            slots: None,
        },
        midr: 0x000f_0510,
        counters: 6,
    }]);
    let pmus = CpuPmus::discover_with(&kernel, Some(&data)).unwrap();
    assert_eq!(pmus.pmus()[0].core, None);
    assert_eq!(pmus.pmus()[0].label(), "armv8_pmuv3");
    // A folder whose cpus.json is not Arm's.
    let scratch = std::env::temp_dir().join(format!("hwcpipe-pmu-data-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join("cpus.json"), "{\"_type\": \"Events\"}").unwrap();
    assert!(matches!(
        PmuData::open(&scratch),
        Err(PmuDataError::Malformed { .. })
    ));
    std::fs::remove_dir_all(&scratch).unwrap();
}
