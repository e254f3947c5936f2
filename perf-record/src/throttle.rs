//! PERF_RECORD_THROTTLE and PERF_RECORD_UNTHROTTLE: the kernel stopped a sampling event that interrupted too
//! often (more samples than `perf_event_max_sample_rate` allows per tick), and let it sample again at a
//! later tick. Body: `time` (on the event's clock), `id` (the event's primary id: its parent's, for an
//! inherited event), `stream_id` (the event's own id), then the `sample_id_all` fields when the event asked
//! for them.
//!
//! [`Throttling`] is the account a reader keeps of them: how often, for how long, and which events are
//! throttled now.

use std::collections::HashMap;

use crate::record::{
    record_header, PerfRecord, PerfRecordError, WordReader, PERF_RECORD_THROTTLE,
    PERF_RECORD_UNTHROTTLE,
};

/// A decoded PERF_RECORD_THROTTLE or PERF_RECORD_UNTHROTTLE (the record's type tells which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThrottleRecord {
    /// When, on the event's clock (its `clockid` with `use_clockid`), ns.
    pub time: u64,
    /// The event's primary id (its parent's for an inherited event).
    pub id: u64,
    /// The event's own id.
    pub stream_id: u64,
}

impl ThrottleRecord {
    /// Decodes the body of a THROTTLE or UNTHROTTLE record (its type is not checked; [`PerfRecord::decode`]
    /// does).
    pub fn parse(record: &PerfRecord<'_>) -> Result<ThrottleRecord, PerfRecordError> {
        let mut r = WordReader::new(record);
        Ok(ThrottleRecord {
            time: r.word("throttle time")?,
            id: r.word("throttle id")?,
            stream_id: r.word("throttle stream_id")?,
        })
    }

    /// Appends the PERF_RECORD_THROTTLE the kernel writes without `sample_id_all`: for encoders (a
    /// simulated kernel) and tests.
    pub fn encode_throttle(&self, out: &mut Vec<u64>) {
        self.encode(PERF_RECORD_THROTTLE, out);
    }

    /// Appends the PERF_RECORD_UNTHROTTLE the kernel writes without `sample_id_all`.
    pub fn encode_unthrottle(&self, out: &mut Vec<u64>) {
        self.encode(PERF_RECORD_UNTHROTTLE, out);
    }

    fn encode(&self, kind: u32, out: &mut Vec<u64>) {
        out.extend([
            record_header(kind, 0, 3),
            self.time,
            self.id,
            self.stream_id,
        ]);
    }
}

/// The throttling of sampling events, from their THROTTLE and UNTHROTTLE records in order: how often an
/// event was throttled, how long in all, and since when each event throttled now has been.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Throttling {
    count: u64,
    total_ns: u64,
    /// Each event throttled now (by its own id) with the time it was throttled.
    open: HashMap<u64, u64>,
}

impl Throttling {
    /// An account of no throttling.
    pub fn new() -> Throttling {
        Throttling::default()
    }

    /// The event of `record` was throttled: counted, and throttled from its time (a second THROTTLE
    /// before the UNTHROTTLE, which the kernel does not write, is counted and keeps the first time).
    pub fn throttled(&mut self, record: &ThrottleRecord) {
        self.count = self.count.saturating_add(1);
        self.open.entry(record.stream_id).or_insert(record.time);
    }

    /// The event of `record` samples again: the stretch since its THROTTLE is added to the time
    /// throttled. An UNTHROTTLE without a THROTTLE before it (written before the reader began) is ignored.
    pub fn unthrottled(&mut self, record: &ThrottleRecord) {
        if let Some(since) = self.open.remove(&record.stream_id) {
            self.add(since, record.time);
        }
    }

    /// Ends every stretch still open at `time` (the events' clock): the events throttled when sampling
    /// stopped were throttled until then.
    pub fn end(&mut self, time: u64) {
        for (_, since) in std::mem::take(&mut self.open) {
            self.add(since, time);
        }
    }

    fn add(&mut self, since: u64, until: u64) {
        self.total_ns = self.total_ns.saturating_add(until.saturating_sub(since));
    }

    /// Times an event was throttled (THROTTLE records).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// How long the events were throttled, summed over them, ns: the stretches ended so far.
    pub fn total_ns(&self) -> u64 {
        self.total_ns
    }

    /// How many events are throttled now.
    pub fn throttled_now(&self) -> usize {
        self.open.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{PerfRecords, TypedRecord};

    fn at(time: u64, stream_id: u64) -> ThrottleRecord {
        ThrottleRecord {
            time,
            id: stream_id,
            stream_id,
        }
    }

    #[test]
    fn throttle_records_round_trip_by_their_type() {
        let mut words = Vec::new();
        at(1_000, 7).encode_throttle(&mut words);
        at(1_500, 7).encode_unthrottle(&mut words);
        let typed: Vec<_> = PerfRecords::raw(&words)
            .typed()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            typed,
            [
                TypedRecord::Throttle(at(1_000, 7)),
                TypedRecord::Unthrottle(at(1_500, 7))
            ]
        );
    }

    #[test]
    fn a_short_throttle_record_is_an_error_and_the_records_after_it_still_come() {
        let mut words = vec![record_header(PERF_RECORD_THROTTLE, 0, 2), 1_000, 7];
        at(2_000, 7).encode_unthrottle(&mut words);
        let mut typed = PerfRecords::raw(&words).typed();
        assert_eq!(
            typed.next(),
            Some(Err(PerfRecordError::ShortRecord {
                field: "throttle stream_id"
            }))
        );
        assert_eq!(
            typed.next(),
            Some(Ok(TypedRecord::Unthrottle(at(2_000, 7))))
        );
    }

    #[test]
    fn stretches_are_counted_and_timed_per_event() {
        let mut throttling = Throttling::new();
        throttling.throttled(&at(1_000, 7));
        throttling.throttled(&at(1_200, 8));
        throttling.unthrottled(&at(1_500, 7));
        // An unthrottle of an event not throttled since the reader began.
        throttling.unthrottled(&at(1_600, 9));
        throttling.throttled(&at(2_000, 7));
        assert_eq!((throttling.count(), throttling.total_ns()), (3, 500));
        assert_eq!(throttling.throttled_now(), 2);
        // Still throttled at the stop: until then.
        throttling.end(2_250);
        assert_eq!(throttling.total_ns(), 500 + 1_050 + 250);
        assert_eq!(throttling.throttled_now(), 0);
        // A time before the throttle (never the kernel's) adds nothing.
        throttling.throttled(&at(5_000, 7));
        throttling.unthrottled(&at(4_000, 7));
        assert_eq!(throttling.total_ns(), 1_800);
    }
}
