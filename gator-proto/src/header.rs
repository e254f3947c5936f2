//! The 5-byte header shared by commands and responses: `u8 type`, `u32 little-endian payload length`.

use thiserror::Error;

/// The length of a command or response header.
pub const HEADER_LEN: usize = 5;

/// Default largest response payload a client accepts (64 MiB: the 3 MB events XML and 5 MB kallsyms frames fit).
pub const DEFAULT_MAX_RESPONSE_PAYLOAD: u32 = 64 * 1024 * 1024;
/// Largest command payload gatord accepts (1 MiB); longer commands are fatal to the daemon.
pub const DEFAULT_MAX_COMMAND_PAYLOAD: u32 = 1024 * 1024;

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The type byte.
    pub kind: u8,
    /// The payload length.
    pub length: u32,
}

impl Header {
    /// Reads a header from the first 5 bytes of `buf`, or `None` if fewer are available.
    #[inline]
    pub fn read(buf: &[u8]) -> Option<Header> {
        let raw = buf.get(..HEADER_LEN)?;
        Some(Header {
            kind: raw[0],
            length: u32::from_le_bytes([raw[1], raw[2], raw[3], raw[4]]),
        })
    }

    /// The header's wire bytes.
    pub fn to_bytes(self) -> [u8; HEADER_LEN] {
        let l = self.length.to_le_bytes();
        [self.kind, l[0], l[1], l[2], l[3]]
    }
}

/// Why a message could not be encoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The payload is longer than the header's 32-bit length can say, or than the configured limit.
    #[error("payload of {length} bytes exceeds the limit of {max} bytes")]
    PayloadTooLarge {
        /// The payload length.
        length: usize,
        /// The limit.
        max: u64,
    },
}

/// Appends a header and payload; fails without writing if the payload exceeds `max`.
pub(crate) fn encode_message(
    kind: u8,
    payload: &[u8],
    max: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let length = u32::try_from(payload.len())
        .ok()
        .filter(|&l| l <= max)
        .ok_or(EncodeError::PayloadTooLarge {
            length: payload.len(),
            max: u64::from(max),
        })?;
    out.reserve(HEADER_LEN + payload.len());
    out.extend_from_slice(&Header { kind, length }.to_bytes());
    out.extend_from_slice(payload);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let header = Header {
            kind: 1,
            length: 0x002f_22c4,
        };
        assert_eq!(header.to_bytes(), [0x01, 0xc4, 0x22, 0x2f, 0x00]);
        assert_eq!(Header::read(&header.to_bytes()), Some(header));
        assert_eq!(Header::read(&[1, 2, 3, 4]), None);
    }

    #[test]
    fn oversized_payload_is_refused() {
        let mut out = Vec::new();
        assert_eq!(
            encode_message(1, &[0; 10], 9, &mut out),
            Err(EncodeError::PayloadTooLarge { length: 10, max: 9 })
        );
        assert!(out.is_empty());
    }
}
