//! Counting a command, a process or CPUs from start to end, as `perf stat` does: the CPU counters'
//! totals, the CPU metrics computed from them, and the Mali GPU's counters over the same time.
//!
//! Call order: [`Choice::new`] (the counters, by name) → [`count`] (sorts the names that are no HWCPipe
//! counter into Arm PMU events of this CPU and counters of the Mali database, opens the GPU, then the
//! target's CPU counters and events; runs until the command exits, the process ends, the duration passes or
//! the caller's stop says so) → a [`Report`]. With the `serde` feature, a report serializes as one JSON document
//! ([`Report`]'s `Serialize`).

mod child_times;
mod choice;
mod count;
#[cfg(feature = "serde")]
mod document;
mod error;
mod events;
mod exit_status;
mod report;

pub use child_times::ChildTimes;
pub use choice::Choice;
pub use count::{count, Options};
pub use error::{GpuUnavailable, StatError};
pub use exit_status::shell_status;
pub use report::{
    CpuTotal, CpuUnavailable, DatabaseTotal, EventNote, EventTotal, GpuTotal, MetricTotal, Report,
};
