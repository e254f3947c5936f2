//! The perf ring-buffer records inside a PERF_DATA frame, split by their headers without copying.
//!
//! gatord copies whole records out of each CPU's perf ring (never part of one) and packs every u64 word as a
//! `packInt64`; a record takes `max(1, ceil(size / 8))` words. The header word holds `type` (low 32 bits), `misc`
//! (next 16) and `size` in bytes, header included (top 16). [`PerfRecord::body`] gives the words after the
//! header; [`super::SampleRecord`] decodes a PERF_RECORD_SAMPLE body.

use thiserror::Error;

use super::perf_data::{PerfData, Words};
use crate::sleb128::{decode_i64, Sleb128Error};

/// `PERF_RECORD_LOST`: records the kernel could not write (`id`, `lost`).
pub const PERF_RECORD_LOST: u32 = 2;
/// `PERF_RECORD_SAMPLE`.
pub const PERF_RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_SWITCH_CPU_WIDE`: a context switch seen by a system-wide event.
pub const PERF_RECORD_SWITCH_CPU_WIDE: u32 = 15;

/// Why the records of a PERF_DATA frame, or the fields of one record, could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PerfRecordError {
    /// A packed word could not be decoded.
    #[error("bad packed word in {field}")]
    Word {
        /// What was being read.
        field: &'static str,
        /// The SLEB128 failure.
        #[source]
        source: Sleb128Error,
    },
    /// A record's header claims more words than the frame holds.
    #[error("perf record of type {kind} claims {needed} word(s) but only {available} remain")]
    TruncatedRecord {
        /// The record type.
        kind: u32,
        /// Words the header claims after itself.
        needed: usize,
        /// Words left in the frame.
        available: usize,
    },
    /// A field runs past the end of its record.
    #[error("field `{field}` runs past the end of a perf record")]
    ShortRecord {
        /// The field being read.
        field: &'static str,
    },
    /// A group read claims more values than its record can hold.
    #[error("group read claims {nr} value(s) but the record holds {available} word(s)")]
    GroupTooLarge {
        /// The `nr` field.
        nr: u64,
        /// Words left in the record.
        available: usize,
    },
}

/// One perf record borrowing its packed words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfRecord<'a> {
    /// `perf_event_header.type` (e.g. [`PERF_RECORD_SAMPLE`]).
    pub kind: u32,
    /// `perf_event_header.misc` (CPU mode bits and flags).
    pub misc: u16,
    /// `perf_event_header.size`: bytes including the header.
    pub size: u16,
    /// The number of words after the header.
    pub body_words: usize,
    body: &'a [u8],
}

impl<'a> PerfRecord<'a> {
    /// The words after the header.
    pub fn body(&self) -> Words<'a> {
        Words::new(self.body)
    }

    /// The packed bytes of the words after the header.
    pub fn packed_body(&self) -> &'a [u8] {
        self.body
    }

    /// The cpu mode in `misc` (`PERF_RECORD_MISC_CPUMODE_MASK`): 1 kernel, 2 user, 3 hypervisor, …
    pub fn cpu_mode(&self) -> u16 {
        self.misc & 0x7
    }
}

/// Iterator over the records of a PERF_DATA frame; after an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct PerfRecords<'a> {
    rest: &'a [u8],
}

impl<'a> PerfRecords<'a> {
    /// The records of `frame`.
    pub fn new(frame: &PerfData<'a>) -> PerfRecords<'a> {
        PerfRecords {
            rest: frame.raw_words,
        }
    }
}

impl<'a> Iterator for PerfRecords<'a> {
    type Item = Result<PerfRecord<'a>, PerfRecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let result = split_record(self.rest);
        match result {
            Ok((record, rest)) => {
                self.rest = rest;
                Some(Ok(record))
            }
            Err(err) => {
                self.rest = &[];
                Some(Err(err))
            }
        }
    }
}

/// Splits the first record off `packed`.
fn split_record(packed: &[u8]) -> Result<(PerfRecord<'_>, &[u8]), PerfRecordError> {
    let (header, used) = decode_i64(packed).map_err(|source| PerfRecordError::Word {
        field: "record header",
        source,
    })?;
    let header = header as u64;
    let kind = header as u32;
    let misc = (header >> 32) as u16;
    let size = (header >> 48) as u16;
    let body_words = usize::from(size).div_ceil(8).max(1) - 1;
    let after_header = &packed[used..];
    let mut at = 0;
    for done in 0..body_words {
        match decode_i64(&after_header[at..]) {
            Ok((_, len)) => at += len,
            Err(Sleb128Error::Truncated { .. }) if after_header.len() == at => {
                return Err(PerfRecordError::TruncatedRecord {
                    kind,
                    needed: body_words,
                    available: done,
                })
            }
            Err(source) => {
                return Err(PerfRecordError::Word {
                    field: "record body",
                    source,
                })
            }
        }
    }
    let (body, rest) = after_header.split_at(at);
    Ok((
        PerfRecord {
            kind,
            misc,
            size,
            body_words,
            body,
        },
        rest,
    ))
}

/// Appends the header word of a record of `kind` with `body_words` words after it (for encoders and tests).
pub fn record_header(kind: u32, misc: u16, body_words: usize) -> u64 {
    let size = u64::try_from((body_words + 1) * 8).unwrap_or(u64::from(u16::MAX)) & 0xffff;
    u64::from(kind) | (u64::from(misc) << 32) | (size << 48)
}

/// A bounds-checked reader over the words of one record.
#[derive(Debug, Clone)]
pub(crate) struct WordReader<'a> {
    rest: &'a [u8],
    left: usize,
}

impl<'a> WordReader<'a> {
    /// A reader over the body of `record`.
    pub(crate) fn new(record: &PerfRecord<'a>) -> WordReader<'a> {
        WordReader {
            rest: record.body,
            left: record.body_words,
        }
    }

    /// Words not yet read.
    pub(crate) fn left(&self) -> usize {
        self.left
    }

    /// The packed bytes not yet read.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Reads one word.
    pub(crate) fn word(&mut self, field: &'static str) -> Result<u64, PerfRecordError> {
        if self.left == 0 {
            return Err(PerfRecordError::ShortRecord { field });
        }
        let (value, len) =
            decode_i64(self.rest).map_err(|source| PerfRecordError::Word { field, source })?;
        self.rest = &self.rest[len..];
        self.left -= 1;
        Ok(value as u64)
    }

    /// Skips `n` words, returning the packed bytes skipped.
    pub(crate) fn skip(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> Result<&'a [u8], PerfRecordError> {
        let start = self.rest;
        for _ in 0..n {
            self.word(field)?;
        }
        Ok(&start[..start.len() - self.rest.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(words: &[u64]) -> Vec<u8> {
        let mut out = Vec::new();
        PerfData::encode(1, words, &mut out);
        out
    }

    #[test]
    fn splits_records_by_header_size() {
        let bytes = frame(&[
            record_header(PERF_RECORD_SAMPLE, 2, 2),
            10,
            11,
            record_header(PERF_RECORD_LOST, 0, 2),
            7,
            8,
            // A zero-size header still takes one word, as gatord copies it.
            0,
        ]);
        let data = PerfData::parse(&bytes[1..]).unwrap();
        let records: Vec<_> = PerfRecords::new(&data).collect::<Result<_, _>>().unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(
            (records[0].kind, records[0].cpu_mode(), records[0].size),
            (9, 2, 24)
        );
        assert_eq!(
            records[0].body().collect::<Result<Vec<_>, _>>().unwrap(),
            [10, 11]
        );
        assert_eq!(records[1].kind, PERF_RECORD_LOST);
        assert_eq!((records[2].kind, records[2].body_words), (0, 0));
    }

    #[test]
    fn a_record_longer_than_the_frame_is_truncated() {
        let bytes = frame(&[record_header(PERF_RECORD_SAMPLE, 0, 3), 1]);
        let data = PerfData::parse(&bytes[1..]).unwrap();
        let mut records = PerfRecords::new(&data);
        assert_eq!(
            records.next(),
            Some(Err(PerfRecordError::TruncatedRecord {
                kind: 9,
                needed: 3,
                available: 1
            }))
        );
        assert_eq!(records.next(), None);
    }

    #[test]
    fn a_broken_word_is_an_error() {
        let data = PerfData {
            cpu: 0,
            packed_length: 2,
            raw_words: &[0x80, 0x80],
        };
        assert!(matches!(
            PerfRecords::new(&data).next(),
            Some(Err(PerfRecordError::Word {
                field: "record header",
                ..
            }))
        ));
        let mut packed = Vec::new();
        crate::sleb128::encode_i64(record_header(9, 0, 2) as i64, &mut packed);
        packed.extend_from_slice(&[0x01, 0x80]);
        let data = PerfData {
            cpu: 0,
            packed_length: 0,
            raw_words: &packed,
        };
        assert!(matches!(
            PerfRecords::new(&data).next(),
            Some(Err(PerfRecordError::Word {
                field: "record body",
                ..
            }))
        ));
    }
}
