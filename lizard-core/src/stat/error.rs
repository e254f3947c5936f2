//! Why a counting could not be made, and why the GPU gave no values.

use hwcpipe::counting::TargetError;
use hwcpipe::cpu::{EventError, PmusError};
use hwcpipe::gpu::MaliUnavailable;
use hwcpipe::GpuError;

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
    /// A counter of Arm's database this GPU or its driver cannot give.
    #[error("{name} cannot be counted on this GPU")]
    NotCountable {
        /// Its machine name.
        name: &'static str,
        /// Why.
        #[source]
        reason: MaliUnavailable,
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
    /// Waiting for the counted command failed.
    #[error("waiting for the command")]
    Wait(#[source] std::io::Error),
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
