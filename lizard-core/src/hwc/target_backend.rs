//! A [`Target`]'s CPU counters (and the Mali GPU, if any) as the engine's direct counter source
//! ([`open_target`]), so the engine records the time series of another process, a command or whole CPUs like
//! any other counter.

use crate::DirectError;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use hwcpipe::counting::{Counted, KernelSampler, Target, TargetCounters, TargetError};
use hwcpipe::cpu::PmuEvent;
use hwcpipe::{CpuConfig, CpuCounter, GpuCounter, HwcPipe, KernelCounting};

use super::backend::GpuPlan;
use super::backend::NoKernelSampling;
use super::{
    GpuDevice, HwcBackend, HwcCounterInfo, HwcPipeBackend, KernelPlan, Scaling, UnreadableCounter,
};
use crate::config::GpuDumps;
use crate::counter::{CounterClass, CpuScope, CpuSeries, PmuPart, ResultType, Source};
use crate::error::Error as EngineError;
use crate::store::Value;
use crate::units::Units;

/// The category of the Arm PMU events counted beside HWCPipe's counters.
pub const PMU_EVENT_CATEGORY: &str = "Arm PMU event";

/// What became of the counted command: shared between the engine's sampler, which reaps it as soon
/// as it exits, and the capture, which waits for that.
#[derive(Debug, Clone, Default)]
pub struct CommandWatch(Arc<Mutex<Watch>>);

#[derive(Debug, Default)]
struct Watch {
    /// The command's process, once started.
    pid: Option<i32>,
    status: Option<ExitStatus>,
    killed: bool,
}

impl CommandWatch {
    /// The command's exit status, once it exited and was reaped.
    pub fn status(&self) -> Option<ExitStatus> {
        self.lock().status
    }

    /// Whether the command has exited: reaped, or a zombie waiting to be (so a caller need not wait for the
    /// sampler's next look).
    pub fn exited(&self) -> bool {
        let watch = self.lock();
        watch.status.is_some() || watch.pid.is_some_and(hwcpipe::counting::process_ended)
    }

    /// Whether the command was still running when the capture stopped, and was killed.
    pub fn killed(&self) -> bool {
        self.lock().killed
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Watch> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A target's counters behind the engine's [`HwcBackend`] seam.
#[derive(Debug)]
struct TargetBackend {
    target: Target,
    cpu: TargetCounters,
    gpu: Option<HwcPipeBackend>,
    gpu_first: usize,
    enabled_cpu: Vec<usize>,
    /// How the last sample's totals were scaled, per enabled CPU series.
    scaling: Vec<(usize, Scaling)>,
    watch: CommandWatch,
}

/// What [`open_target`] opened.
pub struct OpenedTarget {
    /// The engine's direct source.
    pub backend: Box<dyn HwcBackend>,
    /// Tells when a counted command has exited.
    pub watch: CommandWatch,
    /// Why the Mali GPU gives no counters (no device, or the device, driver and failing call), when
    /// opening it failed.
    pub gpu_error: Option<hwcpipe::gpu::GpuError>,
}

/// Opens `target`'s CPU counters and the Arm PMU events `events`, and the Mali GPU's counters when this
/// machine has one, as the engine's direct source: give [`OpenedTarget::backend`] to
/// [`Lizard::configure_with_backend`](crate::Lizard::configure_with_backend). A command target is started
/// here; the sampler reaps it as soon as it exits ([`CommandWatch`]), and it is killed if still running when
/// the capture stops.
pub fn open_target(target: &Target, events: &[PmuEvent]) -> Result<OpenedTarget, TargetError> {
    open_target_with(
        target,
        &CpuCounter::ALL,
        events,
        KernelCounting::Auto,
        GpuDumps::DriverPaced,
    )
}

/// [`open_target`] with the HWCPipe CPU counters `counters` only, counting kernel execution as `kernel`
/// says and dumping the GPU as `gpu_dumps` says.
pub fn open_target_with(
    target: &Target,
    counters: &[CpuCounter],
    events: &[PmuEvent],
    kernel: KernelCounting,
    gpu_dumps: GpuDumps,
) -> Result<OpenedTarget, TargetError> {
    let cpu = TargetCounters::open(target, counters, events, kernel)?;
    // The GPU counters count the whole GPU whatever the CPU target; no GPU is no GPU counters, and
    // the reason is kept for the summary.
    let pipe = HwcPipe::with_config(None, &GpuCounter::ALL);
    let (gpu, gpu_error) = match HwcPipeBackend::new(pipe) {
        Ok(gpu) => (Some(gpu.with_gpu_dumps(gpu_dumps)), None),
        Err(EngineError::Direct(DirectError::HwcPipeUnavailable { gpu, .. })) => (None, gpu),
        Err(_) => (None, None),
    };
    let watch = CommandWatch::default();
    let backend = TargetBackend {
        target: target.clone(),
        gpu_first: cpu.series().len(),
        cpu,
        gpu,
        enabled_cpu: Vec::new(),
        scaling: Vec::new(),
        watch: watch.clone(),
    };
    Ok(OpenedTarget {
        backend: Box::new(backend),
        watch,
        gpu_error,
    })
}

impl TargetBackend {
    /// Whether the counters count a task (a command, a process, this process) rather than CPUs.
    fn is_task(&self) -> bool {
        !matches!(self.target, Target::Cpus { .. })
    }

    /// The event and core type of an Arm PMU event's series.
    fn pmu_part(&self, of: Counted) -> Option<PmuPart> {
        let Counted::Event { event, pmu } = of else {
            return None;
        };
        let status = self.cpu.events().get(event)?;
        let placement = pmu.and_then(|p| status.event.placements.iter().find(|pl| pl.pmu == p));
        Some(PmuPart {
            event: status.event.name.clone(),
            pmu: placement.map(|pl| pl.pmu_name.clone()),
            core: placement.map(|pl| pl.label.clone()),
        })
    }

    /// Reaps the command if it has exited.
    fn check_child(&mut self) {
        if let Some(child) = self.cpu.child() {
            if let Ok(Some(status)) = child.try_wait() {
                self.watch.lock().status = Some(status);
            }
        }
    }
}

impl HwcBackend for TargetBackend {
    fn gpu(&self) -> Option<GpuDevice> {
        self.gpu.as_ref().and_then(HwcBackend::gpu)
    }

    fn counters(&self) -> Vec<HwcCounterInfo> {
        let mut infos: Vec<HwcCounterInfo> = self
            .cpu
            .series()
            .iter()
            .map(|series| HwcCounterInfo {
                name: self.cpu.series_name(series),
                description: self.cpu.series_description(series),
                units: Units::from(self.cpu.series_unit(series)),
                source: Source::HwcPipeCpu,
                result_type: ResultType::Integer,
                class: CounterClass::Delta,
                category: match series.of {
                    Counted::Counter(_) => None,
                    Counted::Event { .. } => Some(PMU_EVENT_CATEGORY.to_owned()),
                },
                derivation: None,
                cpu_series: series.cpu.map(|cpu| CpuSeries {
                    counter: self.cpu.base_name(series),
                    cpu,
                }),
                pmu_part: self.pmu_part(series.of),
            })
            .collect();
        if let Some(gpu) = &self.gpu {
            // The GPU's derived counters name their inputs by index in the GPU's own list, which follows
            // the CPU series here.
            let offset = infos.len() as u32;
            infos.extend(gpu.counters().into_iter().map(|mut info| {
                if let Some(derivation) = &mut info.derivation {
                    derivation.offset_counters(offset);
                }
                info
            }));
        }
        infos
    }

    fn start(&mut self, enabled: &[usize]) -> Result<(), EngineError> {
        self.enabled_cpu = enabled
            .iter()
            .copied()
            .filter(|&i| i < self.gpu_first)
            .collect();
        let gpu_enabled: Vec<usize> = enabled
            .iter()
            .filter_map(|&i| i.checked_sub(self.gpu_first))
            .collect();
        if let (Some(gpu), false) = (&mut self.gpu, gpu_enabled.is_empty()) {
            gpu.start(&gpu_enabled)?;
        }
        self.cpu
            .run()
            .map_err(|e| EngineError::Direct(DirectError::Backend(Box::new(e))))?;
        if let Some(child) = self.cpu.child() {
            self.watch.lock().pid = i32::try_from(child.id()).ok();
        }
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), EngineError> {
        // The GPU first: its errors say nothing about the CPU side, whose values are then still taken.
        if let Some(gpu) = &mut self.gpu {
            let first = out.len();
            gpu.sample(out)?;
            for (index, _) in &mut out[first..] {
                *index += self.gpu_first;
            }
        }
        let readings = self
            .cpu
            .sample()
            .map_err(|e| EngineError::Direct(DirectError::Backend(Box::new(e))))?;
        // A count the store cannot hold is the sample's error, after the values beside it.
        let mut out_of_range = None;
        self.scaling.clear();
        for &index in &self.enabled_cpu {
            if let Some(reading) = readings.get(index) {
                match Value::from_count(reading.delta) {
                    Ok(value) => out.push((index, value)),
                    Err(err) => {
                        out_of_range.get_or_insert(err);
                    }
                }
                self.scaling.push((
                    index,
                    Scaling {
                        multiplexed: reading.multiplexed,
                        counted_share: reading.counted_share(),
                    },
                ));
            }
        }
        self.check_child();
        out_of_range.map_or(Ok(()), |err| {
            Err(EngineError::Direct(DirectError::Backend(Box::new(err))))
        })
    }

    fn stop(&mut self) {
        self.cpu.stop();
        if let Some(gpu) = &mut self.gpu {
            gpu.stop();
        }
        self.check_child();
        if let Some(child) = self.cpu.child() {
            if self.watch.status().is_none() {
                // Still running when the capture ended (its duration, Ctrl-C): it is not left behind.
                let _ = child.kill();
                if let Ok(status) = child.wait() {
                    let mut watch = self.watch.lock();
                    watch.status = Some(status);
                    watch.killed = true;
                }
            }
        }
    }

    fn unreadable(&self) -> Vec<UnreadableCounter> {
        let mut unreadable: Vec<UnreadableCounter> = self
            .cpu
            .unavailable()
            .iter()
            .map(|(counter, reason)| UnreadableCounter {
                name: counter.name().to_owned(),
                reason: reason.clone(),
                pmu_part: None,
            })
            .collect();
        unreadable.extend(super::pmu_events::not_counted(self.cpu.events()));
        if let Some(gpu) = &self.gpu {
            unreadable.extend(gpu.unreadable());
        }
        unreadable
    }

    fn cpu_scope(&self) -> CpuScope {
        CpuScope::Target(self.target.clone())
    }

    fn scaling(&self) -> Vec<(usize, Scaling)> {
        self.scaling.clone()
    }

    fn kernel_excluded(&self) -> bool {
        self.cpu.kernel_excluded()
    }

    fn check_target(&mut self) {
        self.check_child();
    }

    fn gpu_source(&self) -> Option<GpuPlan> {
        let mut plan = self.gpu.as_ref()?.gpu_source()?;
        plan.first += self.gpu_first;
        Some(plan)
    }

    fn kernel_sampler(
        &mut self,
        enabled: &[usize],
        interval: Duration,
    ) -> Result<KernelPlan, NoKernelSampling> {
        if enabled.iter().any(|&i| i >= self.gpu_first) {
            // The GPU is dumped with the samples (`GpuDumps::WithSamples`): by the sampler thread.
            // Otherwise the engine samples it on its own (`HwcBackend::gpu_source`) and never asks this.
            return Err(NoKernelSampling::GpuCounters);
        }
        let plan = match self.cpu.kernel_sampling_plan(enabled) {
            Some(plan) => plan,
            None if self.is_task() => return Err(NoKernelSampling::TaskCounters),
            None => return Err(NoKernelSampling::Declined(
                "one core type's part of an Arm PMU event is summed from each CPU's reading by \
                     the sampler thread"
                    .into(),
            )),
        };
        let sampler = KernelSampler::open(
            &plan,
            interval,
            self.cpu.kernel_excluded(),
            CpuConfig::DEFAULT_HARDWARE_GROUP_SIZE,
        )
        .map_err(NoKernelSampling::Refused)?;
        Ok(KernelPlan {
            sampler,
            per_core: self.cpu.series().iter().all(|s| s.cpu.is_none()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcpipe::cpu::sim::FakePerf;
    use hwcpipe::KernelCounting;

    #[test]
    fn a_count_the_store_cannot_hold_is_the_samples_error_and_the_others_are_kept() {
        let Ok(&[cpu, ..]) = hwcpipe::counting::online_cpus().as_deref() else {
            panic!("no online CPU");
        };
        let fake = Arc::new(FakePerf::new(0));
        let target = Target::Cpus {
            cpus: vec![cpu],
            per_cpu: false,
            all: false,
        };
        let wanted = [CpuCounter::TaskClock, CpuCounter::PageFaults];
        let counters =
            TargetCounters::open_with(&target, &wanted, &[], KernelCounting::Auto, fake.clone())
                .unwrap();
        let mut backend = TargetBackend {
            target,
            gpu_first: counters.series().len(),
            cpu: counters,
            gpu: None,
            enabled_cpu: Vec::new(),
            scaling: Vec::new(),
            watch: CommandWatch::default(),
        };
        let names: Vec<String> = backend.counters().into_iter().map(|c| c.name).collect();
        let index = |name: &str| names.iter().position(|n| n == name).unwrap();
        let (clock, faults) = (index("TaskClock"), index("PageFaults"));
        backend.start(&[clock, faults]).unwrap();
        // Task clock (config 1) counts 1000 more, page faults (config 2) jump beyond i64::MAX.
        fake.advance(1_000, 1_000, |config| if config == 1 { 1_000 } else { 0 });
        fake.set_count(2, u64::MAX);
        let mut out = Vec::new();
        let err = backend.sample(&mut out).unwrap_err();
        let EngineError::Direct(DirectError::Backend(source)) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            source.downcast_ref::<crate::store::CountOutOfRange>(),
            Some(&crate::store::CountOutOfRange { count: u64::MAX })
        );
        assert_eq!(out, [(clock, Value::Int(1_000))]);
    }
}
