//! Every system call of the crate, and its only `unsafe` code.
//!
//! The rest of the crate sees safe functions over [`OwnedFd`]/[`BorrowedFd`] and [`io::Error`]: UNIX
//! `SOCK_SEQPACKET` sockets (abstract or path names), `sendmsg`/`recvmsg` with `SCM_RIGHTS`, `memfd_create`,
//! file seals, read-only `mmap`, `poll`, `SO_PEERCRED` and `CLOCK_MONOTONIC_RAW`. A failed call maps `errno` to
//! [`io::Error`] here and nowhere else.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::{self, NonNull};

use crate::socket_name::SocketName;

/// Converts a `-1` return value into the current `errno`.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Converts a `-1` length return value into the current `errno`.
fn check_len(ret: libc::ssize_t) -> io::Result<usize> {
    usize::try_from(ret).map_err(|_| io::Error::last_os_error())
}

/// `CLOCK_MONOTONIC_RAW` in nanoseconds: the clock gatord and HWCPipe stamp their samples with.
pub(crate) fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists on every Linux since 2.6.28, and
    // clock_gettime only writes the struct it is given.
    let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    if ret != 0 {
        return 0;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// Builds the `sockaddr_un` for `name`, with the exact length (an abstract name's length excludes any NUL).
fn socket_address(name: &SocketName) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain old data; all-zero bytes are a valid (empty) value.
    let mut addr: libc::sockaddr_un = unsafe { mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let (bytes, lead_nul, trail_nul): (&[u8], usize, usize) = match name {
        SocketName::Abstract(bytes) => (bytes, 1, 0),
        SocketName::Path(path) => (path.as_os_str().as_encoded_bytes(), 0, 1),
    };
    if lead_nul + bytes.len() + trail_nul > addr.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "socket name longer than sun_path",
        ));
    }
    for (slot, &byte) in addr.sun_path[lead_nul..].iter_mut().zip(bytes) {
        *slot = byte as libc::c_char;
    }
    let len = mem::size_of::<libc::sa_family_t>() + lead_nul + bytes.len() + trail_nul;
    // The length is at most size_of::<sockaddr_un>(), 110 bytes.
    Ok((addr, len as libc::socklen_t))
}

/// Creates a `SOCK_SEQPACKET` UNIX socket with close-on-exec set.
fn seqpacket_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket() takes no pointers; a non-negative result is a new descriptor we own.
    let fd = check(unsafe {
        libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0)
    })?;
    // SAFETY: `fd` was just returned by socket() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Creates a listening `SOCK_SEQPACKET` socket bound to `name`.
pub(crate) fn listen(name: &SocketName, backlog: i32) -> io::Result<OwnedFd> {
    let fd = seqpacket_socket()?;
    let (addr, len) = socket_address(name)?;
    // SAFETY: `addr` is a valid sockaddr_un and `len` does not exceed its size.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            ptr::from_ref(&addr).cast::<libc::sockaddr>(),
            len,
        )
    })?;
    // SAFETY: listen() takes no pointers.
    check(unsafe { libc::listen(fd.as_raw_fd(), backlog) })?;
    set_nonblocking(fd.as_fd_ref(), true)?;
    Ok(fd)
}

/// Connects a new `SOCK_SEQPACKET` socket to `name` (a UNIX connect completes at once or fails).
pub(crate) fn connect(name: &SocketName) -> io::Result<OwnedFd> {
    let fd = seqpacket_socket()?;
    let (addr, len) = socket_address(name)?;
    // SAFETY: `addr` is a valid sockaddr_un and `len` does not exceed its size.
    check(unsafe {
        libc::connect(
            fd.as_raw_fd(),
            ptr::from_ref(&addr).cast::<libc::sockaddr>(),
            len,
        )
    })?;
    Ok(fd)
}

/// Accepts one pending connection, non-blocking and close-on-exec; `Ok(None)` when none is pending.
pub(crate) fn accept(listener: BorrowedFd<'_>) -> io::Result<Option<OwnedFd>> {
    // SAFETY: NULL address pointers are allowed by accept4 and mean "do not report the peer address".
    let ret = unsafe {
        libc::accept4(
            listener.as_raw_fd(),
            ptr::null_mut(),
            ptr::null_mut(),
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    match check(ret) {
        // SAFETY: accept4 returned a new descriptor that nobody else owns.
        Ok(fd) => Ok(Some(unsafe { OwnedFd::from_raw_fd(fd) })),
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(err) => Err(err),
    }
}

/// Sets or clears `O_NONBLOCK`.
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>, on: bool) -> io::Result<()> {
    // SAFETY: F_GETFL takes no pointer argument.
    let flags = check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) })?;
    let flags = if on {
        flags | libc::O_NONBLOCK
    } else {
        flags & !libc::O_NONBLOCK
    };
    // SAFETY: F_SETFL takes an integer argument.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) })?;
    Ok(())
}

/// The process id of the peer of a connected UNIX socket, as the kernel recorded it at `connect` time.
pub(crate) fn peer_pid(fd: BorrowedFd<'_>) -> io::Result<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` is a writable ucred and `len` holds its size, as SO_PEERCRED requires.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            ptr::from_mut(&mut cred).cast::<libc::c_void>(),
            &mut len,
        )
    })?;
    Ok(u32::try_from(cred.pid).unwrap_or(0))
}

/// Control-message buffer of `N` bytes, aligned for `cmsghdr`.
#[repr(C, align(8))]
struct ControlBuffer<const N: usize>([u8; N]);

/// Receive control buffer size: room for 12 descriptors. More sets `MSG_CTRUNC` (the kernel closes the rest);
/// a valid message carries at most one.
const RECV_CONTROL: usize = 64;

/// Send control buffer size: room for 36 descriptors, more than a receiver accepts, so tests can send too many.
const SEND_CONTROL: usize = 160;

/// Sends one message with `fds` attached as one `SCM_RIGHTS` message (at most 36). Never raises `SIGPIPE`.
///
/// With `nonblocking` the call fails with [`io::ErrorKind::WouldBlock`] instead of waiting for room.
pub(crate) fn send(
    sock: BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[BorrowedFd<'_>],
    nonblocking: bool,
) -> io::Result<usize> {
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr().cast_mut().cast::<libc::c_void>(),
        iov_len: bytes.len(),
    };
    let mut control = ControlBuffer([0; SEND_CONTROL]);
    // SAFETY: msghdr is plain old data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if !fds.is_empty() {
        let data_len = mem::size_of_val(fds) as u32;
        // SAFETY: CMSG_SPACE is a pure size computation.
        let space = unsafe { libc::CMSG_SPACE(data_len) } as usize;
        if space > control.0.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "too many descriptors for one message",
            ));
        }
        msg.msg_control = control.0.as_mut_ptr().cast::<libc::c_void>();
        msg.msg_controllen = space;
        // SAFETY: msg_control points at `space` (checked <= SEND_CONTROL) writable, aligned bytes, so CMSG_FIRSTHDR
        // returns a header inside them, and CMSG_DATA has room for `fds.len()` RawFds after it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(data_len) as usize;
            let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
            for (i, fd) in fds.iter().enumerate() {
                ptr::write_unaligned(data.add(i), fd.as_raw_fd());
            }
        }
    }
    let flags = libc::MSG_NOSIGNAL | if nonblocking { libc::MSG_DONTWAIT } else { 0 };
    // SAFETY: `msg` points at a live iovec over `bytes` and, when set, the filled control buffer; both outlive
    // the call, and sendmsg only reads them.
    check_len(unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, flags) })
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
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast::<libc::c_void>(),
        iov_len: buf.len(),
    };
    let mut control = ControlBuffer([0; RECV_CONTROL]);
    // SAFETY: msghdr is plain old data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast::<libc::c_void>();
    msg.msg_controllen = control.0.len();
    // SAFETY: `msg` points at a live iovec over `buf` and at the control buffer, both writable for the lengths
    // given; recvmsg writes at most those lengths.
    let len = check_len(unsafe {
        libc::recvmsg(
            sock.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        )
    })?;
    let mut fds = Vec::new();
    // SAFETY: after a successful recvmsg the kernel has filled `msg_controllen` bytes of control data; the
    // CMSG_* walk stays inside them. Each SCM_RIGHTS payload holds whole RawFds, read unaligned, that the kernel
    // installed in this process for us to own.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let header = libc::CMSG_LEN(0) as usize;
                let count = ((*cmsg).cmsg_len).saturating_sub(header) / mem::size_of::<RawFd>();
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                for i in 0..count {
                    let raw = ptr::read_unaligned(data.add(i));
                    if raw >= 0 {
                        fds.push(OwnedFd::from_raw_fd(raw));
                    }
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok(Received {
        len,
        truncated: msg.msg_flags & libc::MSG_TRUNC != 0,
        control_truncated: msg.msg_flags & libc::MSG_CTRUNC != 0,
        fds,
    })
}

/// One entry of a [`poll`] set.
pub(crate) type PollFd = libc::pollfd;

/// Readable.
pub(crate) const POLLIN: i16 = libc::POLLIN;
/// Writable.
pub(crate) const POLLOUT: i16 = libc::POLLOUT;

/// Builds a poll entry for `fd` waiting for `events`.
pub(crate) fn poll_entry(fd: BorrowedFd<'_>, events: i16) -> PollFd {
    libc::pollfd {
        fd: fd.as_raw_fd(),
        events,
        revents: 0,
    }
}

/// Waits until an entry is ready or `timeout_ms` passes (-1 = no limit). `EINTR` counts as "nothing ready".
pub(crate) fn poll(fds: &mut [PollFd], timeout_ms: i32) -> io::Result<usize> {
    // SAFETY: `fds` is a valid, writable array of pollfd of the length given.
    let ret = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    match check(ret) {
        Ok(n) => Ok(n as usize),
        Err(err) if err.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(err) => Err(err),
    }
}

/// Creates a memfd that may be sealed, with close-on-exec set.
pub(crate) fn memfd_create(name: &CStr) -> io::Result<OwnedFd> {
    // SAFETY: `name` is a NUL-terminated string that outlives the call.
    let fd = check(unsafe {
        libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING)
    })?;
    // SAFETY: memfd_create returned a new descriptor that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds `seals` (`F_SEAL_*` bits) to a memfd.
pub(crate) fn add_seals(fd: BorrowedFd<'_>, seals: i32) -> io::Result<()> {
    // SAFETY: F_ADD_SEALS takes an integer argument.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) })?;
    Ok(())
}

/// The seals (`F_SEAL_*` bits) of a memfd; fails with `EINVAL` for files that cannot be sealed.
pub(crate) fn seals(fd: BorrowedFd<'_>) -> io::Result<i32> {
    // SAFETY: F_GET_SEALS takes no argument.
    check(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) })
}

/// `F_SEAL_SEAL`: no further seals may be added.
pub(crate) const SEAL_SEAL: i32 = libc::F_SEAL_SEAL;
/// `F_SEAL_SHRINK`: the file cannot get smaller.
pub(crate) const SEAL_SHRINK: i32 = libc::F_SEAL_SHRINK;
/// `F_SEAL_GROW`: the file cannot get larger.
pub(crate) const SEAL_GROW: i32 = libc::F_SEAL_GROW;
/// `F_SEAL_WRITE`: the contents cannot change.
pub(crate) const SEAL_WRITE: i32 = libc::F_SEAL_WRITE;

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
        // SAFETY: a NULL hint lets the kernel choose the address; the result is checked against MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
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
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast::<libc::c_void>(), self.len);
        }
    }
}

/// Helper to borrow an [`OwnedFd`] briefly.
trait AsFdRef {
    /// Borrows the descriptor.
    fn as_fd_ref(&self) -> BorrowedFd<'_>;
}

impl AsFdRef for OwnedFd {
    fn as_fd_ref(&self) -> BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(self)
    }
}
