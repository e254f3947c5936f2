//! The values of a read of a perf event, laid out by its `read_format`: the READ field of a
//! PERF_RECORD_SAMPLE, or the words `read()` of the event fills ([`ReadValues::parse`]), as a reader that
//! samples by the kernel reads each group once more after the stop, for the counts since the last sample.
//!
//! With `PERF_FORMAT_GROUP`: `nr`, then `time_enabled` and `time_running` if asked for, then `nr` entries of
//! `value` (+ `id`) (+ `lost`), the group leader first. Without it: `value` (+ `time_enabled`)
//! (+ `time_running`) (+ `id`) (+ `lost`). Every value is the event's running total since it was enabled on
//! that CPU.

use crate::attr::ReadFormat;
use crate::record::{PerfRecordError, WordReader};
use crate::words::WordSlice;

/// The counter values of a read: a sample's READ field, or a `read()` of the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadValues<'a> {
    /// `PERF_FORMAT_GROUP`: every event of the group.
    Group {
        /// Total time the group was enabled, ns.
        time_enabled: Option<u64>,
        /// Total time the group was running on the PMU, ns (less than enabled when multiplexed).
        time_running: Option<u64>,
        /// The values.
        values: GroupValues<'a>,
    },
    /// One event.
    Single {
        /// The value.
        value: ReadValue,
        /// Total time enabled, ns.
        time_enabled: Option<u64>,
        /// Total time running, ns.
        time_running: Option<u64>,
    },
}

/// One event's value in a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadValue {
    /// The running total since the event was enabled on this CPU.
    pub value: u64,
    /// The event's perf id (`PERF_FORMAT_ID`).
    pub id: Option<u64>,
    /// Lost samples (`PERF_FORMAT_LOST`).
    pub lost: Option<u64>,
}

/// The validated entries of a group read; iterate with [`GroupValues::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupValues<'a> {
    /// The number of entries (`nr`).
    pub count: usize,
    read_format: ReadFormat,
    raw: WordSlice<'a>,
}

impl<'a> GroupValues<'a> {
    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = ReadValue> + 'a {
        let mut words = self.raw.iter();
        let format = self.read_format;
        // Validated when the read was decoded: every word decodes.
        let mut next = move || words.next().and_then(Result::ok);
        let count = self.count;
        (0..count).map_while(move |_| {
            let value = next()?;
            let id = if format.contains(ReadFormat::ID) {
                Some(next()?)
            } else {
                None
            };
            let lost = if format.contains(ReadFormat::LOST) {
                Some(next()?)
            } else {
                None
            };
            Some(ReadValue { value, id, lost })
        })
    }
}

impl<'a> ReadValues<'a> {
    /// Every value of the read (one for a single read).
    pub fn values(&self) -> impl Iterator<Item = ReadValue> + 'a {
        let (group, single) = match *self {
            ReadValues::Group { values, .. } => (Some(values), None),
            ReadValues::Single { value, .. } => (None, Some(value)),
        };
        group.into_iter().flat_map(|g| g.iter()).chain(single)
    }

    /// Decodes the words a `read()` of an event opened with `format` filled (the bytes the kernel wrote, as
    /// native-endian u64 words). The words must be exactly one read: fewer than its fields is
    /// [`PerfRecordError::ShortRecord`], an `nr` larger than the words hold
    /// [`PerfRecordError::GroupTooLarge`], words left after the last value [`PerfRecordError::ExtraWords`].
    pub fn parse(words: &'a [u64], format: ReadFormat) -> Result<ReadValues<'a>, PerfRecordError> {
        let mut reader = WordReader::plain(words);
        let read = ReadValues::read_from(&mut reader, format)?;
        match reader.left() {
            0 => Ok(read),
            extra => Err(PerfRecordError::ExtraWords {
                nr: match read {
                    ReadValues::Group { values, .. } => values.count as u64,
                    ReadValues::Single { .. } => 1,
                },
                extra,
            }),
        }
    }

    /// Reads one read laid out by `format` from `r`.
    pub(crate) fn read_from(
        r: &mut WordReader<'a>,
        format: ReadFormat,
    ) -> Result<ReadValues<'a>, PerfRecordError> {
        let optional = |bit: u64,
                        field: &'static str,
                        r: &mut WordReader<'a>|
         -> Result<Option<u64>, PerfRecordError> {
            if format.contains(bit) {
                r.word(field).map(Some)
            } else {
                Ok(None)
            }
        };
        if format.contains(ReadFormat::GROUP) {
            let nr = r.word("read nr")?;
            let time_enabled = optional(ReadFormat::TOTAL_TIME_ENABLED, "time_enabled", r)?;
            let time_running = optional(ReadFormat::TOTAL_TIME_RUNNING, "time_running", r)?;
            let per_entry = 1
                + usize::from(format.contains(ReadFormat::ID))
                + usize::from(format.contains(ReadFormat::LOST));
            let available = r.left();
            let count = usize::try_from(nr)
                .ok()
                .filter(|&n| n.checked_mul(per_entry).is_some_and(|w| w <= available))
                .ok_or(PerfRecordError::GroupTooLarge { nr, available })?;
            let raw = r.skip(count * per_entry, "read values")?;
            Ok(ReadValues::Group {
                time_enabled,
                time_running,
                values: GroupValues {
                    count,
                    read_format: format,
                    raw,
                },
            })
        } else {
            let value = r.word("read value")?;
            let time_enabled = optional(ReadFormat::TOTAL_TIME_ENABLED, "time_enabled", r)?;
            let time_running = optional(ReadFormat::TOTAL_TIME_RUNNING, "time_running", r)?;
            let id = optional(ReadFormat::ID, "read id", r)?;
            let lost = optional(ReadFormat::LOST, "read lost", r)?;
            Ok(ReadValues::Single {
                value: ReadValue { value, id, lost },
                time_enabled,
                time_running,
            })
        }
    }

    /// Appends a read of `values` laid out by `format` (a group read of them all with
    /// `PERF_FORMAT_GROUP`, else of the first, a zero value when there is none), as the kernel writes it:
    /// for encoders (a simulated kernel) and tests.
    pub fn encode(
        format: ReadFormat,
        time_enabled: u64,
        time_running: u64,
        values: &[ReadValue],
        out: &mut Vec<u64>,
    ) {
        let times = |out: &mut Vec<u64>| {
            if format.contains(ReadFormat::TOTAL_TIME_ENABLED) {
                out.push(time_enabled);
            }
            if format.contains(ReadFormat::TOTAL_TIME_RUNNING) {
                out.push(time_running);
            }
        };
        let entry = |v: &ReadValue, out: &mut Vec<u64>| {
            if format.contains(ReadFormat::ID) {
                out.push(v.id.unwrap_or(0));
            }
            if format.contains(ReadFormat::LOST) {
                out.push(v.lost.unwrap_or(0));
            }
        };
        if format.contains(ReadFormat::GROUP) {
            out.push(values.len() as u64);
            times(out);
            for v in values {
                out.push(v.value);
                entry(v, out);
            }
        } else {
            let v = values.first().copied().unwrap_or(ReadValue {
                value: 0,
                id: None,
                lost: None,
            });
            out.push(v.value);
            times(out);
            entry(&v, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The read format of a group whose every value has its id, with both times (what gatord and the
    /// kernel sampler open their groups with).
    const GROUP: ReadFormat = ReadFormat(
        ReadFormat::GROUP
            | ReadFormat::ID
            | ReadFormat::TOTAL_TIME_ENABLED
            | ReadFormat::TOTAL_TIME_RUNNING,
    );

    fn value(value: u64, id: u64) -> ReadValue {
        ReadValue {
            value,
            id: Some(id),
            lost: None,
        }
    }

    /// A read of a timer (id 41) leading one counter (id 42), 100 ns enabled and 90 running.
    fn group_read() -> Vec<u64> {
        let mut words = Vec::new();
        ReadValues::encode(GROUP, 100, 90, &[value(7, 41), value(9, 42)], &mut words);
        words
    }

    #[test]
    fn a_group_read_decodes_times_then_each_value_with_its_id() {
        let words = group_read();
        assert_eq!(words, [2, 100, 90, 7, 41, 9, 42]);
        let read = ReadValues::parse(&words, GROUP).unwrap();
        let ReadValues::Group {
            time_enabled,
            time_running,
            values,
        } = read
        else {
            panic!("a group read: {read:?}");
        };
        assert_eq!(
            (time_enabled, time_running, values.count),
            (Some(100), Some(90), 2)
        );
        assert_eq!(
            read.values().collect::<Vec<_>>(),
            [value(7, 41), value(9, 42)]
        );
    }

    #[test]
    fn a_read_of_one_event_and_of_a_group_without_ids() {
        let single = ReadFormat(ReadFormat::TOTAL_TIME_RUNNING | ReadFormat::ID | ReadFormat::LOST);
        let read = ReadValues::parse(&[5, 60, 8, 1], single).unwrap();
        assert_eq!(
            read,
            ReadValues::Single {
                value: ReadValue {
                    value: 5,
                    id: Some(8),
                    lost: Some(1)
                },
                time_enabled: None,
                time_running: Some(60),
            }
        );
        let bare = ReadFormat(ReadFormat::GROUP);
        let read = ReadValues::parse(&[2, 3, 4], bare).unwrap();
        let values: Vec<u64> = read.values().map(|v| v.value).collect();
        assert_eq!(values, [3, 4]);
        assert!(read.values().all(|v| v.id.is_none()));
    }

    #[test]
    fn every_cut_read_is_an_error_naming_what_is_missing() {
        let words = group_read();
        for len in 0..words.len() {
            let err = ReadValues::parse(&words[..len], GROUP).unwrap_err();
            let expected = match len {
                0 => PerfRecordError::ShortRecord { field: "read nr" },
                1 => PerfRecordError::ShortRecord {
                    field: "time_enabled",
                },
                2 => PerfRecordError::ShortRecord {
                    field: "time_running",
                },
                _ => PerfRecordError::GroupTooLarge {
                    nr: 2,
                    available: len - 3,
                },
            };
            assert_eq!(err, expected, "{len} word(s)");
        }
    }

    #[test]
    fn an_nr_that_is_not_the_number_of_values_read_is_an_error() {
        let mut words = group_read();
        words[0] = 3;
        assert_eq!(
            ReadValues::parse(&words, GROUP),
            Err(PerfRecordError::GroupTooLarge {
                nr: 3,
                available: 4
            })
        );
        words[0] = 1;
        assert_eq!(
            ReadValues::parse(&words, GROUP),
            Err(PerfRecordError::ExtraWords { nr: 1, extra: 2 })
        );
        words[0] = u64::MAX;
        assert!(matches!(
            ReadValues::parse(&words, GROUP),
            Err(PerfRecordError::GroupTooLarge { nr: u64::MAX, .. })
        ));
        // A read of one event followed by more words.
        assert_eq!(
            ReadValues::parse(&[5, 6], ReadFormat(0)),
            Err(PerfRecordError::ExtraWords { nr: 1, extra: 1 })
        );
    }
}
