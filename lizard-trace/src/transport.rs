//! The client end of the transport: a connected `SOCK_SEQPACKET` UNIX socket that sends one datagram per
//! message, with an optional file descriptor attached as `SCM_RIGHTS`.
//!
//! [`crate::TraceClient`] is built on it; tools and tests use it directly to send arbitrary bytes.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::socket_name::SocketName;
use crate::sys;

/// A connection to a trace server.
#[derive(Debug)]
pub struct Connection {
    /// The connected socket.
    fd: OwnedFd,
}

impl Connection {
    /// Connects to the server listening on `name`.
    pub fn connect(name: &SocketName) -> io::Result<Connection> {
        Ok(Connection {
            fd: sys::connect(name)?,
        })
    }

    /// Sends one datagram, waiting for room in the socket queue if needed.
    pub fn send(&self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> io::Result<usize> {
        sys::send(self.fd.as_fd(), bytes, fd.as_slice(), false)
    }

    /// Sends one datagram with any number of descriptors attached (at most 36), waiting for room if needed.
    /// A valid message carries at most one; this exists to test how servers treat more.
    pub fn send_fds(&self, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<usize> {
        sys::send(self.fd.as_fd(), bytes, fds, false)
    }

    /// Sends one datagram, failing with [`io::ErrorKind::WouldBlock`] when the queue is full.
    pub fn try_send(&self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> io::Result<usize> {
        sys::send(self.fd.as_fd(), bytes, fd.as_slice(), true)
    }

    /// Sends one datagram, waiting at most `timeout` for room; `Ok(false)` when the time ran out.
    pub fn send_timeout(
        &self,
        bytes: &[u8],
        fd: Option<BorrowedFd<'_>>,
        timeout: Duration,
    ) -> io::Result<bool> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.try_send(bytes, fd) {
                Ok(_) => return Ok(true),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            let mut set = [sys::poll_entry(self.fd.as_fd(), sys::POLLOUT)];
            sys::poll(&mut set, ms)?;
        }
    }
}

impl Connection {
    /// Receives one datagram into `buf`, waiting at most `timeout`: `Ok(None)` when none came in time,
    /// `Ok(Some(0))` when the server closed the connection. A datagram longer than `buf` is cut to its length.
    pub fn recv_timeout(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let deadline = Instant::now() + timeout;
        loop {
            match sys::recv(self.fd.as_fd(), buf) {
                Ok(received) => return Ok(Some(received.len)),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            let mut set = [sys::poll_entry(self.fd.as_fd(), sys::POLLIN)];
            sys::poll(&mut set, ms)?;
        }
    }
}

impl Connection {
    /// Receives the answer to a message just sent, waiting at most `timeout`: first it asks again and again
    /// for at most `spin`, giving the processor away between tries (`sched_yield`), then it sleeps until the
    /// answer comes. `Ok(None)` when none came in time, `Ok(Some(0))` when the server closed the connection.
    ///
    /// Why spin: a process that sleeps lets its processor idle, and waking a processor that idles costs far
    /// more than the answer takes in a virtual machine (tens of microseconds against a few: `trace_device`
    /// bench, `benches/README.md`). Yielding between tries lets a server on the same processor run.
    pub fn recv_answer(
        &self,
        buf: &mut [u8],
        spin: Duration,
        timeout: Duration,
    ) -> io::Result<Option<usize>> {
        let started = Instant::now();
        let deadline = started + timeout;
        let spin = spin.min(timeout);
        loop {
            match sys::recv(self.fd.as_fd(), buf) {
                Ok(received) => return Ok(Some(received.len)),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
            if started.elapsed() < spin {
                std::thread::yield_now();
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            let mut set = [sys::poll_entry(self.fd.as_fd(), sys::POLLIN)];
            sys::poll(&mut set, ms)?;
        }
    }
}

impl AsFd for Connection {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
