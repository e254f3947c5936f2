//! The 37 GPU counters of HWCPipe 1.x, in HWCPipe's order, with their names, descriptions and units.

use core::fmt;
use core::str::FromStr;

/// Unit of a [`GpuCounter`] value.
///
/// HWCPipe 1.x labelled `Pixels` as "cycles"; here pixels are pixels and bytes are bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuUnit {
    /// GPU clock cycles.
    Cycles,
    /// Jobs (JM job chains, CSF iterator jobs).
    Jobs,
    /// Shaded pixels.
    Pixels,
    /// Primitives (triangles, lines, points).
    Primitives,
    /// Physical tiles.
    Tiles,
    /// Depth/stencil tests.
    Tests,
    /// Shader instructions.
    Instructions,
    /// Cache lookups.
    Lookups,
    /// Memory bus transactions.
    Accesses,
    /// Bytes.
    Bytes,
}

impl GpuUnit {
    /// Lower-case unit name, e.g. `"cycles"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            GpuUnit::Cycles => "cycles",
            GpuUnit::Jobs => "jobs",
            GpuUnit::Pixels => "pixels",
            GpuUnit::Primitives => "primitives",
            GpuUnit::Tiles => "tiles",
            GpuUnit::Tests => "tests",
            GpuUnit::Instructions => "instructions",
            GpuUnit::Lookups => "lookups",
            GpuUnit::Accesses => "accesses",
            GpuUnit::Bytes => "bytes",
        }
    }
}

impl fmt::Display for GpuUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! gpu_counters {
    ($( $(#[$doc:meta])* $name:ident => $desc:literal, $unit:ident; )*) => {
        /// A GPU counter of HWCPipe 1.x. The discriminant is HWCPipe 1.x's enum value (0..37).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum GpuCounter {
            $( $(#[$doc])* $name, )*
        }

        impl GpuCounter {
            /// Every counter, in HWCPipe 1.x order.
            pub const ALL: [GpuCounter; 37] = [$(GpuCounter::$name,)*];

            /// The exact HWCPipe name, e.g. `"GpuCycles"`.
            pub const fn name(self) -> &'static str {
                match self { $(GpuCounter::$name => stringify!($name),)* }
            }

            /// HWCPipe's one-line description.
            pub const fn description(self) -> &'static str {
                match self { $(GpuCounter::$name => $desc,)* }
            }

            /// Unit of the value.
            pub const fn unit(self) -> GpuUnit {
                match self { $(GpuCounter::$name => GpuUnit::$unit,)* }
            }
        }
    };
}

gpu_counters! {
    /// GPU active cycles.
    GpuCycles => "Number of GPU cycles", Cycles;
    /// Compute iterator active cycles (CSF GPUs).
    ComputeCycles => "Number of compute cycles", Cycles;
    /// Vertex (tiler iterator) active cycles (CSF GPUs).
    VertexCycles => "Number of vertex cycles", Cycles;
    /// Vertex/compute job slot active cycles (JM GPUs).
    VertexComputeCycles => "Number of vertex/compute cycles", Cycles;
    /// Fragment active cycles.
    FragmentCycles => "Number of fragment cycles", Cycles;
    /// Tiler active cycles.
    TilerCycles => "Number of tiler cycles", Cycles;
    /// Compute jobs (CSF GPUs).
    ComputeJobs => "Number of compute jobs", Jobs;
    /// Vertex jobs (CSF GPUs).
    VertexJobs => "Number of vertex jobs", Jobs;
    /// Vertex/compute jobs (JM GPUs).
    VertexComputeJobs => "Number of vertex/compute jobs", Jobs;
    /// Fragment jobs.
    FragmentJobs => "Number of fragment jobs", Jobs;
    /// Pixels shaded (fragment tasks × pixels per task).
    Pixels => "Number of pixels shaded", Pixels;
    /// Culled primitives.
    CulledPrimitives => "Number of culled primitives", Primitives;
    /// Visible primitives.
    VisiblePrimitives => "Number of visible primitives", Primitives;
    /// Input primitives.
    InputPrimitives => "Number of input primitives", Primitives;
    /// Physical tiles written.
    Tiles => "Number of physical tiles written", Tiles;
    /// Tiles eliminated because their content did not change.
    TransactionEliminations => "Number of transaction eliminations", Tiles;
    /// Early-Z tests.
    EarlyZTests => "Number of early-Z tests performed", Tests;
    /// Early-Z tests that killed.
    EarlyZKilled => "Number of early-Z tests resulting in a kill", Tests;
    /// Late-Z tests.
    LateZTests => "Number of late-Z tests performed", Tests;
    /// Late-Z tests that killed.
    LateZKilled => "Number of late-Z tests resulting in a kill", Tests;
    /// Shader instructions.
    Instructions => "Number of shader instructions", Instructions;
    /// Diverged shader instructions.
    DivergedInstructions => "Number of diverged shader instructions", Instructions;
    /// Shader core compute cycles.
    ShaderComputeCycles => "Number of shader vertex/compute cycles", Cycles;
    /// Shader core fragment cycles.
    ShaderFragmentCycles => "Number of shader fragment cycles", Cycles;
    /// Shader core active cycles.
    ShaderCycles => "Number of shader core cycles", Cycles;
    /// Arithmetic pipe cycles.
    ShaderArithmeticCycles => "Number of shader arithmetic cycles", Cycles;
    /// Varying interpolator cycles.
    ShaderInterpolatorCycles => "Number of shader interpolator cycles", Cycles;
    /// Load/store pipe cycles.
    ShaderLoadStoreCycles => "Number of shader load/store cycles", Cycles;
    /// Texture pipe cycles.
    ShaderTextureCycles => "Number of shader texture cycles", Cycles;
    /// L2 read lookups.
    CacheReadLookups => "Number of cache read lookups", Lookups;
    /// L2 write lookups.
    CacheWriteLookups => "Number of cache write lookups", Lookups;
    /// External memory read transactions.
    ExternalMemoryReadAccesses => "Number of reads from external memory", Accesses;
    /// External memory write transactions.
    ExternalMemoryWriteAccesses => "Number of writes to external memory", Accesses;
    /// Stall cycles on external reads.
    ExternalMemoryReadStalls => "Number of stall cycles when reading from external memory", Cycles;
    /// Stall cycles on external writes.
    ExternalMemoryWriteStalls => "Number of stall cycles when writing to external memory", Cycles;
    /// Bytes read from external memory (beats × bus width).
    ExternalMemoryReadBytes => "Number of bytes read from external memory", Bytes;
    /// Bytes written to external memory (beats × bus width).
    ExternalMemoryWriteBytes => "Number of bytes written to external memory", Bytes;
}

impl GpuCounter {
    /// Position in [`GpuCounter::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for GpuCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not exactly one of the [`GpuCounter`] names.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown GPU counter {name:?}; valid names: {}", valid_names())]
pub struct UnknownGpuCounter {
    /// The name that was given.
    pub name: String,
}

fn valid_names() -> String {
    GpuCounter::ALL
        .iter()
        .map(|c| c.name())
        .collect::<Vec<_>>()
        .join(", ")
}

impl FromStr for GpuCounter {
    type Err = UnknownGpuCounter;

    /// Exact, case-sensitive match on [`GpuCounter::name`]. Unlike HWCPipe 1.x, `"ComputeJobs"` is
    /// `ComputeJobs`, not `VertexComputeJobs`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        GpuCounter::ALL
            .iter()
            .copied()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownGpuCounter { name: s.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matches_hwcpipe_1x() {
        assert_eq!(GpuCounter::ALL.len(), 37);
        assert_eq!(GpuCounter::ALL[0], GpuCounter::GpuCycles);
        assert_eq!(GpuCounter::ComputeJobs as u8, 6);
        assert_eq!(GpuCounter::ExternalMemoryWriteBytes as u8, 36);
        for (i, c) in GpuCounter::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
        }
    }

    #[test]
    fn names_round_trip_exactly() {
        for c in GpuCounter::ALL {
            assert_eq!(c.name().parse::<GpuCounter>(), Ok(c));
        }
        assert_eq!("ComputeJobs".parse(), Ok(GpuCounter::ComputeJobs));
    }

    #[test]
    fn substrings_and_case_are_rejected() {
        for bad in ["Cycles", "gpucycles", "GpuCycles ", "", "Compute"] {
            let err = bad.parse::<GpuCounter>().unwrap_err();
            assert_eq!(err.name, bad);
            assert!(err.to_string().contains("GpuCycles"));
        }
    }

    #[test]
    fn units_are_honest() {
        assert_eq!(GpuCounter::Pixels.unit(), GpuUnit::Pixels);
        assert_eq!(GpuCounter::ExternalMemoryReadBytes.unit(), GpuUnit::Bytes);
        assert_eq!(GpuUnit::Bytes.to_string(), "bytes");
    }
}
