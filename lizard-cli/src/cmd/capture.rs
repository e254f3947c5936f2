//! `lizard capture`: capture counters for a while and print their readings and time series.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use hwcpipe::counting::{self, Target};
use lizard_core::capture::trace_window::TraceWindow;
use lizard_core::capture::{chrome_trace, collect, csv, perfetto, report, table, Cores};
use lizard_core::{error_chain, Error as EngineError, GatordError, Lizard, Overflow};

use crate::args::{CaptureArgs, CaptureFormat};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::source::{self, Purpose};
use lizard_core::stat::shell_status;

/// Runs `lizard capture`.
pub fn run(args: &CaptureArgs) -> Result<i32, CliError> {
    interrupt::install();
    let target = args.target.target()?;
    // The output is opened (and a binary one refused on a terminal) before anything is captured.
    let destination = output::Destination::open(args.output.as_deref())?;
    if args.format == CaptureFormat::Perfetto {
        destination.check_binary("a Perfetto trace")?;
    }
    // A command is captured until it exits; anything else for the given time (2 s by default).
    let duration = match (args.duration, &target) {
        (Some(duration), _) => Some(duration),
        (None, Some(Target::Command(_))) => None,
        (None, _) => Some(DEFAULT_DURATION),
    };
    let mut opened = source::open(
        &args.source,
        target.as_ref(),
        Purpose::Capture,
        Some(args.interval),
        duration,
        &args.counters,
    )?;
    eprintln!("{}", opened.summary);
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
    let ids = if args.counters.is_empty() && !args.all {
        // Every counter, and in each counter set's slots the events the useful metrics need.
        let choice = lizard.default_counters();
        for set in &choice.sets {
            eprintln!("lizard: {set}");
        }
        enable(lizard, &choice.ids, true)?
    } else {
        let chosen: Vec<u32> = source::select(lizard, &args.counters)?
            .iter()
            .map(|c| c.id)
            .collect();
        enable(lizard, &chosen, args.counters.is_empty())?
    };
    let trace = args.trace.as_deref().map(start_trace).transpose()?;

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
    let ending = collect::Ending {
        elapsed,
        stop_error: stop_error.as_ref(),
        records,
        command: std::env::args().collect(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
    };
    let capture = collect::capture(lizard, &ids, mode, ending)?;
    for c in &capture.counters {
        if let Some(why) = &c.unavailable {
            eprintln!(
                "lizard: warning: {} is unavailable: {why}",
                c.counter_name()
            );
        }
    }
    if let Some(sampling) = capture.sampling.as_ref().filter(|s| s.degraded()) {
        for line in sampling.summary_lines() {
            eprintln!("lizard: warning: {line}");
        }
    }
    match args.format {
        CaptureFormat::Perfetto => destination.write_with(|out| perfetto::write(&capture, out))?,
        CaptureFormat::Table => destination.write_text(&table::render(&capture))?,
        CaptureFormat::Csv => destination.write_text(&csv::render(&capture))?,
        CaptureFormat::Json => destination.write_text(&capture.to_json())?,
        CaptureFormat::ChromeTrace => destination.write_text(&chrome_trace::render(&capture))?,
        // The same document `lizard report` reads back: the same capture, the same page.
        CaptureFormat::Html => destination.write_text(&report::html(&capture))?,
    }
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

/// Enables `chosen` and returns the ids enabled. Without named counters (`fit`), the events of a programmable
/// counter set beyond its slots are left out, one line per set saying which; named ones that do not fit
/// are an error.
pub(crate) fn enable(lizard: &mut Lizard, chosen: &[u32], fit: bool) -> Result<Vec<u32>, CliError> {
    let overflow = if fit {
        Overflow::LeaveOut
    } else {
        Overflow::Fail
    };
    let enabled = lizard.enable_fitting(chosen, overflow)?;
    for left_out in &enabled.left_out {
        eprintln!("lizard: {left_out}; name the events to capture with --counters");
    }
    Ok(enabled.ids)
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
        EngineError::Gatord(GatordError::Disconnected) => Some(format!(
            "gatord closed the connection {:.2}s into the capture; the samples received before are written",
            elapsed.as_secs_f64()
        )),
        EngineError::Gatord(GatordError::Daemon(text)) => Some(format!(
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

/// Starts a trace server on `socket` (`@name` abstract, else a path) for the capture's window.
fn start_trace(socket: &str) -> Result<TraceWindow, CliError> {
    let Ok(name) = socket.parse();
    let window = TraceWindow::start(&name).map_err(|e| {
        CliError::Other(format!("cannot start the trace server on '{socket}': {e}"))
    })?;
    eprintln!("trace records: listening on {socket}");
    Ok(window)
}
