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

use super::text::{reading_text, series_name};
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

/// Text cells printed with aligned columns; numbers are right-aligned.
struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table whose first row is `headers`.
    fn new(headers: &[&str]) -> Table {
        Table {
            rows: vec![headers.iter().map(|h| (*h).to_owned()).collect()],
        }
    }

    /// Appends a row.
    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, each ending in a newline.
    fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for (index, row) in self.rows.iter().enumerate() {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                let pad = widths[c].saturating_sub(cell.chars().count());
                let numeric = index > 0 && looks_numeric(cell);
                if c > 0 {
                    line.push_str("  ");
                }
                if numeric {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    if c + 1 < row.len() {
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Whether a cell reads as a number (and so is right-aligned).
fn looks_numeric(cell: &str) -> bool {
    !cell.is_empty() && cell.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn columns_align_and_numbers_go_right() {
        let mut table = Table::new(&["name", "value"]);
        table.row(vec!["a".into(), "5".into()]);
        table.row(vec!["longer".into(), "1234".into()]);
        assert_eq!(
            table.render(),
            "name    value\na           5\nlonger   1234\n"
        );
    }
}
