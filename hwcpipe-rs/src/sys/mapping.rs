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
#[cfg(any(test, feature = "sim"))]
use std::sync::Arc;

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

/// The atomics a mapping lends out: views of plain integers, valid for every bit pattern.
pub(crate) trait AtomicWord: sealed::Sealed {}
impl AtomicWord for AtomicU16 {}
impl AtomicWord for AtomicU32 {}
impl AtomicWord for AtomicU64 {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for std::sync::atomic::AtomicU16 {}
    impl Sealed for std::sync::atomic::AtomicU32 {}
    impl Sealed for std::sync::atomic::AtomicU64 {}
}

/// A mapping of `len` bytes at `base`, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: NonNull<u8>,
    len: usize,
    backing: Backing,
}

/// What holds a mapping's bytes.
#[derive(Debug, Clone)]
enum Backing {
    /// Made by `mmap`: page aligned, unmapped on drop.
    Kernel,
    /// Words of ordinary memory, 8-byte aligned, standing in for the kernel's pages: in unit tests, and
    /// shared with the simulated kernel (`cpu::sim`), which writes them as the kernel would. Held here so
    /// they live as long as the mapping.
    #[cfg(any(test, feature = "sim"))]
    Memory(
        // Read only through `base`; kept for its lifetime.
        #[allow(dead_code)] Arc<[AtomicU64]>,
    ),
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
        Mapping::shared(
            (0..len.div_ceil(8).max(1))
                .map(|_| AtomicU64::new(0))
                .collect(),
        )
    }

    /// A mapping of `words`, which another holder writes as the kernel would (the simulated kernel).
    #[cfg(any(test, feature = "sim"))]
    pub(crate) fn shared(words: Arc<[AtomicU64]>) -> Mapping {
        let base = NonNull::from(&*words).cast::<u8>();
        Mapping {
            base,
            len: words.len() * 8,
            backing: Backing::Memory(words),
        }
    }

    /// Whether the kernel made the mapping (`mmap`), rather than a unit test or the simulated kernel
    /// (always, outside them).
    #[inline(always)]
    pub(crate) fn is_kernel(&self) -> bool {
        matches!(self.backing, Backing::Kernel)
    }

    /// The `u16` at byte `at`. Panics unless it lies inside the mapping, 2-byte aligned. (Unit tests
    /// write narrow fields; the crate reads them through [`field_unchecked`](Self::field_unchecked).)
    #[cfg(test)]
    pub(crate) fn atomic_u16(&self, at: usize) -> &AtomicU16 {
        self.field(at)
    }

    /// The `u32` at byte `at`. Panics unless it lies inside the mapping, 4-byte aligned.
    #[cfg(test)]
    pub(crate) fn atomic_u32(&self, at: usize) -> &AtomicU32 {
        self.field(at)
    }

    /// The `u64` at byte `at`. Panics unless it lies inside the mapping, 8-byte aligned.
    #[inline]
    pub(crate) fn atomic_u64(&self, at: usize) -> &AtomicU64 {
        self.field(at)
    }

    /// The atomic `T` at byte `at`, unchecked: for a hot path whose value checked once, when it was
    /// made, that the mapping holds every field it reads (the perf event page).
    ///
    /// # Safety
    /// `at` is aligned to `T` and `at + size_of::<T>()` is at most the mapping's length.
    #[inline(always)]
    pub(crate) unsafe fn field_unchecked<T: AtomicWord>(&self, at: usize) -> &T {
        debug_assert!(
            at.is_multiple_of(std::mem::align_of::<T>())
                && at
                    .checked_add(std::mem::size_of::<T>())
                    .is_some_and(|end| end <= self.len)
        );
        // SAFETY: the caller's contract puts `at..at + size` inside the live mapping, aligned; as in
        // `field`, an atomic of a plain integer is valid for every bit pattern.
        unsafe { &*self.base.as_ptr().add(at).cast::<T>() }
    }

    /// An atomic of type `T` (one of `AtomicU16`, `AtomicU32`, `AtomicU64`: any bit pattern is a value)
    /// at byte `at`.
    #[inline]
    fn field<T: AtomicWord>(&self, at: usize) -> &T {
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
            // The words are freed with their last holder.
            #[cfg(any(test, feature = "sim"))]
            Backing::Memory(_) => {}
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
