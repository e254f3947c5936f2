//! Counter dumps: the vinstr buffer layout (blocks of 64 × u32) and the per-kind sums the formulas
//! read. kinstr_prfcnt samples feed the same [`BlockSums`] (see [`kinstr`](super::kinstr)).

use super::tables::BlockKind;

/// Counters per vinstr block.
pub const VINSTR_VALUES_PER_BLOCK: usize = 64;
/// Bytes per vinstr block.
pub const VINSTR_BLOCK_BYTES: usize = VINSTR_VALUES_PER_BLOCK * 4;
/// Most counters per block any interface reports.
pub const MAX_VALUES_PER_BLOCK: usize = 128;
/// Index of the enable-mask word in every block header (indices 0..4 are not counters).
pub const HEADER_ENABLE_MASK: usize = 2;
/// First real counter index in a block.
pub const FIRST_COUNTER: usize = 4;

/// A dump that does not fit the layout.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DumpError {
    /// The buffer size differs from what the GPU's blocks need.
    #[error("the driver's dump is {actual} bytes where the block layout needs {expected}")]
    SizeMismatch {
        /// Bytes the layout needs.
        expected: usize,
        /// Bytes given (or announced by GET_BUFFER_SIZE).
        actual: usize,
    },
    /// The driver's enumeration has no slot for a present L2 slice or core, more slots than any GPU,
    /// or a block size other than 64 or 128 values.
    #[error(
        "the driver enumerates {slots:?} block slots of {values_per_block} values, which cannot hold \
         core mask {core_mask:#x} and {l2_slices} L2 slices"
    )]
    EnumerationDisagrees {
        /// Slots per block kind (front end, tiler, memory, shader core).
        slots: [u32; 4],
        /// Values per block.
        values_per_block: usize,
        /// Shader core mask of the GPU properties.
        core_mask: u64,
        /// L2 slices of the GPU properties.
        l2_slices: u32,
    },
    /// The layout itself is impossible (no cores, too many L2 slices).
    #[error("impossible layout: core mask {core_mask:#x}, {l2_slices} L2 slices")]
    BadLayout {
        /// Shader core mask.
        core_mask: u64,
        /// L2 slices.
        l2_slices: u32,
    },
}

/// Per block kind, each counter index summed over all instances (L2 slices, present shader cores).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockSums {
    sums: [[u64; MAX_VALUES_PER_BLOCK]; 4],
    /// Whether any counter value added was not zero.
    counted: bool,
}

impl Default for BlockSums {
    fn default() -> Self {
        BlockSums {
            sums: [[0; MAX_VALUES_PER_BLOCK]; 4],
            counted: false,
        }
    }
}

impl BlockSums {
    /// Sum of counter `index` over all blocks of `kind` (0 outside the block).
    pub fn get(&self, kind: BlockKind, index: u32) -> u64 {
        self.sums[kind.index()]
            .get(index as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Zeroes every sum.
    pub fn clear(&mut self) {
        *self = BlockSums::default();
    }

    /// Whether any counter value added was not zero (headers aside). A CSF driver's dump taken
    /// before its firmware enabled counting has every counter zero, and so has the dump of an idle
    /// GPU: the block headers cannot tell them apart, since kbase writes the client's enable mask
    /// into every header it hands out (`kbase_hwcnt_gpu_patch_dump_headers`).
    pub fn counted(&self) -> bool {
        self.counted
    }

    /// Adds one block's values (header words 0..4 are skipped). Sums wrap instead of panicking.
    pub fn add_block(&mut self, kind: BlockKind, values: impl Iterator<Item = u64>) {
        let row = &mut self.sums[kind.index()];
        for (i, v) in values
            .enumerate()
            .take(MAX_VALUES_PER_BLOCK)
            .skip(FIRST_COUNTER)
        {
            row[i] = row[i].wrapping_add(v);
            self.counted |= v != 0;
        }
    }
}

/// Where a block layout's slot counts came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutSource {
    /// The driver's kinstr_prfcnt enumeration (`KBASE_IOCTL_KINSTR_PRFCNT_ENUM_INFO`): what the
    /// driver itself dumps, block type by block type.
    Enumeration,
    /// The GPU properties, for drivers without the enumeration: one memory block per L2 slice and one
    /// shader-core slot per bit up to the highest present core, as kbase lays out a real GPU's dump.
    GpuProperties,
}

/// Where the counter blocks of a dump are, and which of them carry counters.
///
/// A dump holds, in this order, the front-end block(s), the tiler block(s), `slots[Memory]` memory
/// system blocks and `slots[ShaderCore]` shader-core blocks, `values_per_block` values each. The
/// driver decides the slot counts: on a real GPU they follow the hardware (one memory block per L2
/// slice, a shader slot per core bit up to the highest present core, absent cores leaving holes);
/// Arm's dummy GPU model dumps its maxima (8 memory blocks, 32 shader cores) whatever is present.
/// So a block's position comes from the slots, and whether it carries counters from the present
/// masks of the GPU properties: memory slots below the L2 slice count, shader slots whose core bit
/// is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// Block slots per [`BlockKind`], indexed by [`BlockKind::index`].
    pub slots: [u32; 4],
    /// Values per block, header words included (64, or 128 on GPUs only kinstr_prfcnt reads).
    pub values_per_block: usize,
    /// Shader cores present.
    pub core_mask: u64,
    /// L2 slices present.
    pub l2_slices: u32,
    /// Where the slot counts came from.
    pub source: LayoutSource,
}

/// Most block slots of one kind accepted from a driver.
pub const MAX_SLOTS: u32 = 256;

impl BlockLayout {
    /// The layout of a real GPU's dump from its properties: front end, tiler, one memory block per
    /// L2 slice, one shader slot per bit up to the highest present core; 64 values per block.
    pub fn from_props(core_mask: u64, l2_slices: u32) -> Result<BlockLayout, DumpError> {
        if core_mask == 0 || l2_slices == 0 || l2_slices > 64 {
            return Err(DumpError::BadLayout {
                core_mask,
                l2_slices,
            });
        }
        Ok(BlockLayout {
            slots: [1, 1, l2_slices, 64 - core_mask.leading_zeros()],
            values_per_block: VINSTR_VALUES_PER_BLOCK,
            core_mask,
            l2_slices,
            source: LayoutSource::GpuProperties,
        })
    }

    /// The layout the driver enumerates: `slots` block instances per kind of `values_per_block`
    /// values, checked against the present masks (every present L2 slice and core needs a slot).
    pub fn from_enumeration(
        slots: [u32; 4],
        values_per_block: usize,
        core_mask: u64,
        l2_slices: u32,
    ) -> Result<BlockLayout, DumpError> {
        let core_slots = 64 - core_mask.leading_zeros();
        let fits = slots[BlockKind::FrontEnd.index()] >= 1
            && slots.iter().all(|&n| n <= MAX_SLOTS)
            && slots[BlockKind::Memory.index()] >= l2_slices
            && slots[BlockKind::ShaderCore.index()] >= core_slots
            && matches!(values_per_block, 64 | 128);
        if core_mask == 0 || l2_slices == 0 || !fits {
            return Err(DumpError::EnumerationDisagrees {
                slots,
                values_per_block,
                core_mask,
                l2_slices,
            });
        }
        Ok(BlockLayout {
            slots,
            values_per_block,
            core_mask,
            l2_slices,
            source: LayoutSource::Enumeration,
        })
    }

    /// Number of shader-core block slots.
    pub fn core_slots(&self) -> usize {
        self.slots[BlockKind::ShaderCore.index()] as usize
    }

    /// Number of blocks in a dump.
    pub fn block_count(&self) -> usize {
        self.slots.iter().map(|&n| n as usize).sum()
    }

    /// Bytes per vinstr dump (32-bit values), what GET_BUFFER_SIZE reports.
    pub fn dump_bytes(&self) -> usize {
        self.block_count() * self.values_per_block * 4
    }

    /// Whether block `instance` of `kind` carries counters of a present L2 slice or core.
    pub fn is_present(&self, kind: BlockKind, instance: u32) -> bool {
        match kind {
            BlockKind::FrontEnd | BlockKind::Tiler => instance == 0,
            BlockKind::Memory => instance < self.l2_slices,
            BlockKind::ShaderCore => instance < 64 && self.core_mask & (1u64 << instance) != 0,
        }
    }

    /// `(kind, instance, block position)` of every block holding counters; absent slices and cores
    /// are skipped.
    pub fn blocks(&self) -> impl Iterator<Item = (BlockKind, u32, usize)> + '_ {
        let mut first = 0usize;
        BlockKind::ALL.into_iter().flat_map(move |kind| {
            let start = first;
            let count = self.slots[kind.index()];
            first += count as usize;
            (0..count)
                .filter(move |&i| self.is_present(kind, i))
                .map(move |i| (kind, i, start + i as usize))
        })
    }

    /// Sums a vinstr dump (`dump_bytes()` native-endian u32 values) into `sums`.
    pub fn accumulate(&self, dump: &[u8], sums: &mut BlockSums) -> Result<(), DumpError> {
        if dump.len() != self.dump_bytes() {
            return Err(DumpError::SizeMismatch {
                expected: self.dump_bytes(),
                actual: dump.len(),
            });
        }
        let block_bytes = self.values_per_block * 4;
        for (kind, _, pos) in self.blocks() {
            let block = &dump[pos * block_bytes..(pos + 1) * block_bytes];
            sums.add_block(
                kind,
                block
                    .chunks_exact(4)
                    .map(|c| u64::from(u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_counted_something_only_if_a_counter_is_not_zero() {
        let mut sums = BlockSums::default();
        sums.add_block(BlockKind::FrontEnd, [7, 0, 0xFFFF, 0, 0].into_iter());
        assert!(!sums.counted(), "headers are not counts");
        sums.add_block(BlockKind::Tiler, [0, 0, 0xFFFF, 0, 1].into_iter());
        assert!(sums.counted());
        assert_eq!(sums.get(BlockKind::Tiler, 4), 1);
        sums.clear();
        assert!(!sums.counted());
    }

    #[test]
    fn shader_blocks_follow_core_bits() {
        let l = BlockLayout::from_props(0b1101, 2).unwrap();
        assert_eq!(l.block_count(), 2 + 2 + 4);
        let cores: Vec<_> = l
            .blocks()
            .filter(|b| b.0 == BlockKind::ShaderCore)
            .collect();
        assert_eq!(
            cores,
            vec![
                (BlockKind::ShaderCore, 0, 4),
                (BlockKind::ShaderCore, 2, 6),
                (BlockKind::ShaderCore, 3, 7)
            ]
        );
    }

    #[test]
    fn sums_skip_headers_and_holes() {
        let l = BlockLayout::from_props(0b101, 1).unwrap();
        let mut dump = vec![0u8; l.dump_bytes()];
        let mut put = |block: usize, idx: usize, v: u32| {
            let at = block * VINSTR_BLOCK_BYTES + idx * 4;
            dump[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        };
        put(0, 2, 0xFFFF_FFFF); // enable mask, not a counter
        put(0, 6, 7);
        put(3, 4, 10); // core 0
        put(4, 4, 1000); // hole (core 1 absent)
        put(5, 4, 20); // core 2
        let mut sums = BlockSums::default();
        l.accumulate(&dump, &mut sums).unwrap();
        assert_eq!(sums.get(BlockKind::FrontEnd, 6), 7);
        assert_eq!(sums.get(BlockKind::FrontEnd, 2), 0);
        assert_eq!(sums.get(BlockKind::ShaderCore, 4), 30);
        assert_eq!(sums.get(BlockKind::ShaderCore, 500), 0);
    }

    #[test]
    fn the_dummy_models_slots_put_present_cores_after_eight_memory_blocks() {
        // What kbase r35p0 with its dummy GPU model enumerates and dumps: 1 + 1 + 8 + 32 slots,
        // one L2 slice and cores 0..3 present, in slots 2 and 10..13 of a 10752-byte dump.
        let l = BlockLayout::from_enumeration([1, 1, 8, 32], 64, 0xF, 1).unwrap();
        assert_eq!(l.dump_bytes(), 10752);
        let positions: Vec<usize> = l.blocks().map(|b| b.2).collect();
        assert_eq!(positions, vec![0, 1, 2, 10, 11, 12, 13]);
        assert_eq!(l.source, LayoutSource::Enumeration);
        assert!(l.is_present(BlockKind::ShaderCore, 3));
        assert!(!l.is_present(BlockKind::ShaderCore, 4));
        assert!(!l.is_present(BlockKind::Memory, 1));
        // An enumeration without a slot for every present core or slice is refused.
        for (slots, values) in [
            ([1, 1, 8, 3], 64),
            ([1, 1, 0, 32], 64),
            ([0, 1, 8, 32], 64),
            ([1, 1, 8, 32], 100),
        ] {
            assert!(matches!(
                BlockLayout::from_enumeration(slots, values, 0xF, 1),
                Err(DumpError::EnumerationDisagrees { .. })
            ));
        }
        assert!(BlockLayout::from_enumeration([1, 1, 8, 32], 64, 0, 1).is_err());
        assert!(BlockLayout::from_enumeration([1, 1, 8, 1000], 64, 0xF, 1).is_err());
    }

    #[test]
    fn wrong_sizes_and_layouts_are_errors() {
        let l = BlockLayout::from_props(1, 1).unwrap();
        let mut sums = BlockSums::default();
        assert_eq!(
            l.accumulate(&[0u8; 10], &mut sums),
            Err(DumpError::SizeMismatch {
                expected: 4 * 256,
                actual: 10
            })
        );
        assert!(BlockLayout::from_props(0, 1).is_err());
        assert!(BlockLayout::from_props(1, 0).is_err());
        assert!(BlockLayout::from_props(1, 65).is_err());
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sums_equal_per_block_addition(core_mask in 1u64..0x1_0000, l2 in 1u32..5, seed in any::<u32>()) {
            let layout = BlockLayout::from_props(core_mask, l2).unwrap();
            let value = |pos: usize, idx: usize| seed.wrapping_mul(pos as u32 + 1).wrapping_add(idx as u32);
            let mut dump = vec![0u8; layout.dump_bytes()];
            for (pos, block) in dump.chunks_exact_mut(VINSTR_BLOCK_BYTES).enumerate() {
                for (idx, w) in block.chunks_exact_mut(4).enumerate() {
                    w.copy_from_slice(&value(pos, idx).to_ne_bytes());
                }
            }
            let mut sums = BlockSums::default();
            layout.accumulate(&dump, &mut sums).unwrap();
            for idx in FIRST_COUNTER..VINSTR_VALUES_PER_BLOCK {
                let cores: u64 = (0..64).filter(|b| core_mask & (1 << b) != 0)
                    .map(|b| u64::from(value(2 + l2 as usize + b, idx))).sum();
                prop_assert_eq!(sums.get(BlockKind::ShaderCore, idx as u32), cores);
                let slices: u64 = (0..l2 as usize).map(|s| u64::from(value(2 + s, idx))).sum();
                prop_assert_eq!(sums.get(BlockKind::Memory, idx as u32), slices);
                prop_assert_eq!(sums.get(BlockKind::Tiler, idx as u32), u64::from(value(1, idx)));
            }
        }
    }
}
