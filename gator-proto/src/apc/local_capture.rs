//! The binary stream of a Streamline local capture: the `0000000000` file inside a `.apc` directory.
//!
//! The file is a sequence of `u32 little-endian length` + frame, with no terminator; it ends at end of file. It is
//! the live APC_DATA envelope without the leading response-type byte.

use thiserror::Error;

/// Default largest frame accepted from a local capture (the daemon's own response limit, 256 MiB).
pub const DEFAULT_MAX_FRAME_LEN: u32 = 256 * 1024 * 1024;

/// Why a local capture stream could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LocalCaptureError {
    /// The file ends inside a 4-byte length prefix.
    #[error("local capture ends inside a length prefix at offset {offset}")]
    TruncatedLength {
        /// Byte offset of the record.
        offset: usize,
    },
    /// The file ends before the frame its length announces.
    #[error(
        "local capture frame at offset {offset} claims {length} bytes but only {available} remain"
    )]
    TruncatedFrame {
        /// Byte offset of the record.
        offset: usize,
        /// The announced length.
        length: u32,
        /// Bytes remaining.
        available: usize,
    },
    /// A length is larger than the configured maximum.
    #[error(
        "local capture frame at offset {offset} claims {length} bytes, more than the limit {max}"
    )]
    TooLarge {
        /// Byte offset of the record.
        offset: usize,
        /// The announced length.
        length: u32,
        /// The limit.
        max: u32,
    },
}

/// Iterates over the frames of a local capture held in memory, borrowing each frame.
///
/// Each item is a frame (for [`crate::apc::Frame::parse`]) or, once, the error that stops iteration.
#[derive(Debug, Clone)]
pub struct LocalCaptureReader<'a> {
    bytes: &'a [u8],
    offset: usize,
    max_frame_len: u32,
    failed: bool,
}

impl<'a> LocalCaptureReader<'a> {
    /// A reader over the whole contents of a `0000000000` file, with [`DEFAULT_MAX_FRAME_LEN`].
    pub fn new(bytes: &'a [u8]) -> Self {
        LocalCaptureReader {
            bytes,
            offset: 0,
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            failed: false,
        }
    }

    /// Sets the largest frame accepted.
    pub fn with_max_frame_len(mut self, max: u32) -> Self {
        self.max_frame_len = max;
        self
    }

    /// The byte offset of the next record.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl<'a> Iterator for LocalCaptureReader<'a> {
    type Item = Result<&'a [u8], LocalCaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset == self.bytes.len() {
            return None;
        }
        let offset = self.offset;
        let rest = &self.bytes[offset..];
        let result = match rest.get(..4) {
            None => Err(LocalCaptureError::TruncatedLength { offset }),
            Some(prefix) => {
                let length = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
                let available = rest.len() - 4;
                if length > self.max_frame_len {
                    Err(LocalCaptureError::TooLarge {
                        offset,
                        length,
                        max: self.max_frame_len,
                    })
                } else if length as usize > available {
                    Err(LocalCaptureError::TruncatedFrame {
                        offset,
                        length,
                        available,
                    })
                } else {
                    self.offset += 4 + length as usize;
                    Ok(&rest[4..4 + length as usize])
                }
            }
        };
        self.failed = result.is_err();
        Some(result)
    }
}

/// Appends one local-capture record (length prefix + frame).
///
/// Frames longer than `u32::MAX` bytes cannot be represented; they are rejected with `false` and nothing is
/// written.
pub fn encode_record(frame: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(length) = u32::try_from(frame.len()) else {
        return false;
    };
    out.extend_from_slice(&length.to_le_bytes());
    out.extend_from_slice(frame);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut file = Vec::new();
        assert!(encode_record(&[5, 0, 0, 1], &mut file));
        assert!(encode_record(&[1, 2], &mut file));
        let frames: Vec<&[u8]> = LocalCaptureReader::new(&file)
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(frames, [&[5u8, 0, 0, 1][..], &[1, 2][..]]);
    }

    #[test]
    fn truncations_and_limits_are_errors() {
        assert_eq!(
            LocalCaptureReader::new(&[1, 0]).next(),
            Some(Err(LocalCaptureError::TruncatedLength { offset: 0 }))
        );
        assert_eq!(
            LocalCaptureReader::new(&[3, 0, 0, 0, 1]).next(),
            Some(Err(LocalCaptureError::TruncatedFrame {
                offset: 0,
                length: 3,
                available: 1
            }))
        );
        let mut reader = LocalCaptureReader::new(&[9, 0, 0, 0]).with_max_frame_len(8);
        assert_eq!(
            reader.next(),
            Some(Err(LocalCaptureError::TooLarge {
                offset: 0,
                length: 9,
                max: 8
            }))
        );
        assert_eq!(reader.next(), None);
    }
}
