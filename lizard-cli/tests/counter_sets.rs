//! `lizard list` and `lizard capture` of an Arm CPU's programmable PMU events, against `lizard gatord-sim`
//! serving the Cortex-A72 events file gatord 9.7.2 ships (`../shared/data/gatord-9.7.2/events/
//! events-Cortex-A72.xml`: the `ARMv8_Cortex_A72_cnt` set, 6 slots) with the cycle counter and the programmed
//! slots as perf-backed counters on two cores.

mod common;

use std::path::PathBuf;

use common::{counter, gatord_capture, json, lizard, Sim};
use gatord_sim::synthetic_event_value;
use serde_json::Value;

/// The Cortex-A72 events file, or `None` (a printed skip) without the data folder.
fn a72_events() -> Option<PathBuf> {
    common::gatord_data("events/events-Cortex-A72.xml")
}

/// The simulator serving it, with the cycle counter and the programmed slots perf-backed on two cores.
fn a72_sim(events: &std::path::Path) -> Sim {
    Sim::start(&[
        "--events",
        events.to_str().expect("utf-8"),
        "--perf-counters",
        "ARMv8_Cortex_A72_ccnt",
        "--cores",
        "2",
    ])
}

#[test]
fn list_shows_the_set_events_with_their_code() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let base = ["list", "--gatord", &sim.address, "--no-hwcpipe"];
    let doc = json(&lizard(&[&base[..], &["--format", "json"]].concat()));
    let inst = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED");
    assert_eq!(inst["event"], "0x08");
    assert_eq!(inst["category"], "Cortex-A72");
    assert_eq!(counter(&doc, "ARMv8_Cortex_A72_ccnt")["event"], Value::Null);
    let row = common::table_row(&base, "ARMv8_Cortex_A72:INST_RETIRED");
    assert!(row.contains("0x08"), "{row}");
}

#[test]
fn capture_of_a_set_event_and_the_cycle_counter_gives_their_values() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let output = lizard(&gatord_capture(
        &sim.address,
        "300ms",
        &[
            "--format",
            "json",
            "--counters",
            // The event by its code; its counter name is ARMv8_Cortex_A72:INST_RETIRED.
            "ARMv8_Cortex_A72_ccnt,ARMv8_Cortex_A72:0x08",
        ],
    ));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc = json(&output);
    for name in ["ARMv8_Cortex_A72_ccnt", "ARMv8_Cortex_A72:INST_RETIRED"] {
        let c = counter(&doc, name);
        let samples = c["samples"].as_array().expect("samples");
        assert!(samples.len() >= 10, "{name}: {}", samples.len());
        let summed: i64 = samples.iter().map(|s| s[1].as_i64().expect("int")).sum();
        assert_eq!(c["value"].as_i64(), Some(summed), "{name}: per-core sum");
    }
    // The simulator counted event 0x08 in the slot it was given: each of the two cores grows by the
    // event's value, and the series adds the cores of one instant.
    let inst = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED");
    let (low, high) = (
        2 * synthetic_event_value(0x08, 0),
        2 * synthetic_event_value(0x08, 15),
    );
    let samples = inst["samples"].as_array().expect("samples");
    // The first reading of each core may cover more than one of the daemon's samples.
    for s in &samples[1..] {
        let v = s[1].as_i64().expect("int");
        assert!((low..=high).contains(&v), "{v}");
    }
}

#[test]
fn more_set_events_than_slots_fails_with_one_line() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let seven = [
        "ARMv8_Cortex_A72:INST_RETIRED",
        "ARMv8_Cortex_A72:L1D_CACHE_REFILL",
        "ARMv8_Cortex_A72:L1D_CACHE",
        "ARMv8_Cortex_A72:L1I_CACHE_REFILL",
        "ARMv8_Cortex_A72:L1D_TLB_REFILL",
        "ARMv8_Cortex_A72:BR_MIS_PRED",
        "ARMv8_Cortex_A72:0x60",
    ]
    .join(",");
    let output = lizard(&gatord_capture(
        &sim.address,
        "100ms",
        &["--counters", &seven],
    ));
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("lizard:"))
        .expect("one line");
    assert!(
        line.contains("ARMv8_Cortex_A72_cnt has 6 slots but 7 of its events"),
        "{stderr}"
    );
}

/// The set's events a capture took, by name.
fn captured_set_events(doc: &Value) -> Vec<String> {
    doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .filter_map(|c| c["counter"].as_str())
        .filter(|name| name.starts_with("ARMv8_Cortex_A72:"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn without_named_counters_the_slots_get_what_the_useful_metrics_need() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let output = lizard(&gatord_capture(
        &sim.address,
        "200ms",
        &["--format", "json"],
    ));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("counter set ARMv8_Cortex_A72_cnt has 6 slots: by default"))
        .unwrap_or_else(|| panic!("the choice is said in one line: {stderr}"));
    let doc = json(&output);
    let captured = captured_set_events(&doc);
    assert_eq!(captured.len(), 6, "{captured:?}");
    // IPC and the branch and cache miss rates have their events; an event counting only software writes
    // (SW_INCR) never takes a slot.
    for needed in [
        "INST_RETIRED",
        "BR_MIS_PRED",
        "L1D_CACHE_REFILL",
        "L2D_CACHE_REFILL",
    ] {
        let name = format!("ARMv8_Cortex_A72:{needed}");
        assert!(
            captured.contains(&name),
            "{needed} not captured: {captured:?}"
        );
        assert!(line.contains(&name), "{line}");
    }
    assert!(
        !captured.iter().any(|n| n.ends_with(":SW_INCR")),
        "{captured:?}"
    );
    let listed = lizard(&[
        "list",
        "--gatord",
        &sim.address,
        "--no-hwcpipe",
        "--format",
        "json",
    ]);
    let set_events = captured_set_events(&json(&listed)).len();
    assert!(
        line.contains(&format!("{} other events left out", set_events - 6)),
        "{line}"
    );
    // The cycle counter, not a set event, is captured beside them.
    assert!(
        counter(&doc, "ARMv8_Cortex_A72_ccnt")["value"].as_u64() > Some(0),
        "{doc}"
    );
}

#[test]
fn with_all_each_set_is_filled_up_to_its_slots_in_id_order() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let output = lizard(&gatord_capture(
        &sim.address,
        "200ms",
        &["--all", "--format", "json"],
    ));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.contains("counter set ARMv8_Cortex_A72_cnt has 6 slots"))
        .unwrap_or_else(|| panic!("the choice is said: {stderr}"));
    assert!(line.contains("its first 6 events are captured"), "{line}");
    let doc = json(&output);
    let captured = captured_set_events(&doc);
    assert_eq!(captured.len(), 6, "{captured:?}");
    // Every event left out is named in the line, none of the captured ones.
    let left_out = line
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(names, _)| names)
        .expect("the left-out events");
    for name in &captured {
        assert!(!left_out.split(", ").any(|n| n == name), "{name} in {line}");
    }
    let listed = lizard(&[
        "list",
        "--gatord",
        &sim.address,
        "--no-hwcpipe",
        "--format",
        "json",
    ]);
    let set_events = captured_set_events(&json(&listed)).len();
    assert_eq!(left_out.split(", ").count(), set_events - 6, "{line}");
}

#[test]
fn per_core_values_are_shown_on_request_and_the_outputs_say_which() {
    let Some(events) = a72_events() else { return };
    let sim = a72_sim(&events);
    let base = gatord_capture(
        &sim.address,
        "200ms",
        &["--counters", "ARMv8_Cortex_A72:INST_RETIRED"],
    );
    // Combined (the default): one sample per instant, the two cores added.
    let doc = json(&lizard(&[&base[..], &["--format", "json"]].concat()));
    assert_eq!(doc["cores"], "combined");
    assert!(doc["cores_note"].as_str().expect("note").contains("summed"));
    let inst = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED");
    assert_eq!(inst["counted"], "per core");
    assert!(inst.get("per_core").is_none());
    let low = 2 * synthetic_event_value(0x08, 0);
    let samples = inst["samples"].as_array().expect("samples");
    for s in &samples[1..] {
        assert!(s[1].as_i64().expect("int") >= low, "{s}: both cores added");
    }

    // Per core: each core's reading and series beside the combined ones, adding up to them.
    let doc = json(&lizard(
        &[&base[..], &["--format", "json", "--per-core"]].concat(),
    ));
    assert_eq!(doc["cores"], "per-core");
    let inst = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED");
    let parts = inst["per_core"].as_array().expect("per_core");
    let cores: Vec<i64> = parts
        .iter()
        .map(|p| p["core"].as_i64().expect("core"))
        .collect();
    assert_eq!(cores, [0, 1]);
    let sum: i64 = parts
        .iter()
        .map(|p| p["value"].as_i64().expect("value"))
        .sum();
    assert_eq!(inst["value"].as_i64(), Some(sum));
    for part in parts {
        let series = part["samples"].as_array().expect("samples");
        assert_eq!(series.len(), samples_len(inst));
    }

    let csv = lizard(&[&base[..], &["--format", "csv", "--per-core"]].concat());
    let text = String::from_utf8_lossy(&csv.stdout);
    assert!(
        text.contains(",ARMv8_Cortex_A72:INST_RETIRED@cpu1,"),
        "{text}"
    );
    assert!(text
        .lines()
        .last()
        .expect("rows")
        .starts_with("# values counted per core"));

    let table = lizard(&[&base[..], &["--per-core"]].concat());
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("ARMv8_Cortex_A72:INST_RETIRED@cpu0"),
        "{text}"
    );
    assert!(text.contains("COUNTER@cpuN is one core's part"), "{text}");

    let chrome = json(&lizard(
        &[&base[..], &["--format", "chrome-trace", "--per-core"]].concat(),
    ));
    assert_eq!(chrome["otherData"]["cores"], "per-core");
    let names: std::collections::BTreeSet<&str> = chrome["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "C")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        [
            "ARMv8_Cortex_A72:INST_RETIRED (instructions)",
            "ARMv8_Cortex_A72:INST_RETIRED@cpu0 (instructions)",
            "ARMv8_Cortex_A72:INST_RETIRED@cpu1 (instructions)",
        ]
    );
}

fn samples_len(counter: &Value) -> usize {
    counter["samples"].as_array().expect("samples").len()
}
