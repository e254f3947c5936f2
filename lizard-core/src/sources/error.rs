//! Why the engine's sources could not be opened.

use hwcpipe::counting::TargetError;

use crate::error::{error_chain, Error};
use crate::transport::GatordAddress;

/// Why [`open`](super::open) failed. Each variant keeps its cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// A required gatord gave no counters.
    #[error("cannot use gatord at {address}")]
    Gatord {
        /// The address tried.
        address: GatordAddress,
        /// Why.
        #[source]
        source: Box<Error>,
    },
    /// Neither gatord nor the local counters gave any counter.
    #[error(
        "no counter source is available (gatord: {}; local: {})",
        error_chain(gatord),
        error_chain(local)
    )]
    NoSource {
        /// Why gatord gave none.
        gatord: Box<Error>,
        /// Why the local counters gave none.
        local: Box<LocalFailure>,
    },
    /// What the local counters were to count could not be counted.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The Arm PMU events named for the local counters could not be resolved.
    #[error("the local CPU counters' Arm PMU events")]
    Events(#[from] crate::hwc::CpuEventsError),
    /// The engine refused its configuration.
    #[error(transparent)]
    Engine(Error),
}

/// Why the local counters gave no counter.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalFailure {
    /// They could not be opened.
    #[error(transparent)]
    Open(TargetError),
    /// The engine found no counter in them, or they were off.
    #[error(transparent)]
    Engine(Error),
}
