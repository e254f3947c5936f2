//! `lizard capture`: capture counters for a while and print their readings and time series.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use hwcpipe::counting::{self, Target};
use lizard_core::{
    error_chain, Counter, Error as EngineError, Lizard, NoValue, ResultType, Sample, Value,
};
use serde_json::{json, Value as Json};

use crate::args::{CaptureArgs, CaptureFormat};
use crate::cores::{self, Cores};
use crate::error::CliError;
use crate::exit_status::shell_status;
use crate::interrupt;
use crate::output::{self, class_name, scaled_json, scaled_text};
use crate::report;
use crate::report::TraceRecord;
use crate::source::{self, counter_name, Purpose};
use crate::table::Table;
use crate::trace_window::TraceWindow;

/// One captured counter: its description, samples and reading.
struct Captured<'a> {
    counter: &'a Counter,
    /// The series: the samples of one instant from different cores combined ([`Lizard::series`]).
    samples: Vec<Sample>,
    dropped: u64,
    /// The reading, or why there is none (never a 0 standing in for "no sample").
    reading: Result<Json, String>,
    /// Whether gatord counted it per core.
    per_core: bool,
    /// With `--per-core`: each core's part (series and reading), by ascending core.
    cores: Vec<CorePart>,
    /// Why the source lists the counter but does not deliver it here, when so.
    unavailable: Option<String>,
}

/// One core's part of a counter counted per core.
struct CorePart {
    core: u32,
    samples: Vec<Sample>,
    reading: Result<Json, String>,
}

/// A core's reading as JSON (integer or double, as the counter reads), or why it has none.
fn core_reading(value: Option<Value>) -> Result<Json, String> {
    match value {
        Some(Value::Int(v)) => Ok(json!(v)),
        Some(Value::Float(v)) => Ok(json!(v)),
        None => Err(NoValue::NoSamples.to_string()),
    }
}

/// Runs `lizard capture`.
pub fn run(args: &CaptureArgs) -> Result<i32, CliError> {
    interrupt::install();
    let target = args.target.target()?;
    let mut opened = source::open(
        &args.source,
        target.as_ref(),
        Purpose::Capture,
        Some(args.interval),
    )?;
    eprintln!("{}", opened.summary);
    // A command is captured until it exits; anything else for the given time (2 s by default).
    let duration = match (args.duration, &opened.target) {
        (Some(duration), _) => Some(duration),
        (None, Some(Target::Command(_))) => None,
        (None, _) => Some(DEFAULT_DURATION),
    };
    let watch = opened.watch.clone();
    let pid = match opened.target {
        Some(Target::Pid(pid)) => Some(pid),
        _ => None,
    };
    let target_ended = move || {
        watch.as_ref().is_some_and(|w| w.status().is_some())
            || pid.is_some_and(counting::process_ended)
    };
    let lizard = &mut opened.lizard;
    let ids: Vec<u32> = source::select(lizard.counters(), &args.counters)?
        .iter()
        .map(|c| c.id)
        .collect();
    for &id in &ids {
        lizard.enable(id)?;
    }
    let trace = args.trace.as_deref().map(TraceWindow::start).transpose()?;

    let started = Instant::now();
    let start_ns = lizard.now_ns();
    let raw_offset = trace
        .as_ref()
        .map(|_| lizard_trace::monotonic_raw_ns() as i128 - i128::from(start_ns));
    lizard.start_capture()?;
    wait(duration, lizard, &target_ended);
    let end_ns = lizard.now_ns();
    let stop_error = lizard.stop_capture().err();
    let elapsed = started.elapsed();
    let failure = stop_error.as_ref().and_then(|e| failure_line(e, elapsed));
    if let (Some(error), None) = (&stop_error, &failure) {
        eprintln!("lizard: warning: {}", error_chain(error));
    }
    if interrupt::interrupted() {
        eprintln!(
            "lizard: interrupted after {:.2}s; writing what was captured",
            elapsed.as_secs_f64()
        );
    }

    let records = match (trace, raw_offset) {
        (Some(trace), Some(offset)) => trace.finish(start_ns, end_ns, offset),
        _ => Vec::new(),
    };
    let mode = match args.per_core {
        true => Cores::PerCore,
        false => Cores::Combined,
    };
    let captured = collect(lizard, &ids, mode)?;
    let text = match args.format {
        CaptureFormat::Table => table(&captured, &records, mode),
        CaptureFormat::Csv => csv(&captured, &records, mode),
        CaptureFormat::Json => output::to_json(&json_document(
            &captured,
            &records,
            elapsed,
            stop_error.as_ref(),
            mode,
        )),
        CaptureFormat::ChromeTrace => chrome_trace(&captured, &records, mode),
        // The report reads the JSON document, as `lizard report` does: the same capture, the same page.
        CaptureFormat::Html => {
            let document = json_document(&captured, &records, elapsed, stop_error.as_ref(), mode);
            let capture =
                report::Capture::from_value(document).map_err(|source| CliError::BadCapture {
                    path: args.output.clone().unwrap_or_else(|| "<stdout>".into()),
                    source,
                })?;
            report::html(&capture)
        }
    };
    output::write(args.output.as_deref(), &text)?;
    let command_status = opened.watch.as_ref().and_then(|watch| {
        if watch.killed() {
            eprintln!(
                "lizard: the command was still running when the capture ended; it was killed"
            );
        }
        watch.status()
    });
    if let (Some(pid), true) = (pid, target_ended()) {
        eprintln!("lizard: process {pid} ended during the capture");
    }
    match failure {
        Some(line) => {
            eprintln!("lizard: {line}");
            Ok(SOURCE_FAILED)
        }
        // Like `stat`, a counted command's exit status is the capture's.
        None => Ok(command_status.map_or(0, shell_status)),
    }
}

/// How long a capture without a command lasts when `--duration` is not given.
const DEFAULT_DURATION: Duration = Duration::from_secs(2);

/// The exit status of a capture whose source failed (the daemon died or reported an error) or that measured
/// nothing; the output holding what was received is still written.
const SOURCE_FAILED: i32 = 3;

/// The one line saying why a capture failed, for the stop errors that make it a failure; `None` for those
/// that are warnings (a missing end marker, skipped malformed frames).
fn failure_line(error: &EngineError, elapsed: Duration) -> Option<String> {
    match error {
        EngineError::Disconnected => Some(format!(
            "gatord closed the connection {:.2}s into the capture; the samples received before are written",
            elapsed.as_secs_f64()
        )),
        EngineError::Daemon(text) => Some(format!(
            "gatord reported an error during the capture: {text}"
        )),
        EngineError::NothingCaptured(_) => Some(format!("{error}; nothing was measured")),
        _ => None,
    }
}

/// How often a waiting capture checks whether its source ended.
const POLL: Duration = Duration::from_millis(50);

/// Waits `duration` (without one: until the target ends), until Ctrl-C, until the counted command or
/// process ends, or until the capture's source ends on its own (gatord closed the connection or reported
/// an error), showing progress on a terminal for captures over a second.
fn wait(duration: Option<Duration>, lizard: &Lizard, target_ended: &dyn Fn() -> bool) {
    let show =
        duration.is_none_or(|d| d > Duration::from_secs(1)) && std::io::stderr().is_terminal();
    let started = Instant::now();
    loop {
        let left = duration.map_or(POLL, |d| d.saturating_sub(started.elapsed()));
        if left.is_zero()
            || lizard.capture_ended()
            || target_ended()
            || interrupt::sleep(left.min(POLL))
        {
            break;
        }
        if show {
            let mut err = std::io::stderr().lock();
            let limit =
                duration.map_or_else(String::new, |d| format!(" / {:.1}s", d.as_secs_f64()));
            let _ = write!(
                err,
                "\rcapturing {:5.1}s{limit}",
                started.elapsed().as_secs_f64(),
            );
            let _ = err.flush();
        }
    }
    if show {
        eprint!("\r{:40}\r", "");
    }
}

fn collect<'a>(
    lizard: &'a Lizard,
    ids: &[u32],
    mode: Cores,
) -> Result<Vec<Captured<'a>>, CliError> {
    ids.iter()
        .map(|&id| {
            let counter = lizard.counter(id)?;
            let reading = match counter.result_type {
                ResultType::Integer => lizard.read_int(id).map(|v| json!(v)),
                ResultType::Floating => lizard.read_double(id).map(|v| json!(v)),
            };
            let mut unavailable = None;
            let reading = match reading {
                Ok(value) => Ok(value),
                Err(EngineError::NoValue { reason, .. }) => {
                    if let NoValue::Unavailable(why) = &reason {
                        eprintln!(
                            "lizard: warning: {} is unavailable: {why}",
                            counter_name(counter)
                        );
                        unavailable = Some(why.to_string());
                    }
                    Err(reason.to_string())
                }
                Err(other) => return Err(other.into()),
            };
            let cores = match mode {
                Cores::PerCore => lizard
                    .core_readings(id)?
                    .into_iter()
                    .map(|part| CorePart {
                        core: part.core,
                        reading: core_reading(part.value),
                        samples: part.samples,
                    })
                    .collect(),
                Cores::Combined => Vec::new(),
            };
            Ok(Captured {
                counter,
                per_core: lizard.counted_per_core(id)?,
                samples: lizard.series(id)?,
                dropped: lizard.dropped(id)?,
                reading,
                cores,
                unavailable,
            })
        })
        .collect()
}

fn table(captured: &[Captured<'_>], records: &[TraceRecord], mode: Cores) -> String {
    let mut table = Table::new(&[
        "id", "source", "counter", "units", "class", "samples", "value",
    ]);
    for c in captured {
        // The counter's row, then (with --per-core) one row per core.
        let series = std::iter::once((
            counter_name(c.counter).to_owned(),
            c.samples.len(),
            &c.reading,
        ))
        .chain(c.cores.iter().map(|part| {
            (
                cores::core_name(counter_name(c.counter), part.core),
                part.samples.len(),
                &part.reading,
            )
        }));
        for (name, count, reading) in series {
            table.row(vec![
                c.counter.id.to_string(),
                output::source_label(c.counter),
                name,
                c.counter.units.of_readings().to_string(),
                class_name(c.counter.class).to_owned(),
                count.to_string(),
                match reading {
                    Ok(value) => output::reading_text(value),
                    Err(reason) => reason.clone(),
                },
            ]);
        }
    }
    let mut text = table.render();
    text.push_str(&cores_note(captured, mode).map_or_else(String::new, |n| format!("\n{n}\n")));
    if !records.is_empty() {
        text.push_str(&format!(
            "\n{} trace records in the capture window\n",
            records.len()
        ));
    }
    text
}

fn csv(captured: &[Captured<'_>], records: &[TraceRecord], mode: Cores) -> String {
    let mut text = String::from("timestamp_ns,id,counter,value\n");
    let mut rows: Vec<(u64, String)> = Vec::new();
    for c in captured {
        for s in &c.samples {
            let row = format!(
                "{},{},{},{}\n",
                s.timestamp_ns,
                c.counter.id,
                output::csv_field(counter_name(c.counter)),
                scaled_text(c.counter, s.value)
            );
            rows.push((s.timestamp_ns, row));
        }
        for part in &c.cores {
            let name = cores::core_name(counter_name(c.counter), part.core);
            for s in &part.samples {
                let row = format!(
                    "{},{},{},{}\n",
                    s.timestamp_ns,
                    c.counter.id,
                    output::csv_field(&name),
                    scaled_text(c.counter, s.value)
                );
                rows.push((s.timestamp_ns, row));
            }
        }
    }
    for r in records {
        let label = format!("trace:{}@{}:{}", r.module, r.file, r.line);
        rows.push((
            r.timestamp_ns,
            format!(
                "{},,{},{}\n",
                r.timestamp_ns,
                output::csv_field(&label),
                r.seq
            ),
        ));
    }
    rows.sort_by_key(|(t, _)| *t);
    text.extend(rows.into_iter().map(|(_, row)| row));
    // Counters without a value get a comment row each, so a missing series is never silent.
    for c in captured {
        if let Err(reason) = &c.reading {
            text.push_str(&format!(
                "# {},{},no value: {}\n",
                c.counter.id,
                output::csv_field(counter_name(c.counter)),
                output::csv_field(reason)
            ));
        }
    }
    if let Some(note) = cores_note(captured, mode) {
        text.push_str(&format!("# {note}\n"));
    }
    text
}

/// What the outputs say about counters counted per core, when any was: that their values combine the
/// cores, and (with `--per-core`) that the `@cpuN` readings and series are each core's part.
fn cores_note(captured: &[Captured<'_>], mode: Cores) -> Option<String> {
    if !captured.iter().any(|c| c.per_core) {
        return None;
    }
    Some(match mode {
        Cores::Combined => format!("{}; --per-core shows each core", cores::COMBINED_NOTE),
        Cores::PerCore => format!("{}; COUNTER@cpuN is one core's part", cores::COMBINED_NOTE),
    })
}

/// The counters without a value, with the reason, as JSON.
fn no_value_json(captured: &[Captured<'_>]) -> Vec<Json> {
    captured
        .iter()
        .filter_map(|c| {
            let reason = c.reading.as_ref().err()?;
            Some(json!({
                "id": c.counter.id,
                "counter": counter_name(c.counter),
                "reason": reason,
                // The source lists it but does not deliver it here (not merely no sample in the window).
                "unavailable": c.unavailable,
            }))
        })
        .collect()
}

/// The first and last sample timestamps over every counter: the window the samples cover.
fn sample_span(captured: &[Captured<'_>]) -> Option<(u64, u64)> {
    let first = captured
        .iter()
        .filter_map(|c| c.samples.first())
        .map(|s| s.timestamp_ns)
        .min()?;
    let last = captured
        .iter()
        .filter_map(|c| c.samples.last())
        .map(|s| s.timestamp_ns)
        .max()?;
    Some((first, last))
}

fn json_document(
    captured: &[Captured<'_>],
    records: &[TraceRecord],
    elapsed: Duration,
    stop_error: Option<&lizard_core::Error>,
    mode: Cores,
) -> Json {
    let counters: Vec<Json> = captured
        .iter()
        .map(|c| {
            let mut entry = output::counter_json(c.counter);
            match &c.reading {
                Ok(value) => entry["value"] = value.clone(),
                Err(reason) => {
                    entry["value"] = Json::Null;
                    entry["no_value"] = json!(reason);
                    if let Some(why) = &c.unavailable {
                        entry["unavailable"] = json!(why);
                    }
                }
            }
            entry["dropped"] = json!(c.dropped);
            entry["samples"] = c
                .samples
                .iter()
                .map(|s| json!([s.timestamp_ns, scaled_json(c.counter, s.value)]))
                .collect();
            if c.per_core {
                entry["counted"] = json!("per core");
            }
            if mode == Cores::PerCore && c.per_core {
                entry["per_core"] = c
                    .cores
                    .iter()
                    .map(|part| {
                        let samples: Vec<Json> = part
                            .samples
                            .iter()
                            .map(|s| json!([s.timestamp_ns, scaled_json(c.counter, s.value)]))
                            .collect();
                        let (value, why) = match &part.reading {
                            Ok(value) => (value.clone(), Json::Null),
                            Err(reason) => (Json::Null, json!(reason)),
                        };
                        json!({ "core": part.core, "value": value, "no_value": why, "samples": samples })
                    })
                    .collect();
            }
            entry
        })
        .collect();
    let span = sample_span(captured);
    json!({
        // The window the samples cover (first to last sample), not the command's wall-clock time.
        "duration_s": span.map(|(first, last)| (last - first) as f64 / 1e9),
        "window_ns": span.map(|(first, last)| [first, last]),
        "wall_s": elapsed.as_secs_f64(),
        "warning": stop_error.map(|e| error_chain(e)),
        // How counters counted per core are shown: "combined" (value and samples combine the cores) or
        // "per-core" (each such counter also has `per_core`).
        "cores": mode.name(),
        "cores_note": cores_note(captured, mode),
        "counters": counters,
        "trace_records": records,
    })
}

fn chrome_trace(captured: &[Captured<'_>], records: &[TraceRecord], mode: Cores) -> String {
    let mut events = vec![json!({
        "name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": { "name": "lizard capture" }
    })];
    for c in captured {
        let series = std::iter::once((counter_name(c.counter).to_owned(), &c.samples)).chain(
            c.cores.iter().map(|part| {
                (
                    cores::core_name(counter_name(c.counter), part.core),
                    &part.samples,
                )
            }),
        );
        for (name, samples) in series {
            let name = format!("{name} ({})", c.counter.units.of_readings()).replace(" ()", "");
            for s in samples {
                events.push(json!({
                    "name": name,
                    "cat": output::source_label(c.counter),
                    "ph": "C",
                    "ts": s.timestamp_ns as f64 / 1000.0,
                    "pid": 1,
                    "tid": 0,
                    "args": { "value": scaled_json(c.counter, s.value) },
                }));
            }
        }
    }
    // A counter without a value is a visible mark at the start of the samples' window, not only metadata.
    let start_us = sample_span(captured).map_or(0.0, |(first, _)| first as f64 / 1000.0);
    for c in captured {
        let Err(reason) = &c.reading else { continue };
        events.push(json!({
            "name": format!("{}: no value", counter_name(c.counter)),
            "cat": "no value",
            "ph": "i",
            "s": "g",
            "ts": start_us,
            "pid": 1,
            "tid": 0,
            "args": { "reason": reason, "unavailable": c.unavailable },
        }));
    }
    for r in records {
        events.push(json!({
            "name": r.module,
            "cat": "trace",
            "ph": "i",
            "s": "p",
            "ts": r.timestamp_ns as f64 / 1000.0,
            "pid": 1,
            "tid": 1,
            "args": { "file": r.file, "line": r.line, "seq": r.seq, "pid": r.pid, "bytes": r.bytes },
        }));
    }
    output::to_json(&json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "counters_without_value": no_value_json(captured),
            "cores": mode.name(),
            "cores_note": cores_note(captured, mode),
        },
    }))
}
