//! The seam between the engine and a directly-read counter source (HWCPipe, or a stand-in in tests).

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::sampling::GpuPace;

use crate::counter::{
    CounterClass, CpuScope, CpuSeries, Derivation, PmuPart, ResultType, Source, Units,
};
use crate::error::Error;
use crate::store::Value;

/// The description of one counter a [`HwcBackend`] offers.
#[derive(Debug, Clone, PartialEq)]
pub struct HwcCounterInfo {
    /// The counter's name (`Cycles`, `GpuCycles`): the engine's `key` and `name`.
    pub name: String,
    /// A sentence describing it.
    pub description: String,
    /// Its unit.
    pub units: Units,
    /// CPU or GPU side.
    pub source: Source,
    /// Integer or fractional values.
    pub result_type: ResultType,
    /// How samples combine: [`CounterClass::Delta`] (a per-sample change, summed),
    /// [`CounterClass::Absolute`] (a per-sample level, averaged) or [`CounterClass::Derived`] (an equation
    /// over other counters, evaluated over a window's totals: `derivation` says how).
    pub class: CounterClass,
    /// The group it is shown in (`None`: the source's default category).
    pub category: Option<String>,
    /// For a derived counter, its equation; its counter inputs are indices into the backend's
    /// [`HwcBackend::counters`] list.
    pub derivation: Option<Derivation>,
    /// For one CPU's series of a CPU counter counted per CPU (its `name` is then `NAME@cpuN`), the counter
    /// and the CPU; `None` otherwise.
    pub cpu_series: Option<CpuSeries>,
    /// For an Arm PMU event, the event and the core type of its part.
    pub pmu_part: Option<PmuPart>,
}

/// How a CPU counter's total was scaled because the kernel multiplexed it (perf's `(50.00%)`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Scaling {
    /// Whether any part of the total was scaled up because the counter was not always on a hardware counter.
    pub multiplexed: bool,
    /// The share of the time it could count that it was on a counter, 0 to 1, where the kernel says.
    pub counted_share: Option<f64>,
}

/// A counter the backend knows of but cannot read here, and why. With the `serde` feature it serializes as a
/// map of its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UnreadableCounter {
    /// The counter's name.
    pub name: String,
    /// Why it is not read.
    pub reason: String,
    /// For an Arm PMU event, the event and the core type it is not counted on (`pmu` `None`: counted on
    /// none).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub pmu_part: Option<PmuPart>,
}

/// The GPU a [`HwcBackend`] reads, as its driver identified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDevice {
    /// The product (`Mali-G78`).
    pub product: String,
    /// The kbase driver's interface version (`JM 11.40`).
    pub driver: String,
}

/// A source of counters read directly (no daemon): it lists its counters once, then samples the enabled ones.
///
/// Call order: [`counters`](HwcBackend::counters) at configure time; then, per capture,
/// [`start`](HwcBackend::start) once, [`sample`](HwcBackend::sample) any number of times, [`stop`](HwcBackend::stop)
/// once. Every sample reports, per enabled counter, what happened **since the previous sample** (or since
/// `start` for the first one): the engine sums these deltas.
pub trait HwcBackend: Send + fmt::Debug {
    /// The counters this backend can really read, in a fixed order (index = position in this list).
    fn counters(&self) -> Vec<HwcCounterInfo>;
    /// Begins counting the counters at these indices (into [`counters`](HwcBackend::counters)).
    fn start(&mut self, enabled: &[usize]) -> Result<(), Error>;
    /// Appends `(index, delta since the previous sample)` for every enabled counter that has a value.
    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), Error>;
    /// Stops counting. Must not fail; calling it twice is harmless.
    fn stop(&mut self);
    /// How the last sample's totals were scaled, by counter index (the counters the kernel can multiplex).
    fn scaling(&self) -> Vec<(usize, Scaling)> {
        Vec::new()
    }

    /// Whether kernel execution is left out of the CPU counts (the kernel refused to count it).
    fn kernel_excluded(&self) -> bool {
        false
    }

    /// What the CPU counters count, for their title (`HWCPipe CPU (…)`): `this process` unless the backend
    /// counts something else (a command, a process by pid, whole CPUs).
    fn cpu_scope(&self) -> CpuScope {
        CpuScope::ThisProcess
    }
    /// Counters this backend knows of but cannot read on this machine (a Mali database counter the GPU or
    /// driver cannot give), with the reason; none by default.
    fn unreadable(&self) -> Vec<UnreadableCounter> {
        Vec::new()
    }
    /// The GPU whose counters this backend reads, if it reads one.
    fn gpu(&self) -> Option<GpuDevice> {
        None
    }
    /// The `enabled` counters sampled by the kernel every `interval` instead of by the engine's thread
    /// (CPU-wide counters: [`hwcpipe::counting::KernelSampler`]), their keys being the indices into
    /// [`counters`](HwcBackend::counters); or why not ([`NoKernelSampling`]), shown beside the capture's
    /// sampling. When
    /// it is given, [`start`](HwcBackend::start) and [`sample`](HwcBackend::sample) are not called for the
    /// capture; [`stop`](HwcBackend::stop) still is.
    fn kernel_sampler(
        &mut self,
        enabled: &[usize],
        interval: Duration,
    ) -> Result<KernelPlan, NoKernelSampling> {
        let _ = (enabled, interval);
        Err(NoKernelSampling::TaskCounters)
    }
    /// The GPU's counters, to be sampled on their own at the driver's pace ([`GpuSource`]), if this backend
    /// reads a GPU. The engine then gives [`start`](HwcBackend::start), [`sample`](HwcBackend::sample) and
    /// [`kernel_sampler`](HwcBackend::kernel_sampler) only the other counters.
    fn gpu_source(&self) -> Option<GpuPlan> {
        None
    }
    /// Looks after what the backend counts between samples, when no CPU counter is sampled and so
    /// [`sample`](HwcBackend::sample) is not called: the GPU's poller calls it after every dump (a counted
    /// command that has exited is reaped). Nothing by default.
    fn check_target(&mut self) {}
}

/// A backend's GPU counters ([`HwcBackend::gpu_source`]): the backend's indices `first..first + count`,
/// which are the source's own indices `0..count`.
#[derive(Debug, Clone)]
pub struct GpuPlan {
    /// The GPU side, shared with the backend (which lists its counters).
    pub source: Arc<Mutex<dyn GpuSource>>,
    /// The backend index of the source's counter 0.
    pub first: usize,
    /// How many of the backend's counters are the GPU's.
    pub count: usize,
}

/// A GPU's counters sampled on a poller thread of their own, at the driver's pace where the driver offers
/// one. Call order per capture: [`start`](GpuSource::start), [`next`](GpuSource::next) any number of times,
/// [`stop`](GpuSource::stop). Indices are the source's own ([`GpuPlan`]).
pub trait GpuSource: Send + fmt::Debug {
    /// Begins counting the counters at these indices, dumped every `interval`: by the driver itself where it
    /// can ([`GpuPace::Periodic`]), else one dump request per [`next`](GpuSource::next) ([`GpuPace::Manual`],
    /// with the driver's refusal).
    fn start(&mut self, enabled: &[usize], interval: Duration) -> Result<GpuPace, Error>;
    /// Waits at most `timeout` for the next dump (asking for it first if the pace is manual), and appends
    /// `(index, value over the dump's span)` for every enabled counter that has a value.
    fn next(
        &mut self,
        timeout: Duration,
        out: &mut Vec<(usize, Value)>,
    ) -> Result<GpuDump, GpuMiss>;
    /// Stops counting. Must not fail; calling it twice is harmless.
    fn stop(&mut self);
}

/// One dump a [`GpuSource`] took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuDump {
    /// The driver's timestamp of the end of the dump, ns (CLOCK_MONOTONIC_RAW on a real driver).
    pub timestamp_ns: u64,
    /// Whether the dump counts: `false` for a CSF GPU's dump with every counter zero shortly after setup,
    /// taken before its firmware enabled counting (it does so asynchronously).
    pub counting: bool,
    /// Whether the driver flagged the dump as covering more than one period (kinstr_prfcnt's stretched
    /// flag).
    pub stretched: bool,
}

/// Why [`GpuSource::next`] gave no dump.
#[derive(Debug)]
pub enum GpuMiss {
    /// No dump came by the deadline, in words: the period is missed unless a later dump covers it, and
    /// sampling goes on.
    Missed(String),
    /// The dump came flagged erroneous, in words: its period's counts are lost, and sampling goes on.
    Lost(String),
    /// The source failed: sampling the GPU ends with this error.
    Failed(Error),
}

/// Why the kernel does not sample a backend's counters ([`HwcBackend::kernel_sampler`]): the engine's
/// thread samples them, and the capture's account ([`SamplingMethod::Thread`](crate::SamplingMethod))
/// gives this reason with its causes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NoKernelSampling {
    /// The counters count a task: the kernel's timer would fire only while the task runs.
    #[error(
        "a task's counters are sampled by a thread (the kernel's timer would fire only while the task runs)"
    )]
    TaskCounters,
    /// GPU counters were among those asked for, dumped with each sample ([`crate::GpuDumps::WithSamples`]):
    /// the sampler thread takes the samples, a dump with each.
    #[error("the GPU is dumped with each sample, which the sampler thread takes")]
    GpuCounters,
    /// The kernel refused to open the sampling events.
    #[error("the kernel refused periodic sampling")]
    Refused(#[source] std::io::Error),
    /// The kernel's sampling opened, but the engine could not start draining it.
    #[error("the kernel's sampling could not start")]
    NotStarted(#[source] Box<Error>),
    /// A backend of the caller's declines, for its own reason.
    #[error("the backend declines kernel sampling")]
    Declined(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Counters the kernel samples for the engine ([`HwcBackend::kernel_sampler`]).
#[derive(Debug)]
pub struct KernelPlan {
    /// The opened sampler; its keys are backend counter indices.
    pub sampler: hwcpipe::counting::KernelSampler,
    /// Whether each counter is summed over the CPUs, so that its samples carry their CPU as their core
    /// (`false` when each CPU is a counter of its own).
    pub per_core: bool,
}
