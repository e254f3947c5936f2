//! Payload memfds: the client fills and seals one; the server checks the seals and size, maps, copies, closes.
//!
//! A payload memfd must carry `F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE` ([`REQUIRED_SEALS`]). Shrink and
//! grow seals mean the mapped bytes cannot vanish under the server (no `SIGBUS`); the write seal means they
//! cannot change while the server copies them, and the kernel grants it only when no writable mapping exists.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::error::MemfdError;
use crate::sys;

/// Seals a received payload memfd must have.
pub const REQUIRED_SEALS: i32 = sys::SEAL_SHRINK | sys::SEAL_GROW | sys::SEAL_WRITE;

/// Seals [`sealed_payload`] adds: the required ones plus `F_SEAL_SEAL`.
pub const PAYLOAD_SEALS: i32 = REQUIRED_SEALS | sys::SEAL_SEAL;

/// A new, empty, sealable memfd (close-on-exec) as a [`File`], to fill with `write`.
pub fn create() -> io::Result<File> {
    Ok(File::from(sys::memfd_create(c"lizard-trace-payload")?))
}

/// Adds `seals` (`F_SEAL_*` bits) to a memfd.
pub fn add_seals(fd: BorrowedFd<'_>, seals: i32) -> io::Result<()> {
    sys::add_seals(fd, seals)
}

/// A memfd holding exactly `payload`, sealed with [`PAYLOAD_SEALS`]: what a client attaches to a message.
pub fn sealed_payload(payload: &[u8]) -> io::Result<OwnedFd> {
    let mut file = create()?;
    file.write_all(payload)?;
    sys::add_seals(file.as_fd(), PAYLOAD_SEALS)?;
    Ok(OwnedFd::from(file))
}

/// Checks that `fd` is a memfd sealed with [`REQUIRED_SEALS`] holding at least `len` bytes, then hands its
/// first `len` bytes to `copy`. The mapping is removed before returning; the caller closes `fd`.
pub fn with_payload<T>(
    fd: BorrowedFd<'_>,
    len: u32,
    copy: impl FnOnce(&[u8]) -> T,
) -> Result<T, MemfdError> {
    let present = sys::seals(fd).map_err(MemfdError::NotMemfd)?;
    let missing = REQUIRED_SEALS & !present;
    if missing != 0 {
        return Err(MemfdError::NotSealed { present, missing });
    }
    let file = File::from(fd.try_clone_to_owned().map_err(MemfdError::Stat)?);
    let size = file.metadata().map_err(MemfdError::Stat)?.len();
    if size < u64::from(len) {
        return Err(MemfdError::TooSmall { size, claimed: len });
    }
    if len == 0 {
        return Ok(copy(&[]));
    }
    let mapping = sys::Mapping::sealed_readonly(fd, len as usize).map_err(MemfdError::Map)?;
    Ok(copy(mapping.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_payload_reads_back() {
        let fd = sealed_payload(b"0123456789").unwrap();
        let got = with_payload(fd.as_fd(), 10, |b| b.to_vec()).unwrap();
        assert_eq!(got, b"0123456789");
        let prefix = with_payload(fd.as_fd(), 4, |b| b.to_vec()).unwrap();
        assert_eq!(prefix, b"0123");
        assert_eq!(with_payload(fd.as_fd(), 0, |b| b.len()).unwrap(), 0);
    }

    #[test]
    fn smaller_than_claimed_is_rejected() {
        let fd = sealed_payload(b"abc").unwrap();
        assert!(matches!(
            with_payload(fd.as_fd(), 4, |_| ()),
            Err(MemfdError::TooSmall {
                size: 3,
                claimed: 4
            })
        ));
    }

    #[test]
    fn unsealed_and_partly_sealed_are_rejected() {
        let mut file = create().unwrap();
        file.write_all(b"abc").unwrap();
        assert!(matches!(
            with_payload(file.as_fd(), 3, |_| ()),
            Err(MemfdError::NotSealed {
                missing: REQUIRED_SEALS,
                ..
            })
        ));
        add_seals(file.as_fd(), sys::SEAL_SHRINK | sys::SEAL_GROW).unwrap();
        assert!(matches!(
            with_payload(file.as_fd(), 3, |_| ()),
            Err(MemfdError::NotSealed { missing, .. }) if missing == sys::SEAL_WRITE
        ));
    }

    #[test]
    fn sealed_memfd_refuses_changes() {
        let fd = sealed_payload(b"abc").unwrap();
        let mut file = File::from(fd);
        assert!(file.write_all(b"x").is_err());
        assert!(file.set_len(1).is_err());
    }

    #[test]
    fn non_memfd_is_rejected() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(matches!(
            with_payload(a.as_fd(), 1, |_| ()),
            Err(MemfdError::NotMemfd(_))
        ));
    }
}
