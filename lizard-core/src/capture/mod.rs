//! The capture document: everything one capture measured, as one typed value. The engine builds it once
//! after a capture ([`collect::capture`]); every output of `lizard capture` is written from it by the
//! `lizard-render` crate (the summary table, the CSV rows, the chrome trace, the Perfetto trace, the HTML
//! report, two documents compared) and `--format json` is this type serialized, so `lizard report FILE`
//! reads back exactly what the capture printed.
//!
//! The JSON form is versioned by [`SCHEMA_VERSION`] (the `schema_version` key). A reader takes a document
//! without the key as version 1 (the form written before the key was added) and refuses a newer one by
//! name rather than misreading it. Fields added later are optional, so version 1 readers of this crate
//! keep reading them.

pub mod collect;
pub mod cores;
mod facts;
mod plan;
#[cfg(feature = "trace")]
pub mod trace_window;

use serde::{Deserialize, Serialize};
use serde_json::Number;

pub use crate::{CpuSeries, PmuPart, Scaling, Units};
pub use cores::Cores;
pub use facts::{Class, Counted, Method, Pace, Source, ValueType};
pub use plan::{run, Captured, Ended, Plan, RunError, Watch, POLL};

/// The version of the capture document this tool writes, and the newest it reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Why a text is not a capture document this tool can read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The text is not JSON, or not shaped like the document `lizard capture --format json` writes.
    #[error("not a capture document as `lizard capture --format json` writes it")]
    NotACapture(#[source] serde_json::Error),
    /// The document is of a later version than this tool reads.
    #[error(
        "capture document version {found}, but this lizard reads versions up to {SCHEMA_VERSION}"
    )]
    NewerVersion {
        /// The document's `schema_version`.
        found: u32,
    },
    /// A counter has no value and no reason for it (`"value": null` without `"no_value"`).
    #[error("counter {id} ({counter}) has no value and no reason why (\"no_value\")")]
    MissingReason {
        /// The counter's id.
        id: u32,
        /// The counter's name.
        counter: String,
    },
}

/// A capture: its counters with their time series and readings, and the trace records of its window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capture {
    /// The document's version ([`SCHEMA_VERSION`] when written by this tool; 1 when absent).
    #[serde(default = "first_version")]
    pub schema_version: u32,
    /// The length of the window the samples cover (first to last sample over every counter), in seconds;
    /// `None` when no counter got a sample. Not the command's wall-clock time ([`wall_s`](Self::wall_s)).
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// The first and last sample timestamps over every counter (ns, the capture's time base); `None` when
    /// no counter got a sample.
    pub window_ns: Option<[u64; 2]>,
    /// When the capture started (ns, the capture's time base): the local counters count from here, so a
    /// derived counter's reading over the capture covers the time from here to its last sample. Absent in
    /// documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ns: Option<u64>,
    /// The capturing host's `CLOCK_BOOTTIME` at time zero of [`window_ns`](Self::window_ns) and every sample
    /// timestamp, in ns: the capture placed on the clock other traces of the host use (a Perfetto trace of
    /// it lines up with them). Absent in documents written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub boottime_zero_ns: Option<u64>,
    /// How long the capture command ran, in seconds.
    #[serde(default)]
    pub wall_s: Option<f64>,
    /// The warning the capture ended with (a missing end marker, skipped frames), with its causes.
    #[serde(default)]
    pub warning: Option<String>,
    /// How counters counted per core are shown: `combined` (each counter's value and samples combine the
    /// cores) or `per-core` (each such counter also has [`per_core`](CapturedCounter::per_core)).
    #[serde(default)]
    pub cores: Cores,
    /// The sentence saying how per-core values were combined, when a counter was counted per core.
    #[serde(default)]
    pub cores_note: Option<String>,
    /// What ran and where: the tool, the command line, the machine (absent in documents written before
    /// it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
    /// How the local counters' periodic sampling went (absent when no local counter was captured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<LocalSampling>,
    /// The captured counters, in the order they were chosen.
    pub counters: Vec<CapturedCounter>,
    /// The application trace records received during the capture window (`--trace`).
    #[serde(default)]
    pub trace_records: Vec<TraceRecord>,
}

fn first_version() -> u32 {
    1
}

/// What ran and where, so that two runs can be told apart and compared (`lizard diff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The version of `lizard` that captured.
    pub lizard_version: String,
    /// The command line of the capture (`lizard capture --duration 2s -- ./app`).
    pub command: Vec<String>,
    /// The machine's host name, when the kernel gives one.
    #[serde(default)]
    pub host: Option<String>,
    /// The kernel (`Linux 6.1.0-13-arm64`).
    #[serde(default)]
    pub kernel: Option<String>,
    /// The architecture (`aarch64`, `x86_64`).
    #[serde(default)]
    pub arch: String,
    /// The online CPUs.
    #[serde(default)]
    pub online_cpus: Vec<u32>,
    /// Each online CPU's MIDR_EL1 (Arm), naming its core design: `{"cpu": 0, "midr": "0x410fd083"}`.
    #[serde(default)]
    pub cores: Vec<CoreId>,
    /// The CPU model the kernel names (other architectures).
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// The gatord protocol version of the session, when gatord was a source.
    #[serde(default)]
    pub gatord_protocol: Option<i64>,
    /// The daemon and its machine as gatord described them at the capture's start, when gatord was a source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gatord: Option<GatordInfo>,
    /// The Mali GPU the local counters read (`Mali-G78`), when they read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Its kbase driver's interface version (`JM 11.40`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_driver: Option<String>,
}

impl RunInfo {
    /// One line for people: `lizard 0.1.0 on board, Linux 6.1.0-13-arm64, aarch64, 4 CPUs`.
    pub fn summary(&self) -> String {
        let mut text = format!("lizard {}", self.lizard_version);
        if let Some(host) = &self.host {
            text.push_str(&format!(" on {host}"));
        }
        for part in [self.kernel.as_deref(), Some(self.arch.as_str())]
            .into_iter()
            .flatten()
            .filter(|p| !p.is_empty())
        {
            text.push_str(&format!(", {part}"));
        }
        match self.online_cpus.len() {
            0 => {}
            1 => text.push_str(", 1 CPU"),
            n => text.push_str(&format!(", {n} CPUs")),
        }
        if let Some(gatord) = &self.gatord {
            text.push_str(", gatord");
            if let Some(build) = &gatord.build_id {
                text.push_str(&format!(" build {build}"));
            }
            if let Some(model) = &gatord.model {
                text.push_str(&format!(" on {model}"));
            }
        }
        if let Some(gpu) = &self.gpu {
            text.push_str(&format!(", {gpu}"));
            if let Some(driver) = &self.gpu_driver {
                text.push_str(&format!(" (kbase {driver})"));
            }
        }
        text
    }
}

/// The gatord daemon of a capture and the machine it runs on (its `<captured>` document's `<target>`): gatord
/// has no product version on the wire, so its build id and source checksum identify it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatordInfo {
    /// `gatord_build_id` (`oss`: built from Arm's open sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_id: Option<String>,
    /// `gatord_src_md5sum`: the checksum of the daemon's sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_md5sum: Option<String>,
    /// The machine's model (`unknown` on x86).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The operating system (`linux`, `android`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The operating system's version, when gatord gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os_version: Option<String>,
    /// The highest core's `(implementer << 12) | part number` in hexadecimal (`0xfffff`: other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpuid: Option<String>,
    /// The CPU count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// The Mali GPU gatord names, if it sees one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
}

/// One CPU and its MIDR_EL1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreId {
    /// The CPU number.
    pub cpu: u32,
    /// Its MIDR_EL1, in hexadecimal (`0x410fd083`).
    pub midr: String,
}

/// How the local (HWCPipe) counters' periodic sampling went over the capture window: one sample at the
/// start, one per interval, one at the stop. A period the sampler woke too late for is missed, and counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalSampling {
    /// The interval asked for (`--interval`), in ns.
    pub interval_ns: u64,
    /// The window sampled, from the start sample to the stop sample, in ns.
    pub sampled_ns: u64,
    /// Whole periods in the window.
    pub expected: u64,
    /// Periodic samples taken (the start and stop samples not included).
    pub delivered: u64,
    /// Periods skipped because the sampler woke a whole period or more late.
    pub missed: u64,
    /// The longest time between two consecutive samples, in ns.
    pub largest_gap_ns: u64,
    /// Who sampled: `kernel` (the kernel's timers wrote each period into ring buffers, drained in batches;
    /// CPU-wide counters), `thread` (a thread woken every interval) or `gpu` (only the GPU's counters, on
    /// their own poller). Absent in documents of earlier versions, which were all sampled by a thread.
    #[serde(default)]
    pub method: Method,
    /// Rings the kernel sampled (CPUs × counter groups); the periods above are counted over all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rings: Option<u64>,
    /// Records the kernel dropped because a ring was full (`PERF_RECORD_LOST`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_records: Option<u64>,
    /// Times the kernel throttled a timer (`PERF_RECORD_THROTTLE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<u64>,
    /// How long the timers were throttled, summed over the rings, in ns (Linux 6.16 and later stop the
    /// whole group meanwhile: its counters miss that time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_ns: Option<u64>,
    /// Missed periods that throttling and lost records do not explain: the CPU was idle, and Linux's
    /// timer takes no sample on an idle CPU. Its next sample holds the counts of the whole stretch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_periods: Option<u64>,
    /// Why a thread sampled rather than the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_reason: Option<String>,
    /// Sampled by the kernel: from the first counter group to start counting to the last, on any CPUs, in
    /// ns, as the kernel's records tell (CPU-wide counters are enabled one group after another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ns: Option<u64>,
    /// Sampled by the kernel: when each CPU's counters all counted, after the capture's start.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_starts: Vec<CpuStartNs>,
    /// Counter groups whose start is unknown: their timer wrote no record (their CPUs are absent from
    /// `cpu_starts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_starts: Option<u64>,
    /// How the GPU's counters were sampled, apart from the CPUs' (absent when no GPU counter was captured,
    /// and in documents of earlier versions). With method `gpu` no CPU counter was sampled, and the numbers
    /// above are these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuSamplingDoc>,
}

/// How the GPU's counters were sampled over the capture window: a poller of their own taking the driver's
/// dumps. Every period is delivered (a sample of one period), folded (into a sample covering several),
/// missed (no counts for it) or not counting yet (a CSF GPU's first dumps).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuSamplingDoc {
    /// Who dumped: `periodic` (the driver by itself every interval) or `manual` (one request per period).
    pub pace: Pace,
    /// Why manual: the driver's refusal to dump by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_reason: Option<String>,
    /// The interval asked for, in ns.
    pub interval_ns: u64,
    /// The window, from the start of counting to the stop, in ns.
    pub sampled_ns: u64,
    /// Whole periods in the window.
    pub expected: u64,
    /// Samples stored, one dump each.
    pub delivered: u64,
    /// Periods folded into a sample covering more than one period (their counts are kept).
    pub folded: u64,
    /// Periods without their counts: a dump flagged erroneous, or none by the stop.
    pub missed: u64,
    /// Why the first missed dump was missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_reason: Option<String>,
    /// Dumps at the start that counted nothing yet, left out of the series.
    #[serde(default)]
    pub not_counting: u64,
    /// Why, when some were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_counting_reason: Option<String>,
    /// The longest time between two dumps, in ns.
    pub largest_gap_ns: u64,
}

impl GpuSamplingDoc {
    /// One line for people: `GPU sampling every 1 ms, dumped by the driver itself: 998 of 1000 periods
    /// delivered, 1 folded, 1 missed (no dump came within 20.000 ms), largest gap 3.000 ms`.
    pub fn summary(&self) -> String {
        let ms = |ns: u64| ns as f64 / 1e6;
        let by = match (&self.pace, &self.manual_reason) {
            (Pace::Periodic, _) => "dumped by the driver itself".to_owned(),
            (_, Some(reason)) => format!("dumped on request ({reason})"),
            _ => "dumped on request".to_owned(),
        };
        let mut line = format!(
            "GPU sampling every {} ms, {by}: {} of {} periods delivered, {} folded, {} missed",
            ms(self.interval_ns),
            self.delivered,
            self.expected,
            self.folded,
            self.missed
        );
        if let Some(reason) = self.missed_reason.as_ref().filter(|_| self.missed > 0) {
            line.push_str(&format!(" ({reason})"));
        }
        if self.not_counting > 0 {
            line.push_str(&format!(
                ", {} first dump(s) not counting yet, left out",
                self.not_counting
            ));
            if let Some(reason) = &self.not_counting_reason {
                line.push_str(&format!(" ({reason})"));
            }
        }
        line.push_str(&format!(", largest gap {:.3} ms", ms(self.largest_gap_ns)));
        line
    }

    /// Whether something is to be warned of: a missed or folded period.
    pub fn degraded(&self) -> bool {
        self.missed > 0 || self.folded > 0
    }
}

/// One CPU's start in a capture sampled by the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuStartNs {
    /// The CPU.
    pub cpu: u32,
    /// When its last counter group started counting, in ns after the capture's start.
    pub after_start_ns: u64,
}

impl LocalSampling {
    /// The lines for people: the CPUs' [`summary`](Self::summary) (unless only the GPU was sampled) and the
    /// GPU's, if any.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.method != Method::Gpu {
            lines.push(self.summary());
        }
        lines.extend(self.gpu.as_ref().map(GpuSamplingDoc::summary));
        lines
    }

    /// Whether something is to be warned of: a missed period, a lost record or CPUs started a period or
    /// more apart, the CPUs' or the GPU's.
    pub fn degraded(&self) -> bool {
        self.missed > 0
            || self.lost_records.is_some_and(|n| n > 0)
            || self.start_skew_exceeds_interval()
            || self.gpu.as_ref().is_some_and(GpuSamplingDoc::degraded)
    }

    /// One line for people: `local sampling every 10 ms by a thread: 99 of 100 periods sampled, 1 missed,
    /// largest gap 20.3 ms` (`by the kernel on 2 rings`, with the records it lost or throttled if any); the
    /// GPU's line when only the GPU was sampled.
    pub fn summary(&self) -> String {
        if let (Some(gpu), Method::Gpu) = (&self.gpu, &self.method) {
            return gpu.summary();
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let by = match (&self.method, self.rings) {
            (Method::Kernel, Some(rings)) => format!("by the kernel on {rings} ring(s)"),
            (Method::Kernel, None) => "by the kernel".to_owned(),
            _ => "by a thread".to_owned(),
        };
        let mut line = format!(
            "local sampling every {} ms {by}: {} of {} periods sampled, {} missed, largest gap {:.3} ms",
            ms(self.interval_ns),
            self.delivered,
            self.expected,
            self.missed,
            ms(self.largest_gap_ns)
        );
        if let Some(lost) = self.lost_records.filter(|&n| n > 0) {
            line.push_str(&format!(", {lost} record(s) lost by full rings"));
        }
        if let Some(throttled) = self.throttled.filter(|&n| n > 0) {
            line.push_str(&format!(
                ", throttled {throttled} time(s) for {:.3} s in all (the kernel's sample-rate limit)",
                self.throttled_ns.unwrap_or(0) as f64 / 1e9
            ));
        }
        if let Some(idle) = self.idle_periods.filter(|&n| n > 0) {
            line.push_str(&format!(
                ", {idle} period(s) of idle CPUs unsampled (the kernel's timer does not fire on an idle \
                 CPU; the next sample holds their counts)"
            ));
        }
        if let Some(skew) = self.start_skew_ns {
            line.push_str(&format!(
                ", counters of {} CPU(s) started within {:.3} ms",
                self.cpu_starts.len(),
                ms(skew)
            ));
            if self.start_skew_exceeds_interval() {
                line.push_str(
                    " (more than a period: the CPUs' first periods cover different stretches)",
                );
            }
        }
        if let Some(unknown) = self.unknown_starts.filter(|&n| n > 0) {
            line.push_str(&format!(
                ", {unknown} counter group(s) with no record to tell their start"
            ));
        }
        line
    }

    /// True when the CPUs' counters started a whole sampling interval or more apart.
    pub fn start_skew_exceeds_interval(&self) -> bool {
        self.start_skew_ns
            .is_some_and(|skew| self.interval_ns > 0 && skew >= self.interval_ns)
    }
}

/// What a counter is, as `lizard list --format json` and the capture document describe it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CounterInfo {
    /// The counter's id in its capture.
    pub id: u32,
    /// `gatord`, `cpu` or `gpu`.
    #[serde(default)]
    pub source: Source,
    /// What the counter counts (`system`, `gpu`, `process 42, all threads`, …).
    #[serde(default)]
    pub scope: String,
    /// The counter's name (gatord's counter name or the local counter's name): what a user types.
    pub counter: String,
    /// The event's name.
    #[serde(default)]
    pub name: String,
    /// The event's title.
    #[serde(default)]
    pub title: String,
    /// A sentence describing the counter.
    #[serde(default)]
    pub description: String,
    /// The counter's category.
    #[serde(default)]
    pub category: String,
    /// The unit of the values written (MHz counters are written in Hz); empty when none is given.
    #[serde(default)]
    pub units: Units,
    /// The factor the raw values were multiplied by.
    #[serde(default = "unit_multiplier")]
    pub multiplier: f64,
    /// `delta` (each sample is the increase since the previous one), `absolute` (a level) or `derived` (an
    /// equation over other counters).
    pub class: Class,
    /// `int` or `double`: how the engine reads it.
    #[serde(default, rename = "type")]
    pub result_type: ValueType,
    /// A counter-set event's code (`0x08`), which gatord programs into one of the set's slots.
    #[serde(default)]
    pub event: Option<String>,
    /// For one CPU's series of a local counter counted per CPU (`--per-cpu`, named `NAME@cpuN`): the
    /// counter's name and the CPU, `{"counter": "TaskClock", "cpu": 1}` (written only then; absent in
    /// documents written before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_series: Option<CpuSeries>,
    /// For an Arm PMU event counted by the local source: `{"event": "INST_RETIRED", "pmu":
    /// "armv8_cortex_a55", "core": "Cortex-A55"}`, the PMU and core of one core type's part (null for the
    /// event over every core type). Written only then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmu_event: Option<PmuPart>,
}

fn unit_multiplier() -> f64 {
    1.0
}

/// One captured counter: what it is, its reading (or why there is none) and its time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedCounter {
    /// What the counter is.
    #[serde(flatten)]
    pub info: CounterInfo,
    /// The reading (delta samples summed, absolute ones averaged, the multiplier applied), or `None` when
    /// there is none.
    pub value: Option<Number>,
    /// Why there is no reading (written only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_value: Option<String>,
    /// Why the reading cannot happen on working hardware (written only then): a negative count, a
    /// percentage over 100. The value is kept as computed, never clamped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implausible: Option<String>,
    /// Why the source lists the counter but does not deliver it here (written only then; not merely "no
    /// sample in the window").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Samples the engine dropped (its store was full).
    #[serde(default)]
    pub dropped: u64,
    /// The time from this counter's first sample to its last, in seconds (`None` with fewer than two
    /// samples): shorter than the capture's window when its samples started late or ended early (gatord's
    /// perf samples start after its polled counters), so a total is never taken for more than it covers.
    #[serde(default)]
    pub covered_s: Option<f64>,
    /// `[timestamp ns, value]` pairs, values scaled like the reading; a value that is not a number (NaN,
    /// infinite) is written `null`. Counters counted per core: the cores combined.
    pub samples: Vec<SamplePoint>,
    /// `per core` when the source counted it once per core (written only then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<Counted>,
    /// For a local CPU counter: whether the kernel multiplexed it and the share of the time it was counted,
    /// `{"multiplexed": true, "counted_share": 0.5}` (perf's `(50.00%)`); its value is then scaled up.
    /// Written only for such counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaling: Option<Scaling>,
    /// With `--per-core`, for a counter counted per core: each core's part, by ascending core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_core: Option<Vec<CorePart>>,
}

/// One sample: its timestamp (ns, the capture's time base) and value (`None` when not a number).
pub type SamplePoint = (u64, Option<Number>);

/// One core's part of a counter counted per core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorePart {
    /// The core.
    pub core: u32,
    /// The core's reading, or `None` when it has none.
    pub value: Option<Number>,
    /// Why the core has no reading (`null` when it has one).
    #[serde(default)]
    pub no_value: Option<String>,
    /// The core's samples, as [`CapturedCounter::samples`].
    pub samples: Vec<SamplePoint>,
}

/// One application trace record in the capture window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// When it was recorded, on the capture's time base (ns).
    pub timestamp_ns: u64,
    /// Its sequence number in the ring.
    pub seq: u64,
    /// The module tag.
    pub module: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: u32,
    /// The recording process.
    pub pid: u32,
    /// The payload's length.
    pub bytes: u64,
}

impl CounterInfo {
    /// Where the values come from as the tables show it: the local CPU counters with what they count
    /// (`cpu (process 42, all threads)`), so they are never mistaken for one another or for gatord's.
    pub fn source_label(&self) -> String {
        match &self.source {
            Source::Cpu => format!("cpu ({})", self.scope),
            source => source.to_string(),
        }
    }
}

impl CapturedCounter {
    /// The counter's name (what a user types: [`CounterInfo::counter`]).
    pub fn counter_name(&self) -> &str {
        &self.info.counter
    }

    /// Whether each sample is an increase since the previous one (rather than a level).
    pub fn is_delta(&self) -> bool {
        self.info.class == Class::Delta
    }

    /// The unit the samples and the reading are in: the counter's, except that MHz values are written in Hz
    /// (documents written by this tool already say Hz).
    pub fn value_units(&self) -> Units {
        self.info.units.of_readings()
    }

    /// The samples that are numbers, as `(timestamp ns, value)`: what a chart plots.
    pub fn points(&self) -> Vec<(u64, f64)> {
        self.samples
            .iter()
            .filter_map(|(t, v)| Some((*t, v.as_ref()?.as_f64()?)))
            .collect()
    }

    /// The series: the counter's own (`None` for the core), then with `--per-core` each core's part.
    pub fn series(&self) -> impl Iterator<Item = (Option<u32>, &[SamplePoint])> {
        std::iter::once((None, self.samples.as_slice())).chain(
            self.per_core
                .iter()
                .flatten()
                .map(|part| (Some(part.core), part.samples.as_slice())),
        )
    }
}

impl Capture {
    /// Reads the text of a capture's JSON document.
    pub fn from_json(text: &str) -> Result<Capture, DocumentError> {
        // The version first, so that a newer document is refused by name rather than by a missing field.
        #[derive(Deserialize)]
        struct Version {
            #[serde(default = "first_version")]
            schema_version: u32,
        }
        if let Ok(Version { schema_version }) = serde_json::from_str::<Version>(text) {
            if schema_version > SCHEMA_VERSION {
                return Err(DocumentError::NewerVersion {
                    found: schema_version,
                });
            }
        }
        serde_json::from_str::<Capture>(text)
            .map_err(DocumentError::NotACapture)?
            .checked()
    }

    /// The document as pretty JSON text with a final newline.
    pub fn to_json(&self) -> String {
        // Every field is a string, a number, a bool or a sequence of them: serializing cannot fail.
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "null".to_owned());
        text.push('\n');
        text
    }

    /// The capture, if every counter without a value says why.
    fn checked(self) -> Result<Capture, DocumentError> {
        match self
            .counters
            .iter()
            .find(|c| c.value.is_none() && c.no_value.is_none())
        {
            Some(c) => Err(DocumentError::MissingReason {
                id: c.info.id,
                counter: c.info.counter.clone(),
            }),
            None => Ok(self),
        }
    }
}

#[cfg(test)]
mod tests;
