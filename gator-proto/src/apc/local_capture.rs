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

/// Reads the frames of a local capture as its bytes come (a file read in chunks, a pipe), in constant memory:
/// the largest frame plus what was fed and not yet taken.
///
/// Call order: [`feed`](Self::feed) bytes, then take frames with [`next_frame`](Self::next_frame) until it
/// gives `Ok(None)` (it needs more bytes); repeat; at the end of the input call [`finish`](Self::finish), which
/// says whether the input stopped inside a record. The rules are [`LocalCaptureReader`]'s: a length above the
/// limit is an error as soon as its prefix is in, before any of the frame is buffered. After an error every
/// call returns it again.
#[derive(Debug, Clone)]
pub struct LocalCaptureDecoder {
    buffer: Vec<u8>,
    /// Index in `buffer` of the first byte not yet taken.
    start: usize,
    /// Byte offset in the input of `buffer[start]`.
    offset: usize,
    max_frame_len: u32,
    failed: Option<LocalCaptureError>,
}

impl Default for LocalCaptureDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalCaptureDecoder {
    /// A decoder with [`DEFAULT_MAX_FRAME_LEN`].
    pub fn new() -> Self {
        LocalCaptureDecoder {
            buffer: Vec::new(),
            start: 0,
            offset: 0,
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            failed: None,
        }
    }

    /// Sets the largest frame accepted.
    pub fn with_max_frame_len(mut self, max: u32) -> Self {
        self.max_frame_len = max;
        self
    }

    /// The input's byte offset of the next record.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Appends input bytes. The bytes of frames already taken are let go first.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        if self.start > 0 {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether the bytes fed so far hold no whole record: feed more (or [`finish`](Self::finish) at the end).
    /// False once an error is known.
    pub fn needs_input(&self) -> bool {
        matches!(self.whole_record(), Ok(None))
    }

    /// The next whole frame (for [`crate::apc::Frame::parse`]), `Ok(None)` when more bytes are needed, or the
    /// error that stops the input.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, LocalCaptureError> {
        let length = match self.whole_record() {
            Ok(Some(length)) => length as usize,
            Ok(None) => return Ok(None),
            Err(error) => {
                self.failed = Some(error.clone());
                self.buffer = Vec::new();
                self.start = 0;
                return Err(error);
            }
        };
        let frame = self.start + 4..self.start + 4 + length;
        self.start += 4 + length;
        self.offset += 4 + length;
        Ok(Some(&self.buffer[frame]))
    }

    /// The frame length of the record at `start` once all of it is buffered; an over-long length as soon as its
    /// prefix is.
    fn whole_record(&self) -> Result<Option<u32>, LocalCaptureError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let rest = &self.buffer[self.start..];
        let Some(&[a, b, c, d]) = rest.get(..4) else {
            return Ok(None);
        };
        let length = u32::from_le_bytes([a, b, c, d]);
        if length > self.max_frame_len {
            return Err(LocalCaptureError::TooLarge {
                offset: self.offset,
                length,
                max: self.max_frame_len,
            });
        }
        Ok((rest.len() >= 4 + length as usize).then_some(length))
    }

    /// Ends the input: `Ok` when it ended between records (call it once [`next_frame`](Self::next_frame) gives
    /// `Ok(None)`), else the truncated record's error.
    pub fn finish(&self) -> Result<(), LocalCaptureError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let rest = &self.buffer[self.start..];
        if rest.is_empty() {
            return Ok(());
        }
        frame_length(
            &rest[..rest.len().min(4)],
            self.offset,
            rest.len(),
            self.max_frame_len,
        )
        .map(|_| ())
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
    fn the_decoder_takes_frames_as_their_bytes_come() {
        let mut file = Vec::new();
        assert!(encode_record(&[5, 0, 0, 1], &mut file));
        assert!(encode_record(&[], &mut file));
        assert!(encode_record(&[1, 2], &mut file));
        let mut decoder = LocalCaptureDecoder::new();
        let mut frames = Vec::new();
        for byte in &file {
            assert!(decoder.needs_input());
            decoder.feed(std::slice::from_ref(byte));
            while let Some(frame) = decoder.next_frame().unwrap() {
                frames.push(frame.to_vec());
            }
        }
        assert_eq!(frames, [vec![5u8, 0, 0, 1], vec![], vec![1, 2]]);
        assert_eq!(decoder.offset(), file.len());
        assert_eq!(decoder.finish(), Ok(()));
    }

    #[test]
    fn the_decoder_reports_truncation_at_the_end_and_a_large_length_at_once() {
        let mut decoder = LocalCaptureDecoder::new();
        decoder.feed(&[3, 0, 0, 0, 1]);
        assert_eq!(decoder.next_frame(), Ok(None));
        assert_eq!(
            decoder.finish(),
            Err(LocalCaptureError::TruncatedFrame {
                offset: 0,
                length: 3,
                available: 1
            })
        );
        let mut decoder = LocalCaptureDecoder::new();
        decoder.feed(&[1, 0]);
        assert_eq!(decoder.next_frame(), Ok(None));
        assert_eq!(
            decoder.finish(),
            Err(LocalCaptureError::TruncatedLength { offset: 0 })
        );
        let mut decoder = LocalCaptureDecoder::new().with_max_frame_len(8);
        decoder.feed(&[1, 0, 0, 0, 7, 9, 0, 0, 0]);
        assert_eq!(decoder.next_frame(), Ok(Some(&[7u8][..])));
        assert!(!decoder.needs_input());
        let too_large = LocalCaptureError::TooLarge {
            offset: 5,
            length: 9,
            max: 8,
        };
        assert_eq!(decoder.next_frame(), Err(too_large.clone()));
        decoder.feed(&[0; 9]);
        assert_eq!(decoder.next_frame(), Err(too_large.clone()));
        assert_eq!(decoder.finish(), Err(too_large));
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
