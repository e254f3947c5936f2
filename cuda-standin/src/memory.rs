//! Device memory this process allocated: blocks and the allocations inside them.
//!
//! NVIDIA's Programming Guide warns that `cudaMalloc` may sub-allocate from a larger block and that the IPC
//! calls then share the whole block. The stand-in does the same: an allocation smaller than 2 MiB is placed,
//! first fit at a 512-byte boundary, inside a 2 MiB block it shares with other small allocations of the same
//! context; a larger one gets a block of its own, its size rounded up to 2 MiB. A block is a memfd mapped
//! in this process and placed in the device address space; it goes (its memfd closed, its addresses free
//! for the next allocation) when its last allocation is freed, so an allocation freed and made again gets
//! the same address in a new block, with new handle bytes.

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;

use crate::address_space::{AddressSpace, GRANULE};
use crate::host_map::{self, HostMap};
use crate::result::{Outcome, INVALID_VALUE, OUT_OF_MEMORY};

/// Alignment of allocations inside a shared block.
pub const SUB_ALLOCATION_ALIGN: u64 = 512;

/// A block of device memory: one memfd.
#[derive(Debug)]
pub(crate) struct Block {
    /// Its identity, in its memfd's name and its handles.
    pub(crate) id: u64,
    /// The memfd, kept open while the block lives: importers fetch it by number.
    pub(crate) fd: OwnedFd,
    /// The memfd's inode, which importers check.
    pub(crate) inode: u64,
    /// Bytes, a multiple of 2 MiB.
    pub(crate) size: u64,
    /// Its bytes in this process.
    pub(crate) map: Arc<HostMap>,
    /// Whether small allocations share it.
    shared: bool,
    /// Allocations inside it: offset to length.
    used: BTreeMap<u64, u64>,
    /// The context it was made in.
    context: usize,
}

/// One allocation (`cuMemAlloc`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allocation {
    /// Its device address.
    pub(crate) base: u64,
    /// Its size as asked.
    pub(crate) size: u64,
    /// The device address of its block.
    pub(crate) block: u64,
    /// Where it starts in its block.
    pub(crate) offset: u64,
    /// Its identity (`CU_POINTER_ATTRIBUTE_BUFFER_ID`).
    pub(crate) buffer_id: u64,
    /// The context it was made in.
    pub(crate) context: usize,
}

/// The blocks and allocations of this process.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    /// Blocks by device address.
    pub(crate) blocks: BTreeMap<u64, Block>,
    /// Allocations by device address.
    allocations: BTreeMap<u64, Allocation>,
}

/// The memfd name of block `id` of process `pid`: importers check it.
pub(crate) fn block_name(pid: u32, id: u64) -> String {
    format!("cuda-standin-block-{pid}-{id}")
}

impl Memory {
    /// `cuMemAlloc` of `size` bytes in context `ctx`; `ids` gives new identities.
    pub(crate) fn allocate(
        &mut self,
        space: &mut AddressSpace,
        size: u64,
        ctx: usize,
        mut ids: impl FnMut() -> u64,
    ) -> Outcome<u64> {
        if size == 0 {
            return Err(INVALID_VALUE);
        }
        let (block, offset) = if size < GRANULE {
            let len = size.div_ceil(SUB_ALLOCATION_ALIGN) * SUB_ALLOCATION_ALIGN;
            match self.blocks.iter().find_map(|(&at, b)| {
                (b.shared && b.context == ctx)
                    .then(|| first_fit(&b.used, b.size, len))
                    .flatten()
                    .map(|offset| (at, offset))
            }) {
                Some(found) => found,
                None => (self.new_block(space, GRANULE, true, ctx, ids())?, 0),
            }
        } else {
            let len = size.div_ceil(GRANULE) * GRANULE;
            (self.new_block(space, len, false, ctx, ids())?, 0)
        };
        let base = block + offset;
        let stored = size.div_ceil(SUB_ALLOCATION_ALIGN) * SUB_ALLOCATION_ALIGN;
        if let Some(b) = self.blocks.get_mut(&block) {
            b.used.insert(offset, stored);
        }
        self.allocations.insert(
            base,
            Allocation {
                base,
                size,
                block,
                offset,
                buffer_id: ids(),
                context: ctx,
            },
        );
        Ok(base)
    }

    /// A new block of `size` bytes at a fresh device address.
    fn new_block(
        &mut self,
        space: &mut AddressSpace,
        size: u64,
        shared: bool,
        ctx: usize,
        id: u64,
    ) -> Outcome<u64> {
        let fd = host_map::memfd(&block_name(std::process::id(), id), size)?;
        let (inode, _) = host_map::identity(fd.as_raw_fd()).ok_or(OUT_OF_MEMORY)?;
        let map = Arc::new(HostMap::shared(fd.as_raw_fd(), size).map_err(|_| OUT_OF_MEMORY)?);
        let at = space.allocate(size)?;
        self.blocks.insert(
            at,
            Block {
                id,
                fd,
                inode,
                size,
                map,
                shared,
                used: BTreeMap::new(),
                context: ctx,
            },
        );
        Ok(at)
    }

    /// `cuMemFree`: `ptr` must be an allocation's base. Its block goes with its last allocation.
    pub(crate) fn free(&mut self, space: &mut AddressSpace, ptr: u64) -> Outcome<()> {
        let allocation = self.allocations.remove(&ptr).ok_or(INVALID_VALUE)?;
        let empty = match self.blocks.get_mut(&allocation.block) {
            Some(block) => {
                block.used.remove(&allocation.offset);
                block.used.is_empty()
            }
            None => false,
        };
        if empty {
            self.blocks.remove(&allocation.block);
            space.free(allocation.block);
        }
        Ok(())
    }

    /// The allocation holding `ptr`.
    pub(crate) fn find(&self, ptr: u64) -> Option<&Allocation> {
        let (_, allocation) = self.allocations.range(..=ptr).next_back()?;
        (ptr < allocation.base + allocation.size).then_some(allocation)
    }

    /// The block of `allocation`.
    pub(crate) fn block_of(&self, allocation: &Allocation) -> Option<&Block> {
        self.blocks.get(&allocation.block)
    }

    /// Frees everything made in context `ctx`.
    pub(crate) fn drop_context(&mut self, space: &mut AddressSpace, ctx: usize) {
        self.allocations.retain(|_, a| a.context != ctx);
        let gone: Vec<u64> = self
            .blocks
            .iter()
            .filter(|(_, b)| b.context == ctx)
            .map(|(&at, _)| at)
            .collect();
        for at in gone {
            self.blocks.remove(&at);
            space.free(at);
        }
    }
}

/// The first offset in a block of `size` bytes with `used` ranges where `len` bytes fit.
fn first_fit(used: &BTreeMap<u64, u64>, size: u64, len: u64) -> Option<u64> {
    let mut at = 0;
    for (&start, &taken) in used {
        if start - at >= len {
            return Some(at);
        }
        at = start + taken;
    }
    (size - at >= len).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_allocations_share_a_block_and_large_ones_get_their_own() {
        let mut space = AddressSpace::reserve(64 * GRANULE).unwrap();
        let mut memory = Memory::default();
        let mut next = 0;
        let mut ids = || {
            next += 1;
            next
        };
        let a = memory.allocate(&mut space, 1000, 0, &mut ids).unwrap();
        let b = memory.allocate(&mut space, 4096, 0, &mut ids).unwrap();
        assert_eq!(b, a + 1024);
        let (fa, fb) = (*memory.find(a).unwrap(), *memory.find(b + 4095).unwrap());
        assert_eq!(fa.block, fb.block);
        assert!(
            memory.find(a + 1000).is_none(),
            "the padding after an allocation is nobody's"
        );
        let big = memory.allocate(&mut space, 3 << 20, 0, &mut ids).unwrap();
        let block = memory.block_of(memory.find(big).unwrap()).unwrap();
        assert_eq!(block.size, 4 << 20);
        memory.free(&mut space, a).unwrap();
        assert_eq!(memory.free(&mut space, a), Err(INVALID_VALUE));
        // The freed room is the first fit again.
        assert_eq!(memory.allocate(&mut space, 512, 0, &mut ids).unwrap(), a);
        assert_eq!(
            memory.allocate(&mut space, 0, 0, &mut ids),
            Err(INVALID_VALUE)
        );
        memory.drop_context(&mut space, 0);
        assert!(memory.find(b).is_none());
        assert!(memory.blocks.is_empty());
    }

    #[test]
    fn fits_are_first_fits() {
        let used: BTreeMap<u64, u64> = [(0, 512), (1024, 512)].into_iter().collect();
        assert_eq!(first_fit(&used, 4096, 512), Some(512));
        assert_eq!(first_fit(&used, 4096, 1024), Some(1536));
        assert_eq!(first_fit(&used, 2048, 1024), None);
    }
}
