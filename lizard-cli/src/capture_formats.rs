//! The capture document written as a table, as CSV rows and as a chrome trace (`--format
//! table|csv|chrome-trace`); JSON is the document itself and HTML its report.

use lizard_core::capture::cores::core_name;
use lizard_core::capture::{Capture, CapturedCounter, SamplePoint};
use serde_json::{json, Number, Value as Json};

use crate::output;
use crate::table::Table;

/// The counter's name on one of its series: its own, or `NAME@cpuN` for a core's part.
fn series_name(c: &CapturedCounter, core: Option<u32>) -> String {
    match core {
        Some(core) => core_name(c.counter_name(), core),
        None => c.counter_name().to_owned(),
    }
}

/// A value as text: the number, or `null` when it is not one (as JSON writes it).
fn value_text(value: Option<&Number>) -> String {
    value.map_or_else(|| "null".to_owned(), Number::to_string)
}

/// How long a series' samples cover, first to last, as a table shows it (`1.493 s`; empty with fewer than
/// two samples).
fn covered_text(samples: &[SamplePoint]) -> String {
    match (samples.first(), samples.last()) {
        (Some(first), Some(last)) if samples.len() > 1 => {
            format!("{:.3} s", (last.0 - first.0) as f64 / 1e9)
        }
        _ => String::new(),
    }
}

/// The summary table: a row per counter and (with `--per-core`) one per core, then the notes.
pub fn table(capture: &Capture) -> String {
    let mut table = Table::new(&[
        "id", "source", "counter", "units", "class", "samples", "covers", "value",
    ]);
    for c in &capture.counters {
        let parts = c.per_core.iter().flatten();
        let rows = std::iter::once((None, c.samples.as_slice(), &c.value, &c.no_value)).chain(
            parts.map(|part| {
                (
                    Some(part.core),
                    part.samples.as_slice(),
                    &part.value,
                    &part.no_value,
                )
            }),
        );
        for (core, samples, value, no_value) in rows {
            table.row(vec![
                c.info.id.to_string(),
                c.info.source_label(),
                series_name(c, core),
                c.info.units.clone(),
                c.info.class.to_string(),
                samples.len().to_string(),
                covered_text(samples),
                match (value, core, &c.implausible) {
                    (Some(value), None, Some(_)) => {
                        format!("{} (implausible)", output::reading_text(value))
                    }
                    (Some(value), _, _) => output::reading_text(value),
                    (None, _, _) => no_value.clone().unwrap_or_default(),
                },
            ]);
        }
    }
    let mut text = table.render();
    for c in &capture.counters {
        if let Some(why) = &c.implausible {
            text.push_str(&format!("\n{}: implausible: {why}", c.counter_name()));
        }
    }
    if capture.counters.iter().any(|c| c.implausible.is_some()) {
        text.push('\n');
    }
    if let Some(note) = &capture.cores_note {
        text.push_str(&format!("\n{note}\n"));
    }
    if let Some(sampling) = &capture.sampling {
        text.push('\n');
        for line in sampling.summary_lines() {
            text.push_str(&format!("{line}\n"));
        }
    }
    if !capture.trace_records.is_empty() {
        text.push_str(&format!(
            "\n{} trace records in the capture window\n",
            capture.trace_records.len()
        ));
    }
    text
}

/// Every sample and trace record as a CSV row, in time order, then a comment row per counter without a
/// value (a missing series is never silent) and the per-core note.
pub fn csv(capture: &Capture) -> String {
    let mut text = String::from("timestamp_ns,id,counter,value\n");
    let mut rows: Vec<(u64, String)> = Vec::new();
    for c in &capture.counters {
        for (core, samples) in c.series() {
            let name = output::csv_field(&series_name(c, core));
            for (t, value) in samples {
                let row = format!("{t},{},{name},{}\n", c.info.id, value_text(value.as_ref()));
                rows.push((*t, row));
            }
        }
    }
    for r in &capture.trace_records {
        let label = format!("trace:{}@{}:{}", r.module, r.file, r.line);
        let row = format!(
            "{},,{},{}\n",
            r.timestamp_ns,
            output::csv_field(&label),
            r.seq
        );
        rows.push((r.timestamp_ns, row));
    }
    rows.sort_by_key(|(t, _)| *t);
    text.extend(rows.into_iter().map(|(_, row)| row));
    for c in &capture.counters {
        if let (None, Some(reason)) = (&c.value, &c.no_value) {
            text.push_str(&format!(
                "# {},{},no value: {}\n",
                c.info.id,
                output::csv_field(c.counter_name()),
                output::csv_field(reason)
            ));
        }
        if let Some(why) = &c.implausible {
            text.push_str(&format!(
                "# {},{},implausible: {}\n",
                c.info.id,
                output::csv_field(c.counter_name()),
                output::csv_field(why)
            ));
        }
    }
    if let Some(note) = &capture.cores_note {
        text.push_str(&format!("# {note}\n"));
    }
    if let Some(sampling) = &capture.sampling {
        for line in sampling.summary_lines() {
            text.push_str(&format!("# {line}\n"));
        }
    }
    text
}

/// The capture as a chrome trace (`chrome://tracing`, Perfetto's legacy JSON): a counter track per series,
/// an instant per trace record, and a visible mark per counter without a value.
pub fn chrome_trace(capture: &Capture) -> String {
    let mut events = vec![json!({
        "name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": { "name": "lizard capture" }
    })];
    for c in &capture.counters {
        for (core, samples) in c.series() {
            let name = match c.info.units.as_str() {
                "" => series_name(c, core),
                units => format!("{} ({units})", series_name(c, core)),
            };
            events.extend(samples.iter().map(|s| counter_event(c, &name, s)));
        }
    }
    // A counter without a value is a visible mark at the start of the samples' window, not only metadata.
    let start_us = capture
        .window_ns
        .map_or(0.0, |[first, _]| first as f64 / 1000.0);
    let without: Vec<&CapturedCounter> = capture
        .counters
        .iter()
        .filter(|c| c.value.is_none())
        .collect();
    for c in &without {
        events.push(json!({
            "name": format!("{}: no value", c.counter_name()),
            "cat": "no value",
            "ph": "i",
            "s": "g",
            "ts": start_us,
            "pid": 1,
            "tid": 0,
            "args": { "reason": c.no_value, "unavailable": c.unavailable },
        }));
    }
    for r in &capture.trace_records {
        events.push(json!({
            "name": r.module,
            "cat": "trace",
            "ph": "i",
            "s": "p",
            "ts": r.timestamp_ns as f64 / 1000.0,
            "pid": 1,
            "tid": 1,
            "args": { "file": r.file, "line": r.line, "seq": r.seq, "pid": r.pid, "bytes": r.bytes },
        }));
    }
    let counters_without_value: Vec<Json> = without
        .iter()
        .map(|c| {
            json!({
                "id": c.info.id,
                "counter": c.counter_name(),
                "reason": c.no_value,
                // The source lists it but does not deliver it here (not merely no sample in the window).
                "unavailable": c.unavailable,
            })
        })
        .collect();
    output::to_json(&json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "counters_without_value": counters_without_value,
            "cores": capture.cores,
            "cores_note": capture.cores_note,
            "sampling": capture.sampling,
        },
    }))
}

/// One sample as a chrome-trace counter event.
fn counter_event(c: &CapturedCounter, name: &str, (t, value): &SamplePoint) -> Json {
    json!({
        "name": name,
        "cat": c.info.source_label(),
        "ph": "C",
        "ts": *t as f64 / 1000.0,
        "pid": 1,
        "tid": 0,
        "args": { "value": value },
    })
}
