//! Opening the engine's sources by one policy, for every front end (the `lizard` command, the C API):
//! which of gatord and the local counters are used, what the local counters count, and what happens when
//! one of them fails.
//!
//! The policy, in order:
//! 1. The local counters are opened first when they are wanted whatever gatord does: a named target
//!    ([`Local::Target`]), [`Join::Always`], or no gatord at all. A named target that cannot be counted is
//!    an error ([`SourceError::Target`]); so is the whole system refused when [`Refusal::Fail`] says so
//!    (with [`Refusal::Probe`] the counters are probed on this process instead, and the refusal kept in
//!    [`LocalOpened::refused`]). The calling process ([`Local::ThisProcess`]) failing is not an error while
//!    gatord gives counters.
//! 2. The engine discovers gatord's counters, beside the local ones.
//! 3. A probed gatord ([`Gatord::Probe`]) that gives no counters is left out: the local counters, if they
//!    were held back for it ([`Join::WithoutGatord`]), are opened in its place, and
//!    [`Opened::gatord_unused`] says why gatord was not used.
//! 4. A required gatord ([`Gatord::Required`]) that gives no counters is an error
//!    ([`SourceError::Gatord`]), whatever the local counters give.
//! 5. No source giving any counter is [`SourceError::NoSource`], with both reasons.

mod error;
mod opened;

pub use error::{LocalFailure, SourceError};
pub use opened::{LocalOpened, Opened};

use hwcpipe::counting::{Target, TargetError};
use hwcpipe::CpuCounter;

use crate::config::Config;
use crate::error::Error;
use crate::hwc::{open_target_with, resolve_cpu_events, CommandWatch, HwcBackend};
use crate::lizard::Lizard;
use crate::transport::GatordAddress;

/// Whether and how gatord is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gatord {
    /// Not at all.
    Off,
    /// Used when it gives counters, left out (and said why) when it does not: an address nobody named,
    /// or one a host program always passes.
    Probe(GatordAddress),
    /// Named by the user: when it gives no counters, opening fails.
    Required(GatordAddress),
}

impl Gatord {
    /// The address, unless gatord is off.
    pub fn address(&self) -> Option<&GatordAddress> {
        match self {
            Gatord::Off => None,
            Gatord::Probe(address) | Gatord::Required(address) => Some(address),
        }
    }
}

/// What the local counters count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Local {
    /// No local counters.
    Off,
    /// The calling process, through HWCPipe's own profilers (and the Mali GPU): what a library loaded
    /// into a program counts.
    ThisProcess,
    /// A target the user named: failing to count it is an error.
    Target(Target),
    /// Every online CPU, summed (the default of a command-line tool).
    SystemWide {
        /// What a refusal of CPU-wide counting does.
        on_refusal: Refusal,
    },
}

/// What happens when CPU-wide counting, the default, is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Opening fails ([`TargetError::DefaultRefused`]), naming the setting that allows it.
    Fail,
    /// The counters are probed on this process, to say which exist (listing only).
    Probe,
}

/// Whether the local counters join a gatord that gives counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// Always: both sources when both give counters.
    Always,
    /// Only in gatord's place (a named [`Local::Target`] is always used).
    WithoutGatord,
}

/// The sources an engine is opened with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// gatord.
    pub gatord: Gatord,
    /// The local counters.
    pub local: Local,
    /// Whether the local counters join a working gatord.
    pub join: Join,
}

/// The local counters, opened.
enum Backend {
    /// HWCPipe for the calling process, opened by the engine (its failure is the engine's `hwcpipe_error`).
    ThisProcess,
    /// A target's counters.
    Target(Box<dyn HwcBackend>),
}

/// Opens the engine on `sources` by the policy of this module; `config`'s own `gatord` and `hwcpipe` are
/// replaced by what `sources` says.
pub fn open(sources: &Sources, mut config: Config) -> Result<Opened, SourceError> {
    config.gatord = sources.gatord.address().cloned();
    let wanted_now = match &sources.local {
        Local::Off => false,
        Local::Target(_) => true,
        _ => sources.join == Join::Always || config.gatord.is_none(),
    };
    let (backend, mut local) = match wanted_now {
        true => {
            let (backend, opened) = open_local(&sources.local, &config)?;
            (Some(backend), Some(opened))
        }
        false => (None, None),
    };
    let mut gatord_unused = None;
    let configured = match configure(&config, backend) {
        // A probed gatord gave nothing and the local counters were held back for it: use them.
        Err(Error::NoSource { gatord, .. })
            if matches!(sources.gatord, Gatord::Probe(_))
                && local.is_none()
                && sources.local != Local::Off =>
        {
            let (backend, opened) = match open_local(&sources.local, &config) {
                Ok(opened) => opened,
                Err(SourceError::Target(error)) => {
                    return Err(SourceError::NoSource {
                        gatord,
                        local: Box::new(LocalFailure::Open(error)),
                    })
                }
                Err(other) => return Err(other),
            };
            gatord_unused = Some(*gatord);
            local = Some(opened);
            config.gatord = None;
            configure(&config, Some(backend))
        }
        other => other,
    };
    let lizard = match configured {
        Ok(lizard) => lizard,
        Err(Error::NoSource { gatord, hwcpipe }) => {
            return Err(match &sources.gatord {
                Gatord::Required(address) => SourceError::Gatord {
                    address: address.clone(),
                    source: gatord,
                },
                _ => SourceError::NoSource {
                    gatord,
                    local: Box::new(LocalFailure::Engine(*hwcpipe)),
                },
            })
        }
        Err(other) => return Err(SourceError::Engine(other)),
    };
    if let Gatord::Required(address) = &sources.gatord {
        if lizard.gatord_error().is_some() {
            let source = lizard.into_gatord_error().unwrap_or(Error::NoCounters);
            return Err(SourceError::Gatord {
                address: address.clone(),
                source: Box::new(source),
            });
        }
    }
    Ok(Opened {
        lizard,
        local,
        gatord_unused,
    })
}

/// The engine over gatord (per `config`) and `backend`.
fn configure(config: &Config, backend: Option<Backend>) -> Result<Lizard, Error> {
    let mut config = config.clone();
    config.hwcpipe = matches!(backend, Some(Backend::ThisProcess));
    match backend {
        Some(Backend::Target(backend)) => Lizard::configure_with_backend(config, backend),
        _ => Lizard::configure(config),
    }
}

/// Opens the local counters `local` names, with the Arm PMU events among `config.cpu_events` (names),
/// counting kernel execution as `config.kernel` says.
fn open_local(local: &Local, config: &Config) -> Result<(Backend, LocalOpened), SourceError> {
    // The events are resolved only for a target: the calling process's HWCPipe resolves them itself.
    let resolved = match local {
        Local::Off | Local::ThisProcess => Vec::new(),
        _ => resolve_cpu_events(&config.cpu_events)?,
    };
    let target = |target: Target, refused: Option<TargetError>| -> Result<_, TargetError> {
        let counters = config.cpu_counters.as_deref().unwrap_or(&CpuCounter::ALL);
        let opened = open_target_with(
            &target,
            counters,
            &resolved,
            config.kernel,
            config.gpu_dumps,
        )?;
        Ok((
            Backend::Target(opened.backend),
            LocalOpened {
                target: Some(target),
                watch: opened.watch,
                refused,
                gpu_error: opened.gpu_error,
            },
        ))
    };
    match local {
        Local::Off | Local::ThisProcess => Ok((
            Backend::ThisProcess,
            LocalOpened {
                target: None,
                watch: CommandWatch::default(),
                refused: None,
                gpu_error: None,
            },
        )),
        Local::Target(named) => Ok(target(named.clone(), None)?),
        Local::SystemWide { on_refusal } => match target(Target::system_wide(false)?, None) {
            Err(refused) if refused.is_refusal() => match on_refusal {
                Refusal::Fail => Err(TargetError::DefaultRefused(Box::new(refused)).into()),
                Refusal::Probe => Ok(target(Target::Probe, Some(refused))?),
            },
            other => Ok(other?),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use gatord_sim::SimConfig;

    use super::*;
    use crate::transport::Timeouts;

    /// An address nothing listens on: a port just given back by the kernel.
    fn nobody() -> GatordAddress {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        address.into()
    }

    fn config() -> Config {
        Config {
            timeouts: Timeouts::new(Duration::from_millis(300), Duration::from_secs(5)),
            busy_retry: Duration::ZERO,
            ..Config::default()
        }
    }

    fn sources(gatord: Gatord, local: Local) -> Sources {
        Sources {
            gatord,
            local,
            join: Join::WithoutGatord,
        }
    }

    #[test]
    fn a_required_gatord_that_does_not_answer_is_an_error() {
        let address = nobody();
        let opened = open(
            &sources(Gatord::Required(address.clone()), Local::Off),
            config(),
        );
        match opened {
            Err(SourceError::Gatord { address: tried, .. }) => assert_eq!(tried, address),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_probed_gatord_that_does_not_answer_without_local_counters_is_no_source() {
        let opened = open(&sources(Gatord::Probe(nobody()), Local::Off), config());
        match opened {
            Err(SourceError::NoSource { local, .. }) => {
                assert!(matches!(
                    *local,
                    LocalFailure::Engine(Error::SourceDisabled)
                ))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_named_target_that_cannot_be_counted_is_an_error_whatever_gatord_does() {
        let daemon = gatord_sim::start(SimConfig::quick()).unwrap();
        let opened = open(
            &sources(
                Gatord::Probe(daemon.address().into()),
                Local::Target(Target::Pid(i32::MAX)),
            ),
            config(),
        );
        assert!(
            matches!(opened, Err(SourceError::Target(TargetError::NoProcess(_)))),
            "{opened:?}"
        );
    }

    #[test]
    fn a_gatord_that_answers_is_used_alone_unless_the_local_counters_join_it() {
        let daemon = gatord_sim::start(SimConfig::quick()).unwrap();
        let address: GatordAddress = daemon.address().into();
        let system = Local::SystemWide {
            on_refusal: Refusal::Probe,
        };
        let opened = open(&sources(Gatord::Required(address), system), config()).unwrap();
        assert!(opened.local.is_none() && opened.gatord_unused.is_none());
        assert!(opened.lizard.gatord_error().is_none());
        assert!(opened.lizard.count() > 0);
    }

    #[test]
    fn a_probed_gatord_that_does_not_answer_gives_way_to_the_local_counters() {
        let system = Local::SystemWide {
            on_refusal: Refusal::Probe,
        };
        match open(&sources(Gatord::Probe(nobody()), system), config()) {
            Ok(opened) => {
                assert!(opened.gatord_unused.is_some());
                assert!(opened.local.is_some_and(|l| l.target.is_some()));
            }
            // No perf events here: both reasons are kept.
            Err(SourceError::NoSource { local, .. }) => {
                assert!(matches!(*local, LocalFailure::Open(_)))
            }
            Err(other) => panic!("{other:?}"),
        }
    }
}
