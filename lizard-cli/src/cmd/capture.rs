//! `lizard capture`: capture counters for a while and print their readings and time series.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use lizard_core::{Counter, Lizard, ResultType, Sample};
use serde_json::{json, Value as Json};

use crate::args::{CaptureArgs, CaptureFormat};
use crate::error::CliError;
use crate::interrupt;
use crate::output::{self, class_name, scaled_json, scaled_text};
use crate::source::{self, counter_name, source_name};
use crate::table::Table;
use crate::trace_window::{TraceWindow, WindowRecord};

/// One captured counter: its description, samples and reading.
struct Captured<'a> {
    counter: &'a Counter,
    samples: Vec<Sample>,
    dropped: u64,
    reading: Json,
    /// Why the source never sends values for this counter (then `reading` is null).
    unavailable: Option<String>,
}

/// Runs `lizard capture`.
pub fn run(args: &CaptureArgs) -> Result<i32, CliError> {
    interrupt::install();
    let mut opened = source::open(&args.source, Some(args.interval))?;
    eprintln!("{}", opened.summary);
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
    wait(args.duration);
    let end_ns = lizard.now_ns();
    let stop_error = lizard.stop_capture().err();
    let elapsed = started.elapsed();
    if let Some(error) = &stop_error {
        eprintln!("lizard: warning: {}", source::chain(error));
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
    let captured = collect(lizard, &ids)?;
    let text = match args.format {
        CaptureFormat::Table => table(&captured, &records),
        CaptureFormat::Csv => csv(&captured, &records),
        CaptureFormat::Json => json_document(&captured, &records, elapsed, stop_error.as_ref()),
        CaptureFormat::ChromeTrace => chrome_trace(&captured, &records),
    };
    output::write(args.output.as_deref(), &text)?;
    Ok(0)
}

/// Waits `duration` (or until Ctrl-C), showing progress on a terminal for captures over a second.
fn wait(duration: Duration) {
    let show = duration > Duration::from_secs(1) && std::io::stderr().is_terminal();
    let started = Instant::now();
    loop {
        let left = duration.saturating_sub(started.elapsed());
        if left.is_zero() || interrupt::sleep(left.min(Duration::from_millis(100))) {
            break;
        }
        if show {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\rcapturing {:5.1}s / {:.1}s",
                started.elapsed().as_secs_f64(),
                duration.as_secs_f64()
            );
            let _ = err.flush();
        }
    }
    if show {
        eprint!("\r{:40}\r", "");
    }
}

fn collect<'a>(lizard: &'a Lizard, ids: &[u32]) -> Result<Vec<Captured<'a>>, CliError> {
    ids.iter()
        .map(|&id| {
            let counter = lizard.counter(id)?;
            let unavailable = lizard.unavailable(id)?.map(|why| why.to_string());
            let reading = match (&unavailable, counter.result_type) {
                (Some(why), _) => {
                    eprintln!(
                        "lizard: warning: {} is unavailable: {why}",
                        counter_name(counter)
                    );
                    Json::Null
                }
                (None, ResultType::Integer) => json!(lizard.read_int(id)?),
                (None, ResultType::Floating) => json!(lizard.read_double(id)?),
            };
            Ok(Captured {
                counter,
                samples: lizard.samples(id)?,
                dropped: lizard.dropped(id)?,
                reading,
                unavailable,
            })
        })
        .collect()
}

fn table(captured: &[Captured<'_>], records: &[WindowRecord]) -> String {
    let mut table = Table::new(&[
        "id", "source", "counter", "units", "class", "samples", "value",
    ]);
    for c in captured {
        table.row(vec![
            c.counter.id.to_string(),
            source_name(c.counter.source).to_owned(),
            counter_name(c.counter).to_owned(),
            c.counter.units.to_string(),
            class_name(c.counter.class).to_owned(),
            c.samples.len().to_string(),
            match &c.unavailable {
                Some(why) => format!("unavailable: {why}"),
                None => output::reading_text(&c.reading),
            },
        ]);
    }
    let mut text = table.render();
    if !records.is_empty() {
        text.push_str(&format!(
            "\n{} trace records in the capture window\n",
            records.len()
        ));
    }
    text
}

fn csv(captured: &[Captured<'_>], records: &[WindowRecord]) -> String {
    let mut text = String::from("timestamp_ns,id,counter,value\n");
    for c in captured {
        if let Some(why) = &c.unavailable {
            text.push_str(&format!(
                "# {} {}: unavailable: {why}\n",
                c.counter.id,
                counter_name(c.counter)
            ));
        }
    }
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
    text
}

fn record_json(r: &WindowRecord) -> Json {
    json!({
        "timestamp_ns": r.timestamp_ns,
        "seq": r.seq,
        "module": r.module,
        "file": r.file,
        "line": r.line,
        "pid": r.pid,
        "bytes": r.len,
    })
}

fn json_document(
    captured: &[Captured<'_>],
    records: &[WindowRecord],
    elapsed: Duration,
    stop_error: Option<&lizard_core::Error>,
) -> String {
    let counters: Vec<Json> = captured
        .iter()
        .map(|c| {
            let mut entry = output::counter_json(c.counter);
            entry["value"] = c.reading.clone();
            if let Some(why) = &c.unavailable {
                entry["unavailable"] = json!(why);
            }
            entry["dropped"] = json!(c.dropped);
            entry["samples"] = c
                .samples
                .iter()
                .map(|s| json!([s.timestamp_ns, scaled_json(c.counter, s.value)]))
                .collect();
            entry
        })
        .collect();
    output::to_json(&json!({
        "duration_s": elapsed.as_secs_f64(),
        "warning": stop_error.map(|e| source::chain(e)),
        "counters": counters,
        "trace_records": records.iter().map(record_json).collect::<Vec<_>>(),
    }))
}

fn chrome_trace(captured: &[Captured<'_>], records: &[WindowRecord]) -> String {
    let mut events = vec![json!({
        "name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": { "name": "lizard capture" }
    })];
    for c in captured {
        let name = format!("{} ({})", counter_name(c.counter), c.counter.units).replace(" ()", "");
        for s in &c.samples {
            events.push(json!({
                "name": name,
                "cat": source_name(c.counter.source),
                "ph": "C",
                "ts": s.timestamp_ns as f64 / 1000.0,
                "pid": 1,
                "tid": 0,
                "args": { "value": scaled_json(c.counter, s.value) },
            }));
        }
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
            "args": { "file": r.file, "line": r.line, "seq": r.seq, "pid": r.pid, "bytes": r.len },
        }));
    }
    output::to_json(&json!({ "traceEvents": events, "displayTimeUnit": "ns" }))
}
