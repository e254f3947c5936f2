//! The capture document as a summary table (`lizard capture --format table`): a row per counter and, for a
//! capture counted per core, one per core, then the notes (implausible readings, the per-core note, the
//! local sampling's account, the trace records' count).
//!
//! ```
//! use lizard_core::capture::{table, Capture};
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [0, 1000000000], "counters": [{"id": 1, "counter": "Sim_ccnt",
//!         "units": "cycles", "class": "delta", "value": 900, "samples": [[0, 100], [1000000000, 800]]}]}"#,
//! )?;
//! let text = table::render(&capture);
//! assert!(text.starts_with("id  source  counter"));
//! assert!(text.contains("Sim_ccnt  cycles  delta"));
//! # Ok::<(), lizard_core::capture::DocumentError>(())
//! ```

use super::text::{reading_text, series_name, Table};
use super::{Capture, SamplePoint};

/// The summary table of `capture`, as text: aligned columns, then the notes.
pub fn render(capture: &Capture) -> String {
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
                        format!("{} (implausible)", reading_text(value))
                    }
                    (Some(value), _, _) => reading_text(value),
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
