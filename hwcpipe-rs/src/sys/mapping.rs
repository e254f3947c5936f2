//! A memory mapping owned by one value: `mmap` when it is made, `munmap` when it is dropped, and every
//! access checked against its bounds. The perf event page ([`super::PerfPage`]), the perf ring
//! ([`super::PerfRing`]) and the kbase readers' buffers all map through it; it is the only `munmap` of
//! the crate.
//!
//! The kernel or the driver writes these pages while they are mapped, so the mapping never lends out
//! plain bytes (`&[u8]`) of itself: a field is an atomic ([`Mapping::atomic_u64`] and its narrower
//! siblings), and a range of bytes is copied out ([`Mapping::read`]).

use std::io;
use std::os::fd::BorrowedFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64};

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

/// A mapping of `len` bytes at `base`, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
    backing: Backing,
}

/// What holds a mapping's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backing {
    /// Made by `mmap`: page aligned, unmapped on drop.
    Kernel,
    /// Zeroed words of ordinary memory, 8-byte aligned, standing in for the kernel's pages in unit tests.
    #[cfg(test)]
    Memory,
}

// SAFETY: the mapping is memory shared with the kernel and owned by this value; through `&Mapping` it is
// only accessed atomically or copied out, so it may be moved to and used from any thread.
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` permits atomic accesses and copies only.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `mmap(NULL, len, prot, flags, fd, 0)`: a new mapping of the start of `fd`. `EINVAL` for an empty one.
    pub(crate) fn new(
        fd: BorrowedFd<'_>,
        len: usize,
        prot: ProtFlags,
        flags: MapFlags,
    ) -> io::Result<Mapping> {
        if len == 0 {
            return Err(Errno::INVAL.into());
        }
        // SAFETY: a NULL hint asks the kernel for a new mapping, so no existing memory is affected; the
        // mapping is owned by the returned value, which unmaps it once, on drop.
        let base = unsafe { rustix::mm::mmap(std::ptr::null_mut(), len, prot, flags, fd, 0) }?;
        let base = NonNull::new(base.cast::<u8>()).ok_or(Errno::NOMEM)?;
        Ok(Mapping {
            base,
            len,
            backing: Backing::Kernel,
        })
    }

    /// `len` zeroed bytes (rounded up to whole 8-byte words) of ordinary memory, 8-byte aligned, for
    /// unit tests that write what the kernel would.
    #[cfg(test)]
    pub(crate) fn in_memory(len: usize) -> Mapping {
        let words: Box<[AtomicU64]> = (0..len.div_ceil(8).max(1))
            .map(|_| AtomicU64::new(0))
            .collect();
        let len = words.len() * 8;
        let base = NonNull::new(Box::into_raw(words).cast::<u8>()).expect("a box is never null");
        Mapping {
            base,
            len,
            backing: Backing::Memory,
        }
    }

    /// Whether the kernel made the mapping (`mmap`), rather than a unit test (always, outside them).
    #[inline(always)]
    pub(crate) fn is_kernel(&self) -> bool {
        self.backing == Backing::Kernel
    }

    /// Panics unless the mapping holds at least `len` bytes. A hot path that reads several fields below
    /// `len` calls this first: once inlined, it implies every field's own bounds check, which the
    /// compiler then drops, leaving one comparison for them all.
    #[inline(always)]
    pub(crate) fn assert_holds(&self, len: usize) {
        assert!(
            len <= self.len,
            "the {}-byte mapping is shorter than {len} bytes",
            self.len
        );
    }

    /// The `u16` at byte `at`. Panics unless it lies inside the mapping, 2-byte aligned.
    #[inline]
    pub(crate) fn atomic_u16(&self, at: usize) -> &AtomicU16 {
        self.field(at)
    }

    /// The `u32` at byte `at`. Panics unless it lies inside the mapping, 4-byte aligned.
    #[inline]
    pub(crate) fn atomic_u32(&self, at: usize) -> &AtomicU32 {
        self.field(at)
    }

    /// The `u64` at byte `at`. Panics unless it lies inside the mapping, 8-byte aligned.
    #[inline]
    pub(crate) fn atomic_u64(&self, at: usize) -> &AtomicU64 {
        self.field(at)
    }

    /// An atomic of type `T` (one of `AtomicU16`, `AtomicU32`, `AtomicU64`: any bit pattern is a value)
    /// at byte `at`.
    #[inline]
    fn field<T>(&self, at: usize) -> &T {
        let size = std::mem::size_of::<T>();
        assert!(
            at.is_multiple_of(std::mem::align_of::<T>())
                && at.checked_add(size).is_some_and(|end| end <= self.len),
            "a {size}-byte field at {at} leaves the {}-byte mapping or is misaligned",
            self.len
        );
        // SAFETY: `at..at + size` lies inside the mapping, which stays mapped while `self` lives; `base`
        // is page aligned (8-byte aligned in memory), so `at` aligned makes the address aligned. The
        // callers' `T` are atomics of plain integers, valid for every bit pattern, and an atomic view is
        // what memory the kernel writes concurrently needs.
        unsafe { &*self.base.as_ptr().add(at).cast::<T>() }
    }

    /// Copies `out.len()` bytes at `offset` into `out`; `EINVAL` when the range leaves the mapping.
    ///
    /// A plain copy: for buffers the driver does not write while user space holds them (kbase's
    /// dump buffers between GET_BUFFER/GET_SAMPLE and PUT), not for fields it updates in place.
    pub(crate) fn read(&self, offset: usize, out: &mut [u8]) -> io::Result<()> {
        let end = offset.checked_add(out.len()).ok_or(Errno::INVAL)?;
        if end > self.len {
            return Err(Errno::INVAL.into());
        }
        // SAFETY: `offset..end` lies inside the live mapping of `len` readable bytes; `out` is a distinct
        // Rust buffer, so the two do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.base.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            )
        };
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        match self.backing {
            Backing::Kernel => {
                // SAFETY: `base` and `len` are exactly the mapping `mmap` made in `new`, unmapped once,
                // here; no reference into it outlives `self`. An unmapping error cannot be reported from
                // drop and leaves at worst the pages mapped.
                let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
            }
            #[cfg(test)]
            Backing::Memory => {
                // SAFETY: made by `in_memory` from a boxed slice of `len / 8` words, freed once, here.
                drop(unsafe {
                    Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                        self.base.as_ptr().cast::<AtomicU64>(),
                        self.len / 8,
                    ))
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::sync::atomic::Ordering;

    #[test]
    fn a_mapped_file_reads_inside_its_bounds_only() {
        let file = std::fs::File::open("/dev/zero").unwrap();
        let map = Mapping::new(file.as_fd(), 4096, ProtFlags::READ, MapFlags::PRIVATE).unwrap();
        assert!(map.is_kernel());
        let mut out = [1u8; 16];
        map.read(100, &mut out).unwrap();
        assert_eq!(out, [0u8; 16]);
        assert_eq!(map.atomic_u64(4088).load(Ordering::Relaxed), 0);
        let err = map.read(4090, &mut out).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::INVAL.raw_os_error()));
        assert!(map.read(usize::MAX, &mut out).is_err());
    }

    #[test]
    fn an_empty_mapping_is_refused() {
        let file = std::fs::File::open("/dev/zero").unwrap();
        let err = Mapping::new(file.as_fd(), 0, ProtFlags::READ, MapFlags::PRIVATE).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::INVAL.raw_os_error()));
    }

    #[test]
    fn fields_in_memory_are_shared_words() {
        let map = Mapping::in_memory(20);
        assert!(!map.is_kernel());
        assert_eq!(map.atomic_u64(16).load(Ordering::Relaxed), 0);
        map.atomic_u64(8)
            .store(0x0102_0304_0506_0708, Ordering::Relaxed);
        let low = if cfg!(target_endian = "little") {
            8
        } else {
            12
        };
        assert_eq!(map.atomic_u32(low).load(Ordering::Relaxed), 0x0506_0708);
        assert_eq!(map.atomic_u16(16).load(Ordering::Relaxed), 0);
        let mut out = [0u8; 8];
        map.read(8, &mut out).unwrap();
        assert_eq!(u64::from_ne_bytes(out), 0x0102_0304_0506_0708);
    }

    #[test]
    #[should_panic(expected = "shorter than 32 bytes")]
    fn a_short_mapping_fails_the_length_check() {
        let map = Mapping::in_memory(24);
        map.assert_holds(24);
        map.assert_holds(32);
    }

    #[test]
    #[should_panic(expected = "leaves the 24-byte mapping")]
    fn a_field_past_the_end_panics() {
        Mapping::in_memory(24).atomic_u64(24);
    }

    #[test]
    #[should_panic(expected = "misaligned")]
    fn a_misaligned_field_panics() {
        Mapping::in_memory(24).atomic_u32(2);
    }
}
