//! [`HwcPipeBackend`]: the [`HwcBackend`] over `hwcpipe::HwcPipe` (CPU perf events, Mali GPU).

use hwcpipe::{Counter as HwcCounter, CpuCounter, GpuCounter, HwcPipe};

use super::backend::{GpuDevice, HwcBackend, HwcCounterInfo};
use crate::counter::{ResultType, Source, Units};
use crate::error::Error;
use crate::store::Value;
use crate::DirectError;

/// HWCPipe as a direct counter source. Lists only the counters HWCPipe really reads on this machine (CPU
/// first, then GPU, in HWCPipe's fixed enum order); every sample is the change since the previous one.
#[derive(Debug)]
pub struct HwcPipeBackend {
    pipe: HwcPipe,
    counters: Vec<HwcCounter>,
}

impl HwcPipeBackend {
    /// HWCPipe with every CPU counter and the Mali GPU of this machine, if any.
    pub fn open() -> Result<HwcPipeBackend, Error> {
        HwcPipeBackend::new(HwcPipe::new())
    }

    /// Wraps an already built `HwcPipe` (for example one whose GPU profiler runs over a simulated kbase
    /// device). Fails with [`DirectError::HwcPipeUnavailable`], carrying each side's reason, if it reads no counter.
    pub fn new(pipe: HwcPipe) -> Result<HwcPipeBackend, Error> {
        let counters: Vec<HwcCounter> = pipe
            .counters()
            .filter(|(_, _, availability)| availability.is_available())
            .map(|(counter, _, _)| counter)
            .collect();
        if counters.is_empty() {
            let (cpu, gpu) = pipe.into_errors();
            return Err(Error::Direct(DirectError::HwcPipeUnavailable { cpu, gpu }));
        }
        Ok(HwcPipeBackend { pipe, counters })
    }
}

impl HwcBackend for HwcPipeBackend {
    fn gpu(&self) -> Option<GpuDevice> {
        self.pipe.gpu_profiler().map(|profiler| {
            let info = profiler.info();
            GpuDevice {
                product: info.product.name.to_owned(),
                driver: info.version.to_string(),
            }
        })
    }

    fn counters(&self) -> Vec<HwcCounterInfo> {
        self.counters
            .iter()
            .map(|&counter| {
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
                }
            })
            .collect()
    }

    fn start(&mut self, enabled: &[usize]) -> Result<(), Error> {
        let mut cpu: Vec<CpuCounter> = Vec::new();
        let mut gpu: Vec<GpuCounter> = Vec::new();
        for counter in enabled.iter().filter_map(|&i| self.counters.get(i)) {
            match *counter {
                HwcCounter::Cpu(c) => cpu.push(c),
                HwcCounter::Gpu(g) => gpu.push(g),
            }
        }
        self.pipe.set_enabled_cpu_counters(&cpu)?;
        self.pipe.set_enabled_gpu_counters(&gpu)?;
        self.pipe.run()?;
        Ok(())
    }

    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), Error> {
        let measurements = self.pipe.sample()?;
        for (counter, value) in measurements.iter() {
            if let Some(index) = self.counters.iter().position(|&c| c == counter) {
                out.push((index, Value::from(value)));
            }
        }
        Ok(())
    }

    fn stop(&mut self) {
        // Stopping only disables counting; an error here leaves nothing to undo.
        let _ = self.pipe.stop();
    }
}
