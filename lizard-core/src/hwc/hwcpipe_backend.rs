//! [`HwcPipeBackend`]: the [`HwcBackend`] over `hwcpipe::HwcPipe` (CPU perf events, Mali GPU), with every
//! counter Arm's database documents for the GPU beside HWCPipe's own.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use hwcpipe::cpu::{CpuConfig, CpuProfiler, PartStatus, PmuEvent};
use hwcpipe::gpu::profiler::DEFAULT_TIMEOUT;
use hwcpipe::gpu::{
    CounterSource, GpuError, GpuProfiler, Interface, MaliConstant, MaliConstants, MaliCounter,
    MaliCounters, MaliInput, MaliValues,
};
use hwcpipe::{Counter as HwcCounter, CpuCounter, GpuCounter, GpuProfiler as Gpu, HwcPipe, Unit};

use super::backend::{
    GpuDevice, GpuDump, GpuMiss, GpuPlan, GpuSource, HwcBackend, HwcCounterInfo, UnreadableCounter,
};
use super::sampling::GpuPace;
use crate::config::GpuDumps;
use crate::counter::{CounterClass, Derivation, DerivedInput, ResultType, Source, Units};
use crate::error::Error;
use crate::store::Value;
use crate::DirectError;

/// HWCPipe as a direct counter source. Lists only the counters HWCPipe really reads on this machine: CPU
/// first, in HWCPipe's fixed enum order, then the Arm PMU events it was asked for that some core type
/// counts (each summed over the core types, then per core type where several count it), then GPU, then
/// every counter of Arm's database the GPU and driver give (by machine name, `MaliGPUActiveCy`: hardware
/// counters summed over their blocks, derived counters computed per sample by Arm's equations). Every sample is the change since the previous one; a derived
/// counter's sample is its equation over that sample, and its reading over a window is its equation over the
/// window's totals ([`CounterClass::Derived`], with its [`Derivation`]).
#[derive(Debug)]
pub struct HwcPipeBackend {
    /// The CPU side (the GPU profiler is taken out into `gpu`).
    pipe: HwcPipe,
    counters: Vec<HwcCounter>,
    /// The database counters listed after `counters`, in database order.
    mali: Vec<MaliCounter>,
    /// How many of `counters` are the CPU's (they come first).
    cpu_count: usize,
    /// The Arm PMU event series, listed after the CPU counters.
    events: Vec<EventSeries>,
    /// Whether each event series is enabled.
    events_enabled: Vec<bool>,
    /// The index of the first GPU counter: the CPU counters and the event series come first.
    gpu_first: usize,
    /// The GPU, sampled on its own ([`HwcBackend::gpu_source`]) or with the CPU by
    /// [`sample`](HwcBackend::sample) when started through [`start`](HwcBackend::start).
    gpu: Option<Arc<Mutex<GpuSide>>>,
    /// Whether [`start`](HwcBackend::start) started the GPU.
    gpu_started: bool,
    /// Whether the GPU is dumped on its own ([`HwcBackend::gpu_source`]) or with each sample.
    gpu_dumps: GpuDumps,
}

/// One Arm PMU event series of an [`HwcPipeBackend`]: an event summed over the core types, or on one.
#[derive(Debug, Clone)]
struct EventSeries {
    /// The event's position in the CPU profiler's events.
    event: usize,
    /// The core type's PMU, for one core type's part.
    pmu: Option<usize>,
    name: String,
    description: String,
    unit: Unit,
}

/// The Mali GPU of an [`HwcPipeBackend`], its counters numbered from 0: HWCPipe's GPU counters, then
/// the database's.
#[derive(Debug)]
struct GpuSide {
    profiler: GpuProfiler,
    counters: Vec<GpuCounter>,
    mali: Vec<MaliCounter>,
    /// `(index, counter)` of the enabled database counters.
    mali_enabled: Vec<(usize, MaliCounter)>,
    mali_values: MaliValues,
    /// When counting started.
    started: Option<Instant>,
}

/// How long after setup a CSF GPU's dumps with every counter zero count as not counting yet: its firmware
/// enables counting asynchronously, and dumps taken before read all zeros.
pub(crate) const CSF_WARM_UP: Duration = Duration::from_millis(100);

impl GpuSide {
    /// Enables the counters at these (the side's own) indices.
    fn enable(&mut self, enabled: &[usize]) -> Result<(), Error> {
        let gpu: Vec<GpuCounter> = enabled
            .iter()
            .filter_map(|&i| self.counters.get(i).copied())
            .collect();
        let first = self.counters.len();
        self.mali_enabled = enabled
            .iter()
            .filter_map(|&i| Some((i, *self.mali.get(i.checked_sub(first)?)?)))
            .collect();
        self.profiler
            .set_enabled(&gpu)
            .map_err(hwcpipe::Error::from)?;
        Ok(())
    }

    /// One dump: the driver's next, or one asked for now, waiting at most `timeout`.
    fn dump(
        &mut self,
        timeout: Duration,
        out: &mut Vec<(usize, Value)>,
    ) -> Result<GpuDump, GpuError> {
        self.profiler.set_timeout(timeout);
        let csf = self.profiler.info().version.interface == Interface::Csf;
        let warming_up = self
            .started
            .is_some_and(|started| started.elapsed() <= CSF_WARM_UP);
        let sample = self.profiler.sample()?;
        let dump = GpuDump {
            timestamp_ns: sample.timestamp_ns(),
            counting: !(csf && warming_up && !sample.counted_anything()),
            stretched: sample.stretched(),
        };
        for (counter, value) in sample.iter() {
            if let Some(index) = self.counters.iter().position(|&c| c == counter) {
                out.push((index, Value::Float(value)));
            }
        }
        if !self.mali_enabled.is_empty() {
            self.profiler.mali_values(&mut self.mali_values);
            // A sample whose equation has no value (a division by zero) gives none for that counter.
            out.extend(self.mali_enabled.iter().filter_map(|&(index, counter)| {
                let value = self.mali_values.get(counter)?.ok()?;
                Some((index, Value::Float(value)))
            }));
        }
        Ok(dump)
    }
}

impl GpuSource for GpuSide {
    fn start(&mut self, enabled: &[usize], interval: Duration) -> Result<GpuPace, Error> {
        self.enable(enabled)?;
        self.started = Some(Instant::now());
        match self.profiler.run_periodic(interval) {
            Ok(()) => Ok(GpuPace::Periodic),
            Err(refusal) => {
                // Whatever half-started is undone before counting with manual dumps.
                let _ = self.profiler.stop();
                self.profiler.run().map_err(hwcpipe::Error::from)?;
                Ok(GpuPace::Manual {
                    reason: format!(
                        "the driver does not dump by itself here ({})",
                        crate::error::error_chain(&refusal)
                    ),
                })
            }
        }
    }

    fn next(
        &mut self,
        timeout: Duration,
        out: &mut Vec<(usize, Value)>,
    ) -> Result<GpuDump, GpuMiss> {
        match self.dump(timeout, out) {
            Ok(dump) => Ok(dump),
            Err(GpuError::Timeout { waited }) => Err(GpuMiss::Missed(format!(
                "no dump came within {:.3} ms",
                waited.as_secs_f64() * 1e3
            ))),
            Err(GpuError::SampleError) => Err(GpuMiss::Lost(
                "the driver flagged the dump as erroneous".to_owned(),
            )),
            Err(err) => Err(GpuMiss::Failed(hwcpipe::Error::from(err).into())),
        }
    }

    fn stop(&mut self) {
        // Stopping only disables counting; an error here leaves nothing to undo.
        let _ = self.profiler.stop();
    }
}

fn lock(side: &Mutex<GpuSide>) -> MutexGuard<'_, GpuSide> {
    side.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HwcPipeBackend {
    /// HWCPipe with every CPU counter and the Mali GPU of this machine, if any.
    pub fn open() -> Result<HwcPipeBackend, Error> {
        HwcPipeBackend::new(HwcPipe::new())
    }

    /// [`open`](Self::open), counting the Arm PMU events `events` too.
    pub fn open_with_events(events: Vec<PmuEvent>) -> Result<HwcPipeBackend, Error> {
        if events.is_empty() {
            return HwcPipeBackend::open();
        }
        HwcPipeBackend::new(HwcPipe::from_profilers(
            Some(CpuProfiler::new(CpuConfig::all().events(events))),
            Some(Gpu::open()),
        ))
    }

    /// Wraps an already built `HwcPipe` (for example one whose GPU profiler runs over a simulated kbase
    /// device). Fails with [`DirectError::HwcPipeUnavailable`], carrying each side's reason, if it reads no counter.
    pub fn new(mut pipe: HwcPipe) -> Result<HwcPipeBackend, Error> {
        let counters: Vec<HwcCounter> = pipe
            .counters()
            .filter(|(_, _, availability)| availability.is_available())
            .map(|(counter, _, _)| counter)
            .collect();
        if counters.is_empty() {
            let (cpu, gpu) = pipe.into_errors();
            return Err(Error::Direct(DirectError::HwcPipeUnavailable { cpu, gpu }));
        }
        let mali: Vec<MaliCounter> = pipe
            .gpu_profiler()
            .map(|profiler| {
                profiler
                    .mali_counters()
                    .iter()
                    .filter(|(_, info)| info.is_available())
                    .map(|(counter, _)| counter)
                    .collect()
            })
            .unwrap_or_default();
        // HwcPipe lists the CPU counters first.
        let cpu_count = counters
            .iter()
            .position(|c| matches!(c, HwcCounter::Gpu(_)))
            .unwrap_or(counters.len());
        let events = pipe.cpu_profiler().map(event_series).unwrap_or_default();
        let gpu_first = cpu_count + events.len();
        let gpu = pipe.take_gpu_profiler().map(|profiler| {
            Arc::new(Mutex::new(GpuSide {
                profiler,
                counters: counters[cpu_count..]
                    .iter()
                    .filter_map(|c| match c {
                        HwcCounter::Gpu(g) => Some(*g),
                        HwcCounter::Cpu(_) => None,
                    })
                    .collect(),
                mali: mali.clone(),
                mali_enabled: Vec::new(),
                mali_values: MaliValues::default(),
                started: None,
            }))
        });
        Ok(HwcPipeBackend {
            pipe,
            counters,
            mali,
            cpu_count,
            events_enabled: vec![false; events.len()],
            events,
            gpu_first,
            gpu,
            gpu_started: false,
            gpu_dumps: GpuDumps::DriverPaced,
        })
    }

    /// The backend dumping the GPU as `dumps` says: with [`GpuDumps::WithSamples`] it offers no
    /// [`gpu_source`](HwcBackend::gpu_source), so the engine samples the GPU with the CPU counters, a
    /// manual dump each sample and one at the stop.
    pub fn with_gpu_dumps(mut self, dumps: GpuDumps) -> HwcPipeBackend {
        self.gpu_dumps = dumps;
        self
    }
}

/// The event series of `profiler`'s counted events: each summed over its core types, then each core type's
/// part where several count it.
fn event_series(profiler: &CpuProfiler) -> Vec<EventSeries> {
    let mut series = Vec::new();
    for (event, status) in profiler.events().iter().enumerate() {
        if !status.is_counted() {
            continue;
        }
        let description = status
            .event
            .description
            .clone()
            .unwrap_or_else(|| format!("Arm PMU event {}", status.event.name));
        series.push(EventSeries {
            event,
            pmu: None,
            name: status.event.name.clone(),
            description: description.clone(),
            unit: status.event.unit(),
        });
        let counted: Vec<_> = status
            .event
            .placements
            .iter()
            .zip(&status.parts)
            .filter(|(_, part)| matches!(part, PartStatus::Counted { .. }))
            .map(|(placement, _)| placement)
            .collect();
        if counted.len() > 1 {
            series.extend(counted.into_iter().map(|placement| EventSeries {
                event,
                pmu: Some(placement.pmu),
                name: format!("{}/{}/", placement.pmu_name, status.event.name),
                description: format!("{description} (on the {} cores)", placement.label),
                unit: status.event.unit(),
            }));
        }
    }
    series
}

/// How a database counter's samples combine: a hardware count is summed; a derived counter (a ratio, a rate,
/// a constant, a sum) is its equation over a window's totals, whatever its unit.
fn database_class(derived: bool) -> CounterClass {
    if derived {
        CounterClass::Derived
    } else {
        CounterClass::Delta
    }
}

/// The [`Derivation`] of derived `counter`: its equation renumbered over the inputs it reads, counters named
/// by their index in the backend's list (`first` plus their position among `listed`), constants by their
/// value (the time span stays a time span).
fn derivation(
    catalog: &MaliCounters,
    constants: &MaliConstants,
    counter: MaliCounter,
    listed: &[MaliCounter],
    first: usize,
) -> Option<Derivation> {
    let (expr, all) = catalog.equation(counter)?;
    let mut used: Vec<usize> = expr.inputs();
    used.sort_unstable();
    used.dedup();
    let mut inputs = Vec::with_capacity(used.len());
    let mut names = Vec::with_capacity(used.len());
    for &n in &used {
        let (input, name) = match *all.get(n)? {
            MaliInput::Counter(input) => {
                let at = listed.iter().position(|&c| c == input)?;
                (
                    DerivedInput::Counter((first + at) as u32),
                    catalog.info(input)?.name().to_owned(),
                )
            }
            MaliInput::Constant(MaliConstant::TimeSpan) => (
                DerivedInput::TimeSpan,
                MaliConstant::TimeSpan.name().to_owned(),
            ),
            MaliInput::Constant(constant) => (
                DerivedInput::Constant(constants.value(constant)),
                constant.name().to_owned(),
            ),
        };
        inputs.push(input);
        names.push(name);
    }
    let equation = expr.map_inputs(&|n| used.binary_search(&n).unwrap_or(usize::MAX));
    Some(Derivation {
        equation,
        inputs,
        names,
    })
}

/// The engine's unit for a database unit.
fn database_units(units: &str) -> Units {
    match units {
        "percent" => Units::Other("%".to_owned()),
        other => Units::parse(other),
    }
}

impl HwcBackend for HwcPipeBackend {
    fn gpu(&self) -> Option<GpuDevice> {
        self.gpu.as_deref().map(|side| {
            let side = lock(side);
            let info = side.profiler.info();
            GpuDevice {
                product: info.product.name.to_owned(),
                driver: info.version.to_string(),
            }
        })
    }

    fn gpu_source(&self) -> Option<GpuPlan> {
        if self.gpu_dumps == GpuDumps::WithSamples {
            return None;
        }
        let side = self.gpu.as_ref()?;
        Some(GpuPlan {
            source: Arc::clone(side) as Arc<Mutex<dyn GpuSource>>,
            first: self.gpu_first,
            count: self.counters.len() - self.cpu_count + self.mali.len(),
        })
    }

    fn counters(&self) -> Vec<HwcCounterInfo> {
        let info = |&counter: &HwcCounter| {
            let info = counter.info();
            let (source, result_type) = match counter {
                HwcCounter::Cpu(_) => (Source::HwcPipeCpu, ResultType::Integer),
                HwcCounter::Gpu(_) => (Source::HwcPipeGpu, ResultType::Floating),
            };
            HwcCounterInfo {
                name: info.name.to_owned(),
                description: info.description.to_owned(),
                units: Units::from(info.unit),
                source,
                result_type,
                class: CounterClass::Delta,
                category: None,
                derivation: None,
                cpu_series: None,
                pmu_part: None,
            }
        };
        let mut infos: Vec<HwcCounterInfo> =
            self.counters[..self.cpu_count].iter().map(info).collect();
        infos.extend(self.events.iter().map(|series| HwcCounterInfo {
            name: series.name.clone(),
            description: series.description.clone(),
            units: Units::from(series.unit),
            source: Source::HwcPipeCpu,
            result_type: ResultType::Integer,
            class: CounterClass::Delta,
            category: Some(super::PMU_EVENT_CATEGORY.to_owned()),
            derivation: None,
            cpu_series: None,
            pmu_part: None,
        }));
        infos.extend(self.counters[self.cpu_count..].iter().map(info));
        let Some(side) = self.gpu.as_deref() else {
            return infos;
        };
        let side = lock(side);
        let profiler = &side.profiler;
        let catalog = profiler.mali_counters();
        let constants = profiler.mali_constants();
        let first = self.counters.len() + self.events.len();
        infos.extend(self.mali.iter().filter_map(|&counter| {
            let info = catalog.info(counter)?;
            let spec = info.spec;
            let derived = matches!(info.source, CounterSource::Derived { .. });
            let derivation = if derived {
                // An available derived counter's inputs are available, so listed: this cannot fail.
                Some(derivation(catalog, &constants, counter, &self.mali, first)?)
            } else {
                None
            };
            let mut description = format!("{}: {}", spec.human_name, spec.description.trim());
            if let Some(caveat) = info.caveat {
                description.push_str(&format!(" (caveat: {caveat})"));
            }
            Some(HwcCounterInfo {
                name: spec.machine_name.to_owned(),
                description,
                units: database_units(spec.units),
                source: Source::HwcPipeGpu,
                result_type: ResultType::Floating,
                class: database_class(derived),
                category: Some(format!("Mali {} (Arm's database)", spec.group)),
                derivation,
                cpu_series: None,
                pmu_part: None,
            })
        }));
        infos
    }

    fn unreadable(&self) -> Vec<UnreadableCounter> {
        let mut unreadable = self
            .pipe
            .cpu_profiler()
            .map(|p| super::pmu_events::not_counted(p.events()))
            .unwrap_or_default();
        let Some(side) = self.gpu.as_deref() else {
            return unreadable;
        };
        let side = lock(side);
        unreadable.extend(
            side.profiler
                .mali_counters()
                .iter()
                .filter_map(|(_, info)| {
                    let reason = info.availability.as_ref().err()?;
                    Some(UnreadableCounter {
                        name: info.name().to_owned(),
                        reason: reason.to_string(),
                        pmu_part: None,
                    })
                }),
        );
        unreadable
    }

    /// Starts the CPU counters among `enabled`, and the GPU's, if any, with manual dumps taken by
    /// [`sample`](HwcBackend::sample) (the engine samples the GPU on its own instead: [`gpu_source`]).
    ///
    /// [`gpu_source`]: HwcBackend::gpu_source
    fn start(&mut self, enabled: &[usize]) -> Result<(), Error> {
        let cpu: Vec<CpuCounter> = enabled
            .iter()
            .filter(|&&i| i < self.cpu_count)
            .filter_map(|&i| match self.counters.get(i) {
                Some(HwcCounter::Cpu(c)) => Some(*c),
                _ => None,
            })
            .collect();
        self.events_enabled.fill(false);
        for &i in enabled {
            if let Some(on) = i
                .checked_sub(self.cpu_count)
                .and_then(|e| self.events_enabled.get_mut(e))
            {
                *on = true;
            }
        }
        let gpu: Vec<usize> = enabled
            .iter()
            .filter_map(|&i| i.checked_sub(self.gpu_first))
            .collect();
        self.pipe.set_enabled_cpu_counters(&cpu)?;
        self.gpu_started = false;
        if let (Some(side), false) = (self.gpu.as_deref(), gpu.is_empty()) {
            let mut side = lock(side);
            side.enable(&gpu)?;
            side.profiler.run().map_err(hwcpipe::Error::from)?;
            self.gpu_started = true;
        }
        self.pipe.run()?;
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), Error> {
        let measurements = self.pipe.sample()?;
        // A count the store cannot hold is the sample's error, after the values beside it.
        let mut out_of_range = None;
        let mut push =
            |index, value: hwcpipe::Value, out: &mut Vec<(usize, Value)>| match Value::try_from(
                value,
            ) {
                Ok(value) => out.push((index, value)),
                Err(err) => {
                    out_of_range.get_or_insert(err);
                }
            };
        for (counter, value) in measurements.iter() {
            if let Some(index) = self.counters.iter().position(|&c| c == counter) {
                // The event series sit between the CPU and the GPU counters.
                let index = match index < self.cpu_count {
                    true => index,
                    false => index + self.events.len(),
                };
                push(index, value, out);
            }
        }
        if let Some(sample) = measurements.cpu() {
            for (j, series) in self.events.iter().enumerate() {
                if !self.events_enabled[j] {
                    continue;
                }
                let delta = match series.pmu {
                    None => sample.event(series.event).map(|r| r.delta),
                    Some(pmu) => sample
                        .event_parts(series.event)
                        .find(|r| r.pmu == pmu)
                        .map(|r| r.delta),
                };
                if let Some(delta) = delta {
                    push(self.cpu_count + j, hwcpipe::Value::Int(delta), out);
                }
            }
        }
        if let (Some(side), true) = (self.gpu.as_deref(), self.gpu_started) {
            let first = out.len();
            lock(side)
                .dump(DEFAULT_TIMEOUT, out)
                .map_err(hwcpipe::Error::from)?;
            for (index, _) in &mut out[first..] {
                *index += self.gpu_first;
            }
        }
        out_of_range.map_or(Ok(()), |err| {
            Err(Error::Direct(DirectError::Backend(Box::new(err))))
        })
    }

    fn stop(&mut self) {
        // Stopping only disables counting; an error here leaves nothing to undo.
        let _ = self.pipe.stop();
        if let (Some(side), true) = (self.gpu.as_deref(), self.gpu_started) {
            GpuSource::stop(&mut *lock(side));
        }
        self.gpu_started = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_counters_are_equations_and_hardware_counts_add() {
        assert_eq!(database_class(true), CounterClass::Derived);
        assert_eq!(database_class(false), CounterClass::Delta);
        assert_eq!(database_units("bytes"), Units::Bytes);
        assert_eq!(database_units("percent"), Units::Other("%".into()));
    }

    #[test]
    fn a_count_the_store_cannot_hold_is_the_samples_error_and_the_others_are_kept() {
        use hwcpipe::cpu::sim::FakePerf;
        let fake = std::sync::Arc::new(FakePerf::new(0));
        let counters = [CpuCounter::TaskClock, CpuCounter::PageFaults];
        let profiler = CpuProfiler::with_sys(CpuConfig::new(&counters), fake.clone());
        let mut backend =
            HwcPipeBackend::new(HwcPipe::from_profilers(Some(profiler), None)).unwrap();
        let index = |counter| {
            backend
                .counters()
                .iter()
                .position(|c| c.name == format!("{counter}"))
                .unwrap()
        };
        let (clock, faults) = (index(CpuCounter::TaskClock), index(CpuCounter::PageFaults));
        backend.start(&[clock, faults]).unwrap();
        // Task clock (config 1) counts 1000 more, page faults (config 2) jump beyond i64::MAX.
        fake.advance(1_000, 1_000, |config| if config == 1 { 1_000 } else { 0 });
        fake.set_count(2, u64::MAX);
        let mut out = Vec::new();
        let err = backend.sample(&mut out).unwrap_err();
        let Error::Direct(DirectError::Backend(source)) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            source.downcast_ref::<crate::store::CountOutOfRange>(),
            Some(&crate::store::CountOutOfRange { count: u64::MAX })
        );
        assert_eq!(out, [(clock, Value::Int(1_000))]);
    }
}
