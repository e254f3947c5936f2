//! One capture from start to end ([`run`]): the counters chosen and enabled, the capture started, waited
//! for, stopped, and its document made. `lizard capture` and `lizard_rs.capture` are this function with
//! their own [`Watch`]: how they wait, what stops them early, what they tell the user.

use std::time::{Duration, Instant};

use super::collect::{self, Ending};
use super::{Capture, Cores, TraceRecord};
use crate::enabling::{ChoiceError, Chosen, Counters};
use crate::{Error, Lizard};

/// What one capture takes and how long it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Plan {
    /// The counters it takes.
    pub counters: Counters,
    /// How long it runs; `None`: until the [`Watch`] ends it or the source ends on its own.
    pub length: Option<Duration>,
    /// Whether counters counted per core show each core's part.
    pub cores: Cores,
    /// The command line recorded in the document (`run.command`).
    pub command: Vec<String>,
    /// The tool recorded in the document (`run.tool_version`).
    pub tool_version: String,
    /// A trace server on this socket for the capture's window: its records join the document (feature
    /// `trace`).
    #[cfg(feature = "trace")]
    pub trace: Option<lizard_trace::SocketName>,
}

impl Plan {
    /// A capture of `counters` for `length` (`None`: until the watch or the source ends it), each counter
    /// combined over its cores, recorded as made by `command` of this crate's version.
    pub fn new(counters: Counters, length: Option<Duration>, command: Vec<String>) -> Plan {
        Plan {
            counters,
            length,
            cores: Cores::Combined,
            command,
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            #[cfg(feature = "trace")]
            trace: None,
        }
    }
}

/// What the caller of [`run`] is asked while the capture runs.
pub trait Watch {
    /// The counters are chosen and enabled and the capture is about to start: what a user should be told
    /// (each counter set's default events, the events left out).
    fn starting(&mut self, _chosen: &Chosen) {}

    /// Waits at most `at_most` (the capture has run for `elapsed`), and says whether to end the capture now:
    /// Ctrl-C, or the counted command has exited. Called until the plan's length is reached or the source
    /// ends on its own.
    fn wait(&mut self, at_most: Duration, elapsed: Duration) -> bool;
}

/// How often [`run`] looks at the source and asks its [`Watch`].
pub const POLL: Duration = Duration::from_millis(50);

/// Why a capture ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ended {
    /// Its length was reached.
    Length,
    /// The watch ended it.
    Watch,
    /// Its source ended on its own: gatord closed the connection or reported an error.
    Source,
}

/// A capture that ran: its document, and how it ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct Captured {
    /// Everything it measured.
    pub document: Capture,
    /// The error the capture stopped with: the document holds what was captured before it.
    pub stop_error: Option<Error>,
    /// Why it ended.
    pub ended: Ended,
    /// How long it ran.
    pub elapsed: Duration,
}

/// Why a capture did not run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The counters could not be chosen or enabled.
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    /// The trace server could not start (feature `trace`).
    #[cfg(feature = "trace")]
    #[error("cannot start the trace server on '{socket}': {source}")]
    Trace {
        /// The socket the plan named.
        socket: lizard_trace::SocketName,
        /// Why the server did not start.
        source: lizard_trace::ServerError,
    },
    /// The engine could not start the capture, or could not read what it captured.
    #[error(transparent)]
    Engine(#[from] Error),
}

/// Runs one capture on `lizard` as `plan` says, asking `watch` while it waits. A capture that stops with
/// an error still gives its document ([`Captured::stop_error`]); only a capture that could not start, or
/// whose values could not be read, is an error.
pub fn run(lizard: &mut Lizard, plan: &Plan, watch: &mut dyn Watch) -> Result<Captured, RunError> {
    let chosen = lizard.enable_counters(&plan.counters)?;
    let traced = traced(plan)?;
    watch.starting(&chosen);

    let started = Instant::now();
    let start_ns = lizard.now_ns();
    let raw_offset = traced
        .as_ref()
        .map(|_| i128::from(monotonic_raw_ns()) - i128::from(start_ns));
    lizard.start_capture()?;
    let ended = wait(lizard, plan.length, watch);
    let end_ns = lizard.now_ns();
    let stop_error = lizard.stop_capture().err();
    let elapsed = started.elapsed();

    let records = finish(traced, start_ns, end_ns, raw_offset);
    let ending = Ending {
        elapsed,
        stop_error: stop_error.as_ref(),
        records,
        command: plan.command.clone(),
        tool_version: plan.tool_version.clone(),
    };
    let document = collect::capture(lizard, &chosen.ids, plan.cores, ending)?;
    Ok(Captured {
        document,
        stop_error,
        ended,
        elapsed,
    })
}

/// Waits until the length is reached, the source ends or the watch ends the capture. The length counts from
/// here, once the capture has started: starting a gatord session takes a while.
fn wait(lizard: &Lizard, length: Option<Duration>, watch: &mut dyn Watch) -> Ended {
    let started = Instant::now();
    loop {
        let elapsed = started.elapsed();
        let left = length.map_or(POLL, |length| length.saturating_sub(elapsed));
        if left.is_zero() {
            return Ended::Length;
        }
        if lizard.capture_ended() {
            return Ended::Source;
        }
        if watch.wait(left.min(POLL), elapsed) {
            return Ended::Watch;
        }
    }
}

#[cfg(feature = "trace")]
type Traced = super::trace_window::TraceWindow;
#[cfg(not(feature = "trace"))]
type Traced = std::convert::Infallible;

/// The trace server the plan asks for, started.
#[cfg(feature = "trace")]
fn traced(plan: &Plan) -> Result<Option<Traced>, RunError> {
    plan.trace
        .as_ref()
        .map(|name| {
            Traced::start(name).map_err(|source| RunError::Trace {
                socket: name.clone(),
                source,
            })
        })
        .transpose()
}

#[cfg(not(feature = "trace"))]
fn traced(_plan: &Plan) -> Result<Option<Traced>, RunError> {
    Ok(None)
}

/// The trace server's records of the capture's window, the server stopped.
#[cfg(feature = "trace")]
fn finish(
    traced: Option<Traced>,
    start_ns: u64,
    end_ns: u64,
    raw_offset: Option<i128>,
) -> Vec<TraceRecord> {
    match (traced, raw_offset) {
        (Some(window), Some(offset)) => window.finish(start_ns, end_ns, offset),
        _ => Vec::new(),
    }
}

#[cfg(not(feature = "trace"))]
fn finish(traced: Option<Traced>, _: u64, _: u64, _: Option<i128>) -> Vec<TraceRecord> {
    if let Some(never) = traced {
        match never {}
    }
    Vec::new()
}

/// `CLOCK_MONOTONIC_RAW`, the trace records' clock.
#[cfg(feature = "trace")]
fn monotonic_raw_ns() -> u64 {
    lizard_trace::monotonic_raw_ns()
}

#[cfg(not(feature = "trace"))]
fn monotonic_raw_ns() -> u64 {
    0
}
