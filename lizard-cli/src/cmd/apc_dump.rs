//! `lizard apc-dump PATH.apc`: read a Streamline local capture directory.
//!
//! Reads `captured.xml` (protocol version and the key → counter map), `events.xml` if present (titles
//! and names), and the frame file `0000000000` (u32-LE length + APC frame, no end marker). Prints the
//! SUMMARY (clocks, attributes), the frame count per type, and every BLOCK_COUNTER / COUNTER value
//! resolved to its counter name.

use std::collections::BTreeMap;
use std::path::Path;

use gator_proto::apc::{Frame, FrameType, LocalCaptureReader, Record, SummaryFrame};
use gator_proto::ProtocolVersion;
use gator_xml::{Captured, Events};
use serde_json::{json, Value as Json};

use crate::args::{ApcDumpArgs, DumpFormat};
use crate::error::CliError;
use crate::output;
use crate::table::Table;

/// The frame file of a local capture.
const FRAMES_FILE: &str = "0000000000";

/// One counter value from the capture.
struct Value {
    timestamp_ns: i64,
    core: i64,
    key: i32,
    counter: String,
    value: i64,
}

/// Everything read from the capture.
#[derive(Default)]
struct Dump {
    protocol: Option<u32>,
    clocks: Option<Json>,
    attributes: Vec<(String, String)>,
    frames: BTreeMap<String, u64>,
    values: Vec<Value>,
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

fn read(dir: &Path) -> Result<Dump, CliError> {
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
    let name_of = |key: i32| -> String {
        let counter = u64::try_from(key)
            .ok()
            .and_then(|k| captured.as_ref()?.counter_by_key(k));
        match counter {
            Some(c) => {
                let title = events
                    .as_ref()
                    .and_then(|e| e.event_by_counter(&c.counter))
                    .map(|r| r.event.label());
                title.map_or_else(|| c.counter.clone(), |t| format!("{} ({t})", c.counter))
            }
            None => format!("key {key:#x}"),
        }
    };

    let mut dump = Dump {
        protocol,
        ..Dump::default()
    };
    for (index, frame) in LocalCaptureReader::new(&bytes).enumerate() {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => {
                dump.errors.push(format!("frame {index}: {e}"));
                break;
            }
        };
        let parsed = match Frame::parse(frame, version) {
            Ok(parsed) => parsed,
            Err(e) => {
                dump.errors.push(format!("frame {index}: {e}"));
                continue;
            }
        };
        *dump
            .frames
            .entry(frame_type_name(parsed.frame_type()))
            .or_default() += 1;
        match parsed {
            Frame::Summary(SummaryFrame::Summary(summary)) => {
                let c = summary.clocks;
                dump.clocks = Some(json!({
                    "realtime_ns": c.realtime_ns,
                    "boottime_ns": c.boottime_ns,
                    "monotonic_raw_ns": c.monotonic_raw_ns,
                    "monotonic_ns": c.monotonic_ns,
                }));
                dump.attributes = summary
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
                for record in block.records() {
                    match record {
                        Ok(Record::Timestamp(t)) => timestamp_ns = t,
                        Ok(Record::Core(c)) => core = c,
                        Ok(Record::Tid(_)) => {}
                        Ok(Record::Value { key, value }) => dump.values.push(Value {
                            timestamp_ns,
                            core,
                            key,
                            counter: name_of(key),
                            value,
                        }),
                        Err(e) => {
                            dump.errors.push(format!("frame {index}: {e}"));
                            break;
                        }
                    }
                }
            }
            Frame::Counter(c) => dump.values.push(Value {
                timestamp_ns: c.timestamp,
                core: i64::from(c.core),
                key: c.key,
                counter: name_of(c.key),
                value: c.value,
            }),
            _ => {}
        }
    }
    Ok(dump)
}

/// Runs `lizard apc-dump`.
pub fn run(args: &ApcDumpArgs) -> Result<i32, CliError> {
    if !args.path.is_dir() {
        return Err(CliError::bad_input(
            &args.path,
            "not a capture directory (it should hold 0000000000)",
        ));
    }
    let dump = read(&args.path)?;
    for error in &dump.errors {
        eprintln!("lizard: warning: {error}");
    }
    let text = match args.format {
        DumpFormat::Table => {
            let mut text = format!(
                "protocol: {}\n",
                dump.protocol.map_or_else(
                    || "unknown (no captured.xml; 950 assumed)".into(),
                    |p| p.to_string()
                )
            );
            if let Some(clocks) = &dump.clocks {
                text.push_str(&format!("clocks: {clocks}\n"));
            }
            for (k, v) in &dump.attributes {
                text.push_str(&format!("  {k} = {v}\n"));
            }
            text.push_str("\nframes:\n");
            let mut frames = Table::new(&["type", "count"]);
            for (name, count) in &dump.frames {
                frames.row(vec![name.clone(), count.to_string()]);
            }
            text.push_str(&frames.render());
            text.push_str(&format!("\nsamples: {}\n", dump.values.len()));
            let mut samples = Table::new(&["timestamp_ns", "core", "counter", "value"]);
            for v in &dump.values {
                samples.row(vec![
                    v.timestamp_ns.to_string(),
                    v.core.to_string(),
                    v.counter.clone(),
                    v.value.to_string(),
                ]);
            }
            text.push_str(&samples.render());
            text
        }
        DumpFormat::Csv => {
            let mut text = String::from("timestamp_ns,core,key,counter,value\n");
            for v in &dump.values {
                text.push_str(&format!(
                    "{},{},{},{},{}\n",
                    v.timestamp_ns,
                    v.core,
                    v.key,
                    output::csv_field(&v.counter),
                    v.value
                ));
            }
            text
        }
        DumpFormat::Json => output::to_json(&json!({
            "protocol": dump.protocol,
            "clocks": dump.clocks,
            "attributes": dump.attributes.iter().cloned().collect::<BTreeMap<_, _>>(),
            "frames": dump.frames,
            "samples": dump.values.iter().map(|v| json!({
                "timestamp_ns": v.timestamp_ns,
                "core": v.core,
                "key": v.key,
                "counter": v.counter,
                "value": v.value,
            })).collect::<Vec<_>>(),
            "errors": dump.errors,
        })),
    };
    output::write(None, &text)?;
    Ok(0)
}
