//! PERF_DATA frames (type 12): raw perf ring-buffer records.
//!
//! Layout: `packInt cpu`, `u32 little-endian byte_length`, then `byte_length / 8` words, each a `packInt64` of
//! one u64 of the perf records (records are padded to 8 bytes).

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{decode_i64, encode_i32, encode_i64};

/// A PERF_DATA frame; the words are decoded lazily by [`PerfData::words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfData<'a> {
    /// The CPU whose ring buffer the records came from.
    pub cpu: i32,
    /// The length of the records in bytes (a multiple of 8 from real daemons).
    pub byte_length: u32,
    /// The encoded words.
    pub raw_words: &'a [u8],
}

impl<'a> PerfData<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8]) -> Result<PerfData<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let cpu = cursor.i32("cpu")?;
        let byte_length = cursor.u32_le("byte_length")?;
        Ok(PerfData {
            cpu,
            byte_length,
            raw_words: cursor.rest(),
        })
    }

    /// The u64 words in order; each item is a word or, once, the error that stops iteration.
    pub fn words(&self) -> Words<'a> {
        Words {
            rest: self.raw_words,
        }
    }

    /// Appends the whole frame (frame type included) for the given record words.
    pub fn encode(cpu: i32, words: &[u64], out: &mut Vec<u8>) {
        encode_i32(FrameType::PerfData.code(), out);
        encode_i32(cpu, out);
        let byte_length = u32::try_from(words.len() * 8).unwrap_or(u32::MAX);
        out.extend_from_slice(&byte_length.to_le_bytes());
        for &word in words {
            encode_i64(word as i64, out);
        }
    }
}

/// Iterator over the words of a [`PerfData`] frame.
#[derive(Debug, Clone)]
pub struct Words<'a> {
    rest: &'a [u8],
}

impl Iterator for Words<'_> {
    type Item = Result<u64, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        match decode_i64(self.rest) {
            Ok((value, len)) => {
                self.rest = &self.rest[len..];
                Some(Ok(value as u64))
            }
            Err(source) => {
                self.rest = &[];
                Some(Err(FrameError::Int {
                    field: "word",
                    source,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let words = [
            0u64,
            1,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x0000_0030_0000_0009,
        ];
        let mut out = Vec::new();
        PerfData::encode(2, &words, &mut out);
        let frame = PerfData::parse(&out[1..]).unwrap();
        assert_eq!(frame.cpu, 2);
        assert_eq!(frame.byte_length, 40);
        assert_eq!(frame.words().collect::<Result<Vec<_>, _>>().unwrap(), words);
    }

    #[test]
    fn short_length_field_is_an_error() {
        assert!(matches!(
            PerfData::parse(&[0, 1, 2]),
            Err(FrameError::Truncated {
                field: "byte_length",
                ..
            })
        ));
    }

    #[test]
    fn truncated_word_is_an_error() {
        let frame = PerfData::parse(&[0, 8, 0, 0, 0, 0x80]).unwrap();
        assert!(matches!(
            frame.words().next(),
            Some(Err(FrameError::Int { field: "word", .. }))
        ));
    }
}
