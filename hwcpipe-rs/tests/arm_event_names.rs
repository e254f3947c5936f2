//! HWCPipe's Arm counters against Arm's own per-core event lists (`pmu/*.json` of ARM-software/data,
//! Apache-2.0, kept in `../shared/data/arm-pmu-data/`): the event number `pmu-regs` gives each counter
//! must carry the same mnemonic in every Armv8-A/Armv9-A core list that has it, and each must be in
//! the lists of the cores HWCPipe was written for.

use hwcpipe::cpu::{CpuCounter, PerfEvent};
use pmu_regs::catalog::EventCatalog;

/// Every A-profile core list (Armv8-A and later), by file name; `None` after a skip message when the
/// data folder is absent.
fn a_profile_catalogs() -> Option<Vec<(String, EventCatalog)>> {
    let lists = test_data::path("arm-pmu-data/pmu")?;
    let mut catalogs = Vec::new();
    for entry in std::fs::read_dir(lists).expect("Arm's PMU event lists") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("common") || name == "pmu-schema.json" {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let catalog = EventCatalog::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        if catalog.architecture().starts_with("armv8")
            || catalog.architecture().starts_with("armv9")
        {
            catalogs.push((name, catalog));
        }
    }
    assert!(catalogs.len() > 20, "{} core lists", catalogs.len());
    Some(catalogs)
}

fn arm_counters() -> Vec<(CpuCounter, pmu_regs::ArmEvent)> {
    CpuCounter::HWCPIPE
        .iter()
        .filter_map(|&c| match c.event() {
            PerfEvent::Arm(e) => Some((c, e)),
            _ => None,
        })
        .collect()
}

#[test]
fn every_core_list_names_the_events_as_pmu_regs_does() {
    let counters = arm_counters();
    assert_eq!(counters.len(), 11, "HWCPipe's Arm raw counters");
    let Some(catalogs) = a_profile_catalogs() else {
        return;
    };
    for (file, catalog) in catalogs {
        for &(counter, event) in &counters {
            if let Some(listed) = counter.catalog_event(&catalog) {
                assert_eq!(listed.code, event.code());
                if let Some(name) = &listed.name {
                    assert_eq!(name, event.mnemonic(), "{counter} in {file}");
                }
            }
        }
    }
}

#[test]
fn hwcpipes_cores_list_every_one_of_its_events() {
    let Some(catalogs) = a_profile_catalogs() else {
        return;
    };
    // (Cortex-A72 has no L3D_CACHE: it lacks only that one.)
    for core in ["cortex-a55.json", "cortex-a76.json", "neoverse-n1.json"] {
        let (_, catalog) = catalogs.iter().find(|(f, _)| f == core).expect(core);
        for (counter, event) in arm_counters() {
            assert!(
                counter.catalog_event(catalog).is_some(),
                "{core} lacks {event} ({counter})"
            );
        }
    }
    assert!(CpuCounter::TaskClock
        .catalog_event(&catalogs[0].1)
        .is_none());
}
