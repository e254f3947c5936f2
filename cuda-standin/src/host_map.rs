//! The host memory behind device memory: a memfd per block, mapped shared, so that another process that
//! obtains the descriptor maps the same pages. Also the page-locked host memory of `cuMemAllocHost`.
//! Every `mmap`, `munmap` and descriptor call of the stand-in is here.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::result::{Outcome, MAP_FAILED, OUT_OF_MEMORY};

/// A mapping of host memory, unmapped when the last holder drops it (it is shared through `Arc` by a block,
/// the importers' mappings and copies in flight, so a free never unmaps bytes a copy is reading).
#[derive(Debug)]
pub(crate) struct HostMap {
    /// Start of the mapping.
    ptr: *mut u8,
    /// Its length in bytes.
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; concurrent access to its bytes is the driver API
// user's responsibility, as with real device memory.
unsafe impl Send for HostMap {}
// SAFETY: as above; `HostMap` itself has no interior state.
unsafe impl Sync for HostMap {}

impl HostMap {
    /// Maps `len` bytes of `fd` shared, readable and writable.
    pub(crate) fn shared(fd: RawFd, len: u64) -> Outcome<HostMap> {
        let len = usize::try_from(len).map_err(|_| OUT_OF_MEMORY)?;
        // SAFETY: a new shared mapping of a descriptor the caller owns; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(MAP_FAILED);
        }
        Ok(HostMap {
            ptr: ptr.cast(),
            len,
        })
    }

    /// `len` bytes of private anonymous memory, faulted in (`cuMemAllocHost`: page-locked memory is resident).
    pub(crate) fn anonymous(len: usize) -> Outcome<HostMap> {
        // SAFETY: a new private anonymous mapping; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(OUT_OF_MEMORY);
        }
        Ok(HostMap {
            ptr: ptr.cast(),
            len,
        })
    }

    /// The first byte.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for HostMap {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `mmap` with this length and is unmapped once, when its last holder
        // drops it; no slice of it outlives that holder.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// A new memfd of `len` bytes called `name`, closed on exec.
pub(crate) fn memfd(name: &str, len: u64) -> Outcome<OwnedFd> {
    let name = CString::new(name).map_err(|_| OUT_OF_MEMORY)?;
    // SAFETY: `name` is a NUL-terminated string; the flags are valid.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(OUT_OF_MEMORY);
    }
    // SAFETY: `raw` is a descriptor just returned to this process and owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let len = libc::off_t::try_from(len).map_err(|_| OUT_OF_MEMORY)?;
    // SAFETY: sizes the memfd this function owns.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), len) } != 0 {
        return Err(OUT_OF_MEMORY);
    }
    Ok(fd)
}

/// The inode number and size of the file behind `fd`.
pub(crate) fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: `stat` is plain data, zero is a valid value of it.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open (the caller owns it); the kernel writes `stat`.
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return None;
    }
    Some((stat.st_ino, u64::try_from(stat.st_size).ok()?))
}

/// What `/proc/self/fd/FD` links to (`/memfd:NAME (deleted)` for a memfd).
pub(crate) fn link_of(fd: RawFd) -> Option<String> {
    std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// The host's page size.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(1)
}

/// Faults every page of `ptr..ptr + len` in, as page-locking does (`write`: for writing), so that no copy
/// into it later pays for a first touch. A kernel without `MADV_POPULATE_*` (before Linux 5.14) leaves the
/// pages to fault when used.
pub(crate) fn populate(ptr: usize, len: usize, write: bool) {
    let advice = if write {
        libc::MADV_POPULATE_WRITE
    } else {
        libc::MADV_POPULATE_READ
    };
    // SAFETY: the range is mapped (the caller checked); populating changes no byte of it.
    unsafe { libc::madvise(ptr as *mut libc::c_void, len, advice) };
}

/// Whether every page of `ptr..ptr + len` is mapped in this process.
pub(crate) fn is_mapped(ptr: usize, len: usize) -> bool {
    // SAFETY: msync with MS_ASYNC on a page-aligned range only asks the kernel about the range; it fails
    // with ENOMEM where part of it is not mapped and touches no memory.
    unsafe { libc::msync(ptr as *mut libc::c_void, len, libc::MS_ASYNC) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memfd_mapped_twice_shows_the_same_bytes() {
        let fd = memfd("cuda-standin-test", 8192).unwrap();
        let a = HostMap::shared(fd.as_raw_fd(), 8192).unwrap();
        let b = HostMap::shared(fd.as_raw_fd(), 8192).unwrap();
        // SAFETY: both mappings are 8192 bytes long and live until the end of the test.
        unsafe {
            a.ptr().add(100).write(0x5a);
            assert_eq!(b.ptr().add(100).read(), 0x5a);
        }
        assert_eq!(identity(fd.as_raw_fd()).unwrap().1, 8192);
        assert!(link_of(fd.as_raw_fd())
            .unwrap()
            .contains("cuda-standin-test"));
        assert!(is_mapped(a.ptr() as usize, 8192));
    }
}
