//! [`PerfCounterTracker`]: turns the sample records of perf rings into counter samples
//! `(time since capture start, core, key, value)`. It is fed typed: each event's key and attribute, the perf ids
//! of the events opened, then each CPU's records, as plain words or as gatord's packed PERF_DATA words (gator-proto
//! adapts gatord's SUMMARY, PERF_ATTRS and PERF_DATA frames to these calls).
//!
//! What it relies on (gatord 9.7.2, `daemon/linux/perf/PerfEventGroup.cpp` and the recordings; a local perf
//! reader that opens its events the same way gets the same):
//! - PEA messages give each counter key its `perf_event_attr`; KEYS messages map the perf ids of the events
//!   gatord opened (one per CPU) to keys.
//! - Counter values travel as the READ field of PERF_RECORD_SAMPLE records in each CPU's ring (the PERF_DATA
//!   frame's `cpu`): a group leader's sample carries the running totals of every event of its group
//!   (`PERF_FORMAT_GROUP`, each value with its id); an event sampled on its own carries its own total.
//! - An event sampled by its own overflows without READ (event-based sampling, as gatord samples the events
//!   of a metric counter) carries its PERIOD: each sample counts that many events, and the running total is
//!   the sum of the periods.
//! - METRIC_EVENT_KEY messages link a metric counter's key to the events it is computed from
//!   ([`PerfCounterTracker::metric_events`]).
//! - gatord sets `use_clockid` with CLOCK_MONOTONIC_RAW, the clock of its SUMMARY frame, so a record time minus
//!   the SUMMARY's CLOCK_MONOTONIC_RAW is nanoseconds since capture start, the time base of BLOCK_COUNTER frames.
//!
//! The other records a reader needs are decoded the same way: PERF_RECORD_LOST summed
//! ([`PerfCounterTracker::lost_records`]), PERF_RECORD_THROTTLE and UNTHROTTLE timed per event
//! ([`PerfCounterTracker::throttling`]). A reader that samples by the kernel reads each group once more after
//! the stop, for the counts since its last sample: [`PerfCounterTracker::handle_read`] takes those words as
//! `read()` filled them, and turns them into samples as it does a sample's READ field.
//!
//! What a value means: perf values are running totals since the event was enabled on that CPU. Each sample is
//! turned into [`PerfCounterSample::delta`], the increase since the previous reading of the same event on the
//! same CPU (for the first reading, the total since the event was enabled) — what a delta counter counts in
//! the interval that ends at the sample's time. Totals only grow, so a lost record makes the next delta cover
//! the gap rather than losing counts. The running total is kept in [`PerfCounterSample::total`].

use std::collections::HashMap;

use thiserror::Error;

use crate::attr::{AttrError, PerfEventAttr};
use crate::read::ReadValues;
use crate::record::{PerfRecord, PerfRecordError, PerfRecords, TypedRecord};
use crate::sample::{SampleLayout, SampleRecord};
use crate::throttle::Throttling;

/// One reading of one perf-backed counter on one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfCounterSample {
    /// Nanoseconds since capture start on gatord's clock (the SUMMARY's CLOCK_MONOTONIC_RAW).
    pub time_ns: i64,
    /// The CPU whose ring the sample came from.
    pub core: i32,
    /// The counter key.
    pub key: i32,
    /// The event's running total on this core since it was enabled.
    pub total: u64,
    /// The increase since the previous reading of this event on this core (the total for the first reading).
    pub delta: u64,
}

/// What an event is to the metric computed from it (gatord's `MetricEventType`, whose numbers its source says
/// never change; sent in METRIC_EVENT_KEY messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MetricEventRole {
    /// 0: one of the metric's own events.
    Event,
    /// 1: the cycle counter, sent for every metric (each group of metric events counts cycles).
    CycleCounter,
    /// 2: a counter of function returns, with which the host can tell whether a short sampling window
    /// crossed a return (strobing mode only).
    ReturnCounter,
    /// A number this decoder does not know.
    Unknown(i32),
}

impl MetricEventRole {
    /// The role numbered `value` on the wire.
    pub fn from_wire(value: i32) -> MetricEventRole {
        match value {
            0 => MetricEventRole::Event,
            1 => MetricEventRole::CycleCounter,
            2 => MetricEventRole::ReturnCounter,
            other => MetricEventRole::Unknown(other),
        }
    }

    /// Its number on the wire.
    pub fn to_wire(self) -> i32 {
        match self {
            MetricEventRole::Event => 0,
            MetricEventRole::CycleCounter => 1,
            MetricEventRole::ReturnCounter => 2,
            MetricEventRole::Unknown(other) => other,
        }
    }
}

/// One event a metric counter is computed from (a METRIC_EVENT_KEY message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MetricEvent {
    /// The PMU event number.
    pub code: i32,
    /// The key its values arrive under.
    pub key: i32,
    /// What it is to the metric.
    pub role: MetricEventRole,
}

/// Whether, and why not, a key's values reach the perf data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Delivery {
    /// No PEA message announced the key (yet): it is not a perf-backed counter of this capture.
    NotAnnounced,
    /// Announced, but no KEYS message gave it a perf id: gatord could not open the event on any CPU.
    NotOpened,
    /// Opened as a stand-alone counting event (no sample period, no group read): gatord never reads it, so
    /// its values are never sent. gatord does this for a counter configured without an event-based-sampling
    /// `count`.
    CountingOnly,
    /// Its values arrive in sample records.
    Sampled,
}

/// Why perf frames could not be turned into samples. Samples decoded before the error are kept.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TrackerError {
    /// A PEA message's attribute could not be decoded.
    #[error("perf_event_attr of key {key:#x}")]
    Attr {
        /// The key.
        key: i32,
        /// Why.
        #[source]
        source: AttrError,
    },
    /// A perf record could not be decoded.
    #[error("perf record on cpu {cpu}")]
    Record {
        /// The CPU of the frame.
        cpu: i32,
        /// Why.
        #[source]
        source: PerfRecordError,
    },
    /// A read of an event (its words as `read()` filled them) could not be decoded.
    #[error("read of perf id {id} on cpu {cpu}")]
    Read {
        /// The CPU of the read event.
        cpu: i32,
        /// The perf id of the read event.
        id: u64,
        /// Why.
        #[source]
        source: PerfRecordError,
    },
    /// A sample's id matches no announced event.
    #[error("sample id {id} on cpu {cpu} belongs to no announced event")]
    UnknownId {
        /// The CPU of the frame.
        cpu: i32,
        /// The id.
        id: u64,
    },
    /// The announced events place the sample id at different words, so a sample's writer cannot be found.
    #[error("the announced events disagree on where a sample's id is")]
    AmbiguousSampleId,
    /// A sample carrying values arrived before the SUMMARY frame that gives the clock base.
    #[error("perf sample before the SUMMARY frame: no clock base")]
    NoClockBase,
    /// The event stamps records on another clock than CLOCK_MONOTONIC_RAW (or without time), so its samples
    /// cannot be placed on gatord's time line.
    #[error("key {key:#x} stamps perf records on clock {clockid} (use_clockid {use_clockid}), not CLOCK_MONOTONIC_RAW")]
    Clock {
        /// The key of the event that wrote the sample.
        key: i32,
        /// The attribute's `use_clockid`.
        use_clockid: bool,
        /// The attribute's `clockid`.
        clockid: i32,
    },
    /// A running total went down.
    #[error("key {key:#x} on cpu {cpu} went from {previous} down to {total}")]
    Decreased {
        /// The key.
        key: i32,
        /// The CPU.
        cpu: i32,
        /// The previous total.
        previous: u64,
        /// The new total.
        total: u64,
    },
}

/// Sans-IO state that turns perf sample records into [`PerfCounterSample`]s.
///
/// Calls: announce the events first — [`PerfCounterTracker::set_clock_base`],
/// [`PerfCounterTracker::register_event`] and [`PerfCounterTracker::register_ids`] (and
/// [`PerfCounterTracker::register_metric_event`]) — then give each CPU's records, in order, to
/// [`PerfCounterTracker::handle_words`] (plain words) or [`PerfCounterTracker::handle_records`] (any
/// [`PerfRecords`]), and a read of a group to [`PerfCounterTracker::handle_read`]; samples are appended to
/// `out`. gator-proto feeds it gatord's frames the same way. Getters: [`PerfCounterTracker::attr`],
/// [`PerfCounterTracker::key_of`], [`PerfCounterTracker::delivery`], [`PerfCounterTracker::lost_records`],
/// [`PerfCounterTracker::sample_records`], [`PerfCounterTracker::throttling`] (with
/// [`PerfCounterTracker::end_throttling`] when sampling stops).
#[derive(Debug, Clone, Default)]
pub struct PerfCounterTracker {
    clock_base_ns: Option<i64>,
    attrs: HashMap<i32, PerfEventAttr>,
    ids: HashMap<u64, i32>,
    totals: HashMap<(i32, u64), u64>,
    id_word: Option<Option<usize>>,
    lost_records: u64,
    sample_records: u64,
    throttling: Throttling,
    metrics: HashMap<i32, Vec<MetricEvent>>,
}

impl PerfCounterTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> PerfCounterTracker {
        PerfCounterTracker::default()
    }

    /// Sets the clock base directly: CLOCK_MONOTONIC_RAW at capture start, ns.
    pub fn set_clock_base(&mut self, monotonic_raw_ns: i64) {
        self.clock_base_ns = Some(monotonic_raw_ns);
    }

    /// Announces the event whose values arrive under `key`, with its attribute (what a PEA message says).
    pub fn register_event(&mut self, key: i32, attr: PerfEventAttr) {
        self.attrs.insert(key, attr);
        self.id_word = None;
    }

    /// Maps perf ids to the keys of the events they were opened for (what a KEYS message says).
    pub fn register_ids(&mut self, ids: impl IntoIterator<Item = (u64, i32)>) {
        self.ids.extend(ids);
    }

    /// Links metric counter `metric_key` to an event it is computed from (what a METRIC_EVENT_KEY message
    /// says); an event already linked is not listed twice.
    pub fn register_metric_event(&mut self, metric_key: i32, event: MetricEvent) {
        let events = self.metrics.entry(metric_key).or_default();
        if !events.contains(&event) {
            events.push(event);
        }
    }

    /// Decodes the records in plain `words` read from `cpu`'s perf ring (whole records, as the kernel writes
    /// them) and appends one sample per value read. PERF_RECORD_LOST is counted, PERF_RECORD_THROTTLE and
    /// UNTHROTTLE are timed, other records are skipped. Decoding goes on past a bad record (its boundary is
    /// known); the first error is returned after the samples of all the words.
    pub fn handle_words(
        &mut self,
        cpu: i32,
        words: &[u64],
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        self.handle_records(cpu, PerfRecords::raw(words), out)
    }

    /// Decodes `records`, all from `cpu`'s ring: packed as gatord sends them or plain, as
    /// [`PerfCounterTracker::handle_words`] says.
    pub fn handle_records(
        &mut self,
        cpu: i32,
        records: PerfRecords<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        let mut first_error = None;
        for record in records {
            let record = match record {
                Ok(record) => record,
                Err(source) => {
                    first_error.get_or_insert(TrackerError::Record { cpu, source });
                    break;
                }
            };
            let handled = match record.decode() {
                Ok(TypedRecord::Sample(record)) => {
                    self.sample_records += 1;
                    self.sample(cpu, &record, out)
                }
                Ok(TypedRecord::Lost(lost)) => {
                    self.lost_records = self.lost_records.saturating_add(lost.lost);
                    Ok(())
                }
                Ok(TypedRecord::Throttle(throttle)) => {
                    self.throttling.throttled(&throttle);
                    Ok(())
                }
                Ok(TypedRecord::Unthrottle(throttle)) => {
                    self.throttling.unthrottled(&throttle);
                    Ok(())
                }
                Ok(_) => Ok(()),
                Err(source) => Err(TrackerError::Record { cpu, source }),
            };
            if let Err(err) = handled {
                first_error.get_or_insert(err);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Decodes `words`, what a `read()` of the event with perf id `id` on `cpu` filled (with
    /// `PERF_FORMAT_GROUP`, its whole group, the leader first), read at `time` on the events' clock, and
    /// appends one sample per value read, as for the READ field of a sample the event wrote at that time.
    /// A reader that samples by the kernel reads each group so after the stop, for the counts since the
    /// group's last sample.
    pub fn handle_read(
        &mut self,
        cpu: i32,
        id: u64,
        time: u64,
        words: &[u64],
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        let (key, attr) = self.event(cpu, id)?;
        let read = ReadValues::parse(words, attr.read_format)
            .map_err(|source| TrackerError::Read { cpu, id, source })?;
        let time_ns = self.time_ns(key, &attr, Some(time))?;
        self.read_values(cpu, id, time_ns, read, out)
    }

    /// The key and attribute of the event with perf id `id`.
    fn event(&self, cpu: i32, id: u64) -> Result<(i32, PerfEventAttr), TrackerError> {
        self.ids
            .get(&id)
            .and_then(|key| Some((*key, *self.attrs.get(key)?)))
            .ok_or(TrackerError::UnknownId { cpu, id })
    }

    /// A record time of the event of `key` as ns since the clock base.
    fn time_ns(
        &self,
        key: i32,
        attr: &PerfEventAttr,
        time: Option<u64>,
    ) -> Result<i64, TrackerError> {
        let base = self.clock_base_ns.ok_or(TrackerError::NoClockBase)?;
        match time {
            Some(time) if attr.on_monotonic_raw() => Ok((time as i64).wrapping_sub(base)),
            _ => Err(TrackerError::Clock {
                key,
                use_clockid: attr.use_clockid(),
                clockid: attr.clockid,
            }),
        }
    }

    fn sample(
        &mut self,
        cpu: i32,
        record: &PerfRecord<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        let Some(id_word) = self.id_word() else {
            return Err(TrackerError::AmbiguousSampleId);
        };
        let id = record
            .body()
            .nth(id_word)
            .and_then(Result::ok)
            .ok_or(TrackerError::Record {
                cpu,
                source: PerfRecordError::ShortRecord { field: "sample id" },
            })?;
        let (key, attr) = self.event(cpu, id)?;
        let layout = SampleLayout {
            sample_type: attr.sample_type,
            read_format: attr.read_format,
        };
        let sample = SampleRecord::parse(record, layout)
            .map_err(|source| TrackerError::Record { cpu, source })?;
        if sample.read.is_none() && sample.period.is_none() {
            return Ok(());
        }
        let time_ns = self.time_ns(key, &attr, sample.time)?;
        let Some(read) = sample.read else {
            // Event-based sampling: the sample stands for `period` events of its writer.
            let period = sample.period.unwrap_or(0);
            let total = self.totals.entry((cpu, id)).or_insert(0);
            *total = total.saturating_add(period);
            out.push(PerfCounterSample {
                time_ns,
                core: cpu,
                key,
                total: *total,
                delta: period,
            });
            return Ok(());
        };
        self.read_values(cpu, id, time_ns, read, out)
    }

    /// Appends a sample of every value of `read`, read from the event with perf id `id` on `cpu` at
    /// `time_ns`: each the increase of its event's total since its previous reading.
    fn read_values(
        &mut self,
        cpu: i32,
        id: u64,
        time_ns: i64,
        read: ReadValues<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        let mut first_error = None;
        for value in read.values() {
            // A single read without PERF_FORMAT_ID is the writer's own value.
            let value_id = value.id.unwrap_or(id);
            let Some(&value_key) = self.ids.get(&value_id) else {
                first_error.get_or_insert(TrackerError::UnknownId { cpu, id: value_id });
                continue;
            };
            let previous = self
                .totals
                .insert((cpu, value_id), value.value)
                .unwrap_or(0);
            let Some(delta) = value.value.checked_sub(previous) else {
                first_error.get_or_insert(TrackerError::Decreased {
                    key: value_key,
                    cpu,
                    previous,
                    total: value.value,
                });
                continue;
            };
            out.push(PerfCounterSample {
                time_ns,
                core: cpu,
                key: value_key,
                total: value.value,
                delta,
            });
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Where the sample id is, the same for every announced event that samples (cached until the next PEA).
    fn id_word(&mut self) -> Option<usize> {
        if let Some(cached) = self.id_word {
            return cached;
        }
        let mut words = self.attrs.values().map(|a| a.sample_type.id_word());
        let first = words.next().flatten();
        let agreed = if words.all(|w| w == first) {
            first
        } else {
            None
        };
        self.id_word = Some(agreed);
        agreed
    }

    /// The attribute announced for `key`.
    pub fn attr(&self, key: i32) -> Option<&PerfEventAttr> {
        self.attrs.get(&key)
    }

    /// Every announced key with its attribute, in no particular order.
    pub fn attrs(&self) -> impl Iterator<Item = (i32, &PerfEventAttr)> {
        self.attrs.iter().map(|(k, a)| (*k, a))
    }

    /// The key a perf id belongs to.
    pub fn key_of(&self, id: u64) -> Option<i32> {
        self.ids.get(&id).copied()
    }

    /// Whether `key`'s values reach the perf data, from what has been announced so far.
    pub fn delivery(&self, key: i32) -> Delivery {
        let Some(attr) = self.attrs.get(&key) else {
            return Delivery::NotAnnounced;
        };
        if !self.ids.values().any(|&k| k == key) {
            return Delivery::NotOpened;
        }
        if attr.reaches_perf_data() {
            Delivery::Sampled
        } else {
            Delivery::CountingOnly
        }
    }

    /// The events metric counter `metric_key` is computed from, in the order gatord announced them (empty when
    /// it announced none: the metric was not enabled, or its events did not fit the PMU).
    pub fn metric_events(&self, metric_key: i32) -> &[MetricEvent] {
        self.metrics.get(&metric_key).map_or(&[], Vec::as_slice)
    }

    /// Records the kernel reported lost (PERF_RECORD_LOST), summed.
    pub fn lost_records(&self) -> u64 {
        self.lost_records
    }

    /// PERF_RECORD_SAMPLE records seen.
    pub fn sample_records(&self) -> u64 {
        self.sample_records
    }

    /// The events' throttling, from the PERF_RECORD_THROTTLE and UNTHROTTLE records seen.
    pub fn throttling(&self) -> &Throttling {
        &self.throttling
    }

    /// Ends every throttled stretch still open at `time` (the events' clock): sampling stopped then.
    pub fn end_throttling(&mut self, time: u64) {
        self.throttling.end(time);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::{ReadFormat, SampleType};
    use crate::lost::LostRecord;
    use crate::read::ReadValue;
    use crate::record::{record_header, PERF_RECORD_LOST, PERF_RECORD_SAMPLE};
    use crate::sleb128::encode_i64;
    use crate::throttle::ThrottleRecord;
    use crate::words::WordSlice;

    const BASE: i64 = 1_000_000;
    const LEADER: i32 = 0x10;
    const CLOCK: i32 = 0x12;
    /// gatord's group layout: IDENTIFIER, IP, TID, TIME, READ; group read with times and ids.
    const LAYOUT: SampleLayout = SampleLayout {
        sample_type: SampleType(0x10217),
        read_format: ReadFormat(0xf),
    };

    fn attr(period: u64) -> PerfEventAttr {
        PerfEventAttr {
            kind: 1,
            size: 128,
            config: 0,
            sample_period_or_freq: period,
            sample_type: LAYOUT.sample_type,
            read_format: LAYOUT.read_format,
            flags: 1 << 25,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: crate::attr::CLOCK_MONOTONIC_RAW,
        }
    }

    fn tracker() -> PerfCounterTracker {
        let mut tracker = PerfCounterTracker::new();
        tracker.register_event(LEADER, attr(1));
        tracker.register_event(CLOCK, attr(991_080));
        tracker.register_ids([(100, LEADER), (101, CLOCK)]);
        tracker.set_clock_base(BASE);
        tracker
    }

    /// A sample of `id` at `time` ns after the base reading `(value, id)` pairs.
    fn sample(id: u64, time: i64, values: &[(u64, u64)], out: &mut Vec<u64>) {
        let read: Vec<_> = values
            .iter()
            .map(|&(value, id)| ReadValue {
                value,
                id: Some(id),
                lost: None,
            })
            .collect();
        SampleRecord {
            identifier: Some(id),
            ip: Some(0x400000),
            pid_tid: Some((1, 1)),
            time: Some((BASE + time) as u64),
            addr: None,
            id: None,
            stream_id: None,
            cpu: None,
            period: None,
            read: None,
            tail: WordSlice::default(),
        }
        .encode_words(LAYOUT, 0, 0, &read, out);
    }

    /// Samples, a lost record, a sample of an unknown id, then a record cut short.
    fn records() -> Vec<u64> {
        let mut words = Vec::new();
        sample(101, 10, &[(3, 100), (1000, 101)], &mut words);
        words.extend([record_header(PERF_RECORD_LOST, 0, 2), 100, 4]);
        sample(999, 20, &[(4, 100)], &mut words);
        sample(100, 25, &[(5, 100), (1600, 101)], &mut words);
        words.push(record_header(PERF_RECORD_SAMPLE, 0, 5));
        words
    }

    #[test]
    fn plain_words_become_deltas_and_errors_keep_the_samples_around_them() {
        let mut tracker = tracker();
        let mut out = Vec::new();
        let result = tracker.handle_words(1, &records(), &mut out);
        assert_eq!(result, Err(TrackerError::UnknownId { cpu: 1, id: 999 }));
        let got: Vec<_> = out
            .iter()
            .map(|s| (s.time_ns, s.core, s.key, s.total, s.delta))
            .collect();
        assert_eq!(
            got,
            [
                (10, 1, LEADER, 3, 3),
                (10, 1, CLOCK, 1000, 1000),
                (25, 1, LEADER, 5, 2),
                (25, 1, CLOCK, 1600, 600)
            ]
        );
        assert_eq!((tracker.lost_records(), tracker.sample_records()), (4, 3));
        assert_eq!(tracker.delivery(CLOCK), Delivery::Sampled);
        assert_eq!(tracker.delivery(0x5e), Delivery::NotAnnounced);
    }

    #[test]
    fn packed_and_plain_words_give_the_same_samples() {
        let words = records();
        let mut packed = Vec::new();
        for &word in &words {
            encode_i64(word as i64, &mut packed);
        }
        let mut plain = tracker();
        let mut from_plain = Vec::new();
        let plain_result = plain.handle_words(2, &words, &mut from_plain);
        let mut framed = tracker();
        let mut from_packed = Vec::new();
        let packed_result = framed.handle_records(
            2,
            PerfRecords::new(WordSlice::Packed(&packed)),
            &mut from_packed,
        );
        assert_eq!(from_plain, from_packed);
        assert_eq!(from_plain.len(), 4);
        assert_eq!(plain_result, packed_result);
        assert_eq!(
            (plain.lost_records(), plain.sample_records()),
            (framed.lost_records(), framed.sample_records())
        );
    }

    #[test]
    fn a_cut_record_and_a_decreasing_total_are_errors() {
        let mut tracker = tracker();
        let mut words = Vec::new();
        sample(101, 5, &[(6, 100)], &mut words);
        words.push(record_header(PERF_RECORD_SAMPLE, 0, 5));
        let mut out = Vec::new();
        assert!(matches!(
            tracker.handle_words(0, &words, &mut out),
            Err(TrackerError::Record {
                cpu: 0,
                source: PerfRecordError::TruncatedRecord { .. }
            })
        ));
        assert_eq!(out.len(), 1);
        let mut words = Vec::new();
        sample(101, 6, &[(2, 100)], &mut words);
        assert_eq!(
            tracker.handle_words(0, &words, &mut out),
            Err(TrackerError::Decreased {
                key: LEADER,
                cpu: 0,
                previous: 6,
                total: 2
            })
        );
    }

    #[test]
    fn samples_need_a_clock_base() {
        let mut tracker = PerfCounterTracker::new();
        tracker.register_event(CLOCK, attr(1));
        tracker.register_ids([(101, CLOCK)]);
        let mut words = Vec::new();
        sample(101, 5, &[(1, 101)], &mut words);
        assert_eq!(
            tracker.handle_words(0, &words, &mut Vec::new()),
            Err(TrackerError::NoClockBase)
        );
    }

    #[test]
    fn a_read_after_the_stop_gives_the_counts_since_the_last_sample() {
        let mut tracker = tracker();
        let mut words = Vec::new();
        sample(101, 10, &[(3, 100), (1000, 101)], &mut words);
        let mut out = Vec::new();
        tracker.handle_words(1, &words, &mut out).unwrap();
        // The group of 101 read with `read()` at 30 ns: nr, enabled, running, (value, id) pairs.
        let read = [2, 1_500, 1_500, 4, 100, 1_300, 101];
        out.clear();
        tracker
            .handle_read(1, 101, (BASE + 30) as u64, &read, &mut out)
            .unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|s| (s.time_ns, s.core, s.key, s.total, s.delta))
            .collect();
        assert_eq!(got, [(30, 1, LEADER, 4, 1), (30, 1, CLOCK, 1300, 300)]);
        assert_eq!(tracker.sample_records(), 1, "a read is not a sample record");
    }

    #[test]
    fn a_malformed_read_or_one_of_an_unknown_event_is_an_error() {
        let mut tracker = tracker();
        let time = (BASE + 5) as u64;
        let mut out = Vec::new();
        // Cut after its header.
        assert_eq!(
            tracker.handle_read(0, 101, time, &[2, 10, 10, 4], &mut out),
            Err(TrackerError::Read {
                cpu: 0,
                id: 101,
                source: PerfRecordError::GroupTooLarge {
                    nr: 2,
                    available: 1
                }
            })
        );
        // `nr` says one value, the read holds two.
        assert_eq!(
            tracker.handle_read(0, 101, time, &[1, 10, 10, 4, 100, 5, 101], &mut out),
            Err(TrackerError::Read {
                cpu: 0,
                id: 101,
                source: PerfRecordError::ExtraWords { nr: 1, extra: 2 }
            })
        );
        assert_eq!(
            tracker.handle_read(0, 999, time, &[1, 10, 10, 4, 100], &mut out),
            Err(TrackerError::UnknownId { cpu: 0, id: 999 })
        );
        // A value of an id nobody announced is an error; the values beside it are kept.
        assert_eq!(
            tracker.handle_read(0, 101, time, &[2, 10, 10, 4, 100, 5, 555], &mut out),
            Err(TrackerError::UnknownId { cpu: 0, id: 555 })
        );
        assert_eq!(out.len(), 1);
        let mut no_base = PerfCounterTracker::new();
        no_base.register_event(CLOCK, attr(1));
        no_base.register_ids([(101, CLOCK)]);
        assert_eq!(
            no_base.handle_read(0, 101, time, &[1, 10, 10, 4, 101], &mut out),
            Err(TrackerError::NoClockBase)
        );
    }

    #[test]
    fn throttling_is_timed_from_the_records_between_the_samples() {
        let mut tracker = tracker();
        let mut words = Vec::new();
        sample(101, 10, &[(3, 100), (1000, 101)], &mut words);
        let throttle = |time: u64| ThrottleRecord {
            time,
            id: 101,
            stream_id: 101,
        };
        throttle(1_000).encode_throttle(&mut words);
        throttle(1_400).encode_unthrottle(&mut words);
        throttle(2_000).encode_throttle(&mut words);
        sample(101, 25, &[(5, 100), (1600, 101)], &mut words);
        let mut out = Vec::new();
        tracker.handle_words(3, &words, &mut out).unwrap();
        assert_eq!(out.len(), 4);
        let throttling = tracker.throttling();
        assert_eq!((throttling.count(), throttling.total_ns()), (2, 400));
        assert_eq!(throttling.throttled_now(), 1);
        tracker.end_throttling(2_500);
        assert_eq!(tracker.throttling().total_ns(), 900);
    }

    #[test]
    fn a_short_lost_record_is_an_error_and_the_samples_after_it_are_kept() {
        let mut tracker = tracker();
        let mut words = vec![record_header(PERF_RECORD_LOST, 0, 1), 100];
        sample(101, 10, &[(3, 100), (1000, 101)], &mut words);
        LostRecord { id: 101, lost: 5 }.encode_words(&mut words);
        let mut out = Vec::new();
        assert_eq!(
            tracker.handle_words(2, &words, &mut out),
            Err(TrackerError::Record {
                cpu: 2,
                source: PerfRecordError::ShortRecord {
                    field: "lost count"
                }
            })
        );
        assert_eq!((out.len(), tracker.lost_records()), (2, 5));
    }

    #[test]
    fn metric_events_are_listed_once() {
        let mut tracker = PerfCounterTracker::new();
        let event = MetricEvent {
            code: 0x11,
            key: CLOCK,
            role: MetricEventRole::from_wire(1),
        };
        tracker.register_metric_event(0x24, event);
        tracker.register_metric_event(0x24, event);
        assert_eq!(tracker.metric_events(0x24), [event]);
        assert_eq!(event.role.to_wire(), 1);
    }
}
