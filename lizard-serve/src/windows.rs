//! The exporter's sampling thread: back-to-back capture windows of the engine, each one's readings added to
//! the counters' totals (delta counters) or kept as their levels (absolute counters), then the exposition
//! written once for every scrape until the next window.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lizard_core::counter::{CounterClass, CounterId, ResultType, Source};
use lizard_core::hwc::SamplingMethod;
use lizard_core::machine::Machine;
use lizard_core::Error;
use lizard_core::Lizard;

use crate::exposition::{render, DeviceLabels, Format, Kind, Series};
use crate::metric_name::MetricName;
use crate::stats::Account;

/// The expositions of the latest window, in both formats.
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub(crate) prometheus: String,
    pub(crate) openmetrics: String,
}

impl Rendered {
    pub(crate) fn get(&self, format: Format) -> &str {
        match format {
            Format::Prometheus => &self.prometheus,
            Format::OpenMetrics => &self.openmetrics,
        }
    }
}

/// What the sampling thread and the HTTP thread share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) account: Mutex<Account>,
    pub(crate) rendered: Mutex<Arc<Rendered>>,
    /// The latest window failure, numbered from 1.
    pub(crate) failure: Mutex<Option<(u64, Arc<Error>)>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn account(&self) -> Account {
        lock(&self.account).clone()
    }

    pub(crate) fn update_account(&self, change: impl FnOnce(&mut Account)) {
        change(&mut lock(&self.account));
    }

    pub(crate) fn rendered(&self) -> Arc<Rendered> {
        Arc::clone(&lock(&self.rendered))
    }

    pub(crate) fn failure(&self) -> Option<(u64, Arc<Error>)> {
        lock(&self.failure).clone()
    }

    fn fail(&self, error: Error) {
        let mut failure = lock(&self.failure);
        let number = failure.as_ref().map_or(1, |(n, _)| n + 1);
        *failure = Some((number, Arc::new(error)));
        lock(&self.account).window_failures += 1;
    }
}

/// The engine and the served series.
pub(crate) struct Windows {
    lizard: Lizard,
    ids: Vec<CounterId>,
    /// Per series: whether its readings are whole numbers in their base unit (an integer counter without a
    /// unit factor), so that its total stays a whole number.
    whole: Vec<bool>,
    series: Vec<Series>,
    device: DeviceLabels,
    interval: Duration,
}

impl Windows {
    /// The served series: every enabled counter of `lizard`, each with a name of its own.
    pub(crate) fn new(lizard: Lizard, device: DeviceLabels, interval: Duration) -> Windows {
        let mut ids = Vec::new();
        let mut whole = Vec::new();
        let mut series: Vec<Series> = Vec::new();
        for counter in lizard.counters() {
            if !lizard.is_enabled(counter.id).unwrap_or(false) {
                continue;
            }
            let mut metric = MetricName::new(&counter.key, &counter.units);
            // Two keys that name alike (`Task-Clock`, `TaskClock`) keep apart by id.
            if series.iter().any(|s| s.metric.name == metric.name) {
                metric.name = format!("{}_id{}", metric.name, counter.id);
            }
            let help = match counter.description.trim() {
                "" => counter.title.clone(),
                text => format!("{}: {text}", counter.title),
            };
            ids.push(counter.id);
            whole.push(counter.result_type == ResultType::Integer && metric.factor == 1.0);
            series.push(Series {
                key: counter.key.clone(),
                source: match counter.source {
                    Source::Gatord => "gatord",
                    _ => "local",
                },
                help,
                metric,
                kind: match counter.class {
                    CounterClass::Delta => Kind::Counter,
                    _ => Kind::Gauge,
                },
                value: None,
                windows_without_value: 0,
            });
        }
        Windows {
            lizard,
            ids,
            whole,
            series,
            device,
            interval,
        }
    }

    /// How many counters are served.
    pub(crate) fn len(&self) -> usize {
        self.series.len()
    }

    /// Starts a window.
    pub(crate) fn start(&mut self) -> Result<Instant, Error> {
        self.lizard.start_capture()?;
        self.name_gatord_device();
        Ok(Instant::now())
    }

    /// Once a gatord session has described its daemon and machine, their build, model and OS join the
    /// device's info labels (only the first session's: the labels of a series do not change under it).
    fn name_gatord_device(&mut self) {
        if self
            .device
            .info
            .iter()
            .any(|(key, _)| key == "gatord_build")
        {
            return;
        }
        let Some(device) = self.lizard.gatord_device() else {
            return;
        };
        let labels = [
            ("gatord_build", &device.build_id),
            ("gatord_model", &device.model),
            ("gatord_os", &device.os),
        ];
        for (key, value) in labels {
            if let Some(value) = value {
                self.device.info.push((key.to_owned(), value.clone()));
            }
        }
    }

    /// Writes the exposition of what the series hold now.
    pub(crate) fn publish(&self, shared: &Shared) {
        let account = shared.account();
        let rendered = Rendered {
            prometheus: render(Format::Prometheus, &self.series, &self.device, &account),
            openmetrics: render(Format::OpenMetrics, &self.series, &self.device, &account),
        };
        *lock(&shared.rendered) = Arc::new(rendered);
    }

    /// Stops the window begun at `started`, adds its readings and publishes them.
    fn close(&mut self, started: Instant, shared: &Shared) {
        let stopped = self.lizard.stop_capture();
        let covered = started.elapsed();
        for ((series, &id), &whole) in self.series.iter_mut().zip(&self.ids).zip(&self.whole) {
            // An integer counter's reading is read as the integer it is: a total of cycles is whole.
            let value = match whole {
                true => self.lizard.read_int(id).ok().map(|v| v as f64),
                false => self.lizard.read_double(id).ok(),
            }
            .map(|v| v * series.metric.factor)
            .filter(|v| v.is_finite());
            match (series.kind, value) {
                (Kind::Counter, Some(v)) if v >= 0.0 => {
                    series.value = Some(series.value.unwrap_or(0.0) + v);
                }
                (Kind::Gauge, Some(v)) => series.value = Some(v),
                _ => series.windows_without_value += 1,
            }
        }
        let sampling = self.lizard.sampling();
        let missed = sampling
            .as_ref()
            .filter(|s| s.method != SamplingMethod::GpuOnly)
            .map_or(0, |s| s.missed);
        let gpu = sampling.and_then(|s| s.gpu);
        shared.update_account(|a| {
            a.windows += 1;
            a.covered_s += covered.as_secs_f64();
            a.periods_missed += missed;
            if let Some(gpu) = &gpu {
                a.gpu_delivered += gpu.delivered;
                a.gpu_folded += gpu.folded;
                a.gpu_missed += gpu.missed;
            }
        });
        if let Err(error) = stopped {
            shared.fail(error);
        }
        self.publish(shared);
    }

    /// Samples window after window until `stop` says so (or its sender is gone), then returns the engine with
    /// no capture running. `running` is the window already started, if any.
    pub(crate) fn run(
        mut self,
        mut running: Option<Instant>,
        shared: &Shared,
        stop: &Receiver<()>,
    ) -> Lizard {
        loop {
            let wait = running.map_or(self.interval, |s| self.interval.saturating_sub(s.elapsed()));
            let stopping = !matches!(stop.recv_timeout(wait), Err(RecvTimeoutError::Timeout));
            if let Some(started) = running.take() {
                self.close(started, shared);
            }
            if stopping {
                break;
            }
            match self.start() {
                Ok(started) => running = Some(started),
                Err(error) => {
                    shared.fail(error);
                    self.publish(shared);
                }
            }
        }
        let _ = self.lizard.close_session();
        self.lizard
    }
}

/// The device labels of `machine` read through `lizard`: the host, and as info the kernel, architecture,
/// online CPUs, each core's MIDR (Arm) or the CPU model, the Mali GPU and its driver's interface version
/// when the direct source reads one, and the gatord protocol when gatord is used.
pub fn device_labels(machine: &Machine, lizard: &Lizard) -> DeviceLabels {
    let mut info = Vec::new();
    if let Some(kernel) = &machine.kernel {
        info.push(("kernel".into(), kernel.clone()));
    }
    info.push(("arch".into(), machine.arch.to_owned()));
    let cpus: Vec<String> = machine.online_cpus.iter().map(u32::to_string).collect();
    info.push(("cpus".into(), cpus.join(",")));
    if !machine.midr.is_empty() {
        let midr: Vec<String> = machine
            .midr
            .iter()
            .map(|(cpu, midr)| format!("{cpu}:{midr:#010x}"))
            .collect();
        info.push(("midr".into(), midr.join(",")));
    }
    if let Some(model) = &machine.cpu_model {
        info.push(("cpu_model".into(), model.clone()));
    }
    if let Some(gpu) = lizard.gpu() {
        info.push(("gpu".into(), gpu.product.clone()));
        info.push(("gpu_driver".into(), gpu.driver.clone()));
    }
    if let Some(version) = lizard.protocol_version() {
        info.push(("gatord_protocol".into(), version.0.to_string()));
    }
    info.push(("lizard_version".into(), env!("CARGO_PKG_VERSION").into()));
    DeviceLabels::new(machine.host.clone().unwrap_or_default(), info)
}
