//! What [`open`](super::open) opened.

use hwcpipe::counting::{Target, TargetError};

use crate::error::Error;
use crate::hwc::CommandWatch;
use crate::lizard::Lizard;

/// The local counters an engine was opened with.
#[derive(Debug, Default)]
pub struct LocalOpened {
    /// What they count; `None` for the calling process through HWCPipe ([`Local::ThisProcess`](super::Local)).
    pub target: Option<Target>,
    /// The counted command's fate, for a command target.
    pub watch: CommandWatch,
    /// Why CPU-wide counting, the default, was refused, when the counters are probed on this process
    /// instead.
    pub refused: Option<TargetError>,
    /// Why the Mali GPU gives no counters, when opening it failed.
    pub gpu_error: Option<hwcpipe::gpu::GpuError>,
}

/// An engine opened by the policy of [`crate::sources`].
#[derive(Debug)]
pub struct Opened {
    /// The engine.
    pub lizard: Lizard,
    /// The local counters, when they are used.
    pub local: Option<LocalOpened>,
    /// Why a probed gatord was left out, when the local counters stood in for it.
    pub gatord_unused: Option<Error>,
}
