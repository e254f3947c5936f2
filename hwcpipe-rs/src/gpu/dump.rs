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
    #[error("dump is {actual} bytes, the layout needs {expected}")]
    SizeMismatch {
        /// Bytes the layout needs.
        expected: usize,
        /// Bytes given (or announced by GET_BUFFER_SIZE).
        actual: usize,
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
}

impl Default for BlockSums {
    fn default() -> Self {
        BlockSums {
            sums: [[0; MAX_VALUES_PER_BLOCK]; 4],
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

    /// Adds one block's values (header words 0..4 are skipped). Sums wrap instead of panicking.
    pub fn add_block(&mut self, kind: BlockKind, values: impl Iterator<Item = u64>) {
        let row = &mut self.sums[kind.index()];
        for (i, v) in values
            .enumerate()
            .take(MAX_VALUES_PER_BLOCK)
            .skip(FIRST_COUNTER)
        {
            row[i] = row[i].wrapping_add(v);
        }
    }
}

/// Where the blocks of a vinstr dump are: front-end, tiler, one memory block per L2 slice, then one
/// shader-core block per bit position up to the highest present core (absent cores leave holes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VinstrLayout {
    /// Shader cores present.
    pub core_mask: u64,
    /// L2 slices.
    pub l2_slices: u32,
}

impl VinstrLayout {
    /// Checks that the layout is possible (at least one core, 1..=64 L2 slices).
    pub fn new(core_mask: u64, l2_slices: u32) -> Result<VinstrLayout, DumpError> {
        if core_mask == 0 || l2_slices == 0 || l2_slices > 64 {
            return Err(DumpError::BadLayout {
                core_mask,
                l2_slices,
            });
        }
        Ok(VinstrLayout {
            core_mask,
            l2_slices,
        })
    }

    /// Number of shader-core block slots (`fls64(core_mask)`).
    pub fn core_slots(&self) -> usize {
        (64 - self.core_mask.leading_zeros()) as usize
    }

    /// Number of 256-byte blocks in a dump.
    pub fn block_count(&self) -> usize {
        2 + self.l2_slices as usize + self.core_slots()
    }

    /// Bytes per dump, what GET_BUFFER_SIZE reports.
    pub fn dump_bytes(&self) -> usize {
        self.block_count() * VINSTR_BLOCK_BYTES
    }

    /// `(kind, instance, block position)` of every block holding counters; absent cores are skipped.
    pub fn blocks(&self) -> impl Iterator<Item = (BlockKind, u32, usize)> + '_ {
        let fixed = [(BlockKind::FrontEnd, 0, 0), (BlockKind::Tiler, 0, 1)].into_iter();
        let l2 = (0..self.l2_slices).map(|i| (BlockKind::Memory, i, 2 + i as usize));
        let first_core = 2 + self.l2_slices as usize;
        let cores = (0..self.core_slots())
            .filter(|bit| self.core_mask & (1u64 << bit) != 0)
            .map(move |bit| (BlockKind::ShaderCore, bit as u32, first_core + bit));
        fixed.chain(l2).chain(cores)
    }

    /// Sums a dump (`dump_bytes()` native-endian u32 values) into `sums`.
    pub fn accumulate(&self, dump: &[u8], sums: &mut BlockSums) -> Result<(), DumpError> {
        if dump.len() != self.dump_bytes() {
            return Err(DumpError::SizeMismatch {
                expected: self.dump_bytes(),
                actual: dump.len(),
            });
        }
        for (kind, _, pos) in self.blocks() {
            let block = &dump[pos * VINSTR_BLOCK_BYTES..(pos + 1) * VINSTR_BLOCK_BYTES];
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
    fn shader_blocks_follow_core_bits() {
        let l = VinstrLayout::new(0b1101, 2).unwrap();
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
        let l = VinstrLayout::new(0b101, 1).unwrap();
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
    fn wrong_sizes_and_layouts_are_errors() {
        let l = VinstrLayout::new(1, 1).unwrap();
        let mut sums = BlockSums::default();
        assert_eq!(
            l.accumulate(&[0u8; 10], &mut sums),
            Err(DumpError::SizeMismatch {
                expected: 4 * 256,
                actual: 10
            })
        );
        assert!(VinstrLayout::new(0, 1).is_err());
        assert!(VinstrLayout::new(1, 0).is_err());
        assert!(VinstrLayout::new(1, 65).is_err());
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sums_equal_per_block_addition(core_mask in 1u64..0x1_0000, l2 in 1u32..5, seed in any::<u32>()) {
            let layout = VinstrLayout::new(core_mask, l2).unwrap();
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
