//! `lizard apc-dump PATH.apc`: read a Streamline local capture directory.
//!
//! Reads `captured.xml` (protocol version and the key → counter map), `events.xml` if present (titles
//! and names), and the frame file `0000000000` (u32-LE length + APC frame, no end marker). Prints the
//! SUMMARY (clocks, attributes), the frame count per type, the perf events gatord announced (PERF_ATTRS: key,
//! type, config, sample period, whether their values are sent), and every BLOCK_COUNTER / COUNTER value and
//! every perf counter value (PERF_DATA sample records: per core, the increase of the event's running total
//! since its previous reading on that core, with the total) resolved to its counter name. Perf values are on
//! the same clock as BLOCK_COUNTER values: nanoseconds since capture start.
//!
//! The capture is read by [`Recording`] (lizard-core), through the engine's frame sink, so a value's time and
//! core follow the rules of a live capture. This module writes what it yields.
//!
//! The listing streams: every value is written as it is decoded (a table aligned a block of rows at a time),
//! so memory stays constant whatever the capture's size; what is known only at the end (sample count,
//! SUMMARY, frame counts, perf events, errors) follows the values.

use lizard_core::{
    RecordedValue, Recording, RecordingError, RecordingIssue, RecordingSummary, Value as Reading,
};
use serde::Serialize;

use crate::args::{ApcDumpArgs, DumpFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output::{self, Stream};
use crate::table::Table;

impl From<RecordingError> for CliError {
    fn from(error: RecordingError) -> CliError {
        match error {
            RecordingError::Io { path, source } => CliError::file(path, source),
            RecordingError::Input(error) => CliError::Input(error),
            RecordingError::Xml { path, source } => CliError::bad_input(path, source),
            RecordingError::NotADirectory { path } => CliError::bad_input(
                path,
                format!(
                    "not a capture directory (it should hold {})",
                    lizard_core::FRAMES_FILE
                ),
            ),
            other => CliError::bad_input(other.path().to_owned(), other),
        }
    }
}

/// Sample rows aligned in blocks of this many, so that a table needs no more memory than one block.
const TABLE_BLOCK: usize = 1024;

const SAMPLE_COLUMNS: [&str; 5] = ["timestamp_ns", "core", "counter", "value", "perf total"];

/// Writes sample rows as an aligned table, one block at a time (the header once, before the first).
struct TableRows {
    rows: Vec<Vec<String>>,
    first: bool,
}

impl TableRows {
    fn flush(&mut self, out: &mut Stream) -> Result<(), CliError> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let mut table = Table::new(&SAMPLE_COLUMNS);
        for row in self.rows.drain(..) {
            table.row(row);
        }
        let text = table.render();
        let text = if self.first {
            &text[..]
        } else {
            text.split_once('\n').map_or("", |(_, rows)| rows)
        };
        self.first = false;
        out.write_fmt(format_args!("{text}"))
    }
}

/// An optional number as a table or CSV field: empty when absent.
fn optional_text<T: ToString>(number: Option<T>) -> String {
    number.map_or_else(String::new, |n| n.to_string())
}

fn reading_text(value: Reading) -> String {
    match value {
        Reading::Int(v) => v.to_string(),
        Reading::Float(v) => v.to_string(),
    }
}

/// `value` as compact JSON, its objects' members sorted by name (the order of a [`serde_json::Value`]).
fn sorted_json<T: Serialize>(value: &T) -> Result<serde_json::Value, CliError> {
    serde_json::to_value(value).map_err(|e| CliError::Other(e.to_string()))
}

/// The table after the values: sample count, SUMMARY, frame counts, perf events.
fn table_tail(summary: &RecordingSummary, out: &mut Stream) -> Result<(), CliError> {
    out.write_fmt(format_args!("samples: {}\n", summary.samples))?;
    if let Some(clocks) = &summary.clocks {
        out.write_fmt(format_args!("\nclocks: {}\n", sorted_json(clocks)?))?;
    }
    for (k, v) in &summary.attributes {
        out.write_fmt(format_args!("  {k} = {v}\n"))?;
    }
    let mut frames = Table::new(&["type", "count"]);
    for (name, count) in &summary.frames {
        frames.row(vec![name.clone(), count.to_string()]);
    }
    out.write_fmt(format_args!("\nframes:\n{}", frames.render()))?;
    if !summary.perf_events.is_empty() {
        let mut events = Table::new(&[
            "key",
            "counter",
            "type",
            "config",
            "sample period",
            "values",
        ]);
        for e in &summary.perf_events {
            events.row(vec![
                format!("{:#x}", e.key),
                e.counter.clone(),
                e.kind.to_string(),
                format!("{:#x}", e.config),
                e.sample_period.to_string(),
                e.values_text().to_owned(),
            ]);
        }
        out.write_fmt(format_args!(
            "\nperf events (PERF_ATTRS):\n{}",
            events.render()
        ))?;
    }
    Ok(())
}

/// The JSON members after the `samples` array, by name.
fn json_tail(summary: &RecordingSummary) -> Result<String, CliError> {
    let mut tail = String::new();
    if let serde_json::Value::Object(fields) = sorted_json(summary)? {
        for (name, value) in fields {
            tail.push_str(&format!(",\n  {}: {value}", sorted_json(&name)?));
        }
    }
    Ok(tail)
}

/// Runs `lizard apc-dump`. Values are written as they are decoded: in a table (aligned a block of rows at a
/// time) and in CSV after the header lines, in JSON as the `samples` array; the sample count, SUMMARY, frame
/// counts, perf events and errors follow them.
pub fn run(args: &ApcDumpArgs) -> Result<i32, CliError> {
    let inputs = inputs()?;
    let mut recording = Recording::open_with(&args.path, &inputs)?;
    let protocol = recording.protocol();

    let mut out = output::Destination::open(args.output.as_deref())?.stream();
    let summary = match args.format {
        DumpFormat::Table => {
            out.write_fmt(format_args!(
                "protocol: {}\n\nsamples (perf values: increase since the previous reading on that core):\n",
                protocol.map_or_else(
                    || "unknown (no captured.xml; 950 assumed)".into(),
                    |p| p.to_string()
                )
            ))?;
            let mut rows = TableRows {
                rows: Vec::with_capacity(TABLE_BLOCK),
                first: true,
            };
            let summary = recording.walk(|v: &RecordedValue<'_>| -> Result<(), CliError> {
                rows.rows.push(vec![
                    v.timestamp_ns.to_string(),
                    optional_text(v.core),
                    v.counter.clone().into_owned(),
                    reading_text(v.value),
                    optional_text(v.perf_total),
                ]);
                if rows.rows.len() == TABLE_BLOCK {
                    rows.flush(&mut out)?;
                }
                Ok(())
            })?;
            rows.flush(&mut out)?;
            table_tail(&summary, &mut out)?;
            summary
        }
        DumpFormat::Csv => {
            out.write_fmt(format_args!(
                "timestamp_ns,core,key,counter,value,perf_total\n"
            ))?;
            recording.walk(|v: &RecordedValue<'_>| -> Result<(), CliError> {
                out.write_fmt(format_args!(
                    "{},{},{},{},{},{}\n",
                    v.timestamp_ns,
                    optional_text(v.core),
                    v.key,
                    output::csv_field(&v.counter),
                    reading_text(v.value),
                    optional_text(v.perf_total),
                ))
            })?
        }
        DumpFormat::Json => {
            out.write_fmt(format_args!(
                "{{\n  \"protocol\": {},\n  \"samples\": [",
                sorted_json(&protocol)?
            ))?;
            let mut first = true;
            let summary = recording.walk(|v: &RecordedValue<'_>| -> Result<(), CliError> {
                let comma = if first { "" } else { "," };
                first = false;
                let sample =
                    serde_json::to_string(v).map_err(|e| CliError::Other(e.to_string()))?;
                out.write_fmt(format_args!("{comma}\n    {sample}"))
            })?;
            let close = if first { "]" } else { "\n  ]" };
            out.write_fmt(format_args!("{close}{}\n}}\n", json_tail(&summary)?))?;
            summary
        }
    };
    out.finish()?;
    // The first few problems of frames one by one, the rest counted; why the walk ended, always.
    let (frames, ending): (Vec<_>, Vec<_>) = summary.issues.iter().partition(|i| {
        !matches!(
            i,
            RecordingIssue::GaveUp { .. } | RecordingIssue::LostPerfRecords { .. }
        )
    });
    output::warn_some(&frames, summary.issue_count() - ending.len() as u64);
    for issue in ending {
        eprintln!("lizard: warning: {issue}");
    }
    if summary.samples == 0 {
        let frames: u64 = summary.frames.values().sum();
        return Err(CliError::NothingUsable {
            path: args.path.join(lizard_core::FRAMES_FILE),
            expected: "a frame file of a capture, with counter values".to_owned(),
            found: match summary.issues.first() {
                Some(first) => format!(
                    "it gave no value ({frames} frames read, {} problems, the first: {first})",
                    summary.issue_count()
                ),
                None => format!("it gave no value ({frames} frames read)"),
            },
        });
    }
    Ok(0)
}
