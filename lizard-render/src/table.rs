//! The capture document as a summary table (`lizard capture --format table`), as `perf stat` reads: what
//! was counted in the header, a row per counter (and, for a capture counted per core, one per core) with its
//! reading in a unit that reads well, its rate and its note, then the notes (the per-core note, the local
//! sampling's account, the trace records' count).
//!
//! ```
//! use lizard_core::capture::Capture;
//! use lizard_render::table;
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [0, 1000000000], "duration_s": 1.0, "counters": [{"id": 1, "counter": "Sim_ccnt", "source": "gatord",
//!         "units": "cycles", "class": "delta", "value": 900, "samples": [[0, 100], [1000000000, 800]]}]}"#,
//! )?;
//! let text = table::render(&capture);
//! assert!(text.starts_with("Counters of gatord, over 1.000 s:"));
//! assert!(text.contains("id  counter   value  unit    class  rate"));
//! assert!(text.contains("Sim_ccnt    900  cycles  delta  900 /s"));
//! # Ok::<(), lizard_core::capture::DocumentError>(())
//! ```

use serde_json::Number;

use crate::text::{grouped, rate_text, reading_text, series_name, time_text, Table};
use lizard_core::capture::{Capture, CapturedCounter, SamplePoint};

/// The summary table of `capture`, as text: what was counted in the header when every counter shares
/// it (else a source column), a row per series with its reading in a unit that reads well, its rate over
/// the time its samples cover, and a note (why it has no value, an implausible reading); then the notes.
pub fn render(capture: &Capture) -> String {
    let first = capture.counters.first().map(|c| c.info.source_label());
    let shared = first
        .clone()
        .filter(|label| !label.is_empty())
        .filter(|label| {
            capture
                .counters
                .iter()
                .all(|c| c.info.source_label() == *label)
        });
    let mut headers = vec!["id"];
    if shared.is_none() {
        headers.push("source");
    }
    headers.extend([
        "counter", "value", "unit", "class", "rate", "samples", "covers", "note",
    ]);
    let mut table = Table::new(&headers);
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
            let unit = c.value_units().to_string();
            let unit = unit.as_str();
            let (value_text, unit_text) = match value {
                Some(value) => reading(value, unit),
                None => ("-".to_owned(), unit.to_owned()),
            };
            let note = match (value, core, &c.implausible) {
                (Some(_), None, Some(why)) => format!("implausible: {why}"),
                (Some(_), _, _) => String::new(),
                (None, _, _) => no_value.clone().unwrap_or_default(),
            };
            let mut row = vec![c.info.id.to_string()];
            if shared.is_none() {
                row.push(c.info.source_label());
            }
            row.extend([
                series_name(c, core),
                value_text,
                unit_text,
                c.info.class.to_string(),
                rate(c, value.as_ref(), samples),
                samples.len().to_string(),
                covered_text(samples),
                note,
            ]);
            table.row(row);
        }
    }
    let mut text = match (&shared, capture.duration_s) {
        (Some(label), Some(s)) => format!("Counters of {label}, over {s:.3} s:\n\n"),
        (Some(label), None) => format!("Counters of {label}:\n\n"),
        (None, _) => String::new(),
    };
    text.push_str(&table.render());
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

/// A reading and its unit as a table shows them: times in the unit that reads best, integer counts with
/// their thousands grouped, fractions to at most six decimals.
fn reading(value: &Number, unit: &str) -> (String, String) {
    match (unit, value.as_i64(), value.as_f64()) {
        ("ns", _, Some(ns)) => {
            let (text, unit) = time_text(ns);
            (text, unit.to_owned())
        }
        (_, Some(n), _) => (grouped(i128::from(n)), unit.to_owned()),
        _ => (reading_text(value), unit.to_owned()),
    }
}

/// A delta counter's rate over the time its samples cover: CPUs utilised for a time, per second for the
/// rest; empty for levels and equations, or with fewer than two samples.
fn rate(c: &CapturedCounter, value: Option<&Number>, samples: &[SamplePoint]) -> String {
    let (Some(value), true) = (value.and_then(Number::as_f64), c.is_delta()) else {
        return String::new();
    };
    let covered = match (samples.first(), samples.last()) {
        (Some(first), Some(last)) if samples.len() > 1 => (last.0 - first.0) as f64 / 1e9,
        _ => return String::new(),
    };
    if covered <= 0.0 {
        return String::new();
    }
    match c.value_units().to_string().as_str() {
        "ns" => format!("{:.3} CPUs utilised", value / 1e9 / covered),
        _ => rate_text(value / covered),
    }
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
