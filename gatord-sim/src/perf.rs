//! Perf-backed counters the way gatord 9.7.2 sends them: PERF_ATTRS (one PEA per key, then a KEYS message with
//! one perf id per event and CPU) and PERF_DATA frames (one per CPU per sample) holding a PERF_RECORD_SAMPLE
//! written by gatord's CPU clock event, whose group read carries the running totals of gatord's own group
//! leader, the CPU clock and every perf-backed counter, each with its id.
//!
//! Layouts follow the recordings of the real daemon (x86_64 without tracefs, and the emulated Arm system with
//! tracefs mounted): the group is led by the context-switch software event or by the `sched:sched_switch`
//! tracepoint ([`PerfLeader`]); the CPU clock samples with sample_type IDENTIFIER | IP | TID | TIME |
//! STREAM_ID | READ (0x10217) and read_format TOTAL_TIME_ENABLED | RUNNING | ID | GROUP (0xf); a counter is a
//! group member counting its event (`config` the PMU event code); gatord's dummy software event (for its
//! process records) counts beside the group; every event uses CLOCK_MONOTONIC_RAW. Counting-only events
//! (period 0, no group read) are announced and given ids but never read, as gatord does for counters
//! configured without a `count`.

use gator_proto::apc::{
    encode_keys_message, encode_pea_message, PerfAttrs, PerfData, PerfEventAttr, ReadFormat,
    ReadValue, SampleLayout, SampleRecord, SampleType, WordSlice, CLOCK_MONOTONIC_RAW,
};

/// gatord's own group leader.
const LEADER_KEY: i32 = 0x7fff_ffff;
/// gatord's own dummy software event, counting beside the group.
const DUMMY_KEY: i32 = 0x7fff_fffe;
/// gatord's own CPU clock event, the group member that triggers the samples.
const CLOCK_KEY: i32 = 0x7fff_fffd;
/// `perf_event_attr.type` of the Arm PMU in the arm64 recording (`armv8_pmuv3`).
const PMU_TYPE: u32 = 8;
/// `PERF_TYPE_SOFTWARE`.
const SOFTWARE_TYPE: u32 = 1;
/// `PERF_TYPE_TRACEPOINT`.
const TRACEPOINT_TYPE: u32 = 2;
/// `PERF_COUNT_SW_CONTEXT_SWITCHES`, `PERF_COUNT_SW_DUMMY`.
const CONTEXT_SWITCHES: u64 = 3;
const DUMMY: u64 = 9;
/// gatord's bit-field words, as recorded: a group member (sample_id_all, use_clockid, watermark), a
/// stand-alone counting event, and its own pinned, disabled group leader and dummy event (the context-switch
/// leader also sets `context_switch`).
const MEMBER_FLAGS: u64 = 0x204_4000;
const PINNED_FLAGS: u64 = 0x204_4005;
const OWN_FLAGS: u64 = 0x4_0384_6305;
const CONTEXT_SWITCH_LEADER_FLAGS: u64 = 0x4_0784_6305;
const GROUP_SAMPLE_TYPE: u64 = 0x10217;
const MEMBER_SAMPLE_TYPE: u64 = 0x10214;
const TRACEPOINT_SAMPLE_TYPE: u64 = 0x10716;
const COUNTING_SAMPLE_TYPE: u64 = 0x10204;
/// The first perf id; ids go up by one per event and CPU.
const FIRST_ID: u64 = 51;

/// How a perf-backed counter reaches (or does not reach) the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfRole {
    /// A group member read in every sample of gatord's sampling group.
    Sampled,
    /// Opened for counting only: announced, never read.
    CountingOnly,
}

/// One perf-backed counter of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfCounter {
    /// The counter's key.
    pub key: i32,
    /// How it is served.
    pub role: PerfRole,
    /// `perf_event_attr.config`: the PMU event it counts (0x11 for an Arm cycle counter, the programmed
    /// event for a slot).
    pub config: u64,
}

/// What leads gatord's sampling group, which depends on whether the target has tracefs mounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PerfLeader {
    /// The context-switch software event, as gatord does without tracefs (the x86_64 recording).
    #[default]
    ContextSwitches,
    /// The `sched:sched_switch` tracepoint, as gatord does with tracefs mounted (the emulated Arm system);
    /// gatord then also announces its ftrace reader in an EXTERNAL frame.
    SchedSwitch {
        /// The tracepoint's id (its tracefs `events/sched/sched_switch/id`).
        tracepoint: u64,
    },
}

/// The perf side of one simulated capture: keys, ids, running totals.
#[derive(Debug, Clone)]
pub struct PerfStream {
    cores: u32,
    /// The bound perf-backed counters, in key-map order.
    counters: Vec<PerfCounter>,
    leader: PerfLeader,
    /// CLOCK_MONOTONIC_RAW at capture start, as sent in the SUMMARY.
    clock_base_ns: i64,
    /// Running totals per core: leader, clock, then each sampled counter.
    totals: Vec<Vec<u64>>,
    samples: u64,
}

impl PerfStream {
    /// A stream over `cores` CPUs for `counters`, its group led by `leader`, whose SUMMARY says
    /// CLOCK_MONOTONIC_RAW = `clock_base_ns`.
    pub fn new(
        cores: u32,
        counters: Vec<PerfCounter>,
        leader: PerfLeader,
        clock_base_ns: i64,
    ) -> PerfStream {
        let sampled = counters
            .iter()
            .filter(|c| c.role == PerfRole::Sampled)
            .count();
        PerfStream {
            cores: cores.max(1),
            totals: vec![vec![0; 2 + sampled]; cores.max(1) as usize],
            counters,
            leader,
            clock_base_ns,
            samples: 0,
        }
    }

    /// Every key with an event, in id order: leader, clock, the counters, then the dummy event.
    fn keys(&self) -> impl Iterator<Item = i32> + '_ {
        [LEADER_KEY, CLOCK_KEY]
            .into_iter()
            .chain(self.counters.iter().map(|c| c.key))
            .chain([DUMMY_KEY])
    }

    fn id(&self, core: u32, event: usize) -> u64 {
        let per_core = 3 + self.counters.len() as u64;
        FIRST_ID + u64::from(core) * per_core + event as u64
    }

    /// The PERF_ATTRS frame announcing every event (sent before the SUMMARY, as gatord does).
    pub fn attrs_frame(&self, period_ns: u64) -> Vec<u8> {
        let attr = |kind, config, period, sample_type, read_format, flags| PerfEventAttr {
            kind,
            size: 144,
            config,
            sample_period_or_freq: period,
            sample_type: SampleType(sample_type),
            read_format: ReadFormat(read_format),
            flags,
            config1: 0,
            config2: 0,
            sample_regs_user: 0,
            clockid: CLOCK_MONOTONIC_RAW,
        };
        let leader = match self.leader {
            PerfLeader::ContextSwitches => attr(
                SOFTWARE_TYPE,
                CONTEXT_SWITCHES,
                1,
                GROUP_SAMPLE_TYPE,
                0xf,
                CONTEXT_SWITCH_LEADER_FLAGS,
            ),
            PerfLeader::SchedSwitch { tracepoint } => attr(
                TRACEPOINT_TYPE,
                tracepoint,
                1,
                TRACEPOINT_SAMPLE_TYPE,
                0xf,
                OWN_FLAGS,
            ),
        };
        let clock = attr(
            SOFTWARE_TYPE,
            0,
            period_ns,
            GROUP_SAMPLE_TYPE,
            0xf,
            MEMBER_FLAGS,
        );
        let mut attrs = vec![(LEADER_KEY, leader), (CLOCK_KEY, clock)];
        for (i, counter) in self.counters.iter().enumerate() {
            attrs.push((
                counter.key,
                match counter.role {
                    PerfRole::Sampled => attr(
                        PMU_TYPE,
                        counter.config,
                        0,
                        MEMBER_SAMPLE_TYPE,
                        0xf,
                        MEMBER_FLAGS,
                    ),
                    PerfRole::CountingOnly => attr(
                        SOFTWARE_TYPE,
                        i as u64,
                        0,
                        COUNTING_SAMPLE_TYPE,
                        0x7,
                        PINNED_FLAGS,
                    ),
                },
            ));
        }
        attrs.push((
            DUMMY_KEY,
            attr(
                SOFTWARE_TYPE,
                DUMMY,
                0,
                COUNTING_SAMPLE_TYPE,
                0x7,
                OWN_FLAGS,
            ),
        ));
        let mut out = Vec::new();
        PerfAttrs::encode_header(0, &mut out);
        for (key, attr) in attrs {
            encode_pea_message(key, &attr, &mut out);
        }
        out
    }

    /// The PERF_ATTRS frame mapping every event's per-CPU id to its key (sent after the SUMMARY).
    pub fn keys_frame(&self) -> Vec<u8> {
        let mut pairs = Vec::new();
        for core in 0..self.cores {
            for (event, key) in self.keys().enumerate() {
                pairs.push((self.id(core, event) as i64, key));
            }
        }
        let mut out = Vec::new();
        PerfAttrs::encode_header(0, &mut out);
        encode_keys_message(&pairs, &mut out);
        out
    }

    /// One PERF_DATA frame per CPU with a sample at `timestamp_ns` (since capture start) after `elapsed_ns` of
    /// CPU clock; each sampled counter's total grows on every core by `increase(counter index in the key
    /// map, core)`.
    pub fn sample_frames(
        &mut self,
        timestamp_ns: i64,
        elapsed_ns: u64,
        increase: impl Fn(usize, u32) -> u64,
    ) -> Vec<Vec<u8>> {
        self.samples += 1;
        let layout = SampleLayout {
            sample_type: SampleType(GROUP_SAMPLE_TYPE),
            read_format: ReadFormat(0xf),
        };
        let time = u64::try_from(self.clock_base_ns.saturating_add(timestamp_ns)).unwrap_or(0);
        let mut frames = Vec::new();
        let events = 2 + self.counters.len();
        for core in 0..self.cores {
            let clock_id = self.id(core, 1);
            let ids: Vec<u64> = (0..events).map(|event| self.id(core, event)).collect();
            let mut values = Vec::new();
            let totals = &mut self.totals[core as usize];
            totals[0] = self.samples;
            totals[1] = elapsed_ns;
            let mut slot = 2;
            for (index, counter) in self.counters.iter().enumerate() {
                if counter.role == PerfRole::Sampled {
                    totals[slot] = totals[slot].wrapping_add(increase(index, core));
                    slot += 1;
                }
            }
            let mut slot = 0;
            for (event, role) in [PerfRole::Sampled, PerfRole::Sampled]
                .into_iter()
                .chain(self.counters.iter().map(|c| c.role))
                .enumerate()
            {
                if role == PerfRole::Sampled {
                    values.push(ReadValue {
                        value: totals[slot],
                        id: Some(ids[event]),
                        lost: None,
                    });
                    slot += 1;
                }
            }
            let mut words = Vec::new();
            SampleRecord {
                identifier: Some(clock_id),
                ip: Some(0),
                pid_tid: Some((0, 0)),
                time: Some(time),
                addr: None,
                id: None,
                stream_id: Some(clock_id),
                cpu: None,
                period: None,
                read: None,
                tail: WordSlice::default(),
            }
            .encode_words(layout, elapsed_ns, elapsed_ns, &values, &mut words);
            let mut frame = Vec::new();
            PerfData::encode(core as i32, &words, &mut frame);
            frames.push(frame);
        }
        frames
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gator_proto::apc::{Delivery, Frame, PerfCounterTracker, PerfFrames};
    use gator_proto::ProtocolVersion;

    #[test]
    fn what_the_simulator_sends_decodes_as_gatords_data() {
        let counter = |key, role, config| PerfCounter { key, role, config };
        let mut stream = PerfStream::new(
            2,
            vec![
                counter(0x4, PerfRole::Sampled, 0x11),
                counter(0x6, PerfRole::CountingOnly, 0),
                counter(0x8, PerfRole::Sampled, 0x8),
            ],
            PerfLeader::SchedSwitch { tracepoint: 0x108 },
            1_000,
        );
        let mut tracker = PerfCounterTracker::new();
        let mut out = Vec::new();
        let mut feed = |frame: &[u8], tracker: &mut PerfCounterTracker| {
            let frame = Frame::parse(frame, ProtocolVersion::V950).unwrap();
            tracker.handle_frame(&frame, &mut out).unwrap();
        };
        feed(&stream.attrs_frame(1_000_000), &mut tracker);
        tracker.set_clock_base(1_000);
        feed(&stream.keys_frame(), &mut tracker);
        for frame in stream.sample_frames(500, 1_000_000, |i, core| {
            (i as u64 + 1) * 10 + u64::from(core)
        }) {
            feed(&frame, &mut tracker);
        }
        for frame in stream.sample_frames(900, 2_000_000, |i, core| {
            (i as u64 + 1) * 10 + u64::from(core)
        }) {
            feed(&frame, &mut tracker);
        }
        assert_eq!(tracker.delivery(0x4), Delivery::Sampled);
        assert_eq!(tracker.delivery(0x6), Delivery::CountingOnly);
        let of = |key: i32, core: i32| -> Vec<(i64, u64)> {
            out.iter()
                .filter(|s| s.key == key && s.core == core)
                .map(|s| (s.time_ns, s.delta))
                .collect()
        };
        assert_eq!(of(0x4, 0), [(500, 10), (900, 10)]);
        assert_eq!(of(0x8, 1), [(500, 31), (900, 31)]);
        assert_eq!(of(CLOCK_KEY, 1), [(500, 1_000_000), (900, 1_000_000)]);
        assert!(of(0x6, 0).is_empty());
    }
}
