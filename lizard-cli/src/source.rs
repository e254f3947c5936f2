//! Opening the capture engine from the `--gatord`, `--no-gatord`, `--no-hwcpipe` and `--local` flags and
//! the target flags (`-- CMD`, `--pid`, `--system-wide`, `--cpu`).
//!
//! The local CPU counters always count what the user named: a target given on the command line, or else
//! the whole system (CPU-wide counters) where the kernel allows it. They are never silently the `lizard`
//! process itself. When gatord is used, the local counters are added only with `--local` or a target.

use std::time::Duration;

use lizard_core::sources::{Gatord, Join, Local, Refusal, SourceError, Sources};
use lizard_core::{error_chain, CommandWatch, Config, Counter, GatordAddress, Lizard, Source};

use crate::args::SourceArgs;
use crate::error::CliError;
use hwcpipe::counting::Target;

/// How long the implicit gatord at 127.0.0.1:8080 is given to answer a connection.
const PROBE_CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// What the local counters are opened for: a capture counts, a listing only needs to know what exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Counting: where the default (the whole system) is refused, that is an error explaining the choices.
    Capture,
    /// Listing: where the default is refused, the counters are probed on this process and labelled so.
    List,
    /// Serving (`lizard serve`): counting as for a capture, with gatord's windows in one session.
    Serve,
}

/// How often gatord flushes what it captured while `lizard serve` keeps one session open: a window's
/// closing sample then arrives within about 10 ms of its end.
const SERVE_LIVE_RATE_MS: u32 = 10;

/// An opened engine and a line saying which sources it uses.
pub struct Opened {
    /// The engine, configured.
    pub lizard: Lizard,
    /// "sources: …" for standard error.
    pub summary: String,
    /// What the local CPU counters count, when they are used.
    pub target: Option<Target>,
    /// The counted command's fate, for a command target.
    pub watch: Option<CommandWatch>,
}

/// The engine configuration the flags ask for (which sources: [`sources`]): the implicit gatord is given
/// [`PROBE_CONNECT_TIMEOUT`] to answer.
fn config(args: &SourceArgs, sample_interval: Option<Duration>) -> Config {
    let mut config = Config::default();
    if args.gatord.is_none() && !args.no_gatord {
        config.timeouts.connect = PROBE_CONNECT_TIMEOUT;
    }
    if let Some(interval) = sample_interval {
        config.sample_interval = interval;
    }
    config
}

/// The sources the flags name, by [`lizard_core::sources`]' policy: a named gatord is required, the implicit
/// one probed; the local counters count the named target, or else the whole system, and join gatord only
/// with `--local` or a target.
fn sources(
    args: &SourceArgs,
    target: Option<&Target>,
    purpose: Purpose,
) -> Result<Sources, CliError> {
    let gatord = match (args.no_gatord, &args.gatord) {
        (true, _) => Gatord::Off,
        (false, Some(text)) => {
            Gatord::Required(
                text.parse::<GatordAddress>()
                    .map_err(|e| CliError::BadAddress {
                        text: text.clone(),
                        reason: e.to_string(),
                    })?,
            )
        }
        (false, None) => Gatord::Probe(GatordAddress::default()),
    };
    if args.no_hwcpipe && target.is_some() {
        return Err(CliError::Usage(
            "a target (-- CMD, --pid, --system-wide, --cpu) needs the local counters: drop --no-hwcpipe"
                .into(),
        ));
    }
    let local = match (args.no_hwcpipe, target) {
        (true, _) => Local::Off,
        (false, Some(target)) => Local::Target(target.clone()),
        (false, None) => Local::SystemWide {
            on_refusal: match purpose {
                Purpose::List => Refusal::Probe,
                Purpose::Capture | Purpose::Serve => Refusal::Fail,
            },
        },
    };
    let join = if args.local {
        Join::Always
    } else {
        Join::WithoutGatord
    };
    Ok(Sources {
        gatord,
        local,
        join,
    })
}

/// The command line's words for sources that could not be opened.
fn cli_error(error: SourceError) -> CliError {
    match error {
        SourceError::Gatord { address, source } => CliError::Gatord {
            address: address.to_string(),
            reason: error_chain(&*source),
        },
        SourceError::NoSource { gatord, local } => CliError::NoSource(format!(
            "gatord: {}; local: {}",
            error_chain(&*gatord),
            error_chain(&*local)
        )),
        SourceError::Target(error) => CliError::Target(error),
        SourceError::Events(error) => CliError::events(&error),
        SourceError::Engine(lizard_core::Error::Direct(lizard_core::DirectError::Events(
            error,
        ))) => CliError::events(&error),
        SourceError::Engine(error) => CliError::Engine(error),
        other => CliError::Other(error_chain(&other)),
    }
}

/// Opens the engine, its store sized for a capture of `length` when known. An explicitly named gatord that fails is an error; the implicit one falls back to
/// the local counters, and the summary says so. A named target that cannot be counted is an error. The
/// names of `counters` that are Arm PMU events of this CPU are counted by the local counters too.
pub fn open(
    args: &SourceArgs,
    target: Option<&Target>,
    purpose: Purpose,
    sample_interval: Option<Duration>,
    length: Option<Duration>,
    counters: &[String],
) -> Result<Opened, CliError> {
    let sources = sources(args, target, purpose)?;
    let mut config = config(args, sample_interval);
    config.cpu_events = counters.to_vec();
    if let Some(length) = length {
        config.size_for(length);
    }
    if purpose == Purpose::Serve {
        config.mode = lizard_core::CaptureMode::Persistent;
        config.live_rate_ms = SERVE_LIVE_RATE_MS;
    }
    let address = sources.gatord.address().map(ToString::to_string);
    let opened = lizard_core::sources::open(&sources, config).map_err(cli_error)?;
    let lizard = opened.lizard;
    let count = |source: Source| {
        lizard
            .counters()
            .iter()
            .filter(|c| c.source == source)
            .count()
    };
    let mut parts = Vec::new();
    match (lizard.gatord_error(), &address) {
        (None, Some(address)) => parts.push(format!(
            "gatord at {address} ({} counters, system-wide)",
            count(Source::Gatord)
        )),
        (Some(lizard_core::Error::SourceDisabled), Some(address)) => {
            if let Some(reason) = &opened.gatord_unused {
                parts.push(format!(
                    "gatord at {address} not used ({})",
                    error_chain(reason)
                ));
            }
        }
        (Some(lizard_core::Error::SourceDisabled), _) | (_, None) => {}
        (Some(error), Some(address)) => parts.push(format!(
            "gatord at {address} not used ({})",
            error_chain(error)
        )),
    }
    let local = opened.local;
    if let Some(local) = &local {
        let gpu = count(Source::HwcPipeGpu);
        let why = match (&local.gpu_error, gpu) {
            (Some(reason), 0) => format!(" ({})", error_chain(reason)),
            _ => String::new(),
        };
        parts.push(format!(
            "local: {} CPU counters counting {}, {gpu} GPU counters{why}",
            count(Source::HwcPipeCpu),
            local
                .target
                .as_ref()
                .map_or_else(|| "this process".to_owned(), Target::scope),
        ));
        if let Some(refused) = &local.refused {
            parts.push(format!(
                "{}; the counters are listed as probed on this process and count a command \
                 (-- CMD) or a process of yours (--pid)",
                error_chain(refused)
            ));
        }
    }
    let target = local.as_ref().and_then(|l| l.target.clone());
    Ok(Opened {
        lizard,
        summary: format!("sources: {}", parts.join("; ")),
        watch: local
            .filter(|_| matches!(target, Some(Target::Command(_))))
            .map(|l| l.watch),
        target,
    })
}

/// The name a user types for `counter`: the gatord counter name or the HWCPipe counter name.
pub fn counter_name(counter: &Counter) -> &str {
    &counter.key
}
