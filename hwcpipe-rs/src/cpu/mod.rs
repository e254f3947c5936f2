//! CPU counters through Linux `perf_event_open`.
//!
//! [`CpuCounter`] lists HWCPipe's 17 counters and seven software ones; [`CpuProfiler`] opens them
//! for a [`CpuTarget`] and reads them as per-sample deltas ([`CpuSample`]), with one `read()` per
//! group or, where the kernel allows it and [`UserReads::Auto`] asks for it, from user space without
//! a system call ([`user_read`]; each reading says which, [`ReadPath`]).
//!
//! Beside them, any Arm PMU event of the CPU in hand: named as a user names it ([`EventSpec`]: Arm's
//! mnemonic, the kernel's name, or a number), resolved against the system's PMUs ([`CpuPmus`], one per
//! core type, with Arm's per-core event lists from [`PmuData`] under the `json` feature) into a
//! [`PmuEvent`], and counted on every PMU that has it ([`CpuConfig::events`], [`EventReading`] summed and
//! [`PmuReading`] per core type).

/// The kernel's description of the Arm PMUs in sysfs (read in [`crate::sys`], the crate's kernel seam).
pub use crate::sys::arm_pmu;
mod config;
mod counter;
mod error;
mod event_spec;
mod event_status;
mod group;
pub mod group_read;
pub mod metrics;
mod opener;
#[cfg(feature = "json")]
mod pmu_data;
mod pmu_event;
mod pmus;
mod profiler;
mod sample;
pub mod scaling;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
pub mod user_read;

pub use config::{CpuConfig, CpuTarget, KernelCounting};
pub use counter::{CpuCounter, PerfEvent, UnknownCpuCounter};
pub use error::{CpuError, UnavailableReason};
pub use event_spec::{EventName, EventSpec, EventSpecError};
pub use event_status::{EventStatus, PartStatus};
pub use metrics::{CpuMetric, MetricInput, MetricValue, METRICS, SLOTS};
#[cfg(feature = "json")]
pub use pmu_data::{CoreList, PmuData, PmuDataError, MAX_LIST_BYTES, PMU_DATA_VAR};
pub use pmu_event::{EventError, EventUnavailable, Placement, PmuEvent};
#[cfg(feature = "json")]
pub use pmus::PmusError;
pub use pmus::{Checked, CoreEvent, CpuPmu, CpuPmus, ListedEvent, NotOnPmu};
pub use profiler::CpuProfiler;
pub use sample::{CpuReading, CpuSample, EventReading, PmuReading};
pub use user_read::{ReadPath, SyscallReason, UserReads};
