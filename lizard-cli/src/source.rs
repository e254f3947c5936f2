//! Opening the capture engine from the `--gatord`, `--no-gatord`, `--no-hwcpipe` and `--local` flags.
//!
//! When gatord is used, the local (HWCPipe) counters are left out unless `--local` asks for them: their CPU
//! counters count only the `lizard` process, which beside gatord's system-wide counters would mislead.

use std::time::Duration;

use lizard_core::{Config, Counter, GatordAddress, Lizard, Source, Timeouts};

use crate::args::SourceArgs;
use crate::error::CliError;

/// How long the implicit gatord at 127.0.0.1:8080 is given to answer a connection.
const PROBE_CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// An opened engine and a line saying which sources it uses.
pub struct Opened {
    /// The engine, configured.
    pub lizard: Lizard,
    /// "sources: …" for standard error.
    pub summary: String,
}

/// Builds the engine configuration the flags ask for.
pub fn config(args: &SourceArgs, sample_interval: Option<Duration>) -> Result<Config, CliError> {
    let mut config = Config::default();
    // With gatord (named or the implicit one), local counters only on request; `open` falls back to them
    // when the implicit gatord does not answer.
    config.hwcpipe = !args.no_hwcpipe && (args.no_gatord || args.local);
    config.gatord = if args.no_gatord {
        None
    } else if let Some(text) = &args.gatord {
        Some(
            text.parse::<GatordAddress>()
                .map_err(|_| CliError::BadAddress(text.clone()))?,
        )
    } else {
        config.timeouts = Timeouts {
            connect: PROBE_CONNECT_TIMEOUT,
            ..Timeouts::default()
        };
        Some(GatordAddress::default())
    };
    if let Some(interval) = sample_interval {
        config.sample_interval = interval;
    }
    Ok(config)
}

/// Opens the engine. An explicitly named gatord that fails is an error; the implicit one falls back to
/// local counters, and the summary says so.
pub fn open(args: &SourceArgs, sample_interval: Option<Duration>) -> Result<Opened, CliError> {
    let config = config(args, sample_interval)?;
    let address = config.gatord.as_ref().map(ToString::to_string);
    let implicit = args.gatord.is_none() && !args.no_gatord;
    let fallback = Config {
        gatord: None,
        hwcpipe: true,
        ..config.clone()
    };
    // Why the implicit gatord was not used, when the local counters stood in for it.
    let mut gatord_unused = None;
    let configured = match Lizard::configure(config) {
        // The implicit gatord did not answer and local counters were held back for it: use them instead.
        Err(lizard_core::Error::NoSource { gatord, .. })
            if implicit && !args.no_hwcpipe && !args.local =>
        {
            gatord_unused = Some(chain(&*gatord));
            Lizard::configure(fallback).map_err(|error| match error {
                lizard_core::Error::NoSource { hwcpipe, .. } => {
                    lizard_core::Error::NoSource { gatord, hwcpipe }
                }
                other => other,
            })
        }
        other => other,
    };
    let lizard = match configured {
        Ok(lizard) => lizard,
        Err(lizard_core::Error::NoSource { gatord, hwcpipe }) => {
            return Err(match (&args.gatord, address) {
                (Some(_), Some(address)) => CliError::Gatord {
                    address,
                    reason: chain(&*gatord),
                },
                _ => CliError::NoSource(format!(
                    "gatord: {}; local: {}",
                    chain(&*gatord),
                    chain(&*hwcpipe)
                )),
            });
        }
        Err(other) => return Err(other.into()),
    };
    if let (Some(address), Some(error)) = (&args.gatord, lizard.gatord_error()) {
        return Err(CliError::Gatord {
            address: address.clone(),
            reason: chain(error),
        });
    }
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
            "gatord at {address} ({} counters)",
            count(Source::Gatord)
        )),
        (Some(lizard_core::Error::SourceDisabled), Some(address)) => {
            if let Some(reason) = &gatord_unused {
                parts.push(format!("gatord at {address} not used ({reason})"));
            }
        }
        (Some(lizard_core::Error::SourceDisabled), _) | (_, None) => {}
        (Some(error), Some(address)) => {
            parts.push(format!("gatord at {address} not used ({})", chain(error)))
        }
    }
    match lizard.hwcpipe_error() {
        None => parts.push(format!(
            "local HWCPipe ({} CPU counters counting this process only, {} GPU counters)",
            count(Source::HwcPipeCpu),
            count(Source::HwcPipeGpu)
        )),
        Some(lizard_core::Error::SourceDisabled) => {}
        Some(error) => parts.push(format!("local HWCPipe not used ({})", chain(error))),
    }
    Ok(Opened {
        lizard,
        summary: format!("sources: {}", parts.join("; ")),
    })
}

/// An error and its causes on one line.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The short name of a counter's source.
pub fn source_name(source: Source) -> &'static str {
    match source {
        Source::Gatord => "gatord",
        Source::HwcPipeCpu => "cpu",
        Source::HwcPipeGpu => "gpu",
    }
}

/// The name a user types for `counter`: the gatord counter name or the HWCPipe counter name.
pub fn counter_name(counter: &Counter) -> &str {
    &counter.key
}

/// The counters named in `names` (matched against the counter name, then the event name, ignoring ASCII
/// case), or every counter when `names` is empty.
pub fn select<'a>(counters: &'a [Counter], names: &[String]) -> Result<Vec<&'a Counter>, CliError> {
    if names.is_empty() {
        return Ok(counters.iter().collect());
    }
    let mut chosen: Vec<&Counter> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let by_key: Vec<&Counter> = counters
            .iter()
            .filter(|c| c.key.eq_ignore_ascii_case(name))
            .collect();
        let found = if by_key.is_empty() {
            counters
                .iter()
                .filter(|c| c.name.eq_ignore_ascii_case(name))
                .collect()
        } else {
            by_key
        };
        if found.is_empty() {
            let candidates = counters
                .iter()
                .flat_map(|c| [c.key.as_str(), c.name.as_str()]);
            return Err(CliError::UnknownCounter {
                name: name.to_owned(),
                hint: crate::names::hint(name, candidates),
            });
        }
        for counter in found {
            if !chosen.iter().any(|c| c.id == counter.id) {
                chosen.push(counter);
            }
        }
    }
    Ok(chosen)
}
