//! Perf-backed counters decoded from two real gatord 9.7.2 recordings, checked against the truths their READMEs
//! state (`../shared/data/gatord-9.7.2/perf-session/README.md` and `../shared/data/README.md`):
//!
//! - `perf-session/d2c.bin`: every byte gatord sent on the capture connection (x86_64 VM, 2 CPUs, software
//!   events only): a busy loop on CPU 0, a 20000-round-trip pipe ping-pong on CPU 1 from t = 0.988 s to 1.067 s.
//! - `arm64-vm-local.apc/0000000000`: gatord's own local capture on an emulated Cortex-A72 (`-icount shift=0`:
//!   one instruction per cycle at a virtual 1 GHz) running a busy loop.
//!
//! A missing data folder is a printed skip.

use std::collections::HashMap;

use gator_proto::apc::{
    Delivery, Frame, LocalCaptureReader, PerfCounterSample, PerfCounterTracker, PerfFrames,
    SampleLayout, SampleRecord, PERF_RECORD_LOST, PERF_RECORD_SAMPLE, PERF_RECORD_SWITCH_CPU_WIDE,
};
use gator_proto::recorded::RecordedResponses;
use gator_proto::ProtocolVersion;

const MEMFREE: i32 = 0x5e;
const CPU_CLOCK_REQUESTED: i32 = 0x1e;
const TASK_CLOCK_REQUESTED: i32 = 0x20;
const SWITCHES_REQUESTED: i32 = 0x22;
const CCNT_FAILED: i32 = 0xa;
/// gatord's own sampling group: context switches (leader, period 1) and the CPU clock (period 991080 ns).
const GATORD_SWITCHES: i32 = 0x7fff_ffff;
const GATORD_CLOCK: i32 = 0x7fff_fffd;
/// Keys of the arm64 capture (`arm64-vm-local.apc/captured.xml`).
const ARM_CCNT: i32 = 0xa;
const ARM_INST_RETIRED: i32 = 0xc;
const ARM_TASK_CLOCK: i32 = 0x66;

fn data(path: &str) -> Option<Vec<u8>> {
    test_data::gatord_bytes(path)
}

/// The APC frames of a recorded daemon→client stream.
fn live_frames(d2c: &[u8]) -> Vec<&[u8]> {
    RecordedResponses::new(d2c)
        .unwrap()
        .apc_frames()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Feeds every frame to a tracker; returns it and the samples, asserting no frame fails.
fn track(frames: &[&[u8]]) -> (PerfCounterTracker, Vec<PerfCounterSample>) {
    let mut tracker = PerfCounterTracker::new();
    let mut out = Vec::new();
    for bytes in frames {
        let frame = Frame::parse(bytes, ProtocolVersion::V950).unwrap();
        tracker.handle_frame(&frame, &mut out).unwrap();
    }
    (tracker, out)
}

fn series(samples: &[PerfCounterSample], core: i32, key: i32) -> Vec<PerfCounterSample> {
    samples
        .iter()
        .filter(|s| s.core == core && s.key == key)
        .copied()
        .collect()
}

#[test]
fn perf_session_record_counts_and_sample_writers() {
    let Some(d2c) = data("perf-session/d2c.bin") else {
        return;
    };
    let frames = live_frames(&d2c);
    let (tracker, _) = track(&frames);
    // Per CPU: record type → count; SAMPLE writer key → count; busy-loop samples, in user mode.
    let mut kinds: HashMap<(i32, u32), u64> = HashMap::new();
    let mut writers: HashMap<(i32, i32), u64> = HashMap::new();
    let (mut busy, mut busy_user) = (0, 0);
    for bytes in &frames {
        let Ok(Frame::PerfData(data)) = Frame::parse(bytes, ProtocolVersion::V950) else {
            continue;
        };
        for record in data.records() {
            let record = record.unwrap();
            *kinds.entry((data.cpu, record.kind)).or_default() += 1;
            if record.kind != PERF_RECORD_SAMPLE {
                continue;
            }
            let id = record.body().next().unwrap().unwrap();
            let key = tracker.key_of(id).unwrap();
            let attr = tracker.attr(key).unwrap();
            let layout = SampleLayout {
                sample_type: attr.sample_type,
                read_format: attr.read_format,
            };
            let sample = SampleRecord::parse(&record, layout).unwrap();
            *writers.entry((data.cpu, key)).or_default() += 1;
            if data.cpu == 0 && key == GATORD_CLOCK && sample.pid_tid.unwrap().0 == 20105 {
                busy += 1;
                busy_user += u32::from(record.cpu_mode() == 2);
            }
        }
    }
    assert_eq!(kinds[&(0, PERF_RECORD_SAMPLE)], 2992);
    assert_eq!(kinds[&(0, PERF_RECORD_SWITCH_CPU_WIDE)], 142);
    assert_eq!(kinds[&(1, PERF_RECORD_SAMPLE)], 6441);
    assert_eq!(kinds[&(1, PERF_RECORD_SWITCH_CPU_WIDE)], 12761);
    assert_eq!(kinds[&(1, PERF_RECORD_LOST)], 1);
    assert_eq!(tracker.lost_records(), 104_845);
    assert_eq!(tracker.sample_records(), 2992 + 6441);
    assert_eq!(writers[&(0, GATORD_CLOCK)], 2921);
    assert_eq!(writers[&(1, GATORD_CLOCK)], 60);
    assert_eq!((busy, busy_user), (2918, 2917));
}

#[test]
fn perf_session_busy_cpu_clock_and_ping_pong_switches() {
    let Some(d2c) = data("perf-session/d2c.bin") else {
        return;
    };
    let (tracker, samples) = track(&live_frames(&d2c));
    // Every SAMPLE carries a group read of nr = 2.
    assert_eq!(samples.len(), 2 * (2992 + 6441));

    // CPU 0 ran the busy loop: its CPU clock rises by the window length.
    let clock0 = series(&samples, 0, GATORD_CLOCK);
    let (first, last) = (clock0[0], clock0[clock0.len() - 1]);
    assert_eq!(last.total - first.total, 2_894_282_018);
    assert_eq!(last.time_ns - first.time_ns, 2_894_280_966);
    assert_eq!((first.time_ns + 50_000) / 100_000, 710); // t = 0.0710 s
    assert_eq!((last.time_ns + 50_000) / 100_000, 29_653); // t = 2.9653 s
    let summed: u64 = clock0[1..].iter().map(|s| s.delta).sum();
    assert_eq!(
        summed, 2_894_282_018,
        "deltas add up to the rise of the total"
    );
    let clock1 = series(&samples, 1, GATORD_CLOCK);
    assert_eq!(
        clock1[clock1.len() - 1].total - clock1[0].total,
        2_894_180_666
    );

    // CPU 1 ran the ping-pong: ≥ 40000 context switches between the samples around it.
    let switches1 = series(&samples, 1, GATORD_SWITCHES);
    let before = switches1
        .iter()
        .rev()
        .find(|s| s.time_ns < 988_000_000)
        .unwrap();
    let after = switches1
        .iter()
        .find(|s| s.time_ns > 1_067_000_000)
        .unwrap();
    assert_eq!(
        (before.total, (before.time_ns + 50_000) / 100_000),
        (582, 9869)
    );
    assert_eq!(
        (after.total, (after.time_ns + 50_000) / 100_000),
        (40_688, 10_688)
    );
    assert_eq!(after.total - before.total, 40_106);
    assert_eq!(switches1.last().unwrap().total, 41_601);
    assert_eq!(switches1.iter().map(|s| s.delta).sum::<u64>(), 41_601);
    let switches0 = series(&samples, 0, GATORD_SWITCHES);
    assert_eq!(
        (switches0[0].total, switches0.last().unwrap().total),
        (0, 72)
    );

    // The requested counters: announced, opened for counting (never read) or not opened, never valued.
    for key in [
        CPU_CLOCK_REQUESTED,
        TASK_CLOCK_REQUESTED,
        SWITCHES_REQUESTED,
    ] {
        assert_eq!(tracker.delivery(key), Delivery::CountingOnly, "{key:#x}");
    }
    assert_eq!(tracker.delivery(CCNT_FAILED), Delivery::NotOpened);
    assert_eq!(tracker.delivery(MEMFREE), Delivery::NotAnnounced);
    assert_eq!(tracker.delivery(GATORD_CLOCK), Delivery::Sampled);
    assert!(samples
        .iter()
        .all(|s| s.key == GATORD_CLOCK || s.key == GATORD_SWITCHES));
}

#[test]
fn arm64_cycles_equal_instructions_at_one_per_nanosecond() {
    let Some(file) = data("arm64-vm-local.apc/0000000000") else {
        return;
    };
    let frames: Vec<&[u8]> = LocalCaptureReader::new(&file).map(Result::unwrap).collect();
    let (tracker, samples) = track(&frames);
    let ccnt = series(&samples, 0, ARM_CCNT);
    let inst = series(&samples, 0, ARM_INST_RETIRED);
    let clock = series(&samples, 0, GATORD_CLOCK);
    // 4181 samples; the last 31 (after the PMU events stopped) carry the CPU clock alone.
    assert_eq!(tracker.sample_records(), 4181);
    assert_eq!(clock.len(), 4181);
    assert_eq!(ccnt.len(), 4150);
    assert_eq!(inst.len(), ccnt.len());
    // Over every interval between two samples, cycles == instructions (one instruction per cycle).
    // Group members are read one after another, so a few single intervals differ by a handful of counts that
    // the next interval gives back; from the first sample to any later one the totals stay within that.
    let mut differing = 0;
    let mut worst = 0;
    for (c, i) in ccnt.iter().zip(&inst) {
        assert_eq!(c.time_ns, i.time_ns);
        differing += u32::from(c.delta != i.delta);
        let since_first = |s: &PerfCounterSample, first: &PerfCounterSample| s.total - first.total;
        worst = worst.max(since_first(c, &ccnt[0]).abs_diff(since_first(i, &inst[0])));
    }
    eprintln!(
        "intervals where cycles != instructions: {differing} of {}, worst {worst}",
        ccnt.len()
    );
    assert!(worst <= 64, "{worst}");
    let span_ns = (ccnt.last().unwrap().time_ns - ccnt[0].time_ns) as f64;
    let cycles = (ccnt.last().unwrap().total - ccnt[0].total) as f64;
    let instructions = (inst.last().unwrap().total - inst[0].total) as f64;
    let clock_ns = (clock.last().unwrap().total - clock[0].total) as f64;
    let clock_span_ns = (clock.last().unwrap().time_ns - clock[0].time_ns) as f64;
    eprintln!(
        "span {span_ns} ns, cycles {cycles}, instructions {instructions}, cpu clock {clock_ns} ns"
    );
    assert!(span_ns > 2.5e9, "{span_ns}");
    let per_second = |v: f64| v / span_ns * 1e9;
    assert!((per_second(cycles) / 1e9 - 1.0).abs() < 0.05, "{cycles}");
    assert!(
        (per_second(instructions) / 1e9 - 1.0).abs() < 0.05,
        "{instructions}"
    );
    assert_eq!(cycles, instructions);
    assert!(
        (clock_ns / clock_span_ns - 1.0).abs() < 0.01,
        "{clock_ns} {clock_span_ns}"
    );
    assert_eq!(tracker.delivery(ARM_CCNT), Delivery::Sampled);
    assert_eq!(tracker.delivery(ARM_INST_RETIRED), Delivery::Sampled);
    assert_eq!(tracker.delivery(ARM_TASK_CLOCK), Delivery::CountingOnly);
    let attr = tracker.attr(ARM_INST_RETIRED).unwrap();
    assert_eq!(
        (attr.kind, attr.config, attr.sample_period()),
        (8, 0x8, None)
    );
    assert_eq!(tracker.attr(ARM_CCNT).unwrap().config, 0x11);
}
