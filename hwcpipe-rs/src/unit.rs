//! [`Unit`]: what one step of a counter value means, shared by the CPU and GPU counters.

use core::fmt;

use crate::gpu::GpuUnit;

/// The unit of a counter value. Bytes are bytes: a value in [`Unit::Bytes`] is never beats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unit {
    /// Clock cycles (CPU or GPU).
    Cycles,
    /// Executed or retired instructions.
    Instructions,
    /// Cache references.
    References,
    /// Cache or branch misses.
    Misses,
    /// Memory or cache accesses.
    Accesses,
    /// Bus beats (one data transfer on the bus, of bus-width bytes).
    Beats,
    /// Speculatively executed operations.
    Operations,
    /// Nanoseconds of time.
    Nanoseconds,
    /// Context switches.
    Switches,
    /// Migrations of a task from one CPU to another.
    Migrations,
    /// Page faults.
    Faults,
    /// Occurrences of an Arm PMU event that is not a count of cycles.
    Events,
    /// GPU jobs.
    Jobs,
    /// Shaded pixels.
    Pixels,
    /// Primitives (triangles, lines, points).
    Primitives,
    /// Physical tiles.
    Tiles,
    /// Depth or stencil tests.
    Tests,
    /// Cache lookups.
    Lookups,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// The lower-case name of the unit, e.g. `"cycles"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Unit::Cycles => "cycles",
            Unit::Instructions => "instructions",
            Unit::References => "references",
            Unit::Misses => "misses",
            Unit::Accesses => "accesses",
            Unit::Beats => "beats",
            Unit::Operations => "operations",
            Unit::Nanoseconds => "ns",
            Unit::Switches => "switches",
            Unit::Migrations => "migrations",
            Unit::Faults => "faults",
            Unit::Events => "events",
            Unit::Jobs => "jobs",
            Unit::Pixels => "pixels",
            Unit::Primitives => "primitives",
            Unit::Tiles => "tiles",
            Unit::Tests => "tests",
            Unit::Lookups => "lookups",
            Unit::Bytes => "bytes",
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<GpuUnit> for Unit {
    fn from(unit: GpuUnit) -> Self {
        match unit {
            GpuUnit::Cycles => Unit::Cycles,
            GpuUnit::Jobs => Unit::Jobs,
            GpuUnit::Pixels => Unit::Pixels,
            GpuUnit::Primitives => Unit::Primitives,
            GpuUnit::Tiles => Unit::Tiles,
            GpuUnit::Tests => Unit::Tests,
            GpuUnit::Instructions => Unit::Instructions,
            GpuUnit::Lookups => Unit::Lookups,
            GpuUnit::Accesses => Unit::Accesses,
            GpuUnit::Bytes => Unit::Bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_units_keep_their_names() {
        for unit in [
            GpuUnit::Cycles,
            GpuUnit::Pixels,
            GpuUnit::Bytes,
            GpuUnit::Lookups,
        ] {
            assert_eq!(Unit::from(unit).as_str(), unit.as_str());
        }
    }
}
