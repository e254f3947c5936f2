//! [`Error`]: the error of [`HwcPipe`](crate::HwcPipe) operations.

use crate::cpu::CpuError;
use crate::gpu::GpuError;
use crate::selection::SelectionError;

/// An error of [`HwcPipe`](crate::HwcPipe): from the CPU side, the GPU side or the selection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CPU profiler failed.
    #[error(transparent)]
    Cpu(#[from] CpuError),
    /// The GPU profiler failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// CPU counters were enabled but there is no CPU profiler (not selected or not available;
    /// [`HwcPipe::cpu_error`](crate::HwcPipe::cpu_error) says why).
    #[error("there is no CPU profiler")]
    NoCpuProfiler,
    /// GPU counters were enabled but there is no GPU profiler (not selected or not available;
    /// [`HwcPipe::gpu_error`](crate::HwcPipe::gpu_error) says why).
    #[error("there is no GPU profiler")]
    NoGpuProfiler,
    /// The JSON counter selection was refused.
    #[error(transparent)]
    Selection(#[from] SelectionError),
}
