//! The device address space: a range of this process's virtual addresses reserved with no access, so that no
//! host allocation can ever share an address with device memory (NVIDIA's unified addressing gives the same
//! guarantee). Device memory is handed out from it in 2 MiB granules, first fit, so an address freed is the
//! first one given again, as on the GPU. The bytes of device memory live elsewhere (in the memfd mappings of
//! `host_map`): dereferencing a device pointer on the host faults, as it does with a real GPU.
#![allow(unsafe_code)]

use std::collections::BTreeMap;

use crate::result::{Outcome, OUT_OF_MEMORY};

/// The granule of the device address space, and the size of the blocks `cuMemAlloc` sub-allocates from.
pub const GRANULE: u64 = 2 << 20;

/// The reserved range and what of it is in use.
#[derive(Debug)]
pub(crate) struct AddressSpace {
    /// First address, a multiple of [`GRANULE`].
    start: u64,
    /// Bytes reserved.
    len: u64,
    /// Ranges in use, by start: their lengths.
    used: BTreeMap<u64, u64>,
}

impl AddressSpace {
    /// Reserves `len` bytes (a multiple of [`GRANULE`]) of addresses with no access.
    pub(crate) fn reserve(len: u64) -> Outcome<AddressSpace> {
        let total = usize::try_from(len + GRANULE).map_err(|_| OUT_OF_MEMORY)?;
        // SAFETY: a fresh private anonymous mapping with no access rights; nothing reads or writes it, and it
        // is never unmapped (the address space lives as long as the process).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(OUT_OF_MEMORY);
        }
        let start = (ptr as u64).div_ceil(GRANULE) * GRANULE;
        Ok(AddressSpace {
            start,
            len,
            used: BTreeMap::new(),
        })
    }

    /// The first free range of `len` bytes (rounded up to [`GRANULE`]), now in use.
    pub(crate) fn allocate(&mut self, len: u64) -> Outcome<u64> {
        let len = len.div_ceil(GRANULE).max(1) * GRANULE;
        let mut at = self.start;
        for (&start, &used) in &self.used {
            if start - at >= len {
                break;
            }
            at = start + used;
        }
        if at + len > self.start + self.len {
            return Err(OUT_OF_MEMORY);
        }
        self.used.insert(at, len);
        Ok(at)
    }

    /// Gives back the range that [`AddressSpace::allocate`] returned at `start`.
    pub(crate) fn free(&mut self, start: u64) {
        self.used.remove(&start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_gives_a_freed_address_again() {
        let mut space = AddressSpace::reserve(16 * GRANULE).unwrap();
        let a = space.allocate(1).unwrap();
        let b = space.allocate(3 * GRANULE).unwrap();
        assert_eq!(a % GRANULE, 0);
        assert_eq!(b, a + GRANULE);
        space.free(a);
        assert_eq!(space.allocate(GRANULE).unwrap(), a);
        assert_eq!(space.allocate(13 * GRANULE), Err(OUT_OF_MEMORY));
        assert_eq!(space.allocate(12 * GRANULE).unwrap(), b + 3 * GRANULE);
    }
}
