//! [`PerfFrames`]: feeds gatord's SUMMARY, PERF_ATTRS and PERF_DATA frames to the
//! [`PerfCounterTracker`] of the `perf-record` crate, which turns them into counter samples
//! `(time on gatord's clock, core, key, value)`.
//!
//! A PEA message registers its key's attribute, a KEYS message its perf ids, a METRIC_EVENT_KEY message a
//! metric's event, the SUMMARY frame's CLOCK_MONOTONIC_RAW the clock base, and a PERF_DATA frame's packed words
//! are decoded where they lie. What the tracker relies on and what its values mean is documented there.

use perf_record::{
    MetricEvent, PerfCounterSample, PerfCounterTracker, PerfEventAttr, TrackerError,
};

use super::frame::Frame;
use super::perf_attrs::{PerfAttrs, PerfAttrsMessage};
use super::perf_data::PerfData;
use super::summary::{Summary, SummaryFrame};

/// The frames of a gatord capture fed to a [`PerfCounterTracker`]: feed every frame of a capture, in order, to
/// [`PerfFrames::handle_frame`] (or the SUMMARY, PERF_ATTRS and PERF_DATA frames to the specific `handle_*`
/// methods); samples are appended to `out`.
pub trait PerfFrames {
    /// Handles any frame: SUMMARY, PERF_ATTRS and PERF_DATA are used, the others ignored.
    fn handle_frame(
        &mut self,
        frame: &Frame<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError>;

    /// Takes the clock base (CLOCK_MONOTONIC_RAW at capture start).
    fn handle_summary(&mut self, summary: &Summary<'_>);

    /// Takes the attributes (PEA), id maps (KEYS) and metric events (METRIC_EVENT_KEY) of a PERF_ATTRS
    /// frame. Every message is taken; the first attribute that cannot be decoded is returned as the error.
    fn handle_perf_attrs(&mut self, frame: &PerfAttrs<'_>) -> Result<(), TrackerError>;

    /// Decodes the records of a PERF_DATA frame where they lie (packed) and appends one sample per value read,
    /// as [`PerfCounterTracker::handle_words`] does for plain words.
    fn handle_perf_data(
        &mut self,
        frame: &PerfData<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError>;
}

impl PerfFrames for PerfCounterTracker {
    fn handle_frame(
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

    fn handle_summary(&mut self, summary: &Summary<'_>) {
        self.set_clock_base(summary.clocks.monotonic_raw_ns);
    }

    fn handle_perf_attrs(&mut self, frame: &PerfAttrs<'_>) -> Result<(), TrackerError> {
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

    fn handle_perf_data(
        &mut self,
        frame: &PerfData<'_>,
        out: &mut Vec<PerfCounterSample>,
    ) -> Result<(), TrackerError> {
        self.handle_records(frame.cpu, frame.records(), out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apc::perf_attrs::{encode_keys_message, encode_pea_message};
    use crate::ProtocolVersion;
    use perf_record::{
        record_header, Delivery, MetricEventRole, PerfRecordError, ReadFormat, ReadValue,
        SampleLayout, SampleRecord, SampleType, WordSlice, PERF_RECORD_LOST, PERF_RECORD_SAMPLE,
    };

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
        let mut tracker = PerfCounterTracker::new();
        let announce = attrs_frame(&[(CLOCK, attr(1, 0xf))], &[(101, CLOCK)]);
        assert_eq!(feed(&mut tracker, &announce).1, Ok(()));
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
