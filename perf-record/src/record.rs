//! Perf ring-buffer records, split by their headers without copying: those of a ring read as plain u64 words
//! ([`PerfRecords::raw`]), or those inside a gatord PERF_DATA frame ([`WordSlice::Packed`]).
//!
//! gatord copies whole records out of each CPU's perf ring (never part of one) and packs every u64 word as a
//! `packInt64`; a record takes `max(1, ceil(size / 8))` words. The header word holds `type` (low 32 bits), `misc`
//! (next 16) and `size` in bytes, header included (top 16). [`PerfRecord::body`] gives the words after the
//! header; [`PerfRecord::decode`] tells what the record is ([`TypedRecord`]): a LOST, THROTTLE or UNTHROTTLE
//! record decoded whole, a PERF_RECORD_SAMPLE left for [`crate::SampleRecord`] to decode with its writer's
//! layout.

use thiserror::Error;

use crate::lost::LostRecord;
use crate::sleb128::Sleb128Error;
use crate::throttle::ThrottleRecord;
use crate::words::{WordSlice, Words};

/// `PERF_RECORD_LOST`: records the kernel could not write (`id`, `lost`).
pub const PERF_RECORD_LOST: u32 = 2;
/// `PERF_RECORD_THROTTLE`: the kernel stopped a sampling event for a while (it took too much CPU).
pub const PERF_RECORD_THROTTLE: u32 = 5;
/// `PERF_RECORD_UNTHROTTLE`: the event samples again.
pub const PERF_RECORD_UNTHROTTLE: u32 = 6;
/// `PERF_RECORD_SAMPLE`.
pub const PERF_RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_SWITCH_CPU_WIDE`: a context switch seen by a system-wide event.
pub const PERF_RECORD_SWITCH_CPU_WIDE: u32 = 15;

/// Why the records of a PERF_DATA frame, the fields of one record, or a read of an event could not be decoded.
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
    /// A read of an event holds words after the values its `nr` (or its single value) accounts for: `nr`
    /// is not the number of values read.
    #[error("a read of {nr} value(s) is followed by {extra} word(s) it does not account for")]
    ExtraWords {
        /// The `nr` field (1 for a read of one event).
        nr: u64,
        /// Words after the last value.
        extra: usize,
    },
}

/// One perf record borrowing its words (packed or plain).
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
    body: WordSlice<'a>,
}

impl<'a> PerfRecord<'a> {
    /// The words after the header.
    pub fn body(&self) -> Words<'a> {
        self.body.iter()
    }

    /// The words after the header, as they came (packed or plain).
    pub fn body_slice(&self) -> WordSlice<'a> {
        self.body
    }

    /// The cpu mode in `misc` (`PERF_RECORD_MISC_CPUMODE_MASK`): 1 kernel, 2 user, 3 hypervisor, …
    pub fn cpu_mode(&self) -> u16 {
        self.misc & 0x7
    }

    /// What the record is, its fields decoded where its type alone fixes them; a LOST, THROTTLE or
    /// UNTHROTTLE record too short for its fields is an error.
    pub fn decode(&self) -> Result<TypedRecord<'a>, PerfRecordError> {
        Ok(match self.kind {
            PERF_RECORD_SAMPLE => TypedRecord::Sample(*self),
            PERF_RECORD_LOST => TypedRecord::Lost(LostRecord::parse(self)?),
            PERF_RECORD_THROTTLE => TypedRecord::Throttle(ThrottleRecord::parse(self)?),
            PERF_RECORD_UNTHROTTLE => TypedRecord::Unthrottle(ThrottleRecord::parse(self)?),
            _ => TypedRecord::Other(*self),
        })
    }
}

/// A perf record by its type ([`PerfRecord::decode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypedRecord<'a> {
    /// PERF_RECORD_SAMPLE, whose fields depend on the writer's `sample_type` and `read_format`: decode it
    /// with [`crate::SampleRecord::parse`].
    Sample(PerfRecord<'a>),
    /// PERF_RECORD_LOST.
    Lost(LostRecord),
    /// PERF_RECORD_THROTTLE: the event stopped sampling at this time.
    Throttle(ThrottleRecord),
    /// PERF_RECORD_UNTHROTTLE: the event samples again from this time.
    Unthrottle(ThrottleRecord),
    /// A record of another type, not decoded.
    Other(PerfRecord<'a>),
}

/// Iterator over the records of a PERF_DATA frame or of plain words; after an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct PerfRecords<'a> {
    rest: WordSlice<'a>,
}

impl<'a> PerfRecords<'a> {
    /// The records of `words`, packed or plain (a gatord PERF_DATA frame converts into its words).
    pub fn new(words: impl Into<WordSlice<'a>>) -> PerfRecords<'a> {
        PerfRecords { rest: words.into() }
    }

    /// The records of plain words, as a perf ring holds them (whole records, each padded to 8 bytes).
    pub fn raw(words: &'a [u64]) -> PerfRecords<'a> {
        PerfRecords::new(WordSlice::Raw(words))
    }

    /// The same records, each decoded by its type ([`PerfRecord::decode`]). A record too short for its
    /// fields is an error in its place and the records after it still come; a cut record ends them.
    pub fn typed(self) -> impl Iterator<Item = Result<TypedRecord<'a>, PerfRecordError>> {
        self.map(|record| record?.decode())
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
                self.rest = WordSlice::default();
                Some(Err(err))
            }
        }
    }
}

/// Splits the first record off `words` (not empty).
fn split_record(words: WordSlice<'_>) -> Result<(PerfRecord<'_>, WordSlice<'_>), PerfRecordError> {
    let (header, after_header) = match words.split_first() {
        Some(Ok(split)) => split,
        Some(Err(source)) => {
            return Err(PerfRecordError::Word {
                field: "record header",
                source,
            })
        }
        None => return Err(PerfRecordError::ShortRecord { field: "header" }),
    };
    let kind = header as u32;
    let misc = (header >> 32) as u16;
    let size = (header >> 48) as u16;
    let body_words = usize::from(size).div_ceil(8).max(1) - 1;
    let mut rest = after_header;
    for done in 0..body_words {
        match rest.split_first() {
            Some(Ok((_, after))) => rest = after,
            None => {
                return Err(PerfRecordError::TruncatedRecord {
                    kind,
                    needed: body_words,
                    available: done,
                })
            }
            Some(Err(source)) => {
                return Err(PerfRecordError::Word {
                    field: "record body",
                    source,
                })
            }
        }
    }
    Ok((
        PerfRecord {
            kind,
            misc,
            size,
            body_words,
            body: after_header.before(&rest),
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
    rest: WordSlice<'a>,
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

    /// A reader over plain `words` (a read of an event).
    pub(crate) fn plain(words: &'a [u64]) -> WordReader<'a> {
        WordReader {
            rest: WordSlice::Raw(words),
            left: words.len(),
        }
    }

    /// Words not yet read.
    pub(crate) fn left(&self) -> usize {
        self.left
    }

    /// The words not yet read.
    pub(crate) fn rest(&self) -> WordSlice<'a> {
        self.rest
    }

    /// Reads one word.
    pub(crate) fn word(&mut self, field: &'static str) -> Result<u64, PerfRecordError> {
        if self.left == 0 {
            return Err(PerfRecordError::ShortRecord { field });
        }
        let (value, rest) = match self.rest.split_first() {
            Some(Ok(split)) => split,
            Some(Err(source)) => return Err(PerfRecordError::Word { field, source }),
            None => return Err(PerfRecordError::ShortRecord { field }),
        };
        self.rest = rest;
        self.left -= 1;
        Ok(value)
    }

    /// Skips `n` words, returning the words skipped.
    pub(crate) fn skip(
        &mut self,
        n: usize,
        field: &'static str,
    ) -> Result<WordSlice<'a>, PerfRecordError> {
        let start = self.rest;
        for _ in 0..n {
            self.word(field)?;
        }
        Ok(start.before(&self.rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `words` packed as gatord packs a PERF_DATA frame's.
    fn frame(words: &[u64]) -> Vec<u8> {
        let mut out = Vec::new();
        for &word in words {
            crate::sleb128::encode_i64(word as i64, &mut out);
        }
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
        let data = WordSlice::Packed(&bytes);
        let records: Vec<_> = PerfRecords::new(data).collect::<Result<_, _>>().unwrap();
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
    fn plain_words_split_as_their_packed_bytes_do() {
        let words = [
            record_header(PERF_RECORD_SAMPLE, 2, 2),
            10,
            11,
            record_header(PERF_RECORD_LOST, 0, 2),
            7,
            8,
            0,
            record_header(PERF_RECORD_SAMPLE, 0, 3),
            1,
        ];
        let bytes = frame(&words);
        let data = WordSlice::Packed(&bytes);
        let split = |records: PerfRecords<'_>| -> Vec<_> {
            records
                .map(|r| {
                    r.map(|r| {
                        let body: Vec<u64> = r.body().map(Result::unwrap).collect();
                        (r.kind, r.misc, r.size, r.body_words, body)
                    })
                })
                .collect()
        };
        let raw = split(PerfRecords::raw(&words));
        assert_eq!(raw, split(PerfRecords::new(data)));
        assert_eq!(raw.len(), 4);
        assert_eq!(
            raw[3],
            Err(PerfRecordError::TruncatedRecord {
                kind: 9,
                needed: 3,
                available: 1
            })
        );
    }

    #[test]
    fn a_record_longer_than_the_frame_is_truncated() {
        let bytes = frame(&[record_header(PERF_RECORD_SAMPLE, 0, 3), 1]);
        let data = WordSlice::Packed(&bytes);
        let mut records = PerfRecords::new(data);
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
        let data = WordSlice::Packed(&[0x80, 0x80]);
        assert!(matches!(
            PerfRecords::new(data).next(),
            Some(Err(PerfRecordError::Word {
                field: "record header",
                ..
            }))
        ));
        let mut packed = Vec::new();
        crate::sleb128::encode_i64(record_header(9, 0, 2) as i64, &mut packed);
        packed.extend_from_slice(&[0x01, 0x80]);
        let data = WordSlice::Packed(&packed);
        assert!(matches!(
            PerfRecords::new(data).next(),
            Some(Err(PerfRecordError::Word {
                field: "record body",
                ..
            }))
        ));
    }
}
