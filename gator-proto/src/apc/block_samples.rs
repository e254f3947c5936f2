//! The values of a BLOCK_COUNTER frame with its markers applied: the one walker of the frame's records.
//!
//! Keys 0, 1 and 2 are timestamp, thread-id and core markers; each applies to the values after it, until the
//! next marker of its kind, and any number of them may appear in one frame. [`BlockSamples`] folds them into
//! every value it yields, so a reader of BLOCK_COUNTER frames never tracks marker state by hand.

use super::block_counter::{BlockCounter, Records, KEY_CORE, KEY_TID, KEY_TIMESTAMP};
use super::error::FrameError;

/// One counter value of a BLOCK_COUNTER frame, with the markers in force where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSample {
    /// The latest timestamp marker before the value (ns since capture start), `None` before the first.
    pub time: Option<i64>,
    /// The latest core marker before the value, `None` before the first (the frame's legacy core field is
    /// [`BlockCounter::core`](super::BlockCounter::core)).
    pub core: Option<i64>,
    /// The latest thread-id marker before the value, `None` before the first.
    pub tid: Option<i64>,
    /// The counter key (map it to a name with the `captured` XML).
    pub key: i32,
    /// The raw counter value.
    pub value: i64,
}

/// Iterator over the values of a BLOCK_COUNTER frame with the markers applied
/// ([`BlockCounter::samples`](super::BlockCounter::samples)); allocation-free.
///
/// Each item is a value or, once, the error that stops iteration (the values before it have been yielded).
/// [`BlockSamples::latest_time`] tells the greatest timestamp marker seen so far, including markers that no
/// value follows.
#[derive(Debug, Clone)]
pub struct BlockSamples<'a> {
    records: Records<'a>,
    time: Option<i64>,
    latest_time: Option<i64>,
    core: Option<i64>,
    tid: Option<i64>,
}

impl<'a> BlockCounter<'a> {
    /// The counter values with the timestamp, core and thread-id markers applied: what a reader of the frame
    /// wants, without tracking the markers by hand. Each item is a value or, once, the error that stops
    /// iteration.
    #[inline]
    pub fn samples(&self) -> BlockSamples<'a> {
        BlockSamples::new(self.records())
    }
}

impl<'a> BlockSamples<'a> {
    fn new(records: Records<'a>) -> BlockSamples<'a> {
        BlockSamples {
            records,
            time: None,
            latest_time: None,
            core: None,
            tid: None,
        }
    }

    /// The timestamp marker in force at this point of the frame.
    pub fn time(&self) -> Option<i64> {
        self.time
    }

    /// The greatest timestamp marker read so far.
    pub fn latest_time(&self) -> Option<i64> {
        self.latest_time
    }

    /// The core marker in force at this point of the frame.
    pub fn core(&self) -> Option<i64> {
        self.core
    }

    /// The thread-id marker in force at this point of the frame.
    pub fn tid(&self) -> Option<i64> {
        self.tid
    }
}

impl Iterator for BlockSamples<'_> {
    type Item = Result<BlockSample, FrameError>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (key, value) = match self.records.next_raw()? {
                Ok(pair) => pair,
                Err(e) => return Some(Err(e)),
            };
            match key {
                KEY_TIMESTAMP => {
                    self.time = Some(value);
                    self.latest_time = Some(match self.latest_time {
                        Some(latest) if latest > value => latest,
                        _ => value,
                    });
                }
                KEY_CORE => self.core = Some(value),
                KEY_TID => self.tid = Some(value),
                key => {
                    return Some(Ok(BlockSample {
                        time: self.time,
                        core: self.core,
                        tid: self.tid,
                        key,
                        value,
                    }))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apc::Record;
    use proptest::prelude::*;

    fn frame(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        BlockCounter::encode(3, records.iter().copied(), &mut out);
        out
    }

    /// The simple path: every record walked by hand, the markers tracked in local variables.
    fn by_hand(block: &BlockCounter<'_>) -> (Vec<Result<BlockSample, FrameError>>, Option<i64>) {
        let (mut time, mut core, mut tid, mut latest) = (None, None, None, None::<i64>);
        let mut out = Vec::new();
        for record in block.records() {
            match record {
                Ok(Record::Timestamp(t)) => {
                    time = Some(t);
                    latest = Some(latest.map_or(t, |l| l.max(t)));
                }
                Ok(Record::Core(c)) => core = Some(c),
                Ok(Record::Tid(t)) => tid = Some(t),
                Ok(Record::Value { key, value }) => out.push(Ok(BlockSample {
                    time,
                    core,
                    tid,
                    key,
                    value,
                })),
                Err(e) => out.push(Err(e)),
            }
        }
        (out, latest)
    }

    #[test]
    fn markers_apply_to_the_values_after_them() {
        let bytes = frame(&[
            Record::Value { key: 4, value: 1 },
            Record::Timestamp(20),
            Record::Core(1),
            Record::Value { key: 6, value: 2 },
            Record::Tid(9),
            Record::Timestamp(10),
            Record::Value { key: 4, value: 3 },
            Record::Timestamp(5),
        ]);
        let block = BlockCounter::parse(&bytes[1..]).unwrap();
        let mut samples = block.samples();
        let got: Vec<_> = samples.by_ref().map(Result::unwrap).collect();
        let sample = |time, core, tid, key, value| BlockSample {
            time,
            core,
            tid,
            key,
            value,
        };
        assert_eq!(
            got,
            [
                sample(None, None, None, 4, 1),
                sample(Some(20), Some(1), None, 6, 2),
                sample(Some(10), Some(1), Some(9), 4, 3),
            ]
        );
        assert_eq!((samples.time(), samples.latest_time()), (Some(5), Some(20)));
        assert_eq!((samples.core(), samples.tid()), (Some(1), Some(9)));
    }

    #[test]
    fn a_bad_record_ends_the_walk_after_the_values_before_it() {
        // A value, then a timestamp marker whose value is cut off.
        let block = BlockCounter::parse(&[0x00, 0x04, 0x07, 0x00, 0xff]).unwrap();
        let mut samples = block.samples();
        assert_eq!(samples.next().unwrap().unwrap().value, 7);
        assert!(matches!(
            samples.next(),
            Some(Err(FrameError::Int { field: "value", .. }))
        ));
        assert_eq!(samples.next(), None);
    }

    fn record() -> impl Strategy<Value = Record> {
        prop_oneof![
            any::<i64>().prop_map(Record::Timestamp),
            any::<i64>().prop_map(Record::Tid),
            any::<i64>().prop_map(Record::Core),
            (any::<i32>(), any::<i64>()).prop_map(|(key, value)| Record::from_pair(key, value)),
        ]
    }

    proptest! {
        #[test]
        fn matches_the_walk_by_hand(records in proptest::collection::vec(record(), 0..64)) {
            let bytes = frame(&records);
            let block = BlockCounter::parse(&bytes[1..]).unwrap();
            let mut samples = block.samples();
            let got: Vec<_> = samples.by_ref().collect();
            let (expected, latest) = by_hand(&block);
            prop_assert_eq!(got, expected);
            prop_assert_eq!(samples.latest_time(), latest);
        }

        #[test]
        fn arbitrary_bytes_match_the_walk_by_hand(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            let Ok(block) = BlockCounter::parse(&bytes) else { return Ok(()) };
            let got: Vec<_> = block.samples().collect();
            prop_assert_eq!(got, by_hand(&block).0);
        }
    }
}
