//! [`PerfCounterTracker`]: turns gatord's SUMMARY, PERF_ATTRS and PERF_DATA frames into counter samples
//! `(time on gatord's clock, core, key, value)`.
//!
//! What it relies on (gatord 9.7.2, `daemon/linux/perf/PerfEventGroup.cpp` and the recordings):
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
//! What a value means: perf values are running totals since the event was enabled on that CPU. Each sample is
//! turned into [`PerfCounterSample::delta`], the increase since the previous reading of the same event on the
//! same CPU (for the first reading, the total since the event was enabled) — what a delta counter counts in
//! the interval that ends at the sample's time. Totals only grow, so a lost record makes the next delta cover
//! the gap rather than losing counts. The running total is kept in [`PerfCounterSample::total`].

use std::collections::HashMap;

use thiserror::Error;

use super::frame::Frame;
use super::perf_attrs::{MetricEventRole, PerfAttrs, PerfAttrsMessage};
use super::perf_data::PerfData;
use super::perf_event_attr::{AttrError, PerfEventAttr};
use super::perf_record::{
    PerfRecord, PerfRecordError, PerfRecords, PERF_RECORD_LOST, PERF_RECORD_SAMPLE,
};
use super::perf_sample::{SampleLayout, SampleRecord};
use super::summary::{Summary, SummaryFrame};

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

/// Sans-IO state that turns perf frames into [`PerfCounterSample`]s.
///
/// Calls: feed every frame of a capture, in order, to [`PerfCounterTracker::handle_frame`] (or the SUMMARY,
/// PERF_ATTRS and PERF_DATA frames to the specific `handle_*` methods); samples are appended to `out`.
/// Without gatord's frames, the same state is fed typed: [`PerfCounterTracker::set_clock_base`],
/// [`PerfCounterTracker::register_event`] and [`PerfCounterTracker::register_ids`] for every event first, then
/// each CPU's ring words to [`PerfCounterTracker::handle_words`].
/// Getters: [`PerfCounterTracker::attr`], [`PerfCounterTracker::key_of`], [`PerfCounterTracker::delivery`],
/// [`PerfCounterTracker::lost_records`], [`PerfCounterTracker::sample_records`].
#[derive(Debug, Clone, Default)]
pub struct PerfCounterTracker {
    clock_base_ns: Option<i64>,
    attrs: HashMap<i32, PerfEventAttr>,
    ids: HashMap<u64, i32>,
    totals: HashMap<(i32, u64), u64>,
    id_word: Option<Option<usize>>,
    lost_records: u64,
    sample_records: u64,
    metrics: HashMap<i32, Vec<MetricEvent>>,
}

impl PerfCounterTracker {
    /// A tracker that has seen nothing.
    pub fn new() -> PerfCounterTracker {
        PerfCounterTracker::default()
    }

    /// Handles any frame: SUMMARY, PERF_ATTRS and PERF_DATA are used, the others ignored.
    pub fn handle_frame(
        &mut self,
        frame: &Frame<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        match frame {
            Frame::Summary(SummaryFrame::Summary(summary)) => {
                self.handle_summary(summary);
                Ok(())
            }
            Frame::PerfAttrs(attrs) => self.handle_perf_attrs(attrs),
            Frame::PerfData(data) => self.handle_perf_data(data, out),
            _ => Ok(()),
        }
    }

    /// Takes the clock base (CLOCK_MONOTONIC_RAW at capture start).
    pub fn handle_summary(&mut self, summary: &Summary<'_>) {
        self.set_clock_base(summary.clocks.monotonic_raw_ns);
    }

    /// Sets the clock base directly: CLOCK_MONOTONIC_RAW at capture start, ns.
    pub fn set_clock_base(&mut self, monotonic_raw_ns: i64) {
        self.clock_base_ns = Some(monotonic_raw_ns);
    }

    /// Takes the attributes (PEA) and id maps (KEYS) of a PERF_ATTRS frame. Every message is taken; the first
    /// attribute that cannot be decoded is returned as the error.
    pub fn handle_perf_attrs(&mut self, frame: &PerfAttrs<'_>) -> Result<(), TrackerError> {
        let mut first_error = None;
        for message in frame.messages() {
            match message {
                PerfAttrsMessage::Pea { attr, key } => match PerfEventAttr::parse(attr) {
                    Ok(attr) => self.register_event(key, attr),
                    Err(source) => {
                        first_error.get_or_insert(TrackerError::Attr { key, source });
                    }
                },
                PerfAttrsMessage::Keys(map) => {
                    self.register_ids(map.iter().map(|(id, key)| (id as u64, key)));
                }
                PerfAttrsMessage::MetricEventKey {
                    metric_key,
                    event_code,
                    event_key,
                    role,
                } => self.register_metric_event(
                    metric_key,
                    MetricEvent {
                        code: event_code,
                        key: event_key,
                        role,
                    },
                ),
                _ => {}
            }
        }
        first_error.map_or(Ok(()), Err)
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

    /// Decodes the records of a PERF_DATA frame and appends one sample per value read, as
    /// [`PerfCounterTracker::handle_words`] does for plain words.
    pub fn handle_perf_data(
        &mut self,
        frame: &PerfData<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        self.handle_records(frame.cpu, PerfRecords::new(frame), out)
    }

    /// Decodes the records in plain `words` read from `cpu`'s perf ring (whole records, as the kernel writes
    /// them) and appends one sample per value read. Records other than PERF_RECORD_SAMPLE are skipped
    /// (PERF_RECORD_LOST is counted). Decoding goes on past a bad sample (its record boundary is known); the
    /// first error is returned after the samples of all the words.
    pub fn handle_words(
        &mut self,
        cpu: i32,
        words: &[u64],
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        self.handle_records(cpu, PerfRecords::raw(words), out)
    }

    /// Decodes `records`, all from `cpu`'s ring.
    fn handle_records(
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
            match record.kind {
                PERF_RECORD_SAMPLE => {
                    self.sample_records += 1;
                    if let Err(err) = self.sample(cpu, &record, out) {
                        first_error.get_or_insert(err);
                    }
                }
                PERF_RECORD_LOST => {
                    // Body: id, lost (then the sample_id_all fields).
                    let lost = record.body().nth(1).and_then(Result::ok).unwrap_or(0);
                    self.lost_records = self.lost_records.saturating_add(lost);
                }
                _ => {}
            }
        }
        first_error.map_or(Ok(()), Err)
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
        let (key, attr) = self
            .ids
            .get(&id)
            .and_then(|key| Some((*key, *self.attrs.get(key)?)))
            .ok_or(TrackerError::UnknownId { cpu, id })?;
        let layout = SampleLayout {
            sample_type: attr.sample_type,
            read_format: attr.read_format,
        };
        let sample = SampleRecord::parse(record, layout)
            .map_err(|source| TrackerError::Record { cpu, source })?;
        if sample.read.is_none() && sample.period.is_none() {
            return Ok(());
        }
        let base = self.clock_base_ns.ok_or(TrackerError::NoClockBase)?;
        let time = match sample.time {
            Some(time) if attr.on_monotonic_raw() => time,
            _ => {
                return Err(TrackerError::Clock {
                    key,
                    use_clockid: attr.use_clockid(),
                    clockid: attr.clockid,
                })
            }
        };
        let time_ns = (time as i64).wrapping_sub(base);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apc::perf_attrs::{encode_keys_message, encode_pea_message};
    use crate::apc::perf_data::WordSlice;
    use crate::apc::perf_event_attr::{ReadFormat, SampleType};
    use crate::apc::perf_sample::ReadValue;
    use crate::apc::record_header;
    use crate::ProtocolVersion;

    const LEADER: i32 = 0x7fff_ffff;
    const CLOCK: i32 = 0x7fff_fffd;
    const COUNTING: i32 = 0x20;
    const FAILED: i32 = 0xa;
    const BASE: i64 = 1_000_000_000;

    /// Attributes shaped like gatord 9.7.2's (perf-session recording): a sampling group of context switches
    /// (leader) and CPU clock, a stand-alone counting event, and an event that failed to open.
    fn attr(period: u64, read_format: u64) -> PerfEventAttr {
        PerfEventAttr {
            kind: 1,
            size: 144,
            config: 0,
            sample_period_or_freq: period,
            sample_type: SampleType(0x10217),
            read_format: ReadFormat(read_format),
            flags: 0x204_4000,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: 4,
        }
    }

    fn attrs_frame(attrs: &[(i32, PerfEventAttr)], keys: &[(i64, i32)]) -> Vec<u8> {
        let mut out = Vec::new();
        PerfAttrs::encode_header(0, &mut out);
        for (key, attr) in attrs {
            encode_pea_message(*key, attr, &mut out);
        }
        encode_keys_message(keys, &mut out);
        out
    }

    fn sample_words(id: u64, time: u64, values: &[(u64, u64)], out: &mut Vec<u64>) {
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
            ip: Some(0),
            pid_tid: Some((1, 1)),
            time: Some(time),
            addr: None,
            id: None,
            stream_id: Some(id),
            cpu: None,
            period: None,
            read: None,
            tail: WordSlice::default(),
        }
        .encode_words(
            SampleLayout {
                sample_type: SampleType(0x10217),
                read_format: ReadFormat(0xf),
            },
            time,
            time,
            &read,
            out,
        );
    }

    fn feed(
        tracker: &mut PerfCounterTracker,
        frame: &[u8],
    ) -> (Vec<PerfCounterSample>, Result<(), TrackerError>) {
        let mut out = Vec::new();
        let frame = Frame::parse(frame, ProtocolVersion::V950).unwrap();
        let result = tracker.handle_frame(&frame, &mut out);
        (out, result)
    }

    fn tracker() -> PerfCounterTracker {
        let mut tracker = PerfCounterTracker::new();
        let frame = attrs_frame(
            &[
                (LEADER, attr(1, 0xf)),
                (CLOCK, attr(991_080, 0xf)),
                (COUNTING, attr(0, 0x7)),
                (FAILED, attr(0, 0xf)),
            ],
            &[(100, LEADER), (101, CLOCK), (102, COUNTING)],
        );
        assert_eq!(feed(&mut tracker, &frame).1, Ok(()));
        tracker.set_clock_base(BASE);
        tracker
    }

    fn data(cpu: i32, words: &[u64]) -> Vec<u8> {
        let mut out = Vec::new();
        PerfData::encode(cpu, words, &mut out);
        out
    }

    /// gatord 9.7.2's metric events in event-based-sampling mode: sampled on their own overflows, PERIOD
    /// instead of READ, a call chain after it; METRIC_EVENT_KEY messages link them to the metric's key.
    #[test]
    fn event_based_samples_count_their_period_and_metrics_list_their_events() {
        const METRIC: i32 = 0x24;
        const CYCLES: i32 = 0x7fff_fffe;
        const INST: i32 = 0x7fff_fffd;
        let ebs = |period| PerfEventAttr {
            sample_type: SampleType(0x10327),
            read_format: ReadFormat(0x7),
            ..attr(period, 0x7)
        };
        let mut frame = attrs_frame(
            &[(CYCLES, ebs(991_080)), (INST, ebs(991_080))],
            &[(200, CYCLES), (201, INST)],
        );
        for (code, key, role) in [(0x11, CYCLES, 1), (0x08, INST, 0)] {
            PerfAttrsMessage::MetricEventKey {
                metric_key: METRIC,
                event_code: code,
                event_key: key,
                role: MetricEventRole::from_wire(role),
            }
            .encode(&mut frame);
        }
        let mut tracker = PerfCounterTracker::new();
        assert_eq!(feed(&mut tracker, &frame).1, Ok(()));
        tracker.set_clock_base(BASE);
        assert_eq!(
            tracker.metric_events(METRIC),
            [
                MetricEvent {
                    code: 0x11,
                    key: CYCLES,
                    role: MetricEventRole::CycleCounter
                },
                MetricEvent {
                    code: 0x08,
                    key: INST,
                    role: MetricEventRole::Event
                },
            ]
        );
        assert!(tracker.metric_events(0x26).is_empty());
        let layout = SampleLayout {
            sample_type: SampleType(0x10327),
            read_format: ReadFormat(0x7),
        };
        let mut words = Vec::new();
        for (id, time) in [(200u64, 10u64), (201, 12), (200, 20)] {
            let start = words.len();
            SampleRecord {
                identifier: Some(id),
                ip: Some(0x400000),
                pid_tid: Some((1, 1)),
                time: Some(BASE as u64 + time),
                addr: None,
                id: None,
                stream_id: Some(200),
                cpu: None,
                period: Some(991_080),
                read: None,
                tail: WordSlice::default(),
            }
            .encode_words(layout, 0, 0, &[], &mut words);
            // The call chain: one entry.
            words.extend_from_slice(&[1, 0x400000]);
            words[start] = record_header(PERF_RECORD_SAMPLE, 0, words.len() - start - 1);
        }
        let (out, result) = feed(&mut tracker, &data(0, &words));
        assert_eq!(result, Ok(()));
        let got: Vec<_> = out
            .iter()
            .map(|s| (s.time_ns, s.key, s.total, s.delta))
            .collect();
        assert_eq!(
            got,
            [
                (10, CYCLES, 991_080, 991_080),
                (12, INST, 991_080, 991_080),
                (20, CYCLES, 1_982_160, 991_080)
            ]
        );
    }

    #[test]
    fn group_reads_become_deltas_per_core() {
        let mut tracker = tracker();
        let mut words = Vec::new();
        sample_words(
            101,
            (BASE + 10) as u64,
            &[(3, 100), (1000, 101)],
            &mut words,
        );
        sample_words(
            100,
            (BASE + 25) as u64,
            &[(5, 100), (1600, 101)],
            &mut words,
        );
        let (out, result) = feed(&mut tracker, &data(1, &words));
        assert_eq!(result, Ok(()));
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
        // Another CPU keeps its own totals.
        let mut words = Vec::new();
        sample_words(101, (BASE + 30) as u64, &[(1, 100), (700, 101)], &mut words);
        let (out, _) = feed(&mut tracker, &data(0, &words));
        assert_eq!(out[1].delta, 700);
        assert_eq!(tracker.sample_records(), 3);
    }

    #[test]
    fn plain_words_decode_as_their_perf_data_frame() {
        let mut words = Vec::new();
        sample_words(
            101,
            (BASE + 10) as u64,
            &[(3, 100), (1000, 101)],
            &mut words,
        );
        words.extend([record_header(PERF_RECORD_LOST, 0, 2), 100, 4]);
        sample_words(999, (BASE + 20) as u64, &[(4, 100)], &mut words);
        sample_words(
            100,
            (BASE + 25) as u64,
            &[(5, 100), (1600, 101)],
            &mut words,
        );
        // A record cut short: the samples before it are kept either way.
        words.push(record_header(PERF_RECORD_SAMPLE, 0, 5));
        let mut framed = tracker();
        let (from_frame, frame_result) = feed(&mut framed, &data(2, &words));
        let mut plain = tracker();
        let mut from_words = Vec::new();
        let words_result = plain.handle_words(2, &words, &mut from_words);
        assert_eq!(from_words, from_frame);
        assert_eq!(from_words.len(), 4);
        assert_eq!(words_result, frame_result);
        assert_eq!(
            words_result,
            Err(TrackerError::UnknownId { cpu: 2, id: 999 })
        );
        assert_eq!(
            (plain.lost_records(), plain.sample_records()),
            (framed.lost_records(), framed.sample_records())
        );
    }

    #[test]
    fn typed_registration_announces_as_a_perf_attrs_frame_does() {
        let mut typed = PerfCounterTracker::new();
        typed.register_event(LEADER, attr(1, 0xf));
        typed.register_event(COUNTING, attr(0, 0x7));
        typed.register_ids([(100, LEADER), (102, COUNTING)]);
        let mut framed = PerfCounterTracker::new();
        let frame = attrs_frame(
            &[(LEADER, attr(1, 0xf)), (COUNTING, attr(0, 0x7))],
            &[(100, LEADER), (102, COUNTING)],
        );
        assert_eq!(feed(&mut framed, &frame).1, Ok(()));
        for key in [LEADER, COUNTING, CLOCK] {
            assert_eq!(typed.attr(key), framed.attr(key));
            assert_eq!(typed.delivery(key), framed.delivery(key));
        }
        assert_eq!(typed.key_of(102), Some(COUNTING));
    }

    #[test]
    fn delivery_of_each_kind_of_key() {
        let tracker = tracker();
        assert_eq!(tracker.delivery(CLOCK), Delivery::Sampled);
        assert_eq!(tracker.delivery(COUNTING), Delivery::CountingOnly);
        assert_eq!(tracker.delivery(FAILED), Delivery::NotOpened);
        assert_eq!(tracker.delivery(0x5e), Delivery::NotAnnounced);
        assert_eq!(tracker.key_of(101), Some(CLOCK));
        assert_eq!(
            tracker.attr(LEADER).map(|a| a.sample_period()),
            Some(Some(1))
        );
    }

    #[test]
    fn lost_records_are_counted() {
        let mut tracker = tracker();
        let words = [record_header(PERF_RECORD_LOST, 0, 2), 100, 42];
        assert_eq!(feed(&mut tracker, &data(0, &words)).1, Ok(()));
        assert_eq!(tracker.lost_records(), 42);
    }

    #[test]
    fn errors_keep_the_samples_around_them() {
        let mut tracker = tracker();
        let mut words = Vec::new();
        sample_words(999, (BASE + 1) as u64, &[(1, 100)], &mut words);
        sample_words(101, (BASE + 2) as u64, &[(4, 100), (9, 101)], &mut words);
        sample_words(101, (BASE + 3) as u64, &[(3, 100), (10, 101)], &mut words);
        sample_words(101, (BASE + 4) as u64, &[(5, 100), (11, 555)], &mut words);
        let (out, result) = feed(&mut tracker, &data(0, &words));
        assert_eq!(result, Err(TrackerError::UnknownId { cpu: 0, id: 999 }));
        let got: Vec<_> = out.iter().map(|s| (s.time_ns, s.key, s.delta)).collect();
        assert_eq!(
            got,
            [(2, LEADER, 4), (2, CLOCK, 9), (3, CLOCK, 1), (4, LEADER, 2)]
        );

        // The third sample's leader total went down.
        let mut words = Vec::new();
        sample_words(101, (BASE + 5) as u64, &[(1, 100)], &mut words);
        let (_, result) = feed(&mut tracker, &data(0, &words));
        assert_eq!(
            result,
            Err(TrackerError::Decreased {
                key: LEADER,
                cpu: 0,
                previous: 5,
                total: 1
            })
        );

        // A cut record: the samples before it are kept.
        let mut words = Vec::new();
        sample_words(101, (BASE + 6) as u64, &[(6, 100)], &mut words);
        words.push(record_header(PERF_RECORD_SAMPLE, 0, 5));
        let (out, result) = feed(&mut tracker, &data(0, &words));
        assert_eq!(out.len(), 1);
        assert!(matches!(
            result,
            Err(TrackerError::Record {
                cpu: 0,
                source: PerfRecordError::TruncatedRecord { .. }
            })
        ));
    }

    #[test]
    fn samples_need_a_clock_base_on_monotonic_raw() {
        let mut tracker = tracker();
        tracker.clock_base_ns = None;
        let mut words = Vec::new();
        sample_words(101, 5, &[(1, 101)], &mut words);
        assert_eq!(
            feed(&mut tracker, &data(0, &words)).1,
            Err(TrackerError::NoClockBase)
        );

        let mut tracker = PerfCounterTracker::new();
        let perf_clock = PerfEventAttr {
            flags: 0x4000,
            ..attr(1, 0xf)
        };
        feed(
            &mut tracker,
            &attrs_frame(&[(CLOCK, perf_clock)], &[(101, CLOCK)]),
        )
        .1
        .unwrap();
        tracker.set_clock_base(0);
        assert_eq!(
            feed(&mut tracker, &data(0, &words)).1,
            Err(TrackerError::Clock {
                key: CLOCK,
                use_clockid: false,
                clockid: 4
            })
        );
    }

    #[test]
    fn bad_attributes_and_ambiguous_layouts_are_errors() {
        let mut tracker = PerfCounterTracker::new();
        let mut frame = Vec::new();
        PerfAttrs::encode_header(0, &mut frame);
        let short = [0u8, 0, 0, 0, 8, 0, 0, 0];
        PerfAttrsMessage::Pea {
            attr: &short,
            key: 4,
        }
        .encode(&mut frame);
        assert!(matches!(
            feed(&mut tracker, &frame).1,
            Err(TrackerError::Attr { key: 4, .. })
        ));

        let no_identifier = PerfEventAttr {
            sample_type: SampleType(SampleType::TIME | SampleType::READ),
            ..attr(1, 0xf)
        };
        let mut tracker = PerfCounterTracker::new();
        feed(
            &mut tracker,
            &attrs_frame(&[(CLOCK, attr(1, 0xf)), (LEADER, no_identifier)], &[]),
        )
        .1
        .unwrap();
        let mut words = Vec::new();
        sample_words(101, 5, &[(1, 101)], &mut words);
        assert_eq!(
            feed(&mut tracker, &data(0, &words)).1,
            Err(TrackerError::AmbiguousSampleId)
        );
    }
}
