//! BLOCK_COUNTER frames (type 5): polled and Mali counter values.
//!
//! Layout: `packInt core` (always 0 from current daemons), then `packInt key, packInt64 value` pairs to the end of
//! the frame. Keys 0, 1 and 2 are markers — timestamp (ns since capture start), thread id and core — that apply
//! to the pairs after them; any number of markers may appear in one frame. Other keys are daemon-allocated
//! counter keys (even, from 4) or driver keys (odd).

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{decode_i32, decode_i64, decode_short_pair, encode_i32, encode_i64};

/// Key of the timestamp marker.
pub const KEY_TIMESTAMP: i32 = 0;
/// Key of the thread-id marker.
pub const KEY_TID: i32 = 1;
/// Key of the core marker.
pub const KEY_CORE: i32 = 2;

/// A BLOCK_COUNTER frame; its records are decoded lazily by [`BlockCounter::records`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCounter<'a> {
    /// The legacy core field after the frame type.
    pub core: i32,
    /// The encoded `(key, value)` pairs.
    pub raw_records: &'a [u8],
}

/// One `(key, value)` pair of a BLOCK_COUNTER frame, with the marker keys given their meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// Key 0: the following values were sampled at this time, in ns since capture start.
    Timestamp(i64),
    /// Key 1: the following values belong to this thread.
    Tid(i64),
    /// Key 2: the following values belong to this core.
    Core(i64),
    /// Any other key: a counter value.
    Value {
        /// The counter key (map it to a name with the `captured` XML).
        key: i32,
        /// The raw counter value.
        value: i64,
    },
}

impl Record {
    /// Builds a record from a wire pair.
    #[inline]
    pub fn from_pair(key: i32, value: i64) -> Record {
        match key {
            KEY_TIMESTAMP => Record::Timestamp(value),
            KEY_TID => Record::Tid(value),
            KEY_CORE => Record::Core(value),
            key => Record::Value { key, value },
        }
    }

    /// The wire pair of this record.
    #[inline]
    pub fn to_pair(self) -> (i32, i64) {
        match self {
            Record::Timestamp(value) => (KEY_TIMESTAMP, value),
            Record::Tid(value) => (KEY_TID, value),
            Record::Core(value) => (KEY_CORE, value),
            Record::Value { key, value } => (key, value),
        }
    }

    /// Appends the wire pair.
    #[inline]
    pub fn encode(self, out: &mut Vec<u8>) {
        let (key, value) = self.to_pair();
        encode_i32(key, out);
        encode_i64(value, out);
    }
}

impl<'a> BlockCounter<'a> {
    /// Decodes the body that follows the frame type byte. The records are checked as they are iterated.
    pub fn parse(body: &'a [u8]) -> Result<BlockCounter<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let core = cursor.i32("core")?;
        Ok(BlockCounter {
            core,
            raw_records: cursor.rest(),
        })
    }

    /// The records in wire order. Each item is a record or, once, the error that stops iteration.
    #[inline]
    pub fn records(&self) -> Records<'a> {
        Records {
            rest: self.raw_records,
        }
    }

    /// Appends a whole BLOCK_COUNTER frame (frame type included).
    pub fn encode(core: i32, records: impl IntoIterator<Item = Record>, out: &mut Vec<u8>) {
        encode_i32(FrameType::BlockCounter.code(), out);
        encode_i32(core, out);
        for record in records {
            record.encode(out);
        }
    }
}

/// Iterator over the records of a [`BlockCounter`]; allocation-free.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    rest: &'a [u8],
}

impl Records<'_> {
    /// The next wire pair, `None` at the end; after an error the iterator is empty.
    #[inline(always)]
    pub(super) fn next_raw(&mut self) -> Option<Result<(i32, i64), FrameError>> {
        if self.rest.is_empty() {
            return None;
        }
        let item = self.next_pair();
        if item.is_err() {
            self.rest = &[];
        }
        Some(item)
    }

    #[inline(always)]
    fn next_pair(&mut self) -> Result<(i32, i64), FrameError> {
        let rest = self.rest;
        // Away from the end of the frame, the usual pair (a short key, a value of up to 8 bytes) in one step.
        if let Some((key, value, len)) = decode_short_pair(rest) {
            self.rest = &rest[len..];
            return Ok((key, value));
        }
        // Near the end of the frame, or a longer form: each integer on its own.
        let (key, key_len) = decode_i32(rest).map_err(|source| FrameError::Int {
            field: "key",
            source,
        })?;
        let after_key = &rest[key_len..];
        let (value, value_len) = decode_i64(after_key).map_err(|source| FrameError::Int {
            field: "value",
            source,
        })?;
        self.rest = &after_key[value_len..];
        Ok((key, value))
    }
}

impl Iterator for Records<'_> {
    type Item = Result<Record, FrameError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let item = self
            .next_pair()
            .map(|(key, value)| Record::from_pair(key, value));
        if item.is_err() {
            self.rest = &[];
        }
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sleb128::Sleb128Error;

    /// The first BLOCK_COUNTER frame of the gatord 9.7.2 live session (after the `03 18 00 00 00` header).
    const OBSERVED: &[u8] = &[
        0x05, 0x00, 0x00, 0xbf, 0xf2, 0x18, 0xde, 0x00, 0x80, 0xe0, 0xe9, 0xcb, 0xda, 0x00, 0xdc,
        0x00, 0x80, 0xa0, 0xfa, 0xc8, 0x03, 0xe6, 0x00, 0x00,
    ];

    #[test]
    fn observed_frame_decodes() {
        let frame = BlockCounter::parse(&OBSERVED[1..]).unwrap();
        assert_eq!(frame.core, 0);
        let records: Vec<Record> = frame.records().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            records,
            [
                Record::Timestamp(407_871),
                Record::Value {
                    key: 0x5e,
                    value: 24_318_210_048
                },
                Record::Value {
                    key: 0x5c,
                    value: 958_304_256
                },
                Record::Value {
                    key: 0x66,
                    value: 0
                },
            ]
        );
        let mut out = Vec::new();
        BlockCounter::encode(0, records, &mut out);
        assert_eq!(out, OBSERVED);
    }

    #[test]
    fn many_markers_in_one_frame() {
        let records = [
            Record::Timestamp(10),
            Record::Core(1),
            Record::Value { key: 4, value: -5 },
            Record::Tid(77),
            Record::Value {
                key: 7,
                value: i64::MAX,
            },
            Record::Timestamp(20),
            Record::Core(2),
            Record::Value { key: 4, value: 6 },
        ];
        let mut out = Vec::new();
        BlockCounter::encode(0, records, &mut out);
        let frame = BlockCounter::parse(&out[1..]).unwrap();
        let back: Vec<Record> = frame.records().map(Result::unwrap).collect();
        assert_eq!(back, records);
    }

    #[test]
    fn key_without_value_is_an_error_then_iteration_stops() {
        let frame = BlockCounter::parse(&[0x00, 0x5e]).unwrap();
        let mut records = frame.records();
        assert_eq!(
            records.next(),
            Some(Err(FrameError::Int {
                field: "value",
                source: Sleb128Error::Truncated { read: 0 }
            }))
        );
        assert_eq!(records.next(), None);
    }

    #[test]
    fn truncated_key_is_an_error() {
        let frame = BlockCounter::parse(&[0x00, 0xde]).unwrap();
        assert!(matches!(
            frame.records().next(),
            Some(Err(FrameError::Int { field: "key", .. }))
        ));
    }

    #[test]
    fn missing_core_is_an_error() {
        assert!(matches!(
            BlockCounter::parse(&[]),
            Err(FrameError::Int { field: "core", .. })
        ));
    }

    #[test]
    fn negative_keys_are_values() {
        assert_eq!(
            Record::from_pair(-3, 1),
            Record::Value { key: -3, value: 1 }
        );
    }

    /// The simple walk: each pair decoded by the public SLEB128 decoders (themselves checked against a byte
    /// loop), stopping at the first error.
    fn walk_by_hand(mut rest: &[u8]) -> Vec<Result<Record, FrameError>> {
        let mut out = Vec::new();
        while !rest.is_empty() {
            let pair =
                decode_i32(rest)
                    .map_err(|source| FrameError::Int {
                        field: "key",
                        source,
                    })
                    .and_then(|(key, key_len)| {
                        let (value, value_len) = crate::sleb128::decode_i64(&rest[key_len..])
                            .map_err(|source| FrameError::Int {
                                field: "value",
                                source,
                            })?;
                        Ok((key, value, key_len + value_len))
                    });
            match pair {
                Ok((key, value, len)) => {
                    out.push(Ok(Record::from_pair(key, value)));
                    rest = &rest[len..];
                }
                Err(e) => {
                    out.push(Err(e));
                    break;
                }
            }
        }
        out
    }

    proptest::proptest! {
        /// Any bytes, malformed ones included, give the records and the error of the simple walk; long inputs
        /// take the word path away from the end and the cold path near it.
        #[test]
        fn records_match_the_walk_by_hand(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..160)) {
            let block = BlockCounter { core: 0, raw_records: &bytes };
            let got: Vec<_> = block.records().collect();
            proptest::prop_assert_eq!(got, walk_by_hand(&bytes));
        }

        /// Frames of valid pairs, values of every length, decode to what was encoded.
        #[test]
        fn encoded_pairs_decode(
            pairs in proptest::collection::vec(
                (proptest::prelude::any::<i32>(), proptest::prelude::any::<i64>(), 0u32..64),
                0..48,
            ),
        ) {
            let records: Vec<Record> = pairs
                .iter()
                .map(|&(key, value, shift)| Record::from_pair(key >> (shift % 32), value >> shift))
                .collect();
            let mut out = Vec::new();
            BlockCounter::encode(0, records.iter().copied(), &mut out);
            let block = BlockCounter::parse(&out[1..]).unwrap();
            let back: Vec<Record> = block.records().collect::<Result<_, _>>().unwrap();
            proptest::prop_assert_eq!(back, records);
        }
    }
}
