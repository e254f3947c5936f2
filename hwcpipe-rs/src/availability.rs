//! [`Availability`]: whether a counter is measured, and if not, why.

use core::fmt;

use crate::cpu::{CpuError, UnavailableReason};
use crate::gpu::{GpuError, Unavailable};

/// Whether a counter is measured by an [`HwcPipe`](crate::HwcPipe), and if not, why.
#[derive(Clone, Copy, Debug)]
pub enum Availability<'a> {
    /// The counter is opened and read.
    Available,
    /// No profiler of that side was requested (the selection for that side was empty).
    SideNotSelected,
    /// The CPU profiler could not be created at all.
    NoCpuProfiler(&'a CpuError),
    /// The GPU profiler could not be created at all (e.g. no `/dev/mali*`).
    NoGpuProfiler(&'a GpuError),
    /// The CPU profiler exists but this counter is not read.
    CpuCounter(UnavailableReason),
    /// The GPU profiler exists but cannot compute this counter.
    GpuCounter(Unavailable),
}

impl Availability<'_> {
    /// Whether the counter is measured.
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available)
    }
}

impl fmt::Display for Availability<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Availability::Available => f.write_str("available"),
            Availability::SideNotSelected => f.write_str("not selected"),
            Availability::NoCpuProfiler(e) => write!(f, "no CPU profiler: {e}"),
            Availability::NoGpuProfiler(e) => write!(f, "no GPU profiler: {e}"),
            Availability::CpuCounter(r) => r.fmt(f),
            Availability::GpuCounter(r) => r.fmt(f),
        }
    }
}
