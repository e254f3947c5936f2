//! `lizard apc-dump PATH.apc`: read a Streamline local capture directory.
//!
//! Reads `captured.xml` (protocol version and the key → counter map), `events.xml` if present (titles
//! and names), and the frame file `0000000000` (u32-LE length + APC frame, no end marker). Prints every
//! BLOCK_COUNTER / COUNTER value resolved to its counter name as it is decoded, then the SUMMARY (clocks,
//! attributes) and the frame count per type. The listing is never held in memory.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gator_proto::apc::{Frame, FrameType, LocalCaptureReader, Record, SummaryFrame};
use gator_proto::ProtocolVersion;
use gator_xml::{Captured, Events};
use serde_json::{json, Value as Json};

use crate::args::{ApcDumpArgs, DumpFormat};
use crate::error::CliError;
use crate::output::{self, Stream};
use crate::table::Table;

/// The frame file of a local capture.
const FRAMES_FILE: &str = "0000000000";

/// One counter value from the capture.
struct Value<'n> {
    timestamp_ns: i64,
    core: i64,
    key: i32,
    counter: &'n str,
    value: i64,
}

/// What is known once the whole capture has been read (everything but the samples, which are written as
/// they are decoded).
#[derive(Default)]
struct Summary {
    clocks: Option<Json>,
    attributes: Vec<(String, String)>,
    frames: BTreeMap<String, u64>,
    samples: u64,
    errors: Vec<String>,
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
            let Ok(key) = i32::try_from(c.key) else {
                continue;
            };
            let title = events
                .and_then(|e| e.event_by_counter(&c.counter))
                .map(|r| r.event.label());
            let name = title.map_or_else(|| c.counter.clone(), |t| format!("{} ({t})", c.counter));
            by_key.entry(key).or_insert(name);
        }
        Names { by_key }
    }

    /// The name of `key`; `fallback` holds the text for a key without a name.
    fn of<'n>(&'n self, key: i32, fallback: &'n mut String) -> &'n str {
        match self.by_key.get(&key) {
            Some(name) => name,
            None => {
                *fallback = format!("key {key:#x}");
                fallback
            }
        }
    }
}

/// Walks the frames of a capture: each sample goes to `sample` as it is decoded; the rest is summed up.
fn walk(
    bytes: &[u8],
    version: ProtocolVersion,
    names: &Names,
    sample: &mut dyn FnMut(&Value<'_>) -> Result<(), CliError>,
) -> Result<Summary, CliError> {
    let mut summary = Summary::default();
    let mut unnamed = String::new();
    for (index, frame) in LocalCaptureReader::new(bytes).enumerate() {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => {
                summary.errors.push(format!("frame {index}: {e}"));
                break;
            }
        };
        let parsed = match Frame::parse(frame, version) {
            Ok(parsed) => parsed,
            Err(e) => {
                summary.errors.push(format!("frame {index}: {e}"));
                continue;
            }
        };
        *summary
            .frames
            .entry(frame_type_name(parsed.frame_type()))
            .or_default() += 1;
        let mut emit = |timestamp_ns, core, key, value| {
            summary.samples += 1;
            sample(&Value {
                timestamp_ns,
                core,
                key,
                counter: names.of(key, &mut unnamed),
                value,
            })
        };
        match parsed {
            Frame::Summary(SummaryFrame::Summary(s)) => {
                let c = s.clocks;
                summary.clocks = Some(json!({
                    "realtime_ns": c.realtime_ns,
                    "boottime_ns": c.boottime_ns,
                    "monotonic_raw_ns": c.monotonic_raw_ns,
                    "monotonic_ns": c.monotonic_ns,
                }));
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
            Frame::BlockCounter(block) => {
                let (mut timestamp_ns, mut core) = (0, i64::from(block.core));
                let mut error = None;
                for record in block.records() {
                    match record {
                        Ok(Record::Timestamp(t)) => timestamp_ns = t,
                        Ok(Record::Core(c)) => core = c,
                        Ok(Record::Tid(_)) => {}
                        Ok(Record::Value { key, value }) => emit(timestamp_ns, core, key, value)?,
                        Err(e) => {
                            error = Some(format!("frame {index}: {e}"));
                            break;
                        }
                    }
                }
                summary.errors.extend(error);
            }
            Frame::Counter(c) => emit(c.timestamp, i64::from(c.core), c.key, c.value)?,
            _ => {}
        }
    }
    Ok(summary)
}

/// Sample rows aligned in blocks of this many, so that a table needs no more memory than one block.
const TABLE_BLOCK: usize = 1024;

const SAMPLE_COLUMNS: [&str; 4] = ["timestamp_ns", "core", "counter", "value"];

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

/// Runs `lizard apc-dump`. Samples are written as they are decoded: in a table (aligned a block of rows at
/// a time) and in CSV after the header lines, in JSON as the `samples` array; frame counts, errors and the
/// sample count follow them.
pub fn run(args: &ApcDumpArgs) -> Result<i32, CliError> {
    if !args.path.is_dir() {
        return Err(CliError::bad_input(
            &args.path,
            "not a capture directory (it should hold 0000000000)",
        ));
    }
    let dir = &args.path;
    let frames_path = dir.join(FRAMES_FILE);
    let bytes = std::fs::read(&frames_path).map_err(|e| CliError::file(&frames_path, e))?;
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
    drop(events);

    let mut out = Stream::stdout();
    let summary = match args.format {
        DumpFormat::Table => {
            out.write_fmt(format_args!(
                "protocol: {}\n\nsamples:\n",
                protocol.map_or_else(
                    || "unknown (no captured.xml; 950 assumed)".into(),
                    |p| p.to_string()
                )
            ))?;
            let mut rows = TableRows {
                rows: Vec::with_capacity(TABLE_BLOCK),
                first: true,
            };
            let summary = walk(&bytes, version, &names, &mut |v| {
                rows.rows.push(vec![
                    v.timestamp_ns.to_string(),
                    v.core.to_string(),
                    v.counter.to_owned(),
                    v.value.to_string(),
                ]);
                if rows.rows.len() == TABLE_BLOCK {
                    rows.flush(&mut out)?;
                }
                Ok(())
            })?;
            rows.flush(&mut out)?;
            out.write_fmt(format_args!("samples: {}\n", summary.samples))?;
            if let Some(clocks) = &summary.clocks {
                out.write_fmt(format_args!("\nclocks: {clocks}\n"))?;
            }
            for (k, v) in &summary.attributes {
                out.write_fmt(format_args!("  {k} = {v}\n"))?;
            }
            let mut frames = Table::new(&["type", "count"]);
            for (name, count) in &summary.frames {
                frames.row(vec![name.clone(), count.to_string()]);
            }
            out.write_fmt(format_args!("\nframes:\n{}", frames.render()))?;
            summary
        }
        DumpFormat::Csv => {
            out.write_fmt(format_args!("timestamp_ns,core,key,counter,value\n"))?;
            walk(&bytes, version, &names, &mut |v| {
                out.write_fmt(format_args!(
                    "{},{},{},{},{}\n",
                    v.timestamp_ns,
                    v.core,
                    v.key,
                    output::csv_field(v.counter),
                    v.value
                ))
            })?
        }
        DumpFormat::Json => {
            out.write_fmt(format_args!(
                "{{\n  \"protocol\": {},\n  \"samples\": [",
                json!(protocol)
            ))?;
            let mut first = true;
            let summary = walk(&bytes, version, &names, &mut |v| {
                let comma = if first { "" } else { "," };
                first = false;
                let sample = json!({
                    "timestamp_ns": v.timestamp_ns,
                    "core": v.core,
                    "key": v.key,
                    "counter": v.counter,
                    "value": v.value,
                });
                out.write_fmt(format_args!("{comma}\n    {sample}"))
            })?;
            let close = if first { "]" } else { "\n  ]" };
            let rest = json!({
                "clocks": summary.clocks,
                "attributes": summary.attributes.iter().cloned().collect::<BTreeMap<_, _>>(),
                "frames": summary.frames,
                "errors": summary.errors,
            });
            let mut tail = String::new();
            if let Json::Object(fields) = rest {
                for (name, value) in fields {
                    tail.push_str(&format!(",\n  {}: {value}", json!(name)));
                }
            }
            out.write_fmt(format_args!("{close}{tail}\n}}\n"))?;
            summary
        }
    };
    out.finish()?;
    for error in &summary.errors {
        eprintln!("lizard: warning: {error}");
    }
    Ok(0)
}
