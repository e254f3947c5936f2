//! The capture document as a chrome trace (`lizard capture --format chrome-trace`; `chrome://tracing`,
//! Perfetto's legacy JSON): a counter track per series, an instant per trace record, and a visible mark per
//! counter without a value. `otherData` carries what a trace viewer does not show: the counters without a
//! value with their reasons, how per-core counters were combined and the local sampling's account.
//!
//! The events are typed below and borrow the document's strings; the JSON object keys are written in
//! sorted order at every level.
//!
//! ```
//! use lizard_core::capture::Capture;
//! use lizard_render::chrome_trace;
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [1000, 2000], "counters": [{"id": 1, "counter": "Sim_ccnt", "units": "cycles",
//!         "class": "delta", "value": 3, "samples": [[1000, 1], [2000, 2]]}]}"#,
//! )?;
//! let trace: serde_json::Value = serde_json::from_str(&chrome_trace::render(&capture)).unwrap();
//! assert_eq!(trace["traceEvents"][1]["name"], "Sim_ccnt (cycles)");
//! assert_eq!(trace["traceEvents"][1]["ts"], 1.0);
//! # Ok::<(), lizard_core::capture::DocumentError>(())
//! ```

use serde::Serialize;
use serde_json::Number;

use crate::text::series_name;
use lizard_core::capture::{Capture, CapturedCounter, Cores, LocalSampling, SamplePoint};

/// The chrome trace of `capture` as pretty JSON text with a final newline.
pub fn render(capture: &Capture) -> String {
    let mut events = vec![Event {
        name: "process_name",
        cat: None,
        ph: "M",
        s: None,
        ts: None,
        pid: 1,
        tid: 0,
        args: Args::Process {
            name: "lizard capture",
        },
    }];
    // Each series' track name (`NAME (units)`) and category (its source), made once and borrowed by every
    // sample's event.
    let mut tracks: Vec<(String, String, &[SamplePoint])> = Vec::new();
    for c in &capture.counters {
        for (core, samples) in c.series() {
            let name = match c.info.units.to_string().as_str() {
                "" => series_name(c, core),
                units => format!("{} ({units})", series_name(c, core)),
            };
            tracks.push((name, c.info.source_label(), samples));
        }
    }
    for (name, label, samples) in &tracks {
        events.extend(samples.iter().map(|(t, value)| Event {
            name,
            cat: Some(label),
            ph: "C",
            s: None,
            ts: Some(*t as f64 / 1000.0),
            pid: 1,
            tid: 0,
            args: Args::Counter {
                value: value.as_ref(),
            },
        }));
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
    let marks: Vec<String> = without
        .iter()
        .map(|c| format!("{}: no value", c.counter_name()))
        .collect();
    for (c, mark) in without.iter().zip(&marks) {
        events.push(Event {
            name: mark,
            cat: Some("no value"),
            ph: "i",
            s: Some("g"),
            ts: Some(start_us),
            pid: 1,
            tid: 0,
            args: Args::NoValue {
                reason: c.no_value.as_deref(),
                unavailable: c.unavailable.as_deref(),
            },
        });
    }
    for r in &capture.trace_records {
        events.push(Event {
            name: &r.module,
            cat: Some("trace"),
            ph: "i",
            s: Some("p"),
            ts: Some(r.timestamp_ns as f64 / 1000.0),
            pid: 1,
            tid: 1,
            args: Args::Record {
                file: &r.file,
                line: r.line,
                seq: r.seq,
                pid: r.pid,
                bytes: r.bytes,
            },
        });
    }
    let trace = Trace {
        trace_events: events,
        display_time_unit: "ns",
        other_data: OtherData {
            counters_without_value: without
                .iter()
                .map(|c| WithoutValue {
                    id: c.info.id,
                    counter: c.counter_name(),
                    reason: c.no_value.as_deref(),
                    unavailable: c.unavailable.as_deref(),
                })
                .collect(),
            cores: capture.cores,
            cores_note: capture.cores_note.as_deref(),
            sampling: capture.sampling.as_ref(),
        },
    };
    // Through `serde_json::Value`, whose objects keep their keys sorted: the order this format is written
    // in, nested documents (the sampling's account) included. Every key is a string: this cannot fail.
    let mut text = serde_json::to_value(&trace)
        .and_then(|value| serde_json::to_string_pretty(&value))
        .unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}

/// The whole trace: the events, their time unit, and the facts a viewer does not show.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Trace<'a> {
    trace_events: Vec<Event<'a>>,
    display_time_unit: &'static str,
    other_data: OtherData<'a>,
}

/// One trace event: the process's name (`M`), a counter sample (`C`) or an instant (`i`).
#[derive(Serialize)]
struct Event<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cat: Option<&'a str>,
    ph: &'static str,
    /// An instant's scope: `g` (global) or `p` (process).
    #[serde(skip_serializing_if = "Option::is_none")]
    s: Option<&'static str>,
    /// Microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    ts: Option<f64>,
    pid: u32,
    tid: u32,
    args: Args<'a>,
}

/// An event's arguments, by kind of event.
#[derive(Serialize)]
#[serde(untagged)]
enum Args<'a> {
    /// The process name of the metadata event.
    Process { name: &'static str },
    /// A sample's value (`null` when it is not a number).
    Counter { value: Option<&'a Number> },
    /// Why a counter has no value.
    NoValue {
        reason: Option<&'a str>,
        unavailable: Option<&'a str>,
    },
    /// A trace record's facts.
    Record {
        file: &'a str,
        line: u32,
        seq: u64,
        pid: u32,
        bytes: u64,
    },
}

/// `otherData`: what the capture says beside its events.
#[derive(Serialize)]
struct OtherData<'a> {
    counters_without_value: Vec<WithoutValue<'a>>,
    cores: Cores,
    cores_note: Option<&'a str>,
    sampling: Option<&'a LocalSampling>,
}

/// A counter without a value, with the reason.
#[derive(Serialize)]
struct WithoutValue<'a> {
    id: u32,
    counter: &'a str,
    reason: Option<&'a str>,
    /// The source lists it but does not deliver it here (not merely no sample in the window).
    unavailable: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes this format has always had: the keys of every object sorted, nested documents included,
    /// and `null` kept for a fact a counter lacks.
    #[test]
    fn the_trace_is_written_with_sorted_keys_as_it_always_was() {
        let capture = Capture::from_json(
            r#"{"window_ns": [2000, 2000],
            "sampling": {"interval_ns": 1000000, "sampled_ns": 4000000, "expected": 4, "delivered": 3,
                         "missed": 1, "largest_gap_ns": 2000000},
            "counters": [
                {"id": 1, "counter": "Sim_ccnt", "units": "cycles", "class": "delta", "source": "gatord",
                 "value": 7, "samples": [[2000, 7]]},
                {"id": 2, "counter": "Sim_idle", "class": "delta", "value": null, "no_value": "never sent",
                 "unavailable": "not delivered here", "samples": []}],
            "trace_records": [{"timestamp_ns": 1500, "seq": 4, "module": "draw", "file": "a.c", "line": 9,
                               "pid": 7, "bytes": 16}]}"#,
        )
        .unwrap();
        let expected = r#"{
  "displayTimeUnit": "ns",
  "otherData": {
    "cores": "combined",
    "cores_note": null,
    "counters_without_value": [
      {
        "counter": "Sim_idle",
        "id": 2,
        "reason": "never sent",
        "unavailable": "not delivered here"
      }
    ],
    "sampling": {
      "delivered": 3,
      "expected": 4,
      "interval_ns": 1000000,
      "largest_gap_ns": 2000000,
      "method": "thread",
      "missed": 1,
      "sampled_ns": 4000000
    }
  },
  "traceEvents": [
    {
      "args": {
        "name": "lizard capture"
      },
      "name": "process_name",
      "ph": "M",
      "pid": 1,
      "tid": 0
    },
    {
      "args": {
        "value": 7
      },
      "cat": "gatord",
      "name": "Sim_ccnt (cycles)",
      "ph": "C",
      "pid": 1,
      "tid": 0,
      "ts": 2.0
    },
    {
      "args": {
        "reason": "never sent",
        "unavailable": "not delivered here"
      },
      "cat": "no value",
      "name": "Sim_idle: no value",
      "ph": "i",
      "pid": 1,
      "s": "g",
      "tid": 0,
      "ts": 2.0
    },
    {
      "args": {
        "bytes": 16,
        "file": "a.c",
        "line": 9,
        "pid": 7,
        "seq": 4
      },
      "cat": "trace",
      "name": "draw",
      "ph": "i",
      "pid": 1,
      "s": "p",
      "tid": 1,
      "ts": 1.5
    }
  ]
}
"#;
        assert_eq!(render(&capture), expected);
    }
}
