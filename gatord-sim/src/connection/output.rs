//! What a connection has to send: the bytes the state machine produced and the socket has not yet taken,
//! and the `live_rate` gate that holds captured frames until gatord would commit its buffers.

use std::io::{self, Write};
use std::time::{Duration, Instant};

use gator_proto::daemon::Session;

/// Bytes waiting for a non-blocking socket.
#[derive(Debug, Default)]
pub(super) struct Output {
    bytes: Vec<u8>,
    /// How many of `bytes` were written.
    written: usize,
}

impl Output {
    /// Whether nothing is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether a write has begun and not finished (such bytes are never held back).
    pub(super) fn part_written(&self) -> bool {
        self.written > 0
    }

    /// Takes the state machine's output.
    pub(super) fn take_from(&mut self, session: &mut Session) {
        // The bytes are written from `self.bytes` later; how many were moved does not matter.
        let _moved = session.poll_transmit(&mut self.bytes);
    }

    /// Appends raw bytes (a fault's broken frame header).
    pub(super) fn push_raw(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    /// Writes as much as `socket` takes now; whether anything was written.
    pub(super) fn write_to(&mut self, socket: &mut impl Write) -> io::Result<bool> {
        let mut wrote = false;
        while self.written < self.bytes.len() {
            match socket.write(&self.bytes[self.written..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written += n;
                    wrote = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.written == self.bytes.len() {
            self.bytes.clear();
            self.written = 0;
        }
        Ok(wrote)
    }
}

/// gatord commits its capture buffers every `live_rate`: frames made in between reach the socket together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LiveRate {
    /// When frames may next go out.
    pub(super) next: Instant,
    /// The `live_rate`.
    pub(super) period: Duration,
}

impl LiveRate {
    /// Whether frames are held at `now`; when they are not, the next commit is a period on (or a period
    /// from `now`, when more than one was missed).
    pub(super) fn holding(&mut self, now: Instant) -> bool {
        if now < self.next {
            return true;
        }
        self.next = if self.next + self.period > now {
            self.next + self.period
        } else {
            now + self.period
        };
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket that takes at most `room` bytes, then would block.
    struct Socket {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Socket {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn bytes_a_blocked_socket_did_not_take_wait_for_the_next_write() {
        let mut output = Output::default();
        output.push_raw(b"abcdef");
        let mut socket = Socket {
            got: Vec::new(),
            room: 4,
        };
        assert!(output.write_to(&mut socket).unwrap());
        assert!(output.part_written() && !output.is_empty());
        assert!(!output.write_to(&mut socket).unwrap());
        socket.room = 10;
        assert!(output.write_to(&mut socket).unwrap());
        assert_eq!(socket.got, b"abcdef");
        assert!(output.is_empty() && !output.part_written());
    }

    #[test]
    fn a_socket_that_takes_nothing_is_an_error() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Ok(0)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut output = Output::default();
        output.push_raw(b"x");
        assert_eq!(
            output.write_to(&mut Closed).unwrap_err().kind(),
            io::ErrorKind::WriteZero
        );
    }

    #[test]
    fn frames_go_out_once_a_live_rate() {
        let start = Instant::now();
        let period = Duration::from_millis(100);
        let mut gate = LiveRate {
            next: start,
            period,
        };
        assert!(!gate.holding(start));
        assert!(gate.holding(start + Duration::from_millis(50)));
        assert!(!gate.holding(start + Duration::from_millis(100)));
        assert_eq!(gate.next, start + period * 2);
        // Missed commits are not made up: the next is a period from now.
        let late = start + Duration::from_millis(750);
        assert!(!gate.holding(late));
        assert_eq!(gate.next, late + period);
    }
}
