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
        let result = frame_length(
            &rest[..rest.len().min(4)],
            offset,
            rest.len(),
            self.max_frame_len,
        )
        .map(|length| {
            self.offset += 4 + length as usize;
            &rest[4..4 + length as usize]
        });
        self.failed = result.is_err();
        Some(result)
    }
}

/// Checks the record that starts at byte `offset` of a frame file and returns its frame length: `prefix` holds
/// the record's first bytes (its length prefix; fewer than 4 only when the file ends there) and `remaining`
/// counts the bytes from `offset` to the end of the file. For readers that take the file a record at a time
/// (a frame is then read only once its length is known to fit both the limit `max` and the file);
/// [`LocalCaptureReader`] uses the same rules.
pub fn frame_length(
    prefix: &[u8],
    offset: usize,
    remaining: usize,
    max: u32,
) -> Result<u32, LocalCaptureError> {
    let Some(&[a, b, c, d]) = prefix.get(..4) else {
        return Err(LocalCaptureError::TruncatedLength { offset });
    };
    let length = u32::from_le_bytes([a, b, c, d]);
    let available = remaining.saturating_sub(4);
    if length > max {
        Err(LocalCaptureError::TooLarge {
            offset,
            length,
            max,
        })
    } else if length as usize > available {
        Err(LocalCaptureError::TruncatedFrame {
            offset,
            length,
            available,
        })
    } else {
        Ok(length)
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
    fn frame_length_applies_the_reader_rules() {
        assert_eq!(frame_length(&[2, 0, 0, 0], 8, 6, 9), Ok(2));
        assert_eq!(
            frame_length(&[2, 0], 8, 2, 9),
            Err(LocalCaptureError::TruncatedLength { offset: 8 })
        );
        assert_eq!(
            frame_length(&[3, 0, 0, 0], 0, 5, 9),
            Err(LocalCaptureError::TruncatedFrame {
                offset: 0,
                length: 3,
                available: 1
            })
        );
        assert_eq!(
            frame_length(&[0, 0, 0, 1], 4, 1 << 30, 9),
            Err(LocalCaptureError::TooLarge {
                offset: 4,
                length: 1 << 24,
                max: 9
            })
        );
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
