//! What a counting measured: [`Report`] and its parts.

use std::process::ExitStatus;
use std::time::Duration;

use hwcpipe::cpu::{CpuMetric, MetricValue};
use hwcpipe::{CpuCounter, GpuCounter};

use lizard_core::Units;

use crate::child_times::ChildTimes;
use crate::error::GpuUnavailable;

/// One CPU series' total over the counting: a counter, summed over the threads or CPUs, or on one CPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTotal {
    /// The counter.
    pub counter: CpuCounter,
    /// The CPU, when each CPU is a series of its own.
    pub cpu: Option<u32>,
    /// The total (scaled up where the kernel multiplexed it).
    pub total: u64,
    /// Whether any part of it was scaled because the kernel multiplexed the counter.
    pub multiplexed: bool,
    /// The share of the time it could count that it was on a counter (perf's `(50.00%)`), 0 to 1.
    pub counted_share: Option<f64>,
}

impl CpuTotal {
    /// The series' name: the counter's, with `@cpuN` for one CPU's series (`TaskClock@cpu1`).
    pub fn name(&self) -> String {
        match self.cpu {
            Some(cpu) => format!("{}@cpu{cpu}", self.counter.name()),
            None => self.counter.name().to_owned(),
        }
    }
}

/// One Arm PMU event series' total over the counting: an event summed over the core types and the threads or
/// CPUs that count it, on one core type, or on one CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct EventTotal {
    /// The series' name: the event's (`INST_RETIRED`), or perf's spelling of one core type's part
    /// (`armv8_cortex_a55/INST_RETIRED/`), with `@cpuN` for one CPU's.
    pub name: String,
    /// The event's own name (`INST_RETIRED`), which the metrics' formulas use.
    pub event: String,
    /// The PMU (kernel's name) of one core type's part.
    pub pmu: Option<String>,
    /// The core type's name of one core type's part (`Cortex-A55`).
    pub core: Option<String>,
    /// The CPU, when each CPU is a series of its own.
    pub cpu: Option<u32>,
    /// Its unit.
    pub unit: Units,
    /// Arm's description, where known.
    pub description: Option<String>,
    /// The total (scaled up where the kernel multiplexed it).
    pub total: u64,
    /// Whether any part of it was scaled because the kernel multiplexed it.
    pub multiplexed: bool,
    /// The share of the time it could count that it was on a counter, 0 to 1 (`None`: it never could).
    pub counted_share: Option<f64>,
}

/// An Arm PMU event asked for that is not counted on one core type (`pmu`), or at all (`pmu` `None`), and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventNote {
    /// The event's name.
    pub event: String,
    /// The PMU it is not counted on; `None` when it is counted nowhere.
    pub pmu: Option<String>,
    /// Why.
    pub reason: String,
}

/// A CPU counter asked for that the kernel did not count, and why (HWCPipe's words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuUnavailable {
    /// The counter.
    pub counter: CpuCounter,
    /// Why it was not counted.
    pub reason: String,
}

/// An HWCPipe GPU counter's value over the counting (the whole GPU).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuTotal {
    /// The counter.
    pub counter: GpuCounter,
    /// Its value.
    pub value: f64,
}

/// A counter of Arm's Mali database asked for, and its value over the counting.
#[derive(Debug, Clone, PartialEq)]
pub struct DatabaseTotal {
    /// Its machine name.
    pub name: String,
    /// Its units.
    pub units: String,
    /// Its value; `None` when the counting gave none (a division by zero, or no GPU sample).
    pub value: Option<f64>,
}

/// A CPU metric over the counting.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricTotal {
    /// The metric.
    pub metric: &'static CpuMetric,
    /// Its value, or why it has none.
    pub value: MetricValue,
    /// The core type (its PMU's name) of a value over one core type's events; `None` over all of them.
    pub pmu: Option<String>,
}

/// Everything one counting measured.
#[derive(Debug)]
#[non_exhaustive]
pub struct Report {
    /// The command counted (its arguments), empty for a process or CPUs.
    pub command: Vec<String>,
    /// What was counted, for people (`command 'true' and its children`).
    pub scope: String,
    /// The command's exit status; `None` for a process or CPUs.
    pub exit: Option<ExitStatus>,
    /// How long the counting ran.
    pub elapsed: Duration,
    /// A command's CPU time, user and system (its children's included once reaped); `None` for a process
    /// or CPUs, or where `/proc` cannot tell.
    pub times: Option<ChildTimes>,
    /// Whether kernel execution was left out (asked for, or refused by the kernel).
    pub kernel_excluded: bool,
    /// The CPU counters asked for, in order (metric inputs included); empty when only GPU counters were.
    pub cpu_counters: Vec<CpuCounter>,
    /// Each counted CPU series' total; empty when only GPU counters were asked for.
    pub cpu: Vec<CpuTotal>,
    /// The CPU counters the kernel did not count, and why.
    pub cpu_unavailable: Vec<CpuUnavailable>,
    /// Each counted Arm PMU event series' total: each event summed, and per core type where several
    /// count it (or per CPU).
    pub events: Vec<EventTotal>,
    /// The Arm PMU events not counted on some core type, or at all, and why.
    pub event_notes: Vec<EventNote>,
    /// The HWCPipe GPU counters' values.
    pub gpu: Vec<GpuTotal>,
    /// The counters of Arm's database asked for.
    pub database: Vec<DatabaseTotal>,
    /// Why the GPU gave no values, when GPU counters were asked for and it gave none.
    pub gpu_unavailable: Option<GpuUnavailable>,
    /// The CPU metrics, when asked for: over every core type, then over each core type where the events
    /// are counted on several.
    pub metrics: Option<Vec<MetricTotal>>,
}

impl Report {
    /// The exit status a shell would report for the command; 0 for a process or CPUs.
    pub fn exit_code(&self) -> i32 {
        self.exit.map_or(0, super::shell_status)
    }
}
