//! [`HwcPipeBackend`]: the [`HwcBackend`] over `hwcpipe::HwcPipe` (CPU perf events, Mali GPU), with every
//! counter Arm's database documents for the GPU beside HWCPipe's own.

use hwcpipe::gpu::{
    CounterSource, MaliConstant, MaliConstants, MaliCounter, MaliCounters, MaliInput, MaliValues,
};
use hwcpipe::{Counter as HwcCounter, CpuCounter, GpuCounter, HwcPipe};

use super::backend::{GpuDevice, HwcBackend, HwcCounterInfo, UnreadableCounter};
use crate::counter::{CounterClass, Derivation, DerivedInput, ResultType, Source, Units};
use crate::error::Error;
use crate::store::Value;
use crate::DirectError;

/// HWCPipe as a direct counter source. Lists only the counters HWCPipe really reads on this machine: CPU
/// first, then GPU, in HWCPipe's fixed enum order, then every counter of Arm's database the GPU and driver
/// give (by machine name, `MaliGPUActiveCy`: hardware counters summed over their blocks, derived counters
/// computed per sample by Arm's equations). Every sample is the change since the previous one; a derived
/// counter's sample is its equation over that sample, and its reading over a window is its equation over the
/// window's totals ([`CounterClass::Derived`], with its [`Derivation`]).
#[derive(Debug)]
pub struct HwcPipeBackend {
    pipe: HwcPipe,
    counters: Vec<HwcCounter>,
    /// The database counters listed after `counters`, in database order.
    mali: Vec<MaliCounter>,
    /// `(index into counters(), counter)` of the enabled database counters.
    mali_enabled: Vec<(usize, MaliCounter)>,
    mali_values: MaliValues,
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
        let mali = pipe
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
        Ok(HwcPipeBackend {
            pipe,
            counters,
            mali,
            mali_enabled: Vec::new(),
            mali_values: MaliValues::default(),
        })
    }
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
        self.pipe.gpu_profiler().map(|profiler| {
            let info = profiler.info();
            GpuDevice {
                product: info.product.name.to_owned(),
                driver: info.version.to_string(),
            }
        })
    }

    fn counters(&self) -> Vec<HwcCounterInfo> {
        let mut infos: Vec<HwcCounterInfo> = self
            .counters
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
                    class: CounterClass::Delta,
                    category: None,
                    derivation: None,
                }
            })
            .collect();
        let Some(profiler) = self.pipe.gpu_profiler() else {
            return infos;
        };
        let catalog = profiler.mali_counters();
        let constants = profiler.mali_constants();
        let first = self.counters.len();
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
            })
        }));
        infos
    }

    fn unreadable(&self) -> Vec<UnreadableCounter> {
        let Some(catalog) = self.pipe.gpu_profiler().map(|p| p.mali_counters()) else {
            return Vec::new();
        };
        catalog
            .iter()
            .filter_map(|(_, info)| {
                let reason = info.availability.as_ref().err()?;
                Some(UnreadableCounter {
                    name: info.name().to_owned(),
                    reason: reason.to_string(),
                })
            })
            .collect()
    }

    fn start(&mut self, enabled: &[usize]) -> Result<(), Error> {
        let mut cpu: Vec<CpuCounter> = Vec::new();
        let mut gpu: Vec<GpuCounter> = Vec::new();
        self.mali_enabled.clear();
        for &index in enabled {
            match self.counters.get(index) {
                Some(HwcCounter::Cpu(c)) => cpu.push(*c),
                Some(HwcCounter::Gpu(g)) => gpu.push(*g),
                None => {
                    let database = index.checked_sub(self.counters.len());
                    if let Some(&mali) = database.and_then(|i| self.mali.get(i)) {
                        self.mali_enabled.push((index, mali));
                    }
                }
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
        if self.mali_enabled.is_empty() {
            return Ok(());
        }
        if let Some(profiler) = self.pipe.gpu_profiler() {
            profiler.mali_values(&mut self.mali_values);
            // A sample whose equation has no value (a division by zero) gives none for that counter.
            out.extend(self.mali_enabled.iter().filter_map(|&(index, counter)| {
                let value = self.mali_values.get(counter)?.ok()?;
                Some((index, Value::Float(value)))
            }));
        }
        Ok(())
    }

    fn stop(&mut self) {
        // Stopping only disables counting; an error here leaves nothing to undo.
        let _ = self.pipe.stop();
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
}
