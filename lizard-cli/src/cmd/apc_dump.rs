//! `lizard apc-dump PATH.apc`: read a Streamline local capture directory.
//!
//! Reads `captured.xml` (protocol version and the key → counter map), `events.xml` if present (titles
//! and names), and the frame file `0000000000` (u32-LE length + APC frame, no end marker). Prints the
//! SUMMARY (clocks, attributes), the frame count per type, the perf events gatord announced (PERF_ATTRS: key,
//! type, config, sample period, whether their values are sent), and every BLOCK_COUNTER / COUNTER value and
//! every perf counter value (PERF_DATA sample records: per core, the increase of the event's running total
//! since its previous reading on that core, with the total) resolved to its counter name. Perf values are on
//! the same clock as BLOCK_COUNTER values: nanoseconds since capture start.

use std::collections::BTreeMap;
use std::path::Path;

use gator_proto::apc::{
    Delivery, Frame, FrameType, LocalCaptureReader, PerfCounterTracker, Record, SummaryFrame,
};
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
    /// For a perf counter value: the running total on that core (`value` is its increase).
    total: Option<u64>,
}

/// One perf event gatord announced.
struct PerfEvent {
    key: i32,
    counter: String,
    kind: u32,
    config: u64,
    period: String,
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

/// Everything read from the capture.
#[derive(Default)]
struct Dump {
    protocol: Option<u32>,
    clocks: Option<Json>,
    attributes: Vec<(String, String)>,
    frames: BTreeMap<String, u64>,
    values: Vec<Value>,
    perf_events: Vec<PerfEvent>,
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
                    // A slot resolves through its counter set and the event programmed into it.
                    .and_then(|e| e.resolve(&c.counter, c.event))
                    .map(|r| r.event.label());
                title.map_or_else(|| c.counter.clone(), |t| format!("{} ({t})", c.counter))
            }
            None if key >= 0x7fff_fff0 => format!("gatord's own perf event (key {key:#x})"),
            None => format!("key {key:#x}"),
        }
    };
    let mut tracker = PerfCounterTracker::new();
    let mut perf = Vec::new();

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
        if let Err(e) = tracker.handle_frame(&parsed, &mut perf) {
            dump.errors.push(format!("frame {index}: {e}"));
        }
        for p in perf.drain(..) {
            dump.values.push(Value {
                timestamp_ns: p.time_ns,
                core: i64::from(p.core),
                key: p.key,
                counter: name_of(p.key),
                value: i64::try_from(p.delta).unwrap_or(i64::MAX),
                total: Some(p.total),
            });
        }
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
                            total: None,
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
                total: None,
            }),
            _ => {}
        }
    }
    let mut announced: Vec<_> = tracker.attrs().map(|(key, attr)| (key, *attr)).collect();
    announced.sort_by_key(|(key, _)| *key);
    dump.perf_events = announced
        .into_iter()
        .map(|(key, attr)| PerfEvent {
            key,
            counter: name_of(key),
            kind: attr.kind,
            config: attr.config,
            period: match (attr.sample_period(), attr.sample_freq()) {
                (Some(p), _) => p.to_string(),
                (_, Some(f)) => format!("{f} Hz"),
                _ => "none".into(),
            },
            delivery: delivery_text(tracker.delivery(key)),
        })
        .collect();
    if tracker.lost_records() > 0 {
        dump.errors.push(format!(
            "the kernel lost {} perf record(s) (PERF_RECORD_LOST); perf values after a loss still add up",
            tracker.lost_records()
        ));
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
            if !dump.perf_events.is_empty() {
                text.push_str("\nperf events (PERF_ATTRS):\n");
                let mut events = Table::new(&[
                    "key",
                    "counter",
                    "type",
                    "config",
                    "sample period",
                    "values",
                ]);
                for e in &dump.perf_events {
                    events.row(vec![
                        format!("{:#x}", e.key),
                        e.counter.clone(),
                        e.kind.to_string(),
                        format!("{:#x}", e.config),
                        e.period.clone(),
                        e.delivery.to_string(),
                    ]);
                }
                text.push_str(&events.render());
            }
            text.push_str(&format!(
                "\nsamples: {} (perf values: increase since the previous reading on that core)\n",
                dump.values.len()
            ));
            let mut samples =
                Table::new(&["timestamp_ns", "core", "counter", "value", "perf total"]);
            for v in &dump.values {
                samples.row(vec![
                    v.timestamp_ns.to_string(),
                    v.core.to_string(),
                    v.counter.clone(),
                    v.value.to_string(),
                    v.total.map_or_else(String::new, |t| t.to_string()),
                ]);
            }
            text.push_str(&samples.render());
            text
        }
        DumpFormat::Csv => {
            let mut text = String::from("timestamp_ns,core,key,counter,value,perf_total\n");
            for v in &dump.values {
                text.push_str(&format!(
                    "{},{},{},{},{},{}\n",
                    v.timestamp_ns,
                    v.core,
                    v.key,
                    output::csv_field(&v.counter),
                    v.value,
                    v.total.map_or_else(String::new, |t| t.to_string()),
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
                "perf_total": v.total,
            })).collect::<Vec<_>>(),
            "perf_events": dump.perf_events.iter().map(|e| json!({
                "key": e.key,
                "counter": e.counter,
                "type": e.kind,
                "config": e.config,
                "sample_period": e.period,
                "values": e.delivery,
            })).collect::<Vec<_>>(),
            "errors": dump.errors,
        })),
    };
    output::write(None, &text)?;
    Ok(0)
}
