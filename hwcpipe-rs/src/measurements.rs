//! [`Measurements`]: what one `HwcPipe::sample()` returns, borrowing each profiler's last sample.

use crate::counter_info::Counter;
use crate::cpu::{CpuCounter, CpuSample};
use crate::gpu::{GpuCounter, GpuSample};
use crate::value::Value;

/// The values of one sample of both profilers; a side is `None` when it has no profiler.
///
/// Every value is the change since the previous sample (or since `run()`), HWCPipe's semantics.
/// CPU values are integers and may be scaled estimates when the kernel multiplexed counters
/// ([`Measurements::is_multiplexed`]); GPU values come from formulas and may be fractional.
#[derive(Clone, Copy, Debug, Default)]
pub struct Measurements<'a> {
    cpu: Option<&'a CpuSample>,
    gpu: Option<&'a GpuSample>,
}

impl<'a> Measurements<'a> {
    /// Measurements made of the two sides' samples.
    pub fn new(cpu: Option<&'a CpuSample>, gpu: Option<&'a GpuSample>) -> Self {
        Measurements { cpu, gpu }
    }

    /// The CPU sample, if there is a CPU profiler.
    pub fn cpu(&self) -> Option<&'a CpuSample> {
        self.cpu
    }

    /// The GPU sample, if there is a GPU profiler.
    pub fn gpu(&self) -> Option<&'a GpuSample> {
        self.gpu
    }

    /// The value of `counter` in this sample, `None` when it was not measured.
    pub fn get(&self, counter: impl Into<Counter>) -> Option<Value> {
        match counter.into() {
            Counter::Cpu(c) => self.cpu_value(c).map(Value::Int),
            Counter::Gpu(g) => self.gpu_value(g).map(Value::Float),
        }
    }

    /// The delta of a CPU counter.
    pub fn cpu_value(&self, counter: CpuCounter) -> Option<u64> {
        self.cpu.and_then(|s| s.get(counter))
    }

    /// The value of a GPU counter.
    pub fn gpu_value(&self, counter: GpuCounter) -> Option<f64> {
        self.gpu.and_then(|s| s.get(counter))
    }

    /// Every measured `(counter, value)`: CPU counters first, then GPU counters.
    pub fn iter(&self) -> impl Iterator<Item = (Counter, Value)> + 'a {
        let cpu = self
            .cpu
            .into_iter()
            .flat_map(|s| s.iter())
            .map(|r| (Counter::Cpu(r.counter), Value::Int(r.delta)));
        let gpu = self
            .gpu
            .into_iter()
            .flat_map(|s| s.iter())
            .map(|(g, v)| (Counter::Gpu(g), Value::Float(v)));
        cpu.chain(gpu)
    }

    /// Whether a CPU value of this sample is an estimate scaled for multiplexing.
    pub fn is_multiplexed(&self) -> bool {
        self.cpu.is_some_and(|s| s.is_multiplexed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_measurements_have_no_values() {
        let m = Measurements::default();
        assert_eq!(m.get(CpuCounter::Cycles), None);
        assert_eq!(m.get(GpuCounter::GpuCycles), None);
        assert_eq!(m.iter().count(), 0);
        assert!(!m.is_multiplexed());
    }
}
