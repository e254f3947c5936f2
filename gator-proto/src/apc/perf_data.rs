//! PERF_DATA frames (type 12): raw perf ring-buffer records.
//!
//! Layout: `packInt cpu`, `u32 little-endian length` of what follows, then the words of the perf records (padded
//! to 8 bytes), each u64 word as a `packInt64`. The length counts the packed bytes, not the record bytes: in the
//! gatord 9.7.2 recording it always equals the rest of the frame.

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};
use perf_record::{PerfRecords, WordSlice, Words};

/// A PERF_DATA frame; the words are decoded lazily by [`PerfData::words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfData<'a> {
    /// The CPU whose ring buffer the records came from.
    pub cpu: i32,
    /// The length in bytes of the packed words that follow.
    pub packed_length: u32,
    /// The encoded words.
    pub raw_words: &'a [u8],
}

impl<'a> PerfData<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8]) -> Result<PerfData<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let cpu = cursor.i32("cpu")?;
        let packed_length = cursor.u32_le("packed_length")?;
        let raw_words = cursor.bytes(u64::from(packed_length), "words")?;
        cursor.finish("words")?;
        Ok(PerfData {
            cpu,
            packed_length,
            raw_words,
        })
    }

    /// The u64 words in order; each item is a word or, once, the error that stops iteration.
    pub fn words(&self) -> Words<'a> {
        Words::new(self.raw_words)
    }

    /// The perf records of the frame, split by their headers.
    pub fn records(&self) -> PerfRecords<'a> {
        PerfRecords::new(self)
    }

    /// The packed words, as records and samples borrow them.
    pub fn word_slice(&self) -> WordSlice<'a> {
        WordSlice::Packed(self.raw_words)
    }

    /// Appends the whole frame (frame type included) for the given record words.
    pub fn encode(cpu: i32, words: &[u64], out: &mut Vec<u8>) {
        encode_i32(FrameType::PerfData.code(), out);
        encode_i32(cpu, out);
        let length_at = out.len();
        out.extend_from_slice(&[0; 4]);
        for &word in words {
            encode_i64(word as i64, out);
        }
        let packed = u32::try_from(out.len() - length_at - 4).unwrap_or(u32::MAX);
        out[length_at..length_at + 4].copy_from_slice(&packed.to_le_bytes());
    }
}

impl<'a> From<&PerfData<'a>> for WordSlice<'a> {
    fn from(frame: &PerfData<'a>) -> Self {
        frame.word_slice()
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
        assert_eq!(frame.packed_length as usize, out.len() - 6);
        assert_eq!(frame.words().collect::<Result<Vec<_>, _>>().unwrap(), words);
    }

    #[test]
    fn short_length_field_is_an_error() {
        assert!(matches!(
            PerfData::parse(&[0, 1, 2]),
            Err(FrameError::Truncated {
                field: "packed_length",
                ..
            })
        ));
    }

    #[test]
    fn length_must_match_the_words() {
        assert!(matches!(
            PerfData::parse(&[0, 2, 0, 0, 0, 0x01]),
            Err(FrameError::Truncated {
                field: "words",
                needed: 2,
                available: 1
            })
        ));
        assert!(matches!(
            PerfData::parse(&[0, 0, 0, 0, 0, 0x01]),
            Err(FrameError::TrailingBytes {
                after: "words",
                count: 1
            })
        ));
    }

    #[test]
    fn truncated_word_is_an_error() {
        let frame = PerfData::parse(&[0, 1, 0, 0, 0, 0x80]).unwrap();
        assert!(matches!(
            frame.words().next(),
            Some(Err(perf_record::PerfRecordError::Word {
                field: "word",
                ..
            }))
        ));
    }
}
