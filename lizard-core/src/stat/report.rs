//! What a counting measured: [`Report`] and its parts.

use std::process::ExitStatus;
use std::time::Duration;

use hwcpipe::cpu::{CpuMetric, MetricValue};
use hwcpipe::{CpuCounter, GpuCounter};

use super::child_times::ChildTimes;
use super::error::GpuUnavailable;

/// One CPU series' total over the counting: a counter, summed over the threads or CPUs, or on one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTotal {
    /// The counter.
    pub counter: CpuCounter,
    /// The CPU, when each CPU is a series of its own.
    pub cpu: Option<u32>,
    /// The total (scaled up where the kernel multiplexed it).
    pub total: u64,
    /// Whether any part of it was scaled because the kernel multiplexed the counter.
    pub multiplexed: bool,
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
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DatabaseTotal {
    /// Its machine name.
    pub name: &'static str,
    /// Its units, as the database writes them.
    pub units: &'static str,
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
    /// The HWCPipe GPU counters' values.
    pub gpu: Vec<GpuTotal>,
    /// The counters of Arm's database asked for.
    pub database: Vec<DatabaseTotal>,
    /// Why the GPU gave no values, when GPU counters were asked for and it gave none.
    pub gpu_unavailable: Option<GpuUnavailable>,
    /// The CPU metrics, when asked for.
    pub metrics: Option<Vec<MetricTotal>>,
}

impl Report {
    /// The exit status a shell would report for the command; 0 for a process or CPUs.
    pub fn exit_code(&self) -> i32 {
        self.exit.map_or(0, super::shell_status)
    }
}
