//! [`HwcPipe`]: the CPU and the GPU profiler behind HWCPipe's `run` / `sample` / `stop` API.

use crate::availability::Availability;
use crate::counter_info::{Counter, CounterInfo};
use crate::cpu::{CpuConfig, CpuCounter, CpuError, CpuProfiler};
use crate::error::Error;
use crate::gpu::{GpuCounter, GpuError, GpuProfiler};
use crate::measurements::Measurements;

/// One side (CPU or GPU) of an [`HwcPipe`].
#[derive(Debug)]
enum Side<P, E> {
    NotSelected,
    Ready(P),
    Missing(E),
}

impl<P, E> Side<P, E> {
    fn from_option(side: Option<Result<P, E>>) -> Self {
        match side {
            None => Side::NotSelected,
            Some(Ok(p)) => Side::Ready(p),
            Some(Err(e)) => Side::Missing(e),
        }
    }

    fn profiler(&self) -> Option<&P> {
        match self {
            Side::Ready(p) => Some(p),
            _ => None,
        }
    }

    fn profiler_mut(&mut self) -> Option<&mut P> {
        match self {
            Side::Ready(p) => Some(p),
            _ => None,
        }
    }

    fn error(&self) -> Option<&E> {
        match self {
            Side::Missing(e) => Some(e),
            _ => None,
        }
    }

    fn into_error(self) -> Option<E> {
        match self {
            Side::Missing(e) => Some(e),
            _ => None,
        }
    }
}

/// CPU and GPU counters, HWCPipe style.
///
/// Construction detects both sides: a side that cannot be measured here (no perf permission, no
/// `/dev/mali*`) has no profiler, and the reason is kept ([`cpu_error`](Self::cpu_error),
/// [`gpu_error`](Self::gpu_error), [`availability`](Self::availability)).
///
/// Call order: construct → optionally `set_enabled_*_counters` → [`run`](Self::run) →
/// [`sample`](Self::sample) repeatedly (each value is the change since the previous sample) →
/// [`stop`](Self::stop). `run` may be called again after `stop`.
#[derive(Debug)]
pub struct HwcPipe {
    cpu: Side<CpuProfiler, CpuError>,
    gpu: Side<GpuProfiler, GpuError>,
}

impl HwcPipe {
    /// Detects the CPU and the GPU and opens every counter each supports, so that
    /// [`counters`](Self::counters) tells what this machine can measure.
    pub fn new() -> Self {
        HwcPipe::from_profilers(
            Some(CpuProfiler::new(CpuConfig::all())),
            Some(GpuProfiler::open()),
        )
    }

    /// Opens exactly these counters; an empty list means no profiler for that side. Counters
    /// that cannot be measured are left out of the samples and reported by
    /// [`availability`](Self::availability).
    pub fn with_counters(cpu: &[CpuCounter], gpu: &[GpuCounter]) -> Self {
        let cpu_config = (!cpu.is_empty()).then(|| CpuConfig::new(cpu));
        HwcPipe::with_config(cpu_config, gpu)
    }

    /// Like [`with_counters`](Self::with_counters), with full control of the CPU side (target
    /// process, kernel counting, group size); `None` means no CPU profiler.
    pub fn with_config(cpu: Option<CpuConfig>, gpu: &[GpuCounter]) -> Self {
        let cpu = cpu.map(CpuProfiler::new);
        let gpu = (!gpu.is_empty()).then(|| {
            GpuProfiler::open().and_then(|mut profiler| {
                let wanted: Vec<GpuCounter> = gpu
                    .iter()
                    .copied()
                    .filter(|g| profiler.supported_counters().contains(g))
                    .collect();
                profiler.set_enabled(&wanted)?;
                Ok(profiler)
            })
        });
        HwcPipe::from_profilers(cpu, gpu)
    }

    /// Parses HWCPipe's JSON selection (`{"cpu": [...], "gpu": [...]}`) and opens those counters.
    /// An unknown name is an error that lists the valid names. Needs the `json` feature.
    #[cfg(feature = "json")]
    pub fn from_json(json: &str) -> Result<Self, Error> {
        let selection = crate::CounterSelection::from_json(json)?;
        Ok(HwcPipe::with_counters(&selection.cpu, &selection.gpu))
    }

    /// Assembles profilers built elsewhere (e.g. a GPU profiler over a simulated device, a CPU
    /// profiler over a simulated kernel). `None` means that side was not selected.
    pub fn from_profilers(
        cpu: Option<Result<CpuProfiler, CpuError>>,
        gpu: Option<Result<GpuProfiler, GpuError>>,
    ) -> Self {
        HwcPipe {
            cpu: Side::from_option(cpu),
            gpu: Side::from_option(gpu),
        }
    }

    /// The CPU profiler, `None` when not selected or not available here.
    pub fn cpu_profiler(&self) -> Option<&CpuProfiler> {
        self.cpu.profiler()
    }

    /// The CPU profiler, mutably.
    pub fn cpu_profiler_mut(&mut self) -> Option<&mut CpuProfiler> {
        self.cpu.profiler_mut()
    }

    /// The GPU profiler, `None` when not selected or not available here.
    pub fn gpu_profiler(&self) -> Option<&GpuProfiler> {
        self.gpu.profiler()
    }

    /// The GPU profiler, mutably.
    pub fn gpu_profiler_mut(&mut self) -> Option<&mut GpuProfiler> {
        self.gpu.profiler_mut()
    }

    /// Takes the GPU profiler out, to sample it on its own (at the driver's pace, on a thread of
    /// its own): from then on this `HwcPipe` reads only the CPU, as if no GPU counter was selected.
    pub fn take_gpu_profiler(&mut self) -> Option<GpuProfiler> {
        match std::mem::replace(&mut self.gpu, Side::NotSelected) {
            Side::Ready(profiler) => Some(profiler),
            other => {
                self.gpu = other;
                None
            }
        }
    }

    /// Why there is no CPU profiler, when creating it failed.
    pub fn cpu_error(&self) -> Option<&CpuError> {
        self.cpu.error()
    }

    /// Why there is no GPU profiler, when creating it failed.
    pub fn gpu_error(&self) -> Option<&GpuError> {
        self.gpu.error()
    }

    /// Why each side has no profiler (CPU, GPU), taken out of a `HwcPipe` that is given up: for an error
    /// that keeps the causes themselves rather than their text.
    pub fn into_errors(self) -> (Option<CpuError>, Option<GpuError>) {
        (self.cpu.into_error(), self.gpu.into_error())
    }

    /// Whether `counter` is measured, and if not, why.
    pub fn availability(&self, counter: impl Into<Counter>) -> Availability<'_> {
        match counter.into() {
            Counter::Cpu(c) => match &self.cpu {
                Side::NotSelected => Availability::SideNotSelected,
                Side::Missing(e) => Availability::NoCpuProfiler(e),
                Side::Ready(p) => match p.availability(c) {
                    Ok(()) => Availability::Available,
                    Err(reason) => Availability::CpuCounter(reason),
                },
            },
            Counter::Gpu(g) => match &self.gpu {
                Side::NotSelected => Availability::SideNotSelected,
                Side::Missing(e) => Availability::NoGpuProfiler(e),
                Side::Ready(p) => match p.unavailable_counters().iter().find(|(u, _)| *u == g) {
                    Some((_, reason)) => Availability::GpuCounter(*reason),
                    None => Availability::Available,
                },
            },
        }
    }

    /// Every counter this crate knows, CPU counters first then GPU counters (each in HWCPipe's
    /// order), with its name, description, unit and availability here. A GPU counter the GPU
    /// supports is available even when not enabled: enabling it later works.
    pub fn counters(&self) -> impl Iterator<Item = (Counter, CounterInfo, Availability<'_>)> + '_ {
        let cpu = CpuCounter::ALL.into_iter().map(Counter::Cpu);
        let gpu = GpuCounter::ALL.into_iter().map(Counter::Gpu);
        cpu.chain(gpu)
            .map(move |c| (c, c.info(), self.availability(c)))
    }

    /// The counters that [`sample`](Self::sample) reports, CPU first.
    pub fn enabled_counters(&self) -> Vec<Counter> {
        let cpu = self
            .cpu
            .profiler()
            .map(|p| p.enabled_counters())
            .unwrap_or_default();
        let gpu = self
            .gpu
            .profiler()
            .map(|p| p.enabled_counters())
            .unwrap_or_default();
        cpu.iter()
            .map(|&c| Counter::Cpu(c))
            .chain(gpu.iter().map(|&g| Counter::Gpu(g)))
            .collect()
    }

    /// Chooses the CPU counters reported; each must be available. A no-op without CPU profiler
    /// when `counters` is empty.
    pub fn set_enabled_cpu_counters(&mut self, counters: &[CpuCounter]) -> Result<(), Error> {
        match &mut self.cpu {
            Side::Ready(p) => Ok(p.set_enabled(counters)?),
            _ if counters.is_empty() => Ok(()),
            Side::Missing(_) | Side::NotSelected => Err(Error::NoCpuProfiler),
        }
    }

    /// Chooses the GPU counters reported; each must be available. A no-op without GPU profiler
    /// when `counters` is empty.
    pub fn set_enabled_gpu_counters(&mut self, counters: &[GpuCounter]) -> Result<(), Error> {
        match &mut self.gpu {
            Side::Ready(p) => Ok(p.set_enabled(counters)?),
            _ if counters.is_empty() => Ok(()),
            Side::Missing(_) | Side::NotSelected => Err(Error::NoGpuProfiler),
        }
    }

    /// Starts counting on both sides.
    pub fn run(&mut self) -> Result<(), Error> {
        if let Side::Ready(p) = &mut self.cpu {
            p.run()?;
        }
        if let Side::Ready(p) = &mut self.gpu {
            p.run()?;
        }
        Ok(())
    }

    /// Reads both sides: the change of every enabled counter since the previous sample. The
    /// result borrows the profilers and is replaced by the next sample; on the CPU side nothing
    /// is allocated.
    #[inline]
    pub fn sample(&mut self) -> Result<Measurements<'_>, Error> {
        let cpu = match &mut self.cpu {
            Side::Ready(p) => Some(p.sample()?),
            _ => None,
        };
        let gpu = match &mut self.gpu {
            Side::Ready(p) => Some(p.sample()?),
            _ => None,
        };
        Ok(Measurements::new(cpu, gpu))
    }

    /// Stops counting on both sides; reports the first error after trying both.
    pub fn stop(&mut self) -> Result<(), Error> {
        let cpu = match &mut self.cpu {
            Side::Ready(p) => p.stop().map_err(Error::from),
            _ => Ok(()),
        };
        let gpu = match &mut self.gpu {
            Side::Ready(p) => p.stop().map_err(Error::from),
            _ => Ok(()),
        };
        cpu.and(gpu)
    }
}

impl Default for HwcPipe {
    fn default() -> Self {
        HwcPipe::new()
    }
}
