//! Why a counting could not be made, and why the GPU gave no values.

use hwcpipe::counting::TargetError;
use hwcpipe::cpu::{EventError, PmusError};
use hwcpipe::GpuError;

use lizard_core::capture::RunError;
use lizard_core::hwc::CpuEventsError;
use lizard_core::sources::SourceError;
use lizard_core::ChoiceError;
use lizard_core::Error;

/// Why [`count`](super::count) failed. Each variant keeps its cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StatError {
    /// A name that is no CPU, HWCPipe GPU or (on this GPU) Arm database counter.
    #[error("unknown counter '{name}'")]
    UnknownCounter {
        /// The name given.
        name: String,
        /// Every counter name it may have been meant as (for a "did you mean" hint).
        candidates: Vec<String>,
    },
    /// A name that is no CPU or HWCPipe GPU counter, and may be one of Arm's Mali database; those need a
    /// Mali GPU, and none could be opened.
    #[error("unknown counter '{name}': counters of Arm's Mali database need a Mali GPU")]
    NoGpuForDatabase {
        /// The name given.
        name: String,
        /// The CPU and HWCPipe GPU counter names (for a "did you mean" hint).
        candidates: Vec<String>,
        /// Why there is no GPU to read it.
        #[source]
        gpu: GpuUnavailable,
    },
    /// A counter the local source knows of but cannot count here (a counter of Arm's database this GPU or
    /// its driver cannot give).
    #[error("{name} cannot be counted here: {reason}")]
    NotCountable {
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A name spelled as an Arm PMU event (a number, `PMU/EVENT/`) that is no event of this CPU.
    #[error("no Arm PMU event of this CPU")]
    Event(#[from] EventError),
    /// The CPU's PMUs could not be described (the kernel's sysfs, or Arm's data that `LIZARD_PMU_DATA`
    /// names).
    #[error("the CPU's PMUs could not be described")]
    Pmus(#[from] PmusError),
    /// The target's CPU counters could not be opened, started or read.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The target's counters could not be opened as the engine's source.
    #[error("the target's counters could not be opened")]
    Sources(#[source] Box<SourceError>),
    /// The counters could not be chosen or enabled.
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    /// The capture could not start, or its values could not be read.
    #[error(transparent)]
    Engine(#[from] Error),
    /// The capture could not run.
    #[error(transparent)]
    Capture(Box<RunError>),
}

impl From<CpuEventsError> for StatError {
    fn from(error: CpuEventsError) -> StatError {
        match error {
            CpuEventsError::Event(error) => StatError::Event(error),
            CpuEventsError::Pmus(error) => StatError::Pmus(error),
            other => StatError::Sources(Box::new(SourceError::Events(other))),
        }
    }
}

/// Why the Mali GPU gave no values over a counting: the stage that failed and HWCPipe's error (the
/// message is HWCPipe's own).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GpuUnavailable {
    /// No GPU could be opened.
    #[error(transparent)]
    Open(GpuError),
    /// The GPU refused the counters asked for.
    #[error(transparent)]
    Enable(GpuError),
    /// Counting could not start.
    #[error(transparent)]
    Run(GpuError),
    /// The sample covering the counting could not be read.
    #[error(transparent)]
    Sample(GpuError),
}

impl GpuUnavailable {
    /// HWCPipe's error.
    pub fn cause(&self) -> &GpuError {
        match self {
            GpuUnavailable::Open(e)
            | GpuUnavailable::Enable(e)
            | GpuUnavailable::Run(e)
            | GpuUnavailable::Sample(e) => e,
        }
    }
}
