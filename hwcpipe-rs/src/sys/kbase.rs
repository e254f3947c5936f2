//! Kernel calls of the Mali kbase driver: open, ioctl, mmap, poll. The only unsafe code of the GPU
//! side; every errno becomes an [`io::Error`] here. `open` is `rustix`'s; the driver's ioctls are raw
//! `libc` calls checked by [`super::check`], since their request numbers and structs are decided at run
//! time and `rustix`'s ioctls take the request as a constant; the mapping is a [`Mapping`], and waiting
//! for a dump is [`super::poll::poll_in`].

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

use super::mapping::Mapping;

/// Opens a kbase device file `O_RDWR | O_CLOEXEC | O_NONBLOCK`, as HWCPipe does.
pub(crate) fn open_device(path: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDWR | OFlags::CLOEXEC | OFlags::NONBLOCK;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

use super::check;

/// `ioctl(fd, request, value)` with the argument passed by value.
pub(crate) fn ioctl_value(fd: &OwnedFd, request: u32, value: u64) -> io::Result<i32> {
    // SAFETY: by-value requests make the driver read no memory through the argument; the fd is open.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, value as libc::c_ulong) })
}

/// `ioctl(fd, request, arg.as_mut_ptr())`: the driver reads and writes at most `arg.len()` bytes,
/// the size encoded in `request` (the caller passes a buffer of exactly that size).
pub(crate) fn ioctl_struct(fd: &OwnedFd, request: u32, arg: &mut [u8]) -> io::Result<i32> {
    let encoded = ((request >> 16) & 0x3FFF) as usize;
    if arg.len() < encoded {
        return Err(Errno::INVAL.into());
    }
    // SAFETY: `arg` is a live, writable buffer at least as large as the size encoded in `request`,
    // which bounds what kbase copies in and out.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg.as_mut_ptr()) })
}

/// Like [`ioctl_struct`], after writing the address of `buffer` into the u64 at `ptr_offset` of `arg`.
/// The driver accesses at most the buffer length recorded in the struct's size field, which the caller
/// sets to `buffer.len()` or less.
pub(crate) fn ioctl_struct_with_buffer(
    fd: &OwnedFd,
    request: u32,
    arg: &mut [u8],
    ptr_offset: usize,
    buffer: &mut [u8],
) -> io::Result<i32> {
    let addr = if buffer.is_empty() {
        0u64
    } else {
        buffer.as_mut_ptr() as usize as u64
    };
    let field = arg
        .get_mut(ptr_offset..ptr_offset + 8)
        .ok_or(Errno::INVAL)?;
    field.copy_from_slice(&addr.to_ne_bytes());
    // `buffer` stays mutably borrowed across the call, so the address written above stays valid.
    ioctl_struct(fd, request, arg)
}

/// Takes ownership of an fd a setup ioctl has just returned.
pub(crate) fn adopt_fd(raw: RawFd) -> io::Result<OwnedFd> {
    if raw < 0 {
        return Err(Errno::BADF.into());
    }
    // SAFETY: the caller passes the return value of a successful reader-setup ioctl, a fresh fd that
    // nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Maps the first `len` bytes of a reader fd read-only, `MAP_PRIVATE`, as HWCPipe does.
pub(crate) fn map_reader(fd: &OwnedFd, len: usize) -> io::Result<Mapping> {
    Mapping::new(fd.as_fd(), len, ProtFlags::READ, MapFlags::PRIVATE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::poll::{poll_in, Poll};
    use std::time::Duration;

    #[test]
    fn opening_a_missing_device_is_enoent() {
        let err = open_device(Path::new("/dev/mali-does-not-exist")).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(Errno::NOENT.raw_os_error()));
    }

    #[test]
    fn ioctl_on_a_non_kbase_file_fails_cleanly() {
        let fd = open_device(Path::new("/dev/null")).unwrap();
        let mut arg = [0u8; 4];
        assert!(ioctl_struct(&fd, 0xC004_8000, &mut arg).is_err());
        assert!(ioctl_struct(&fd, 0xC004_8000, &mut [0u8; 2]).is_err());
        assert!(ioctl_value(&fd, 0x4004_BE10, 0).is_err());
    }

    #[test]
    fn poll_and_mmap_real_files() {
        let fd = open_device(Path::new("/dev/zero")).unwrap();
        assert_eq!(
            poll_in(&fd, Duration::from_millis(1)).unwrap(),
            Poll::Readable
        );
        let map = map_reader(&fd, 4096).unwrap();
        let mut out = [1u8; 16];
        map.read(100, &mut out).unwrap();
        assert_eq!(out, [0u8; 16]);
        assert!(map.read(4090, &mut out).is_err());
        assert!(map_reader(&fd, 0).is_err());
        assert!(adopt_fd(-1).is_err());
    }
}
