//! CPU counters through Linux `perf_event_open`.
//!
//! [`CpuCounter`] lists HWCPipe's 17 counters and seven software ones; [`CpuProfiler`] opens them
//! for a [`CpuTarget`] and reads them as per-sample deltas ([`CpuSample`]), with one `read()` per
//! group or, where the kernel allows it and [`UserReads::Auto`] asks for it, from user space without
//! a system call ([`user_read`]; each reading says which, [`ReadPath`]).

/// The kernel's description of the Arm PMUs in sysfs (read in [`crate::sys`], the crate's kernel seam).
pub use crate::sys::arm_pmu;
mod config;
mod counter;
mod error;
mod group;
pub mod group_read;
pub mod metrics;
mod opener;
mod profiler;
mod sample;
pub mod scaling;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod user_read;

pub use config::{CpuConfig, CpuTarget, KernelCounting};
pub use counter::{CpuCounter, PerfEvent, UnknownCpuCounter};
pub use error::{CpuError, UnavailableReason};
pub use metrics::{CpuMetric, MetricValue, METRICS};
pub use profiler::CpuProfiler;
pub use sample::{CpuReading, CpuSample};
pub use user_read::{ReadPath, SyscallReason, UserReads};
