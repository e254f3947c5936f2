//! Every system call of the crate, and its only `unsafe` code.
//!
//! The rest of the crate sees safe functions over [`OwnedFd`]/[`BorrowedFd`] and [`io::Error`]: UNIX
//! `SOCK_SEQPACKET` sockets (abstract or path names), `sendmsg`/`recvmsg` with `SCM_RIGHTS`, `memfd_create`,
//! file seals, read-only `mmap`, `poll`, `SO_PEERCRED` and `CLOCK_MONOTONIC_RAW`. The calls are `rustix`'s,
//! which build the kernel's structures (`msghdr`, control messages, `sockaddr_un`) right for every Linux C
//! library, musl included; a failed call's `Errno` becomes an [`io::Error`] here and nowhere else. The one
//! `unsafe` operation left is the read-only mapping of a sealed memfd.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io::{self, IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::ptr::{self, NonNull};

use rustix::event::{PollFlags, Timespec};
use rustix::fs::{MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};

use crate::socket_name::SocketName;

/// `CLOCK_MONOTONIC_RAW` in nanoseconds: the clock gatord and HWCPipe stamp their samples with.
///
/// This is the C library's `clock_gettime`, not rustix's: rustix finds the vDSO by parsing the auxiliary
/// vector itself, which crashes under valgrind (rustix issue 1559), and the C client of `liblizard.so` is
/// tested under valgrind. The C library's call goes through the same vDSO where there is one.
pub(crate) fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call writes; CLOCK_MONOTONIC_RAW exists on every Linux this
    // crate supports (2.6.28 on), and a failure leaves `ts` at zero.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// Room in `sun_path` (108 bytes on Linux).
const SUN_PATH_LEN: usize = 108;

/// The `sockaddr_un` for `name`: an abstract name's length excludes any NUL; a path keeps its final NUL.
fn socket_address(name: &SocketName) -> io::Result<SocketAddrUnix> {
    // An abstract name follows a leading NUL; a path is followed by its NUL.
    let len = match name {
        SocketName::Abstract(bytes) => bytes.len(),
        SocketName::Path(path) => path.as_os_str().len(),
    };
    if len + 1 > SUN_PATH_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "socket name longer than sun_path",
        ));
    }
    Ok(match name {
        SocketName::Abstract(bytes) => SocketAddrUnix::new_abstract_name(bytes)?,
        SocketName::Path(path) => SocketAddrUnix::new(path.as_path())?,
    })
}

/// Creates a `SOCK_SEQPACKET` UNIX socket with close-on-exec set.
fn seqpacket_socket() -> io::Result<OwnedFd> {
    Ok(rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Creates a listening, non-blocking `SOCK_SEQPACKET` socket bound to `name`. A path socket's file gets
/// `mode` (its permission bits) between `bind` and `listen`, so no peer can connect while the file still has
/// the mode the umask gave it (a connect before `listen` is refused by the kernel).
pub(crate) fn listen(name: &SocketName, backlog: i32, mode: Option<u32>) -> io::Result<OwnedFd> {
    let address = socket_address(name)?;
    let fd = seqpacket_socket()?;
    rustix::net::bind(&fd, &address)?;
    if let (SocketName::Path(path), Some(mode)) = (name, mode) {
        rustix::fs::chmod(
            path.as_path(),
            rustix::fs::Mode::from_raw_mode(mode & 0o777),
        )?;
    }
    rustix::net::listen(&fd, backlog)?;
    rustix::io::ioctl_fionbio(&fd, true)?;
    Ok(fd)
}

/// Connects a new `SOCK_SEQPACKET` socket to `name` (a UNIX connect completes at once or fails).
pub(crate) fn connect(name: &SocketName) -> io::Result<OwnedFd> {
    let address = socket_address(name)?;
    let fd = seqpacket_socket()?;
    rustix::net::connect(&fd, &address)?;
    Ok(fd)
}

/// Accepts one pending connection, non-blocking and close-on-exec; `Ok(None)` when none is pending.
pub(crate) fn accept(listener: BorrowedFd<'_>) -> io::Result<Option<OwnedFd>> {
    match rustix::net::accept_with(listener, SocketFlags::NONBLOCK | SocketFlags::CLOEXEC) {
        Ok(fd) => Ok(Some(fd)),
        Err(errno) if errno == rustix::io::Errno::WOULDBLOCK => Ok(None),
        Err(errno) => Err(errno.into()),
    }
}

/// The credentials of the peer of a connected UNIX socket, as the kernel recorded them at `connect` time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Peer {
    /// Its process id.
    pub(crate) pid: u32,
    /// Its effective user id.
    pub(crate) uid: u32,
    /// Its effective group id.
    pub(crate) gid: u32,
}

/// The credentials of the peer of a connected UNIX socket (`SO_PEERCRED`).
pub(crate) fn peer_credentials(fd: BorrowedFd<'_>) -> io::Result<Peer> {
    let cred = rustix::net::sockopt::socket_peercred(fd)?;
    Ok(Peer {
        pid: u32::try_from(cred.pid.as_raw_nonzero().get()).unwrap_or(0),
        uid: cred.uid.as_raw(),
        gid: cred.gid.as_raw(),
    })
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The most descriptors one received message may carry before `MSG_CTRUNC` (the kernel closes the rest); a
/// valid message carries at most one.
const RECV_FDS: usize = 12;

/// Receive control buffer size: `CMSG_SPACE` of [`RECV_FDS`] descriptors (64 bytes), in a buffer that is
/// already aligned for `cmsghdr`.
const RECV_CONTROL: usize = rustix::cmsg_aligned_space!(ScmRights(RECV_FDS));

/// The most descriptors [`send`] attaches: more than a receiver accepts, so tests can send too many.
const SEND_FDS: usize = 36;

/// Control-message buffer of `N` bytes, aligned for `cmsghdr`, so that all of it is usable.
#[repr(C, align(8))]
struct ControlBuffer<const N: usize>([MaybeUninit<u8>; N]);

impl<const N: usize> ControlBuffer<N> {
    fn new() -> Self {
        ControlBuffer([MaybeUninit::uninit(); N])
    }
}

/// Sends one message with `fds` attached as one `SCM_RIGHTS` message (at most 36). Never raises `SIGPIPE`.
///
/// With `nonblocking` the call fails with [`io::ErrorKind::WouldBlock`] instead of waiting for room.
pub(crate) fn send(
    sock: BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[BorrowedFd<'_>],
    nonblocking: bool,
) -> io::Result<usize> {
    let mut space = ControlBuffer::<{ rustix::cmsg_space!(ScmRights(SEND_FDS)) }>::new();
    let mut control = SendAncillaryBuffer::new(&mut space.0);
    if !fds.is_empty()
        && (fds.len() > SEND_FDS || !control.push(SendAncillaryMessage::ScmRights(fds)))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many descriptors for one message",
        ));
    }
    let mut flags = SendFlags::NOSIGNAL;
    if nonblocking {
        flags |= SendFlags::DONTWAIT;
    }
    Ok(rustix::net::sendmsg(
        sock,
        &[IoSlice::new(bytes)],
        &mut control,
        flags,
    )?)
}

/// What one `recvmsg` delivered.
#[derive(Debug)]
pub(crate) struct Received {
    /// Bytes of the message stored in the buffer; 0 with no flags set means end of stream.
    pub(crate) len: usize,
    /// The message was longer than the buffer (`MSG_TRUNC`): its tail was discarded by the kernel.
    pub(crate) truncated: bool,
    /// Some attached descriptors did not fit the control buffer (`MSG_CTRUNC`) and were closed by the kernel.
    pub(crate) control_truncated: bool,
    /// Descriptors that arrived with the message, now owned by the receiver.
    pub(crate) fds: Vec<OwnedFd>,
}

/// Receives one message without blocking, taking ownership of any `SCM_RIGHTS` descriptors (close-on-exec).
///
/// Returns [`io::ErrorKind::WouldBlock`] when nothing is queued.
pub(crate) fn recv(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Received> {
    let mut space = ControlBuffer::<RECV_CONTROL>::new();
    let mut control = RecvAncillaryBuffer::new(&mut space.0);
    let received = rustix::net::recvmsg(
        sock,
        &mut [IoSliceMut::new(buf)],
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(received_fds) = message {
            fds.extend(received_fds);
        }
    }
    Ok(Received {
        len: received.bytes,
        truncated: received.flags.contains(ReturnFlags::TRUNC),
        control_truncated: received.flags.contains(ReturnFlags::CTRUNC),
        fds,
    })
}

/// One entry of a [`poll`] set.
pub(crate) type PollFd<'fd> = rustix::event::PollFd<'fd>;

/// Readable.
pub(crate) const POLLIN: PollFlags = PollFlags::IN;
/// Writable.
pub(crate) const POLLOUT: PollFlags = PollFlags::OUT;

/// Builds a poll entry for `fd` waiting for `events`.
pub(crate) fn poll_entry(fd: BorrowedFd<'_>, events: PollFlags) -> PollFd<'_> {
    PollFd::from_borrowed_fd(fd, events)
}

/// Waits until an entry is ready or `timeout_ms` passes (-1 = no limit). `EINTR` counts as "nothing ready".
pub(crate) fn poll(fds: &mut [PollFd<'_>], timeout_ms: i32) -> io::Result<usize> {
    let timeout = u64::try_from(timeout_ms).ok().map(|ms| Timespec {
        tv_sec: (ms / 1000) as _,
        tv_nsec: ((ms % 1000) * 1_000_000) as _,
    });
    match rustix::event::poll(fds, timeout.as_ref()) {
        Ok(n) => Ok(n),
        Err(errno) if errno == rustix::io::Errno::INTR => Ok(0),
        Err(errno) => Err(errno.into()),
    }
}

/// Creates a memfd that may be sealed, with close-on-exec set.
pub(crate) fn memfd_create(name: &CStr) -> io::Result<OwnedFd> {
    Ok(rustix::fs::memfd_create(
        name,
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?)
}

/// Adds `seals` (`F_SEAL_*` bits) to a memfd.
pub(crate) fn add_seals(fd: BorrowedFd<'_>, seals: i32) -> io::Result<()> {
    let seals = u32::try_from(seals).map_err(|_| io::Error::from(rustix::io::Errno::INVAL))?;
    Ok(rustix::fs::fcntl_add_seals(
        fd,
        SealFlags::from_bits_retain(seals),
    )?)
}

/// The seals (`F_SEAL_*` bits) of a memfd; fails with `EINVAL` for files that cannot be sealed.
pub(crate) fn seals(fd: BorrowedFd<'_>) -> io::Result<i32> {
    let seals = rustix::fs::fcntl_get_seals(fd)?;
    Ok(seals.bits() as i32)
}

/// `F_SEAL_SEAL`: no further seals may be added.
pub(crate) const SEAL_SEAL: i32 = SealFlags::SEAL.bits() as i32;
/// `F_SEAL_SHRINK`: the file cannot get smaller.
pub(crate) const SEAL_SHRINK: i32 = SealFlags::SHRINK.bits() as i32;
/// `F_SEAL_GROW`: the file cannot get larger.
pub(crate) const SEAL_GROW: i32 = SealFlags::GROW.bits() as i32;
/// `F_SEAL_WRITE`: the contents cannot change.
pub(crate) const SEAL_WRITE: i32 = SealFlags::WRITE.bits() as i32;

/// A read-only shared mapping of the first `len` bytes of a file, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    /// Start of the mapping.
    ptr: NonNull<u8>,
    /// Bytes mapped, > 0.
    len: usize,
}

impl Mapping {
    /// Maps `len` (> 0) bytes of `fd` read-only.
    ///
    /// Only call it for a memfd whose seals forbid shrinking and writing and whose size is at least `len`
    /// (the caller checks both): then no access to the mapping can fault and its bytes cannot change.
    pub(crate) fn sealed_readonly(fd: BorrowedFd<'_>, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        // SAFETY: a NULL hint lets the kernel choose a fresh address, so no existing memory is replaced; the
        // mapping is owned by the returned value, which unmaps it once.
        let ptr = unsafe {
            rustix::mm::mmap(
                ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::SHARED,
                fd,
                0,
            )
        }?;
        let ptr =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Mapping { ptr, len })
    }

    /// The mapped bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is `len` readable bytes that live until drop. It comes from a memfd sealed against
        // shrinking and writing (see `sealed_readonly`), so no process can change the bytes or truncate them
        // away while this shared borrow exists.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, and no slice borrowed from it outlives `self`.
        // An unmapping error leaves nothing to undo.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Private anonymous memory, read-write, zero-filled as each page is first touched, unmapped on drop. Its
/// address never changes, so it can be handed to a device driver to pin.
#[derive(Debug)]
pub(crate) struct Anonymous {
    /// Start of the mapping (dangling when `len` is 0).
    ptr: NonNull<u8>,
    /// Bytes mapped.
    len: usize,
}

// SAFETY: `Anonymous` owns its mapping exclusively, like a `Vec<u8>`: shared references give only shared
// slices and mutation needs `&mut self`, so moving it to or sharing it with another thread is sound.
unsafe impl Send for Anonymous {}
// SAFETY: as above; `&Anonymous` only reads.
unsafe impl Sync for Anonymous {}

impl Anonymous {
    /// No memory at all.
    pub(crate) fn empty() -> Anonymous {
        Anonymous {
            ptr: NonNull::dangling(),
            len: 0,
        }
    }

    /// Maps `len` bytes (none for 0). The pages are not reserved in swap (`MAP_NORESERVE`): like a large
    /// `Vec`, memory is committed as it is written.
    pub(crate) fn new(len: usize) -> io::Result<Anonymous> {
        if len == 0 {
            return Ok(Self::empty());
        }
        // SAFETY: an anonymous mapping at a kernel-chosen address replaces no existing memory; it is owned by
        // the returned value, which unmaps it once.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::NORESERVE,
            )
        }?;
        let ptr =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Anonymous { ptr, len })
    }

    /// The start and the length of the whole mapping: `len` rounded up to whole pages, which the kernel maps
    /// (a driver registers page-aligned ranges only).
    pub(crate) fn pages(&mut self) -> (*mut u8, usize) {
        let len = match self.len {
            0 => 0,
            len => len.next_multiple_of(page_size()),
        };
        (self.ptr.as_ptr(), len)
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` readable bytes owned by `self` (or none, at a dangling but aligned address).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `len` writable bytes owned by `self`, borrowed mutably through `&mut self` only.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// The size of a memory page.
pub(crate) fn page_size() -> usize {
    // SAFETY: sysconf reads a system constant and touches no memory.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

impl Drop for Anonymous {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr`/`len` are exactly what mmap returned, and no slice borrowed from it outlives `self`.
            let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn names_longer_than_sun_path_are_refused_before_any_call() {
        let abstract_name = SocketName::Abstract(vec![b'a'; SUN_PATH_LEN]);
        let err = socket_address(&abstract_name).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let path = SocketName::Path(std::path::PathBuf::from("/".repeat(SUN_PATH_LEN)));
        assert_eq!(
            socket_address(&path).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert!(socket_address(&SocketName::Abstract(vec![b'a'; SUN_PATH_LEN - 1])).is_ok());
    }

    #[test]
    fn too_many_descriptors_are_refused_without_sending() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let fds = vec![file.as_fd(); SEND_FDS + 1];
        let (a, _b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let err = send(a.as_fd(), b"x", &fds, true).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(send(a.as_fd(), b"x", &fds[..SEND_FDS], true).unwrap(), 1);
    }

    #[test]
    fn seals_outside_the_flag_range_are_invalid() {
        let fd = memfd_create(c"seal-test").unwrap();
        assert_eq!(
            add_seals(fd.as_fd(), -1).unwrap_err().raw_os_error(),
            Some(rustix::io::Errno::INVAL.raw_os_error())
        );
        add_seals(fd.as_fd(), SEAL_GROW).unwrap();
        assert_eq!(seals(fd.as_fd()).unwrap() & SEAL_GROW, SEAL_GROW);
    }

    #[test]
    fn poll_times_out_and_sees_readable_sockets() {
        let (a, b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let mut set = [poll_entry(a.as_fd(), POLLIN)];
        assert_eq!(poll(&mut set, 1).unwrap(), 0);
        b.send(b"x").unwrap();
        let mut set = [poll_entry(a.as_fd(), POLLIN)];
        assert_eq!(poll(&mut set, 1000).unwrap(), 1);
        assert!(set[0].revents().contains(POLLIN));
    }

    #[test]
    fn anonymous_memory_starts_zeroed_and_keeps_its_address() {
        let mut memory = Anonymous::new(3 << 20).unwrap();
        let at = memory.as_slice().as_ptr();
        assert!(memory.as_slice().iter().all(|&b| b == 0));
        memory.as_mut_slice()[(3 << 20) - 1] = 9;
        assert_eq!(memory.as_slice()[(3 << 20) - 1], 9);
        let moved = memory;
        assert_eq!(moved.as_slice().as_ptr(), at);
        assert!(Anonymous::new(0).unwrap().as_slice().is_empty());
        assert!(Anonymous::new(usize::MAX).is_err());
    }

    #[test]
    fn an_empty_mapping_is_refused() {
        let fd = memfd_create(c"map-test").unwrap();
        let err = Mapping::sealed_readonly(fd.as_fd(), 0).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
