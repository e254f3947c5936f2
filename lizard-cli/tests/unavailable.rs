//! Counters a source lists but cannot deliver are marked as such: `lizard list` (gatord's derived counters,
//! from gatord 9.7.2's `../shared/data/gatord-9.7.2/events/events-Linux.xml`) and every capture output,
//! chrome-trace included (a perf counter gatord opens for counting only, served so by `lizard gatord-sim
//! --counting-only`).

mod common;

use common::{counter, gatord_capture, json, lizard, Sim};
use serde_json::Value;

#[test]
fn list_marks_the_counters_gatord_lists_but_never_sends() {
    let Some(events) = common::gatord_data("events/events-Linux.xml") else {
        return;
    };
    let sim = Sim::start(&["--events", events.to_str().expect("utf-8")]);
    let base = ["list", "--gatord", &sim.address, "--no-hwcpipe"];
    let doc = json(&lizard(&[&base[..], &["--format", "json"]].concat()));
    let derived = counter(&doc, "Linux_cpu_wait_contention");
    assert!(
        derived["unavailable"]
            .as_str()
            .expect("reason")
            .starts_with("derived"),
        "{derived}"
    );
    assert_eq!(
        counter(&doc, "Linux_meminfo_memfree")["unavailable"],
        Value::Null
    );
    // The row is marked; the reason follows the table, keyed by the counter's id.
    let row = common::table_row(&base, "Linux_cpu_wait_contention (unavailable)");
    let id = row.split_whitespace().next().expect("id");
    let reason = common::table_row(&base, &format!("  {id} Linux_cpu_wait_contention: "));
    assert!(reason.contains(": derived"), "{reason}");
}

#[test]
fn capture_outputs_mark_a_counter_gatord_will_not_send() {
    let sim = Sim::start(&["--counting-only", "Sim_instructions"]);
    let base = gatord_capture(
        &sim.address,
        "100ms",
        &["--counters", "Sim_ccnt,Sim_instructions"],
    );
    let doc = json(&lizard(&[&base[..], &["--format", "json"]].concat()));
    let instructions = counter(&doc, "Sim_instructions");
    assert!(instructions["value"].is_null());
    assert!(instructions["unavailable"]
        .as_str()
        .expect("reason")
        .contains("counting only"));
    assert!(counter(&doc, "Sim_ccnt").get("unavailable").is_none());

    let trace = json(&lizard(
        &[&base[..], &["--format", "chrome-trace"]].concat(),
    ));
    let missing = trace["otherData"]["counters_without_value"]
        .as_array()
        .expect("metadata");
    assert_eq!(missing.len(), 1, "{trace}");
    assert_eq!(missing[0]["counter"], "Sim_instructions");
    assert!(missing[0]["unavailable"]
        .as_str()
        .expect("reason")
        .contains("counting only"));
    // Visible in a trace viewer too: a global instant event at the start of the samples.
    let marks: Vec<&Value> = trace["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["cat"] == "no value")
        .collect();
    assert_eq!(marks.len(), 1, "{trace}");
    assert_eq!(marks[0]["name"], "Sim_instructions: no value");
    assert_eq!(marks[0]["ph"], "i");
    assert!(marks[0]["args"]["reason"]
        .as_str()
        .expect("reason")
        .starts_with("unavailable here"));
}
