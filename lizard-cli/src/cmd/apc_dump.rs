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
//! The values come from the engine's [`FrameSink`], so a value's time and core follow the rules of a live
//! capture: a BLOCK_COUNTER value before the frame's first core marker is a value of the whole system (no
//! core), and a time before capture start is capture start.
//!
//! The listing streams: the frame file is read a record at a time and every value is written as it is
//! decoded (a table aligned a block of rows at a time), so memory stays constant whatever the capture's size;
//! what is known only at the end (sample count, SUMMARY, frame counts, perf events, errors) follows the values.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::Path;

use gator_proto::apc::{Clocks, Delivery, Frame, FrameType, SummaryFrame};
use gator_proto::ProtocolVersion;
use gator_xml::{Captured, Events};
use lizard_core::{
    FrameFile, FrameFileError, FrameSink, KeyMap, KeyedSample, SinkError, Value as Reading,
};
use serde::Serialize;

use crate::args::{ApcDumpArgs, DumpFormat};
use crate::error::CliError;
use crate::output::{self, Stream};
use crate::table::Table;

/// The frame file of a local capture.
const FRAMES_FILE: &str = "0000000000";

/// One counter value from the capture, written as soon as it is decoded: the engine's sample with its key and
/// counter name. Its members are declared in the order JSON has always listed them (by name).
#[derive(Serialize)]
struct Value<'n> {
    /// The CPU it was counted on; `None` for a value of the whole system.
    core: Option<u32>,
    counter: &'n str,
    key: i32,
    /// For a perf counter value: the running total on that core (`value` is its increase).
    perf_total: Option<u64>,
    /// Nanoseconds since capture start.
    timestamp_ns: u64,
    value: Reading,
}

/// One perf event gatord announced.
#[derive(Serialize)]
struct PerfEvent {
    config: u64,
    counter: String,
    key: i32,
    sample_period: String,
    #[serde(rename = "type")]
    kind: u32,
    #[serde(rename = "values")]
    delivery: &'static str,
}

fn delivery_text(delivery: Delivery) -> &'static str {
    match delivery {
        Delivery::Sampled => "sent (sample records)",
        Delivery::CountingOnly => "never sent (opened for counting only)",
        Delivery::NotOpened => "never sent (could not be opened)",
        _ => "not announced",
    }
}

/// What is known once the whole capture has been read (everything but the values, written as decoded); in
/// JSON, the members after the `samples` array.
#[derive(Default, Serialize)]
struct Summary {
    clocks: Option<Clocks>,
    /// The SUMMARY's attributes, in the order sent (JSON: an object by name).
    #[serde(serialize_with = "attributes_by_name")]
    attributes: Vec<(String, String)>,
    frames: BTreeMap<String, u64>,
    #[serde(skip)]
    samples: u64,
    perf_events: Vec<PerfEvent>,
    errors: Vec<String>,
}

fn attributes_by_name<S: serde::Serializer>(
    attributes: &[(String, String)],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let by_name: BTreeMap<_, _> = attributes.iter().map(|(k, v)| (k, v)).collect();
    by_name.serialize(serializer)
}

fn frame_type_name(code: i32) -> String {
    FrameType::from_code(code).map_or_else(|| format!("type {code}"), |t| format!("{t:?}"))
}

fn read_optional(dir: &Path, name: &str) -> Result<Option<Vec<u8>>, CliError> {
    match std::fs::read(dir.join(name)) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::file(dir.join(name), e)),
    }
}

/// Counter names by key, resolved once from `captured.xml` and `events.xml`.
struct Names {
    by_key: HashMap<i32, String>,
}

impl Names {
    fn new(captured: Option<&Captured>, events: Option<&Events>) -> Names {
        let mut by_key = HashMap::new();
        for c in captured.map_or(&[][..], |c| &c.counters[..]) {
            let (Ok(key), Some(first)) = (
                i32::try_from(c.key),
                captured.and_then(|all| all.counter_by_key(c.key)),
            ) else {
                continue;
            };
            let title = events
                // A slot resolves through its counter set and the event programmed into it.
                .and_then(|e| e.resolve(&first.counter, first.event))
                .map(|r| r.event.label());
            let name = title.map_or_else(
                || first.counter.clone(),
                |t| format!("{} ({t})", first.counter),
            );
            by_key.entry(key).or_insert(name);
        }
        Names { by_key }
    }

    /// The name of `key`; `fallback` holds the text for a key without a name.
    fn of<'n>(&'n self, key: i32, fallback: &'n mut String) -> &'n str {
        if let Some(name) = self.by_key.get(&key) {
            return name;
        }
        *fallback = if key >= 0x7fff_fff0 {
            format!("gatord's own perf event (key {key:#x})")
        } else {
            format!("key {key:#x}")
        };
        fallback
    }
}

/// The text of a sink error: the frame's or the perf decoder's own error.
fn sink_error_text(error: &SinkError) -> String {
    match error {
        SinkError::Frame(e) => e.to_string(),
        SinkError::Perf(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// Walks the frames of a capture through the engine's [`FrameSink`] (so that a value's time and core follow
/// the engine's rules): each value goes to `emit` as it is decoded; the rest is summed up.
fn walk(
    frames: &mut FrameFile<File>,
    path: &Path,
    version: ProtocolVersion,
    names: &Names,
    emit: &mut dyn FnMut(&Value<'_>) -> Result<(), CliError>,
) -> Result<Summary, CliError> {
    let mut summary = Summary::default();
    // Capture start is time 0; no key is bound, as the sink's values carry every key.
    let mut sink = FrameSink::new(version, KeyMap::new(), 0);
    let mut values: Vec<KeyedSample> = Vec::new();
    let mut unnamed = String::new();
    let mut index = 0usize;
    loop {
        let frame = match frames.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(FrameFileError::Record(e)) => {
                summary.errors.push(format!("frame {index}: {e}"));
                break;
            }
            Err(FrameFileError::Io(e)) => return Err(CliError::file(path, e)),
            Err(e) => return Err(CliError::bad_input(path, e)),
        };
        let this = index;
        index += 1;
        let parsed = match Frame::parse(frame, version) {
            Ok(parsed) => parsed,
            Err(e) => {
                summary.errors.push(format!("frame {this}: {e}"));
                continue;
            }
        };
        *summary
            .frames
            .entry(frame_type_name(parsed.frame_type()))
            .or_default() += 1;
        if let Frame::Summary(SummaryFrame::Summary(s)) = &parsed {
            summary.clocks = Some(s.clocks);
            summary.attributes = s
                .attributes
                .iter()
                .map(|(k, v)| {
                    (
                        String::from_utf8_lossy(k).into_owned(),
                        String::from_utf8_lossy(v).into_owned(),
                    )
                })
                .collect();
        }
        let result = sink.values(&parsed, &mut values);
        for v in values.drain(..) {
            summary.samples += 1;
            emit(&Value {
                core: v.sample.core,
                counter: names.of(v.key, &mut unnamed),
                key: v.key,
                perf_total: v.perf_total,
                timestamp_ns: v.sample.timestamp_ns,
                value: v.sample.value,
            })?;
        }
        if let Err(e) = result {
            summary
                .errors
                .push(format!("frame {this}: {}", sink_error_text(&e)));
        }
    }
    let tracker = sink.perf();
    let mut announced: Vec<_> = tracker.attrs().map(|(key, attr)| (key, *attr)).collect();
    announced.sort_by_key(|(key, _)| *key);
    summary.perf_events = announced
        .into_iter()
        .map(|(key, attr)| PerfEvent {
            key,
            counter: names.of(key, &mut unnamed).to_owned(),
            kind: attr.kind,
            config: attr.config,
            sample_period: match (attr.sample_period(), attr.sample_freq()) {
                (Some(p), _) => p.to_string(),
                (_, Some(f)) => format!("{f} Hz"),
                _ => "none".into(),
            },
            delivery: delivery_text(tracker.delivery(key)),
        })
        .collect();
    if tracker.lost_records() > 0 {
        summary.errors.push(format!(
            "the kernel lost {} perf record(s) (PERF_RECORD_LOST); perf values after a loss still add up",
            tracker.lost_records()
        ));
    }
    Ok(summary)
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
fn table_tail(summary: &Summary, out: &mut Stream) -> Result<(), CliError> {
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
                e.sample_period.clone(),
                e.delivery.to_string(),
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
fn json_tail(summary: &Summary) -> Result<String, CliError> {
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
    if !args.path.is_dir() {
        return Err(CliError::bad_input(
            &args.path,
            "not a capture directory (it should hold 0000000000)",
        ));
    }
    let dir = &args.path;
    let frames_path = dir.join(FRAMES_FILE);
    let file = File::open(&frames_path).map_err(|e| CliError::file(&frames_path, e))?;
    let mut frames = FrameFile::new(file);
    let captured = read_optional(dir, "captured.xml")?
        .map(|b| {
            Captured::from_bytes(&b).map_err(|e| CliError::bad_input(dir.join("captured.xml"), e))
        })
        .transpose()?;
    let events = read_optional(dir, "events.xml")?
        .map(|b| Events::from_bytes(&b).map_err(|e| CliError::bad_input(dir.join("events.xml"), e)))
        .transpose()?;
    let protocol = captured.as_ref().and_then(|c| c.protocol);
    let version = ProtocolVersion(protocol.map_or(950, i64::from));
    let names = Names::new(captured.as_ref(), events.as_ref());
    drop((captured, events));

    let mut out = Stream::stdout();
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
            let summary = walk(&mut frames, &frames_path, version, &names, &mut |v| {
                rows.rows.push(vec![
                    v.timestamp_ns.to_string(),
                    optional_text(v.core),
                    v.counter.to_owned(),
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
            walk(&mut frames, &frames_path, version, &names, &mut |v| {
                out.write_fmt(format_args!(
                    "{},{},{},{},{},{}\n",
                    v.timestamp_ns,
                    optional_text(v.core),
                    v.key,
                    output::csv_field(v.counter),
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
            let summary = walk(&mut frames, &frames_path, version, &names, &mut |v| {
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
    for error in &summary.errors {
        eprintln!("lizard: warning: {error}");
    }
    Ok(0)
}
