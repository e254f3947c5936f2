//! How each [`GpuCounter`] is computed from hardware counters, per architecture (HWCPipe 1.x's
//! formulas with its name bugs fixed), and their evaluation over [`BlockSums`].
//!
//! Names are matched exactly against the product's [`HardwareLayout`]; a formula lists alternatives
//! where products name the same quantity differently, and the first alternative whose names all
//! exist is used. Shader-core terms are summed over present cores, memory terms over L2 slices.

use super::counter::GpuCounter;
use super::dump::BlockSums;
use super::error::Unavailable;
use super::product::Family;
use super::tables::{BlockKind, HardwareLayout};

use BlockKind::{FrontEnd as FE, Memory as L2, ShaderCore as SC, Tiler as TI};

/// One hardware counter term: block kind, exact name, weight.
pub type Term = (BlockKind, &'static str, u64);

/// How terms combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Σ weight × value.
    Sum,
    /// max(weight × value): units that run in parallel.
    Max,
}

/// What the combined value is multiplied by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// A constant (1, or 1024 pixels per fragment task).
    Const(u64),
    /// The external bus width in bytes (beats → bytes).
    BusWidthBytes,
}

/// A formula before its names are resolved against a layout.
#[derive(Clone, Copy, Debug)]
pub struct Formula {
    /// Combination of the terms.
    pub combine: Combine,
    /// Alternatives, tried in order.
    pub alternatives: &'static [&'static [Term]],
    /// Final multiplier.
    pub scale: Scale,
}

const fn sum(alternatives: &'static [&'static [Term]]) -> Option<Formula> {
    Some(Formula {
        combine: Combine::Sum,
        alternatives,
        scale: Scale::Const(1),
    })
}

macro_rules! f {
    ($($kind:ident $name:literal),+) => { sum(&[&[$(($kind, $name, 1)),+]]) };
}

/// Pixels per fragment task (HWCPipe 1.x: 32 × 32 tiles on T760 onwards).
pub const PIXELS_PER_TASK: u64 = 1024;

const ARITH_VALHALL: Option<Formula> = Some(Formula {
    combine: Combine::Max,
    alternatives: &[&[
        (SC, "EXEC_INSTR_FMA", 1),
        (SC, "EXEC_INSTR_CVT", 1),
        (SC, "EXEC_INSTR_SFU", 4),
    ]],
    scale: Scale::Const(1),
});
const CULLED_MODERN: Option<Formula> = sum(&[
    &[
        (TI, "PRIM_CULLED", 1),
        (TI, "PRIM_CLIPPED", 1),
        (TI, "PRIM_SAT_CULLED", 1),
    ],
    &[
        (TI, "PRIM_FACE_CULLED", 1),
        (TI, "PRIM_FRUSTUM_CULLED", 1),
        (TI, "PRIM_SAMPLE_CULLED", 1),
        (TI, "PRIM_SCISSOR_CULLED", 1),
    ],
    &[
        (TI, "PRIM_FACE_CULLED", 1),
        (TI, "PRIM_FRUSTUM_CULLED", 1),
        (TI, "PRIM_SAMPLE_CULLED", 1),
    ],
]);

/// The formula of `counter` on `family`, or `None` when the architecture has nothing to compute
/// it from.
pub fn formula(family: Family, counter: GpuCounter) -> Option<Formula> {
    use Family::*;
    use GpuCounter::*;
    let jm = matches!(family, Midgard | Bifrost | ValhallJm);
    let valhall = matches!(family, ValhallJm | ValhallCsf | FifthGen);
    match counter {
        GpuCycles => f!(FE "GPU_ACTIVE"),
        ComputeCycles if !jm => f!(FE "ITER_COMP_ACTIVE"),
        VertexCycles if !jm => f!(FE "ITER_TILER_ACTIVE"),
        VertexComputeCycles if jm => f!(FE "JS1_ACTIVE"),
        FragmentCycles if jm => f!(FE "JS0_ACTIVE"),
        FragmentCycles => f!(FE "ITER_FRAG_ACTIVE"),
        TilerCycles if family != Midgard => f!(TI "TILER_ACTIVE"),
        ComputeJobs if !jm => f!(FE "ITER_COMP_JOB_COMPLETED"),
        VertexJobs if !jm => f!(FE "ITER_TILER_JOB_COMPLETED"),
        VertexComputeJobs if jm => f!(FE "JS1_JOBS"),
        FragmentJobs if jm => f!(FE "JS0_JOBS"),
        FragmentJobs => f!(FE "ITER_FRAG_JOB_COMPLETED"),
        Pixels => Some(Formula {
            combine: Combine::Sum,
            alternatives: if jm {
                &[&[(FE, "JS0_TASKS", 1)]]
            } else {
                &[&[(FE, "ITER_FRAG_TASK_COMPLETED", 1)]]
            },
            scale: Scale::Const(PIXELS_PER_TASK),
        }),
        CulledPrimitives if family == Midgard => f!(TI "PRIM_CULLED", TI "PRIM_CLIPPED"),
        CulledPrimitives => CULLED_MODERN,
        VisiblePrimitives => f!(TI "PRIM_VISIBLE"),
        InputPrimitives => f!(TI "TRIANGLES", TI "LINES", TI "POINTS"),
        Tiles => f!(SC "FRAG_PTILES"),
        TransactionEliminations => f!(SC "FRAG_TRANS_ELIM"),
        EarlyZTests => f!(SC "FRAG_QUADS_EZS_TEST"),
        EarlyZKilled => f!(SC "FRAG_QUADS_EZS_KILL"),
        LateZTests if family == Midgard => f!(SC "FRAG_THREADS_LZS_TEST"),
        LateZTests => f!(SC "FRAG_LZS_TEST"),
        LateZKilled if family == Midgard => f!(SC "FRAG_THREADS_LZS_KILL"),
        LateZKilled => f!(SC "FRAG_LZS_KILL"),
        Instructions if family == Bifrost => f!(SC "EXEC_INSTR_COUNT"),
        // Arm's public database omits EXEC_INSTR_MSG; without it the sum counts arithmetic only.
        Instructions if valhall => sum(&[
            &[
                (SC, "EXEC_INSTR_FMA", 1),
                (SC, "EXEC_INSTR_CVT", 1),
                (SC, "EXEC_INSTR_SFU", 1),
                (SC, "EXEC_INSTR_MSG", 1),
            ],
            &[
                (SC, "EXEC_INSTR_FMA", 1),
                (SC, "EXEC_INSTR_CVT", 1),
                (SC, "EXEC_INSTR_SFU", 1),
            ],
        ]),
        DivergedInstructions if family != Midgard => f!(SC "EXEC_INSTR_DIVERGED"),
        ShaderComputeCycles => f!(SC "COMPUTE_ACTIVE"),
        ShaderFragmentCycles => f!(SC "FRAG_ACTIVE"),
        ShaderCycles if family == Midgard => f!(SC "TRIPIPE_ACTIVE"),
        ShaderCycles => f!(SC "EXEC_CORE_ACTIVE"),
        ShaderArithmeticCycles if family == Midgard => f!(SC "ARITH_WORDS"),
        ShaderArithmeticCycles if family == Bifrost => f!(SC "EXEC_INSTR_COUNT"),
        ShaderArithmeticCycles => ARITH_VALHALL,
        ShaderInterpolatorCycles if family != Midgard => f!(SC "VARY_SLOT_16", SC "VARY_SLOT_32"),
        ShaderLoadStoreCycles if family == Midgard => f!(SC "LS_ISSUES"),
        ShaderLoadStoreCycles => f!(
            SC "LS_MEM_READ_FULL", SC "LS_MEM_WRITE_FULL", SC "LS_MEM_READ_SHORT", SC "LS_MEM_WRITE_SHORT", SC "LS_MEM_ATOMIC"
        ),
        ShaderTextureCycles if family == Midgard => f!(SC "TEX_ISSUES"),
        // G71/G72 lack TEX_FILT_NUM_OPERATIONS; HWCPipe reads TEX_COORD_ISSUE there.
        ShaderTextureCycles => sum(&[
            &[(SC, "TEX_FILT_NUM_OPERATIONS", 1)],
            &[(SC, "TEX_COORD_ISSUE", 1)],
        ]),
        CacheReadLookups => f!(L2 "L2_READ_LOOKUP"),
        CacheWriteLookups => f!(L2 "L2_WRITE_LOOKUP"),
        ExternalMemoryReadAccesses => f!(L2 "L2_EXT_READ"),
        ExternalMemoryWriteAccesses => f!(L2 "L2_EXT_WRITE"),
        ExternalMemoryReadStalls => f!(L2 "L2_EXT_AR_STALL"),
        ExternalMemoryWriteStalls => f!(L2 "L2_EXT_W_STALL"),
        ExternalMemoryReadBytes => Some(Formula {
            combine: Combine::Sum,
            alternatives: &[&[(L2, "L2_EXT_READ_BEATS", 1)]],
            scale: Scale::BusWidthBytes,
        }),
        ExternalMemoryWriteBytes => Some(Formula {
            combine: Combine::Sum,
            alternatives: &[&[(L2, "L2_EXT_WRITE_BEATS", 1)]],
            scale: Scale::BusWidthBytes,
        }),
        _ => None,
    }
}

/// A formula bound to counter indices of one product.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    combine: Combine,
    terms: Vec<(BlockKind, u32, u64)>,
    scale: f64,
}

impl Resolved {
    /// Evaluates the formula over one sample's sums.
    pub fn eval(&self, sums: &BlockSums) -> f64 {
        let values = self
            .terms
            .iter()
            .map(|&(k, i, w)| sums.get(k, i).wrapping_mul(w));
        let combined = match self.combine {
            Combine::Sum => values.fold(0u64, u64::wrapping_add),
            Combine::Max => values.max().unwrap_or(0),
        };
        combined as f64 * self.scale
    }

    /// The `(block, index, weight)` terms.
    pub fn terms(&self) -> &[(BlockKind, u32, u64)] {
        &self.terms
    }
}

/// Binds `counter`'s formula for `family` to `layout`'s indices, for a driver that dumps
/// `values_per_block` values per block (a counter the database places beyond that cannot be read).
pub fn resolve(
    family: Family,
    layout: &HardwareLayout,
    bus_width_bytes: u32,
    values_per_block: usize,
    counter: GpuCounter,
) -> Result<Resolved, Unavailable> {
    let formula = formula(family, counter).ok_or(Unavailable::NotOnArchitecture)?;
    let mut first_failure = None;
    for alternative in formula.alternatives {
        let mut terms = Vec::with_capacity(alternative.len());
        for &(kind, name, weight) in *alternative {
            match layout.index_of(kind, name) {
                Some(index) if (index as usize) < values_per_block => {
                    terms.push((kind, index, weight))
                }
                Some(index) => {
                    first_failure.get_or_insert(Unavailable::OutsideDriverBlock {
                        name,
                        index,
                        values: values_per_block,
                    });
                    break;
                }
                None => {
                    first_failure.get_or_insert(Unavailable::MissingHardwareCounter(name));
                    break;
                }
            }
        }
        if terms.len() == alternative.len() {
            let scale = match formula.scale {
                Scale::Const(c) => c as f64,
                Scale::BusWidthBytes => f64::from(bus_width_bytes),
            };
            return Ok(Resolved {
                combine: formula.combine,
                terms,
                scale,
            });
        }
    }
    Err(first_failure.unwrap_or(Unavailable::MissingHardwareCounter("")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::tables::spec_layout;

    #[test]
    fn architecture_specific_counters() {
        assert!(formula(Family::Bifrost, GpuCounter::ComputeJobs).is_none());
        assert!(formula(Family::ValhallCsf, GpuCounter::VertexComputeJobs).is_none());
        assert!(formula(Family::Midgard, GpuCounter::Instructions).is_none());
        assert!(formula(Family::ValhallCsf, GpuCounter::ComputeJobs).is_some());
    }

    #[test]
    fn csf_fragment_cycles_uses_the_real_name() {
        let g710 = spec_layout("Mali-G710").unwrap();
        let r = resolve(Family::ValhallCsf, g710, 16, 64, GpuCounter::FragmentCycles).unwrap();
        assert_eq!(r.terms(), &[(BlockKind::FrontEnd, 32, 1)]);
    }

    #[test]
    fn alternatives_and_weights() {
        let g71 = spec_layout("Mali-G71").unwrap();
        let r = resolve(
            Family::Bifrost,
            g71,
            16,
            64,
            GpuCounter::ShaderTextureCycles,
        )
        .unwrap();
        assert_eq!(r.terms(), &[(BlockKind::ShaderCore, 40, 1)]);
        let g720 = spec_layout("Mali-G720").unwrap();
        let r = resolve(
            Family::FifthGen,
            g720,
            16,
            128,
            GpuCounter::CulledPrimitives,
        )
        .unwrap();
        assert_eq!(r.terms().len(), 4);
        let mut sums = BlockSums::default();
        let mut block = [0u64; 64];
        block[27] = 10;
        block[28] = 30;
        block[29] = 9;
        sums.add_block(BlockKind::ShaderCore, block.iter().copied());
        let g78 = spec_layout("Mali-G78").unwrap();
        let r = resolve(
            Family::ValhallJm,
            g78,
            16,
            64,
            GpuCounter::ShaderArithmeticCycles,
        )
        .unwrap();
        assert_eq!(r.eval(&sums), 36.0);
        let r = resolve(
            Family::ValhallJm,
            g78,
            32,
            64,
            GpuCounter::ExternalMemoryReadBytes,
        )
        .unwrap();
        assert_eq!(r.terms(), &[(BlockKind::Memory, 32, 1)]);
    }

    #[test]
    fn missing_names_are_reported() {
        let g78 = spec_layout("Mali-G78").unwrap();
        assert_eq!(
            resolve(Family::Midgard, g78, 16, 64, GpuCounter::LateZTests),
            Err(Unavailable::MissingHardwareCounter("FRAG_THREADS_LZS_TEST"))
        );
    }

    #[test]
    fn counters_beyond_the_drivers_blocks_are_unavailable() {
        // GPU_ACTIVE is value 6 of the G78's front-end block: a driver dumping 6 values per block
        // (as a 128-value GPU read through 64-value blocks would be) cannot give GpuCycles.
        let g78 = spec_layout("Mali-G78").unwrap();
        assert_eq!(
            resolve(Family::ValhallJm, g78, 16, 6, GpuCounter::GpuCycles),
            Err(Unavailable::OutsideDriverBlock {
                name: "GPU_ACTIVE",
                index: 6,
                values: 6
            })
        );
        assert!(resolve(Family::ValhallJm, g78, 16, 7, GpuCounter::GpuCycles).is_ok());
    }
}
