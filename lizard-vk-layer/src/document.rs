//! The capture document (`lizard_core::capture::Capture`, JSON) written beside the trace, so that
//! `lizard diff` compares two runs: per frame, the GPU time and count of each kind of workload, the
//! draws and pipeline statistics of render passes and dispatches, the GPU time under each innermost debug
//! label, the frame's CPU time (and, in serialising modes, the layer's waits in it), and lizard's counters.
//! Each counter's samples are its per-frame values at the frame's start; its value is their sum (a count
//! or a time) or their mean (a level).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use lizard_core::capture::{
    Capture, CapturedCounter, Class, CoreId, CounterInfo, RunInfo, Source, ValueType,
    SCHEMA_VERSION,
};
use lizard_core::{Counter, CounterClass, Machine};
use serde_json::Number;

use crate::clock::Zero;
use crate::workload::Kind;

/// Samples kept per counter; older ones are dropped (and counted), the value still covers them.
const MAX_SAMPLES: usize = 16_384;

/// Distinct labels given a counter of their own.
const MAX_LABELS: usize = 64;

/// One counter's series.
#[derive(Debug)]
struct Series {
    info: CounterInfo,
    /// `(ns after the trace's zero, value)`.
    samples: VecDeque<(u64, f64)>,
    total: f64,
    count: u64,
    dropped: u64,
}

/// The document being gathered.
#[derive(Debug)]
pub(crate) struct Document {
    path: PathBuf,
    zero: Zero,
    series: Vec<Series>,
    by_name: HashMap<String, usize>,
    /// Per frame, each counter's sum so far.
    frames: BTreeMap<u64, HashMap<usize, f64>>,
    labels: usize,
    command: Vec<String>,
    gpu: Option<String>,
    started: Instant,
    dirty: bool,
    last_write: Option<Instant>,
    write_cost: Duration,
}

/// What a Vulkan counter is.
struct Vulkan<'a> {
    name: &'a str,
    description: &'a str,
    units: &'a str,
    class: Class,
}

impl Document {
    /// A document for `path`.
    pub(crate) fn new(path: PathBuf, zero: Zero) -> Document {
        let command = std::fs::read("/proc/self/cmdline")
            .map(|bytes| {
                bytes
                    .split(|&b| b == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        Document {
            path,
            zero,
            series: Vec::new(),
            by_name: HashMap::new(),
            frames: BTreeMap::new(),
            labels: 0,
            command,
            gpu: None,
            started: Instant::now(),
            dirty: false,
            last_write: None,
            write_cost: Duration::ZERO,
        }
    }

    /// Names the GPU measured.
    pub(crate) fn gpu(&mut self, name: &str) {
        if self.gpu.is_none() {
            self.gpu = Some(name.to_owned());
        }
    }

    fn index(&mut self, key: &str, info: impl FnOnce() -> CounterInfo) -> usize {
        if let Some(&i) = self.by_name.get(key) {
            return i;
        }
        let mut info = info();
        info.id = self.series.len() as u32 + 1;
        self.series.push(Series {
            info,
            samples: VecDeque::new(),
            total: 0.0,
            count: 0,
            dropped: 0,
        });
        self.by_name.insert(key.to_owned(), self.series.len() - 1);
        self.series.len() - 1
    }

    fn vulkan(&mut self, v: Vulkan<'_>) -> usize {
        self.index(v.name, || CounterInfo {
            id: 0,
            source: Source::Other("vulkan".to_owned()),
            scope: "this application's Vulkan work".to_owned(),
            counter: v.name.to_owned(),
            name: v.name.to_owned(),
            title: crate::LAYER_NAME.to_owned(),
            description: v.description.to_owned(),
            category: "Vulkan workloads".to_owned(),
            units: lizard_core::Units::parse(v.units),
            multiplier: 1.0,
            class: v.class,
            result_type: ValueType::Int,
            event: None,
            cpu_series: None,
            pmu_event: None,
        })
    }

    fn add(&mut self, frame: u64, series: usize, value: f64) {
        *self
            .frames
            .entry(frame)
            .or_default()
            .entry(series)
            .or_insert(0.0) += value;
    }

    /// A workload of `frame`: its kind, innermost label, GPU time (when timed), draws and statistics.
    pub(crate) fn workload(
        &mut self,
        frame: u64,
        kind: Kind,
        label: Option<&str>,
        gpu_ns: Option<u64>,
        draws: u32,
        statistics: &[(&'static str, u64)],
    ) {
        let word = kind.word();
        let count = self.vulkan(Vulkan {
            name: &format!("vk.{word}.count"),
            description: &format!("Workloads of this kind ({})", kind.name()),
            units: "",
            class: Class::Delta,
        });
        self.add(frame, count, 1.0);
        if let Some(ns) = gpu_ns {
            let time = self.vulkan(Vulkan {
                name: &format!("vk.{word}.gpu_time"),
                description: &format!(
                    "GPU time of the {}s, from a timestamp before each to one after it",
                    kind.name()
                ),
                units: "ns",
                class: Class::Delta,
            });
            self.add(frame, time, ns as f64);
            let all = self.vulkan(Vulkan {
                name: "vk.workloads.gpu_time",
                description: "GPU time of every workload timed, summed",
                units: "ns",
                class: Class::Delta,
            });
            self.add(frame, all, ns as f64);
            if let Some(label) = label {
                let key = format!("vk.label.{label}.gpu_time");
                if self.by_name.contains_key(&key) || self.labels < MAX_LABELS {
                    if !self.by_name.contains_key(&key) {
                        self.labels += 1;
                    }
                    let l = self.vulkan(Vulkan {
                        name: &key,
                        description:
                            "GPU time of the workloads whose innermost debug label is this",
                        units: "ns",
                        class: Class::Delta,
                    });
                    self.add(frame, l, ns as f64);
                }
            }
        }
        if kind.is_render_pass() {
            let d = self.vulkan(Vulkan {
                name: &format!("vk.{word}.draws"),
                description: "Draw commands recorded in the render passes",
                units: "",
                class: Class::Delta,
            });
            self.add(frame, d, f64::from(draws));
        }
        for (name, value) in statistics {
            let s = self.vulkan(Vulkan {
                name: &format!("vk.{word}.{name}"),
                description:
                    "A pipeline-statistics query around each workload of this kind, summed",
                units: "",
                class: Class::Delta,
            });
            self.add(frame, s, *value as f64);
        }
        self.dirty = true;
    }

    /// Frame `frame` ended: from `start` to `end` (`CLOCK_MONOTONIC`), with the layer's waits in it;
    /// lizard's counters over it. Its sums become samples at its start.
    pub(crate) fn frame(
        &mut self,
        frame: u64,
        start: u64,
        end: u64,
        waits_ns: u64,
        counters: &[Counter],
        values: &[Result<f64, String>],
    ) {
        let cpu = end.saturating_sub(start) as f64;
        let f = self.vulkan(Vulkan {
            name: "vk.frames",
            description: "Frames measured (presents)",
            units: "",
            class: Class::Delta,
        });
        self.add(frame, f, 1.0);
        let t = self.vulkan(Vulkan {
            name: "vk.frame.cpu_time",
            description: "Time from one present to the next",
            units: "ns",
            class: Class::Absolute,
        });
        self.add(frame, t, cpu);
        if waits_ns > 0 {
            let w = self.vulkan(Vulkan {
                name: "vk.frame.layer_waits",
                description: "Time the layer waited for the GPU inside the application's calls (submit mode)",
                units: "ns",
                class: Class::Delta,
            });
            self.add(frame, w, waits_ns as f64);
            let without = self.vulkan(Vulkan {
                name: "vk.frame.cpu_time_without_layer_waits",
                description:
                    "The frame's time less the layer's waits in it (an estimate of the frame time \
                              without serialising)",
                units: "ns",
                class: Class::Absolute,
            });
            self.add(frame, without, cpu - waits_ns as f64);
        }
        for (counter, value) in counters.iter().zip(values) {
            let Ok(v) = value else { continue };
            let key = format!("lizard.{}", counter.key);
            let i = self.index(&key, || {
                let mut info = lizard_core::capture::collect::info(counter);
                if counter.class == CounterClass::Derived {
                    info.description
                        .push_str(" (value here: the mean of its per-frame readings)");
                }
                info
            });
            self.add(frame, i, *v);
        }
        self.settle(Some(frame), start);
    }

    /// The sums of frames up to `frame` (every frame's when `None`: the work after the last present, or of
    /// an application that never presents) become samples at `start` (`CLOCK_MONOTONIC`).
    pub(crate) fn settle(&mut self, frame: Option<u64>, start: u64) {
        let at = self.zero.since(start);
        let done: Vec<u64> = self
            .frames
            .range(..=frame.unwrap_or(u64::MAX))
            .map(|(f, _)| *f)
            .collect();
        for f in done {
            let Some(sums) = self.frames.remove(&f) else {
                continue;
            };
            for (series, value) in sums {
                let s = &mut self.series[series];
                s.total += value;
                s.count += 1;
                s.samples.push_back((at, value));
                if s.samples.len() > MAX_SAMPLES {
                    s.samples.pop_front();
                    s.dropped += 1;
                }
            }
        }
        self.dirty = true;
    }

    /// The capture document as it stands.
    pub(crate) fn capture(&self) -> Capture {
        let number = |v: f64, int: bool| {
            if int && v.fract() == 0.0 && v.abs() < 9.0e15 {
                Some(Number::from(v as i64))
            } else {
                Number::from_f64(v)
            }
        };
        let counters: Vec<CapturedCounter> = self
            .series
            .iter()
            .map(|s| {
                let int = s.info.result_type == ValueType::Int;
                let value = match s.info.class {
                    Class::Delta => Some(s.total),
                    _ if s.count > 0 => Some(s.total / s.count as f64),
                    _ => None,
                };
                let covered = match (s.samples.front(), s.samples.back()) {
                    (Some(a), Some(b)) if s.samples.len() > 1 => Some((b.0 - a.0) as f64 / 1e9),
                    _ => None,
                };
                let value = value.and_then(|v| number(v, int && s.info.class == Class::Delta));
                CapturedCounter {
                    info: s.info.clone(),
                    no_value: value.is_none().then(|| "no frame measured".to_owned()),
                    value,
                    implausible: None,
                    unavailable: None,
                    dropped: s.dropped,
                    covered_s: covered,
                    samples: s
                        .samples
                        .iter()
                        .map(|&(t, v)| (t, number(v, int)))
                        .collect(),
                    counted: None,
                    scaling: None,
                    per_core: None,
                }
            })
            .collect();
        let first = counters
            .iter()
            .filter_map(|c| c.samples.first())
            .map(|s| s.0)
            .min();
        let last = counters
            .iter()
            .filter_map(|c| c.samples.last())
            .map(|s| s.0)
            .max();
        let window = first.zip(last).map(|(a, b)| [a, b]);
        let machine = Machine::this();
        Capture {
            schema_version: SCHEMA_VERSION,
            duration_s: window.map(|[a, b]| (b - a) as f64 / 1e9),
            window_ns: window,
            started_ns: Some(0),
            boottime_zero_ns: Some(self.zero.boottime_ns),
            wall_s: Some(self.started.elapsed().as_secs_f64()),
            warning: None,
            cores: Default::default(),
            cores_note: None,
            run: Some(RunInfo {
                lizard_version: format!("{} {}", crate::LAYER_NAME, env!("CARGO_PKG_VERSION")),
                command: self.command.clone(),
                host: machine.host,
                kernel: machine.kernel,
                arch: machine.arch.to_owned(),
                online_cpus: machine.online_cpus,
                cores: machine
                    .midr
                    .into_iter()
                    .map(|(cpu, midr)| CoreId {
                        cpu,
                        midr: format!("{midr:#x}"),
                    })
                    .collect(),
                cpu_model: machine.cpu_model,
                gatord_protocol: None,
                gatord: None,
                gpu: self.gpu.clone(),
                gpu_driver: None,
            }),
            sampling: None,
            counters,
            trace_records: Vec::new(),
        }
    }

    /// Writes the document (to a temporary file renamed over the old one, so a reader never sees half of
    /// it) when it changed, at most as often as its writing costs allow unless `now`.
    pub(crate) fn write(&mut self, now: bool) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let due = match self.last_write {
            None => true,
            Some(at) => at.elapsed() >= Duration::from_secs(5).max(self.write_cost * 50),
        };
        if !now && !due {
            return Ok(());
        }
        let started = Instant::now();
        let text = self.capture().to_json();
        let tmp = self.path.with_extension("json.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)?;
        self.write_cost = started.elapsed();
        self.last_write = Some(Instant::now());
        self.dirty = false;
        Ok(())
    }
}
