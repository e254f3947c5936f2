//! The capture document as CSV rows (`lizard capture --format csv`): every sample and trace record as a row
//! `timestamp_ns,id,counter,value`, in time order, then a comment row (`# …`) per counter without a value
//! or with an implausible one (a missing series is never silent), the per-core note and the local
//! sampling's account.
//!
//! ```
//! use lizard_core::capture::Capture;
//! use lizard_render::csv;
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [0, 5], "counters": [
//!         {"id": 1, "counter": "a,b", "class": "delta", "value": 3, "samples": [[5, 2], [0, 1]]},
//!         {"id": 2, "counter": "c", "class": "delta", "value": null, "no_value": "not sent", "samples": []}]}"#,
//! )?;
//! assert_eq!(
//!     csv::render(&capture),
//!     "timestamp_ns,id,counter,value\n0,1,\"a,b\",1\n5,1,\"a,b\",2\n# 2,c,no value: not sent\n"
//! );
//! # Ok::<(), lizard_core::capture::DocumentError>(())
//! ```

use serde_json::Number;

use crate::text::{csv_field, series_name};
use lizard_core::capture::Capture;

/// The CSV text of `capture`: the header row, the rows in time order, then the comment rows.
pub fn render(capture: &Capture) -> String {
    let mut text = String::from("timestamp_ns,id,counter,value\n");
    let mut rows: Vec<(u64, String)> = Vec::new();
    for c in &capture.counters {
        for (core, samples) in c.series() {
            let name = csv_field(&series_name(c, core));
            for (t, value) in samples {
                let row = format!("{t},{},{name},{}\n", c.info.id, value_text(value.as_ref()));
                rows.push((*t, row));
            }
        }
    }
    for r in &capture.trace_records {
        let label = format!("trace:{}@{}:{}", r.module, r.file, r.line);
        let row = format!("{},,{},{}\n", r.timestamp_ns, csv_field(&label), r.seq);
        rows.push((r.timestamp_ns, row));
    }
    rows.sort_by_key(|(t, _)| *t);
    text.extend(rows.into_iter().map(|(_, row)| row));
    for c in &capture.counters {
        if let (None, Some(reason)) = (&c.value, &c.no_value) {
            text.push_str(&format!(
                "# {},{},no value: {}\n",
                c.info.id,
                csv_field(c.counter_name()),
                csv_field(reason)
            ));
        }
        if let Some(why) = &c.implausible {
            text.push_str(&format!(
                "# {},{},implausible: {}\n",
                c.info.id,
                csv_field(c.counter_name()),
                csv_field(why)
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

/// A value as text: the number, or `null` when it is not one (as JSON writes it).
fn value_text(value: Option<&Number>) -> String {
    value.map_or_else(|| "null".to_owned(), Number::to_string)
}
