//! Checks the common-event table and the JSON catalogue against Arm's own event lists: the files of
//! `ARM-software/data` (`pmu/*.json`, `cpus.json`) kept in `../shared/data/arm-pmu-data/`.

use std::fs;
use std::path::PathBuf;

use pmu_regs::catalog::{CatalogError, CpuList, EventCatalog};
use pmu_regs::diagnosis::{AccessPath, Counter, NotCounting, PmuSnapshot};
use pmu_regs::soft_pmu::ExecContext;
use pmu_regs::{
    ArmEvent, CommonEvent, CommonEventSet, CounterSet, Pmcr, Pmevtyper, PmuVersion,
    RecommendedEvent,
};

/// Whether Arm's event lists are there (a printed skip when they are not).
fn present() -> bool {
    test_data::path("arm-pmu-data").is_some()
}

fn data_dir() -> PathBuf {
    test_data::root().join("arm-pmu-data")
}

fn load(name: &str) -> EventCatalog {
    let path = data_dir().join("pmu").join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    EventCatalog::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn is_common(code: u16) -> bool {
    code < 0x40 || (0x4000..0x4040).contains(&code)
}

#[test]
fn every_common_event_matches_common_armv9() {
    if !present() {
        return;
    }
    let v9 = load("common_armv9.json");
    for &event in CommonEvent::ALL {
        let listed = v9
            .get(event.code())
            .unwrap_or_else(|| panic!("{event} ({:#x}) not in common_armv9.json", event.code()));
        assert_eq!(listed.name.as_deref(), Some(event.mnemonic()));
        assert_eq!(listed.architectural, event.is_architectural(), "{event}");
    }
    // And the other way: every common-range event Arm lists is in the enum.
    for listed in v9.iter().filter(|e| is_common(e.code)) {
        let event = CommonEvent::from_code(listed.code)
            .unwrap_or_else(|| panic!("{:#x} missing from CommonEvent", listed.code));
        assert_eq!(Some(event.mnemonic()), listed.name.as_deref());
    }
    assert_eq!(
        v9.iter().filter(|e| is_common(e.code)).count(),
        CommonEvent::ALL.len()
    );
}

#[test]
fn common_armv8_agrees_where_it_lists_an_event() {
    if !present() {
        return;
    }
    let v8 = load("common_armv8.json");
    let mut checked = 0;
    for listed in v8.iter().filter(|e| is_common(e.code)) {
        let event = CommonEvent::from_code(listed.code).expect("armv8 common event in the enum");
        assert_eq!(Some(event.mnemonic()), listed.name.as_deref());
        assert_eq!(listed.architectural, event.is_architectural(), "{event}");
        checked += 1;
    }
    // Armv8 lists all 64 low events and 16 of the 0x4000 range (none of the trace/CTI events).
    assert_eq!(checked, 80);
}

#[test]
fn every_event_list_loads() {
    if !present() {
        return;
    }
    let mut loaded = 0;
    for entry in fs::read_dir(data_dir().join("pmu")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let text = fs::read_to_string(&path).unwrap();
        if name == "pmu-schema.json" {
            // The JSON schema is not an event list and must be refused with a typed error.
            assert!(matches!(
                EventCatalog::from_json(&text),
                Err(CatalogError::Json(_))
            ));
            continue;
        }
        let catalog = EventCatalog::from_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!catalog.is_empty(), "{name}");
        // Where a PMUv3 core names a common event, it uses the common mnemonic.
        if catalog.pmu_architecture() == Some("pmuv3") {
            for e in catalog.iter().filter(|e| is_common(e.code)) {
                if let (Some(name), Some(common)) = (&e.name, e.common_event()) {
                    assert_eq!(name, common.mnemonic(), "{}", catalog.cpu());
                }
            }
        }
        loaded += 1;
    }
    assert_eq!(loaded, 48);
}

#[test]
fn cortex_a720_list() {
    if !present() {
        return;
    }
    let a720 = load("cortex-a720.json");
    assert_eq!(a720.cpu(), "Cortex-A720");
    assert_eq!(a720.cpuid(), Some(0x41d81));
    assert_eq!(a720.architecture(), "armv9.2-a");
    assert_eq!(a720.len(), 193);
    // The seed article's event claims, against Arm's list for the core.
    assert_eq!(
        a720.get(0x13).and_then(|e| e.name.as_deref()),
        Some("MEM_ACCESS")
    );
    assert_eq!(
        a720.get(0x4010).and_then(|e| e.name.as_deref()),
        Some("TRCEXTOUT0")
    );
    assert_eq!(
        a720.get(0x4020).and_then(|e| e.name.as_deref()),
        Some("LDST_ALIGN_LAT")
    );
    assert_eq!(
        a720.get(0x4005).and_then(|e| e.name.as_deref()),
        Some("STALL_BACKEND_MEM")
    );
    assert_eq!(
        a720.get(0x400D).and_then(|e| e.name.as_deref()),
        Some("PMU_OVFS")
    );
    // LD_RETIRED/ST_RETIRED are not implemented on the A720.
    assert!(a720.get(0x06).is_none() && a720.get(0x07).is_none());
}

#[test]
fn pmceid_of_an_a720_matches_its_list() {
    if !present() {
        return;
    }
    let a720 = load("cortex-a720.json");
    // PMCEID values computed by hand from the A720's common events (bit n of a word = its base + n):
    // 0x00-0x05, 0x08-0x0E, 0x10-0x19, 0x1B-0x1E -> 0x3F | 0x7F00 | 0x03FF_0000 | 0x7800_0000
    let pmceid0_lo: u64 = 0x7BFF_7F3F;
    // 0x20-0x26, 0x29-0x2B, 0x2D, 0x2F, 0x31, 0x34-0x37, 0x39-0x3F
    let pmceid1_lo: u64 = 0xFEF2_AE7F;
    // 0x4000-0x4006, 0x4009, 0x400B-0x4013, 0x4018-0x401B
    let pmceid0_hi: u64 = 0x0F0F_FA7F;
    // 0x4020-0x4022, 0x4024-0x4026
    let pmceid1_hi: u64 = 0x0000_0077;
    let set = CommonEventSet::from_registers(
        pmceid0_lo | pmceid0_hi << 32,
        pmceid1_lo | pmceid1_hi << 32,
    );
    assert_eq!(set, a720.expected_common_events());
    let report = a720.compare_pmceid(set);
    assert!(report.listed_but_absent.is_empty() && report.present_but_unlisted.is_empty());
    assert_eq!(report.implemented.len(), 78);
    assert_eq!(a720.implemented(set).count(), 78);
}

#[test]
fn cpu_table_names_the_a720_from_its_midr() {
    if !present() {
        return;
    }
    let text = fs::read_to_string(data_dir().join("cpus.json")).unwrap();
    let cpus = CpuList::from_json(&text).unwrap();
    assert_eq!(cpus.iter().count(), 58);
    // MIDR_EL1 of an r0p1 Cortex-A720: implementer 0x41, part 0xD81.
    let a720 = cpus.by_midr(0x410F_D811).unwrap();
    assert_eq!(
        (a720.name.as_str(), a720.arch.as_str()),
        ("Cortex-A720", "armv9.2-a")
    );
    assert!(cpus.by_midr(0x4100_0000).is_none());
}

/// Arm publishes no event list for the Cortex-A720AE (MIDR part 0xD89): `cpus.json` names the core, but
/// `pmu/` has no `cortex-a720ae.json` and no list carries its cpuid (nor does Linux perf map the part).
/// The Cortex-A720's list stands in for it (see the README); this test fails when Arm adds one, so
/// that the stand-in is dropped.
#[test]
fn the_a720_list_stands_in_for_the_a720ae() {
    if !present() {
        return;
    }
    let text = fs::read_to_string(data_dir().join("cpus.json")).unwrap();
    let cpus = CpuList::from_json(&text).unwrap();
    // MIDR_EL1 of an r0p0 Cortex-A720AE.
    let ae = cpus.by_midr(0x410F_D890).unwrap();
    assert_eq!(
        (ae.name.as_str(), ae.arch.as_str()),
        ("Cortex-A720AE", "armv9.2-a")
    );
    assert!(!data_dir().join("pmu").join("cortex-a720ae.json").exists());
    let lists = a_profile_core_lists();
    assert!(lists.iter().all(|(_, c)| c.cpuid() != Some(0x41d89)));

    let a720 = load("cortex-a720.json");
    assert_eq!(
        (a720.cpuid(), a720.architecture()),
        (Some(0x41d81), "armv9.2-a")
    );
    // The stand-in's PMCEID in a snapshot: LD_RETIRED (0x06), which the A720 lacks, is named as the
    // reason a counter programmed with it stays still.
    let pmcr = Pmcr::default().with_n(6).unwrap().with_e(true);
    let mut s = PmuSnapshot::new(PmuVersion::V3p7, pmcr, ExecContext::USER, AccessPath::El1);
    s.pmceid = a720.expected_common_events();
    s.pmcntenset = CounterSet::P0;
    s.pmevtyper[0] = Pmevtyper::for_event(0x06, PmuVersion::V3p7).unwrap();
    assert!(matches!(
        s.why_not_counting(Counter::Event(0))
            .iter()
            .collect::<Vec<_>>()[..],
        [NotCounting::EventNotImplemented { event: 0x06, .. }]
    ));
    s.pmevtyper[0] =
        Pmevtyper::for_event(CommonEvent::InstRetired.code(), PmuVersion::V3p7).unwrap();
    assert!(s.why_not_counting(Counter::Event(0)).is_empty());
}

/// Every per-core list of an A-profile core (Armv8-A and later).
fn a_profile_core_lists() -> Vec<(String, EventCatalog)> {
    let mut lists = Vec::new();
    for entry in fs::read_dir(data_dir().join("pmu")).expect("pmu folder") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name.starts_with("common") || name == "pmu-schema.json" {
            continue;
        }
        let catalog = load(&name);
        if catalog.architecture().starts_with("armv8")
            || catalog.architecture().starts_with("armv9")
        {
            lists.push((name, catalog));
        }
    }
    lists
}

#[test]
fn recommended_events_match_every_core_list() {
    if !present() {
        return;
    }
    let lists = a_profile_core_lists();
    assert!(lists.len() > 20, "{} core lists", lists.len());
    let mut seen = std::collections::BTreeSet::new();
    for (file, catalog) in &lists {
        for listed in catalog.iter().filter(|e| (0x40..=0xBF).contains(&e.code)) {
            let Some(name) = listed.name.as_deref() else {
                continue;
            };
            let event = RecommendedEvent::from_code(listed.code)
                .unwrap_or_else(|| panic!("{file}: {name} ({:#x}) missing", listed.code));
            assert_eq!(event.mnemonic(), name, "{file}");
            assert_eq!(
                ArmEvent::from_code(listed.code),
                Some(ArmEvent::Recommended(event))
            );
            seen.insert(event);
        }
    }
    // And the other way: every entry of the enum is in some core's list.
    for event in RecommendedEvent::ALL {
        assert!(seen.contains(event), "{event} is in no core list");
    }
}
