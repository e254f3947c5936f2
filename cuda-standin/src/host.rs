//! Page-locked host memory: allocated by the driver (`cuMemAllocHost`) or registered by the caller
//! (`cuMemHostRegister`).
//!
//! Registering follows NVIDIA's documented rules: the range must be page-aligned, start and length, and
//! mapped; a range that overlaps one already registered is `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`;
//! unregistering takes the start of a registered range. `CU_MEMHOSTREGISTER_PORTABLE` is accepted (the
//! stand-in has one device, so every registration is portable). Both kinds belong to the context current
//! when they were made and go with its reset. Registered and allocated memory is faulted in at once, as
//! page-locking makes it resident; the stand-in does not lock it against being swapped out.

use std::collections::BTreeMap;

use crate::host_map::{self, HostMap};
use crate::result::{
    Outcome, HOST_MEMORY_ALREADY_REGISTERED, HOST_MEMORY_NOT_REGISTERED, INVALID_VALUE,
};

/// The flags `cuMemHostRegister` knows: PORTABLE, DEVICEMAP, IOMEMORY, READ_ONLY.
pub const REGISTER_FLAGS: u32 = 0x1 | 0x2 | 0x4 | READ_ONLY;

/// `CU_MEMHOSTREGISTER_READ_ONLY`.
const READ_ONLY: u32 = 0x8;

/// How a range became page-locked.
#[derive(Debug)]
enum Kind {
    /// `cuMemAllocHost`: the driver's own memory, unmapped when freed.
    Allocated {
        /// The memory, unmapped when the range is dropped.
        _memory: HostMap,
    },
    /// `cuMemHostRegister`: the caller's memory.
    Registered,
}

/// One page-locked range.
#[derive(Debug)]
pub(crate) struct HostRange {
    /// Its length.
    pub(crate) len: usize,
    /// How it came to be.
    kind: Kind,
    /// The context current when it was made.
    context: usize,
    /// Its identity (`CU_POINTER_ATTRIBUTE_BUFFER_ID`).
    pub(crate) buffer_id: u64,
}

/// The page-locked ranges of this process, by start address.
#[derive(Debug, Default)]
pub(crate) struct HostRanges {
    /// The ranges.
    by_start: BTreeMap<usize, HostRange>,
}

impl HostRanges {
    /// `cuMemAllocHost` of `len` bytes.
    pub(crate) fn allocate(&mut self, len: usize, ctx: usize, id: u64) -> Outcome<usize> {
        if len == 0 {
            return Err(INVALID_VALUE);
        }
        let page = host_map::page_size();
        let map = HostMap::anonymous(len.div_ceil(page) * page)?;
        let start = map.ptr() as usize;
        self.by_start.insert(
            start,
            HostRange {
                len,
                kind: Kind::Allocated { _memory: map },
                context: ctx,
                buffer_id: id,
            },
        );
        Ok(start)
    }

    /// `cuMemFreeHost`.
    pub(crate) fn free(&mut self, start: usize) -> Outcome<()> {
        match self.by_start.get(&start) {
            Some(HostRange {
                kind: Kind::Allocated { .. },
                ..
            }) => {
                self.by_start.remove(&start);
                Ok(())
            }
            _ => Err(INVALID_VALUE),
        }
    }

    /// `cuMemHostRegister` of `len` bytes at `start` with `flags`.
    pub(crate) fn register(
        &mut self,
        start: usize,
        len: usize,
        flags: u32,
        ctx: usize,
        id: u64,
    ) -> Outcome<()> {
        let page = host_map::page_size();
        if start == 0 || len == 0 || !start.is_multiple_of(page) || !len.is_multiple_of(page) {
            return Err(INVALID_VALUE);
        }
        if flags & !REGISTER_FLAGS != 0 {
            return Err(INVALID_VALUE);
        }
        let end = start.checked_add(len).ok_or(INVALID_VALUE)?;
        let overlaps = self
            .by_start
            .range(..end)
            .next_back()
            .is_some_and(|(&s, r)| s + r.len > start);
        if overlaps {
            return Err(HOST_MEMORY_ALREADY_REGISTERED);
        }
        if !host_map::is_mapped(start, len) {
            return Err(INVALID_VALUE);
        }
        // Page-locked memory is resident: fault it in now, as pinning does, not at the first copy.
        host_map::populate(start, len, flags & READ_ONLY == 0);
        self.by_start.insert(
            start,
            HostRange {
                len,
                kind: Kind::Registered,
                context: ctx,
                buffer_id: id,
            },
        );
        Ok(())
    }

    /// `cuMemHostUnregister` of the start of a registered range.
    pub(crate) fn unregister(&mut self, start: usize) -> Outcome<()> {
        match self.by_start.get(&start) {
            Some(HostRange {
                kind: Kind::Registered,
                ..
            }) => {
                self.by_start.remove(&start);
                Ok(())
            }
            _ => Err(HOST_MEMORY_NOT_REGISTERED),
        }
    }

    /// The range holding `address`, with its start.
    pub(crate) fn find(&self, address: usize) -> Option<(usize, &HostRange)> {
        let (&start, range) = self.by_start.range(..=address).next_back()?;
        (address < start + range.len).then_some((start, range))
    }

    /// Frees and forgets every range made in context `ctx`.
    pub(crate) fn drop_context(&mut self, ctx: usize) {
        self.by_start.retain(|_, r| r.context != ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_needs_aligned_mapped_ranges_that_do_not_overlap() {
        let page = host_map::page_size();
        let memory = HostMap::anonymous(4 * page).unwrap();
        let start = memory.ptr() as usize;
        let mut ranges = HostRanges::default();
        assert_eq!(
            ranges.register(start + 1, page, 1, 0, 1),
            Err(INVALID_VALUE)
        );
        assert_eq!(
            ranges.register(start, page + 1, 1, 0, 1),
            Err(INVALID_VALUE)
        );
        assert_eq!(
            ranges.register(start, page, 0x100, 0, 1),
            Err(INVALID_VALUE)
        );
        ranges.register(start + page, 2 * page, 1, 0, 1).unwrap();
        assert_eq!(
            ranges.register(start, 2 * page, 1, 0, 2),
            Err(HOST_MEMORY_ALREADY_REGISTERED)
        );
        assert_eq!(ranges.find(start + 2 * page).unwrap().0, start + page);
        assert!(ranges.find(start).is_none());
        assert_eq!(ranges.unregister(start), Err(HOST_MEMORY_NOT_REGISTERED));
        ranges.unregister(start + page).unwrap();
        let pinned = ranges.allocate(100, 0, 3).unwrap();
        assert_eq!(ranges.unregister(pinned), Err(HOST_MEMORY_NOT_REGISTERED));
        ranges.free(pinned).unwrap();
        assert_eq!(ranges.free(pinned), Err(INVALID_VALUE));
    }
}
