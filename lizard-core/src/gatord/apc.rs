//! Turning APC frames from gatord into timestamped samples: the one place a gatord value becomes a sample.
//!
//! - BLOCK_COUNTER (type 5): keys 0/1/2 are timestamp/tid/core markers and may appear any number of times; every
//!   other key is looked up in the `captured` key map and its value stored with the latest timestamp.
//! - COUNTER (type 4, gatord ≤ 9.1): one timestamped value.
//! - SUMMARY, PERF_ATTRS and PERF_DATA (perf-backed counters: CPU PMU events, perf software events) go through
//!   gator-proto's [`PerfCounterTracker`]: each value a sample record reads becomes one sample per core, whose
//!   value is the increase of the event's running total on that core since its previous reading (a delta
//!   counter: the store's sum over a window adds the cores together). PERF_ATTRS also tell which requested
//!   perf counters gatord will never send ([`Unavailable`]).
//! - A metric counter (`metric="yes"`) gets no value from gatord: its values are computed from the samples of
//!   the events gatord links to it (`super::metrics`), one per interval of its denominator's samples.
//! - Every other frame type is ignored.
//!
//! Each sample keeps the CPU it was counted on ([`Sample::core`]): a perf sample's ring, a COUNTER frame's
//! core, or the latest core marker of a BLOCK_COUNTER frame (none before the first marker: a system value).
//!
//! [`FrameSink::frame`] keeps the values of the counters the key map binds; [`FrameSink::values`] gives every
//! value a frame carries with its gatord key (a reader of a whole capture, bound or not), by the same rules.
//!
//! gatord timestamps are nanoseconds since its capture start (perf record times are CLOCK_MONOTONIC_RAW, turned
//! into the same base with the SUMMARY's clock); the sink adds the engine time at which APC_START was sent, so
//! gatord samples and HWCPipe samples share one time base.

use std::collections::HashMap;
use std::fmt;

use gator_proto::apc::{
    Delivery, Frame, FrameError, PerfCounterSample, PerfCounterTracker, PerfFrames, TrackerError,
};
use gator_proto::ProtocolVersion;
use thiserror::Error;

use super::metrics::{MetricGap, MetricValues};
use crate::counter::CounterId;
use crate::store::{CountOutOfRange, Sample, Value};

/// Why gatord will not send values for a counter it offered, in the configuration this client delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Unavailable {
    /// gatord opened the perf event for counting only (no event-based-sampling `count` in the configuration,
    /// no sampling group to ride in), so it never reads it and never sends a value.
    CountingOnly,
    /// gatord announced the perf event but could not open it on any CPU (e.g. no hardware PMU).
    NotOpened,
    /// gatord's `captured` document gave the counter no key, so nothing it sends can be attributed to it.
    NotBound,
    /// A `derived="yes"` event: Streamline computes it from other data, and gatord never sends a value.
    Derived,
    /// A metric counter (`metric="yes"`) whose formula this library does not know: gatord sends only the
    /// events a metric is computed from, never its formula or its value.
    MetricFormulaUnknown,
    /// A metric counter for which gatord opened no events (its events did not fit the PMU beside the
    /// other counters), or not the ones its formula divides.
    MetricNotOpened,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unavailable::CountingOnly => {
                "gatord opens this perf event for counting only and never sends its values"
            }
            Unavailable::NotOpened => "gatord could not open this perf event on any CPU",
            Unavailable::NotBound => "gatord bound no key to this counter",
            Unavailable::Derived => {
                "derived: Streamline computes it from other data; gatord sends no value for it"
            }
            Unavailable::MetricFormulaUnknown => {
                "a metric whose formula this library does not know; gatord sends only its events"
            }
            Unavailable::MetricNotOpened => {
                "gatord opened no events for this metric (they did not fit the PMU beside the other counters)"
            }
        })
    }
}

/// Why a frame could not be turned into samples.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SinkError {
    /// The frame itself is malformed.
    #[error("malformed APC frame")]
    Frame(#[source] FrameError),
    /// A perf frame could not be decoded into counter values.
    #[error("perf counter data")]
    Perf(#[source] TrackerError),
    /// A perf count beyond what the store holds: the frame's other values are kept, this one is not.
    #[error("perf counter data")]
    Count(#[source] CountOutOfRange),
}

/// gatord counter keys (from the `captured` XML) to engine counter ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyMap {
    keys: HashMap<i32, CounterId>,
}

impl KeyMap {
    /// An empty map.
    pub fn new() -> KeyMap {
        KeyMap::default()
    }

    /// Maps `key` to `id`. The marker keys 0, 1 and 2 and key values gatord uses for "not bound" (≤ 2) are
    /// refused (returns `false`).
    pub fn insert(&mut self, key: i32, id: CounterId) -> bool {
        if key <= 2 {
            return false;
        }
        self.keys.insert(key, id);
        true
    }

    /// The counter bound to `key`.
    pub fn get(&self, key: i32) -> Option<CounterId> {
        self.keys.get(&key).copied()
    }

    /// Whether no key is bound.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// One value of a gatord frame with its key, as [`FrameSink::values`] yields it: a sample before the key map
/// names its counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyedSample {
    /// The gatord counter key (in a metric's value, the metric's key).
    pub key: i32,
    /// The value on the engine's time base, with the core it was counted on.
    pub sample: Sample,
    /// For a perf counter value: the event's running total on its core since it was enabled (the sample's
    /// value is its increase since the previous reading there); `None` for any other value.
    pub perf_total: Option<u64>,
}

/// Converts frames of one gatord session into samples.
#[derive(Debug, Clone)]
pub struct FrameSink {
    version: ProtocolVersion,
    keys: KeyMap,
    offset_ns: u64,
    latest_ns: Option<u64>,
    perf: PerfCounterTracker,
    perf_samples: Vec<PerfCounterSample>,
    metrics: MetricValues,
    metric_samples: Vec<(i32, f64)>,
    values: Vec<KeyedSample>,
}

impl FrameSink {
    /// A sink for a session speaking `version`, with the key map from its `captured` XML, whose capture
    /// started at engine time `offset_ns`.
    pub fn new(version: ProtocolVersion, keys: KeyMap, offset_ns: u64) -> FrameSink {
        FrameSink {
            version,
            keys,
            offset_ns,
            latest_ns: None,
            perf: PerfCounterTracker::new(),
            perf_samples: Vec::new(),
            metrics: MetricValues::default(),
            metric_samples: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Takes `key` (bound in the key map) as the key of metric counter `counter` (its gatord name,
    /// `<counter set>_metric_<identifier>`), whose values are computed from the events gatord links to it.
    /// `false` when the name is no metric's.
    pub fn bind_metric(&mut self, key: i32, counter: &str) -> bool {
        self.metrics.insert(key, counter)
    }

    /// The perf counter state: attributes, id map, lost records.
    pub fn perf(&self) -> &PerfCounterTracker {
        &self.perf
    }

    /// The bound counters whose perf events gatord announced but will not send values for, with the reason.
    /// Meaningful once the PERF_ATTRS frames at the start of the capture have arrived.
    pub fn unavailable(&self) -> Vec<(CounterId, Unavailable)> {
        let mut out: Vec<_> = self
            .keys
            .keys
            .iter()
            .filter_map(|(&key, &id)| match self.perf.delivery(key) {
                Delivery::CountingOnly => Some((id, Unavailable::CountingOnly)),
                Delivery::NotOpened => Some((id, Unavailable::NotOpened)),
                _ => None,
            })
            .collect();
        // A metric's events are linked by the PERF_ATTRS frames that announce events.
        let announced = self.perf.attrs().next().is_some();
        for &key in self.metrics.keys() {
            let reason = match self.metrics.gap(key) {
                Some(MetricGap::NoFormula) => Unavailable::MetricFormulaUnknown,
                Some(MetricGap::NoEvents) if announced => Unavailable::MetricNotOpened,
                _ => continue,
            };
            if let Some(id) = self.keys.get(key) {
                out.push((id, reason));
            }
        }
        out.sort_unstable();
        out
    }

    /// The latest engine timestamp seen in any counter frame.
    pub fn latest_ns(&self) -> Option<u64> {
        self.latest_ns
    }

    /// A gatord time (ns since its capture start) on the engine's time base.
    fn to_engine_ns(&self, gatord_ns: i64) -> u64 {
        self.offset_ns
            .saturating_add(u64::try_from(gatord_ns).unwrap_or(0))
    }

    /// [`FrameSink::to_engine_ns`], remembered as the latest time seen.
    fn engine_time(&mut self, gatord_ns: i64) -> u64 {
        let t = self.to_engine_ns(gatord_ns);
        self.latest_ns = Some(self.latest_ns.map_or(t, |l| l.max(t)));
        t
    }

    /// Decodes one APC payload and appends the samples of its bound counters to `out` (the values of
    /// [`FrameSink::values`] whose key the key map binds). Values decoded before a malformed record are kept;
    /// the error is returned after them.
    pub fn frame(
        &mut self,
        payload: &[u8],
        out: &mut Vec<(CounterId, Sample)>,
    ) -> Result<(), SinkError> {
        let frame = Frame::parse(payload, self.version).map_err(SinkError::Frame)?;
        let mut values = std::mem::take(&mut self.values);
        let result = self.collect(&frame, true, &mut values);
        out.extend(
            values
                .drain(..)
                .filter_map(|v| Some((self.keys.get(v.key)?, v.sample))),
        );
        self.values = values;
        result
    }

    /// Appends every value `frame` carries to `out`, with its gatord key, whether the key map binds it or
    /// not: BLOCK_COUNTER and COUNTER values, perf counter values (with their running totals) and the values
    /// of the metrics bound with [`FrameSink::bind_metric`]. Times are on the engine's time base and cores are
    /// those of the module documentation, the same as [`FrameSink::frame`]'s. Feed every frame of the
    /// session, in order (SUMMARY and PERF_ATTRS frames carry no values but set up the perf counters).
    /// Values decoded before a malformed record are kept; the error is returned after them.
    pub fn values(
        &mut self,
        frame: &Frame<'_>,
        out: &mut Vec<KeyedSample>,
    ) -> Result<(), SinkError> {
        self.collect(frame, false, out)
    }

    /// [`FrameSink::values`]; with `bound_only`, the perf and metric values of keys the key map does not bind
    /// are left out (and their times do not count as seen).
    fn collect(
        &mut self,
        frame: &Frame<'_>,
        bound_only: bool,
        out: &mut Vec<KeyedSample>,
    ) -> Result<(), SinkError> {
        if !matches!(
            frame,
            Frame::Summary(_) | Frame::PerfAttrs(_) | Frame::PerfData(_)
        ) {
            return self.block_or_counter(frame, out).map_err(SinkError::Frame);
        }
        let mut perf = std::mem::take(&mut self.perf_samples);
        let result = self.perf.handle_frame(frame, &mut perf);
        if matches!(frame, Frame::PerfAttrs(_)) {
            let tracker = &self.perf;
            self.metrics.link(|key| tracker.metric_events(key));
        }
        let mut out_of_range = None;
        for sample in perf.drain(..) {
            self.metrics.sample(
                sample.key,
                sample.core,
                sample.delta,
                &mut self.metric_samples,
            );
            let core = u32::try_from(sample.core).ok();
            let mut closed = std::mem::take(&mut self.metric_samples);
            for (metric, value) in closed.drain(..) {
                if bound_only && self.keys.get(metric).is_none() {
                    continue;
                }
                out.push(KeyedSample {
                    key: metric,
                    sample: Sample {
                        timestamp_ns: self.engine_time(sample.time_ns),
                        value: Value::Float(value),
                        core,
                    },
                    perf_total: None,
                });
            }
            self.metric_samples = closed;
            if bound_only && self.keys.get(sample.key).is_none() {
                continue;
            }
            let value = match Value::from_count(sample.delta) {
                Ok(value) => value,
                Err(err) => {
                    out_of_range.get_or_insert(err);
                    continue;
                }
            };
            out.push(KeyedSample {
                key: sample.key,
                sample: Sample {
                    timestamp_ns: self.engine_time(sample.time_ns),
                    value,
                    core,
                },
                perf_total: Some(sample.total),
            });
        }
        self.perf_samples = perf;
        result.map_err(SinkError::Perf)?;
        out_of_range.map_or(Ok(()), |err| Err(SinkError::Count(err)))
    }

    fn block_or_counter(
        &mut self,
        frame: &Frame<'_>,
        out: &mut Vec<KeyedSample>,
    ) -> Result<(), FrameError> {
        match frame {
            Frame::BlockCounter(block) => {
                let mut samples = block.samples();
                let mut result = Ok(());
                for sample in samples.by_ref() {
                    let sample = match sample {
                        Ok(sample) => sample,
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    };
                    out.push(KeyedSample {
                        key: sample.key,
                        sample: Sample {
                            timestamp_ns: sample
                                .time
                                .map_or(self.offset_ns, |t| self.to_engine_ns(t)),
                            value: Value::Int(sample.value),
                            core: sample.core.and_then(|c| u32::try_from(c).ok()),
                        },
                        perf_total: None,
                    });
                }
                // Every timestamp marker counts as seen, values or not.
                if let Some(t) = samples.latest_time() {
                    self.engine_time(t);
                }
                result
            }
            Frame::Counter(counter) => {
                out.push(KeyedSample {
                    key: counter.key,
                    sample: Sample {
                        timestamp_ns: self.engine_time(counter.timestamp),
                        value: Value::Int(counter.value),
                        core: u32::try_from(counter.core).ok(),
                    },
                    perf_total: None,
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gator_proto::apc::summary::encode_summary;
    use gator_proto::apc::{BlockCounter, Clocks, Counter, Record};
    use gatord_sim::perf::{PerfCounter, PerfLeader, PerfRole, PerfStream};

    fn block(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        BlockCounter::encode(0, records.iter().copied(), &mut out);
        out
    }

    fn sink(offset: u64) -> FrameSink {
        let mut keys = KeyMap::new();
        assert!(keys.insert(0x5e, 1));
        assert!(keys.insert(0x5c, 2));
        assert!(!keys.insert(2, 3));
        FrameSink::new(ProtocolVersion::V950, keys, offset)
    }

    #[test]
    fn real_first_frame_of_the_recording() {
        // The first BLOCK_COUNTER frame of ../shared/data/gatord-9.7.2/live-session/d2c.bin (gatord 9.7.2).
        let payload = [
            0x05, 0x00, 0x00, 0xbf, 0xf2, 0x18, 0xde, 0x00, 0x80, 0xe0, 0xe9, 0xcb, 0xda, 0x00,
            0xdc, 0x00, 0x80, 0xa0, 0xfa, 0xc8, 0x03, 0xe6, 0x00, 0x00,
        ];
        let mut out = Vec::new();
        let mut sink = sink(1000);
        sink.frame(&payload, &mut out).unwrap();
        let t = 1000 + 407_871;
        assert_eq!(
            out,
            vec![
                (
                    1,
                    Sample {
                        timestamp_ns: t,
                        value: Value::Int(24_318_210_048),
                        core: None,
                    }
                ),
                (
                    2,
                    Sample {
                        timestamp_ns: t,
                        value: Value::Int(958_304_256),
                        core: None,
                    }
                ),
            ]
        );
        assert_eq!(sink.latest_ns(), Some(t));
    }

    #[test]
    fn many_markers_per_frame() {
        let payload = block(&[
            Record::Timestamp(10),
            Record::Core(1),
            Record::Value {
                key: 0x5e,
                value: 1,
            },
            Record::Timestamp(20),
            Record::Tid(7),
            Record::Value {
                key: 0x5e,
                value: 2,
            },
            Record::Value {
                key: 0x99,
                value: 3,
            },
        ]);
        let mut out = Vec::new();
        sink(0).frame(&payload, &mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].1.timestamp_ns, 10);
        assert_eq!(out[1].1.timestamp_ns, 20);
        // The core marker holds for the rest of the frame.
        assert_eq!((out[0].1.core, out[1].1.core), (Some(1), Some(1)));
    }

    #[test]
    fn counter_frames_are_stored() {
        let mut payload = Vec::new();
        Counter {
            timestamp: 50,
            core: 0,
            key: 0x5c,
            value: -4,
        }
        .encode(&mut payload);
        let mut out = Vec::new();
        sink(5).frame(&payload, &mut out).unwrap();
        assert_eq!(
            out,
            vec![(
                2,
                Sample {
                    timestamp_ns: 55,
                    value: Value::Int(-4),
                    core: Some(0),
                }
            )]
        );
    }

    #[test]
    fn malformed_record_keeps_earlier_values_and_reports() {
        let mut payload = block(&[
            Record::Timestamp(1),
            Record::Value {
                key: 0x5e,
                value: 9,
            },
        ]);
        payload.extend_from_slice(&[0x5e, 0x80]); // a value whose continuation byte never ends
        let mut out = Vec::new();
        let err = sink(0).frame(&payload, &mut out).unwrap_err();
        assert!(
            matches!(err, SinkError::Frame(FrameError::Int { .. })),
            "{err:?}"
        );
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn empty_and_other_frames() {
        let mut out = Vec::new();
        assert_eq!(
            sink(0).frame(&[], &mut out),
            Err(SinkError::Frame(FrameError::Empty))
        );
        sink(0).frame(&[0x0c, 0x00], &mut out).ok();
        sink(0).frame(&[0x63, 1, 2, 3], &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn perf_group_values_become_per_core_deltas() {
        // What the simulator sends, shaped like gatord 9.7.2's perf data: key 0x10 a group member on two
        // cores, key 0x12 counting only; the SUMMARY's CLOCK_MONOTONIC_RAW is 40.
        let counter = |key, role| PerfCounter {
            key,
            role,
            config: 0x11,
        };
        let mut stream = PerfStream::new(
            2,
            vec![
                counter(0x10, PerfRole::Sampled),
                counter(0x12, PerfRole::CountingOnly),
            ],
            PerfLeader::default(),
            40,
        );
        let mut keys = KeyMap::new();
        assert!(keys.insert(0x10, 1));
        assert!(keys.insert(0x12, 2));
        let mut sink = FrameSink::new(ProtocolVersion::V950, keys, 1000);
        let mut out = Vec::new();
        sink.frame(&stream.attrs_frame(10), &mut out).unwrap();
        sink.frame(&stream.keys_frame(), &mut out).unwrap();
        assert_eq!(sink.unavailable(), [(2, Unavailable::CountingOnly)]);
        let increase = |_: usize, core: u32| 7 + u64::from(core) * 93;
        // Before the SUMMARY, perf samples cannot be placed in time: an error, nothing stored.
        for frame in stream.sample_frames(5, 5, increase) {
            assert_eq!(
                sink.frame(&frame, &mut out),
                Err(SinkError::Perf(TrackerError::NoClockBase))
            );
        }
        assert!(out.is_empty());
        let mut summary = Vec::new();
        let clocks = Clocks {
            monotonic_raw_ns: 40,
            ..Clocks::default()
        };
        encode_summary(ProtocolVersion::V950, &clocks, [], &mut summary);
        sink.frame(&summary, &mut out).unwrap();
        for frame in stream.sample_frames(20, 20, increase) {
            sink.frame(&frame, &mut out).unwrap();
        }
        let got: Vec<_> = out
            .iter()
            .map(|(id, s)| (*id, s.timestamp_ns, s.value))
            .collect();
        // The totals grew by 7 (core 0) and 100 (core 1) per sample; the first readings after the errors
        // cover both samples.
        assert_eq!(got, [(1, 1020, Value::Int(14)), (1, 1020, Value::Int(200))]);
        let cores: Vec<_> = out.iter().map(|(_, s)| s.core).collect();
        assert_eq!(cores, [Some(0), Some(1)], "each value keeps its CPU");
        assert_eq!(sink.latest_ns(), Some(1020));
        assert!(Unavailable::CountingOnly
            .to_string()
            .contains("counting only"));
    }

    #[test]
    fn a_perf_count_beyond_the_stores_integers_is_an_error_and_the_others_are_kept() {
        let counter = PerfCounter {
            key: 0x10,
            role: PerfRole::Sampled,
            config: 0x11,
        };
        let mut stream = PerfStream::new(2, vec![counter], PerfLeader::default(), 40);
        let mut keys = KeyMap::new();
        assert!(keys.insert(0x10, 1));
        let mut sink = FrameSink::new(ProtocolVersion::V950, keys, 1000);
        let mut out = Vec::new();
        sink.frame(&stream.attrs_frame(10), &mut out).unwrap();
        sink.frame(&stream.keys_frame(), &mut out).unwrap();
        let mut summary = Vec::new();
        let clocks = Clocks {
            monotonic_raw_ns: 40,
            ..Clocks::default()
        };
        encode_summary(ProtocolVersion::V950, &clocks, [], &mut summary);
        sink.frame(&summary, &mut out).unwrap();
        // Core 1's count grows by 2^63 in one period: more than an i64 holds.
        let increase = |_: usize, core: u32| if core == 1 { 1 << 63 } else { 7 };
        let mut errors = Vec::new();
        for frame in stream.sample_frames(20, 20, increase) {
            if let Err(err) = sink.frame(&frame, &mut out) {
                errors.push(err);
            }
        }
        assert_eq!(
            errors,
            [SinkError::Count(CountOutOfRange { count: 1 << 63 })]
        );
        let got: Vec<_> = out.iter().map(|(_, s)| (s.core, s.value)).collect();
        assert_eq!(got, [(Some(0), Value::Int(7))], "core 0's value is kept");
    }

    #[test]
    fn negative_timestamps_clamp_to_the_session_start() {
        let payload = block(&[
            Record::Timestamp(-5),
            Record::Value {
                key: 0x5e,
                value: 1,
            },
        ]);
        let mut out = Vec::new();
        sink(100).frame(&payload, &mut out).unwrap();
        assert_eq!(out[0].1.timestamp_ns, 100);
    }

    #[test]
    fn values_keep_every_key_with_the_rules_of_frame() {
        // Key 0x40 is bound to no counter; a value before any core marker has no core; a perf value keeps
        // its running total.
        let payload = block(&[
            Record::Timestamp(-5),
            Record::Value {
                key: 0x40,
                value: 3,
            },
            Record::Core(1),
            Record::Value {
                key: 0x5e,
                value: 4,
            },
        ]);
        let mut sink = sink(100);
        let frame = Frame::parse(&payload, ProtocolVersion::V950).unwrap();
        let mut values = Vec::new();
        sink.values(&frame, &mut values).unwrap();
        let got: Vec<_> = values
            .iter()
            .map(|v| (v.key, v.sample.timestamp_ns, v.sample.core, v.perf_total))
            .collect();
        assert_eq!(got, [(0x40, 100, None, None), (0x5e, 100, Some(1), None)]);
        let mut bound = Vec::new();
        sink.frame(&payload, &mut bound).unwrap();
        assert_eq!(bound, [(1, values[1].sample)]);

        let mut stream = PerfStream::new(
            1,
            vec![PerfCounter {
                key: 0x10,
                role: PerfRole::Sampled,
                config: 0x11,
            }],
            PerfLeader::default(),
            40,
        );
        let mut summary = Vec::new();
        let clocks = Clocks {
            monotonic_raw_ns: 40,
            ..Clocks::default()
        };
        encode_summary(ProtocolVersion::V950, &clocks, [], &mut summary);
        let mut values = Vec::new();
        for payload in [stream.attrs_frame(10), stream.keys_frame(), summary]
            .into_iter()
            .chain(stream.sample_frames(20, 20, |_, _| 7))
        {
            let frame = Frame::parse(&payload, ProtocolVersion::V950).unwrap();
            sink.values(&frame, &mut values).unwrap();
        }
        let perf: Vec<_> = values
            .iter()
            .filter(|v| v.key == 0x10)
            .map(|v| {
                (
                    v.sample.timestamp_ns,
                    v.sample.core,
                    v.sample.value,
                    v.perf_total,
                )
            })
            .collect();
        assert_eq!(perf, [(120, Some(0), Value::Int(7), Some(7))]);
    }

    /// A PERF_DATA frame of cpu `cpu` holding event-based samples `(id, time, period)`, each with a call
    /// chain, shaped like gatord 9.7.2's metric events.
    fn ebs_samples(cpu: i32, samples: &[(u64, u64, u64)]) -> Vec<u8> {
        use gator_proto::apc::{
            record_header, PerfData, SampleLayout, SampleRecord, WordSlice, PERF_RECORD_SAMPLE,
        };
        let layout = SampleLayout {
            sample_type: gator_proto::apc::SampleType(0x10327),
            read_format: gator_proto::apc::ReadFormat(0x7),
        };
        let mut words = Vec::new();
        for &(id, time, period) in samples {
            let start = words.len();
            SampleRecord {
                identifier: Some(id),
                ip: Some(0x40_0000),
                pid_tid: Some((1, 1)),
                time: Some(time),
                addr: None,
                id: None,
                stream_id: Some(100),
                cpu: None,
                period: Some(period),
                read: None,
                tail: WordSlice::default(),
            }
            .encode_words(layout, 0, 0, &[], &mut words);
            words.extend_from_slice(&[1, 0x40_0000]);
            words[start] = record_header(PERF_RECORD_SAMPLE, 0, words.len() - start - 1);
        }
        let mut out = Vec::new();
        PerfData::encode(cpu, &words, &mut out);
        out
    }

    #[test]
    fn a_metric_is_computed_from_the_events_gatord_links_to_it() {
        use gator_proto::apc::{
            encode_keys_message, encode_pea_message, MetricEventRole, PerfAttrs, PerfAttrsMessage,
            PerfEventAttr, ReadFormat, SampleType,
        };
        const IPC: i32 = 0x20;
        const CPI: i32 = 0x22;
        const UNKNOWN: i32 = 0x24;
        const CYCLES: i32 = 0x7fff_fffe;
        const INST: i32 = 0x7fff_fffd;
        let mut keys = KeyMap::new();
        for (key, id) in [(IPC, 1), (CPI, 2), (UNKNOWN, 3)] {
            assert!(keys.insert(key, id));
        }
        let mut sink = FrameSink::new(ProtocolVersion::V950, keys, 1000);
        assert!(sink.bind_metric(IPC, "ARMv8_Cortex_A72_metric_ipc"));
        assert!(sink.bind_metric(CPI, "ARMv8_Cortex_A72_metric_cpi"));
        assert!(sink.bind_metric(UNKNOWN, "ARMv8_Cortex_A72_metric_made_up"));
        assert!(!sink.bind_metric(0x26, "ARMv8_Cortex_A72_ccnt"));
        // Before the events are announced, only the missing formula is known.
        assert_eq!(sink.unavailable(), [(3, Unavailable::MetricFormulaUnknown)]);
        // PEA of cycles and INST_RETIRED (EBS: PERIOD, no READ), their ids, and the links.
        let attr = |config| PerfEventAttr {
            kind: 8,
            size: 144,
            config,
            sample_period_or_freq: 1000,
            sample_type: SampleType(0x10327),
            read_format: ReadFormat(0x7),
            flags: 0x204_4000,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: 4,
        };
        let mut frame = Vec::new();
        PerfAttrs::encode_header(0, &mut frame);
        encode_pea_message(CYCLES, &attr(0x11), &mut frame);
        encode_pea_message(INST, &attr(0x08), &mut frame);
        for metric in [IPC, CPI] {
            for (code, key, role) in [
                (0x11, CYCLES, MetricEventRole::CycleCounter),
                (0x08, INST, MetricEventRole::Event),
            ] {
                PerfAttrsMessage::MetricEventKey {
                    metric_key: metric,
                    event_code: code,
                    event_key: key,
                    role,
                }
                .encode(&mut frame);
            }
        }
        encode_keys_message(&[(100, CYCLES), (101, INST)], &mut frame);
        let mut out = Vec::new();
        sink.frame(&frame, &mut out).unwrap();
        assert_eq!(sink.unavailable(), [(3, Unavailable::MetricFormulaUnknown)]);
        let mut summary = Vec::new();
        encode_summary(ProtocolVersion::V950, &Clocks::default(), [], &mut summary);
        sink.frame(&summary, &mut out).unwrap();
        // CPU 0: two INST periods per cycles period (ipc 2, cpi 0.5); CPU 1: one (ipc 1, cpi 1).
        let cpu0 = ebs_samples(
            0,
            &[
                (101, 10, 1000),
                (101, 15, 1000),
                (100, 20, 1000),
                (101, 25, 1000),
            ],
        );
        let cpu1 = ebs_samples(1, &[(101, 12, 1000), (100, 22, 1000), (101, 30, 1000)]);
        sink.frame(&cpu0, &mut out).unwrap();
        sink.frame(&cpu1, &mut out).unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|(id, s)| (*id, s.timestamp_ns, s.value, s.core))
            .collect();
        assert_eq!(
            got,
            [
                // cpi: the first INST sample on each CPU closes an interval without cycles.
                (2, 1010, Value::Float(0.0), Some(0)),
                (2, 1015, Value::Float(0.0), Some(0)),
                (1, 1020, Value::Float(2.0), Some(0)),
                (2, 1025, Value::Float(1.0), Some(0)),
                (2, 1012, Value::Float(0.0), Some(1)),
                (1, 1022, Value::Float(1.0), Some(1)),
                (2, 1030, Value::Float(1.0), Some(1)),
            ]
        );
        // A metric gatord linked no events to is unavailable once the events are announced.
        let mut keys = KeyMap::new();
        assert!(keys.insert(0x28, 4));
        let mut alone = FrameSink::new(ProtocolVersion::V950, keys, 0);
        alone.bind_metric(0x28, "ARMv8_Cortex_A72_metric_branch_mpki");
        assert!(alone.unavailable().is_empty());
        alone.frame(&frame, &mut out).unwrap();
        assert_eq!(alone.unavailable(), [(4, Unavailable::MetricNotOpened)]);
    }
}
