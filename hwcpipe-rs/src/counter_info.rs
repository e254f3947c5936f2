//! [`CounterInfo`]: the name, description and unit of a counter, and [`Counter`], either side's counter.

use core::fmt;

use crate::cpu::CpuCounter;
use crate::gpu::GpuCounter;
use crate::unit::Unit;

/// What a counter is: its exact HWCPipe name, a one-line description and its [`Unit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CounterInfo {
    /// The exact name used in JSON selections, e.g. `"Cycles"` or `"GpuCycles"`.
    pub name: &'static str,
    /// One-line description, e.g. `"Number of CPU cycles"`.
    pub description: &'static str,
    /// The unit of the value.
    pub unit: Unit,
}

/// A CPU or a GPU counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// A counter read through `perf_event_open`.
    Cpu(CpuCounter),
    /// A counter read from the Mali GPU.
    Gpu(GpuCounter),
}

impl Counter {
    /// Name, description and unit of the counter.
    pub fn info(self) -> CounterInfo {
        match self {
            Counter::Cpu(c) => c.info(),
            Counter::Gpu(g) => gpu_info(g),
        }
    }
}

/// Name, description and unit of a GPU counter.
pub fn gpu_info(counter: GpuCounter) -> CounterInfo {
    CounterInfo {
        name: counter.name(),
        description: counter.description(),
        unit: counter.unit().into(),
    }
}

impl From<CpuCounter> for Counter {
    fn from(c: CpuCounter) -> Self {
        Counter::Cpu(c)
    }
}

impl From<GpuCounter> for Counter {
    fn from(g: GpuCounter) -> Self {
        Counter::Gpu(g)
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.info().name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_bytes_are_bytes() {
        let info = Counter::Gpu(GpuCounter::ExternalMemoryReadBytes).info();
        assert_eq!(info.name, "ExternalMemoryReadBytes");
        assert_eq!(info.unit, Unit::Bytes);
    }

    #[test]
    fn cpu_info_is_hwcpipes() {
        let info = Counter::Cpu(CpuCounter::Cycles).info();
        assert_eq!(info.description, "Number of CPU cycles");
        assert_eq!(Counter::from(CpuCounter::BusReads).info().unit, Unit::Beats);
    }
}
