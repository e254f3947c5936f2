//! Waiting for a descriptor to become readable, with a deadline: the kbase reader's dumps and the gated
//! child's report pipe.

use std::io;
use std::os::fd::AsFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;

/// Result of [`poll_in`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Poll {
    /// POLLIN.
    Readable,
    /// Timeout expired.
    TimedOut,
    /// POLLHUP, POLLERR or POLLNVAL.
    HungUp,
}

/// `poll` for POLLIN on one fd, retrying on EINTR.
pub(crate) fn poll_in(fd: impl AsFd, timeout: Duration) -> io::Result<Poll> {
    let timeout = Timespec::try_from(timeout).unwrap_or(Timespec {
        tv_sec: i64::MAX as _,
        tv_nsec: 0,
    });
    let mut set = [PollFd::new(&fd, PollFlags::IN)];
    loop {
        match rustix::event::poll(&mut set, Some(&timeout)) {
            Ok(0) => return Ok(Poll::TimedOut),
            Ok(_) if set[0].revents().contains(PollFlags::IN) => return Ok(Poll::Readable),
            Ok(_) => return Ok(Poll::HungUp),
            Err(Errno::INTR) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;

    #[test]
    fn poll_waits_out_its_timeout_then_sees_data() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        let fd = OwnedFd::from(ours);
        assert_eq!(
            poll_in(&fd, Duration::from_millis(5)).unwrap(),
            Poll::TimedOut
        );
        std::io::Write::write_all(&mut &theirs, b"x").unwrap();
        assert_eq!(
            poll_in(&fd, Duration::from_secs(5)).unwrap(),
            Poll::Readable
        );
    }
}
