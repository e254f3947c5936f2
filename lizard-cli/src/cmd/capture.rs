//! `lizard capture`: capture counters for a while and print their readings and time series.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use hwcpipe::counting::{self, Target};
use lizard_core::capture::{self, Cores, Plan, Watch};
use lizard_core::{error_chain, Chosen, Counters, Error as EngineError, GatordError};
use lizard_render::{chrome_trace, csv, perfetto, report, table};

use crate::args::{CaptureArgs, CaptureFormat};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::source::{self, Purpose};
use lizard_stat::shell_status;

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
        watch.as_ref().is_some_and(|w| w.exited()) || pid.is_some_and(counting::process_ended)
    };
    let counters = match (args.counters.is_empty(), args.all) {
        (true, false) => Counters::Default,
        (true, true) => Counters::All,
        (false, _) => Counters::Named(args.counters.clone()),
    };
    let mut plan = Plan::new(counters, duration, std::env::args().collect());
    plan.cores = match args.per_core {
        true => Cores::PerCore,
        false => Cores::Combined,
    };
    plan.trace = args.trace.as_deref().map(|socket| {
        let Ok(name) = socket.parse();
        name
    });
    let mut progress = Progress {
        length: duration,
        shown: duration.is_none_or(|d| d > Duration::from_secs(1))
            && std::io::stderr().is_terminal(),
        trace: args.trace.as_deref(),
        target_ended: &target_ended,
    };
    let captured = capture::run(&mut opened.lizard, &plan, &mut progress)?;
    progress.clear();
    let stop_error = captured.stop_error;
    let elapsed = captured.elapsed;
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
    let capture = captured.document;
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

/// Tells the user what a choice of counters left to the defaults or left out: one line per counter set.
pub(crate) fn tell(chosen: &Chosen) {
    for set in &chosen.sets {
        eprintln!("lizard: {set}");
    }
    for left_out in &chosen.left_out {
        eprintln!("lizard: {left_out}; name the events to capture with --counters");
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

/// How `lizard capture` waits: until Ctrl-C or the counted command or process ends, showing progress on a
/// terminal for captures over a second.
struct Progress<'a> {
    length: Option<Duration>,
    shown: bool,
    /// The trace server's socket, when records are taken.
    trace: Option<&'a str>,
    target_ended: &'a dyn Fn() -> bool,
}

impl Watch for Progress<'_> {
    fn starting(&mut self, chosen: &Chosen) {
        tell(chosen);
        if let Some(socket) = self.trace {
            eprintln!("trace records: listening on {socket}");
        }
    }

    fn wait(&mut self, at_most: Duration, elapsed: Duration) -> bool {
        if (self.target_ended)() || interrupt::sleep(at_most) {
            return true;
        }
        if self.shown {
            let mut err = std::io::stderr().lock();
            let limit = self
                .length
                .map_or_else(String::new, |d| format!(" / {:.1}s", d.as_secs_f64()));
            let _ = write!(
                err,
                "\rcapturing {:5.1}s{limit}",
                elapsed.as_secs_f64() + at_most.as_secs_f64()
            );
            let _ = err.flush();
        }
        false
    }
}

impl Progress<'_> {
    /// Clears the progress line.
    fn clear(&self) {
        if self.shown {
            eprint!("\r{:40}\r", "");
        }
    }
}
