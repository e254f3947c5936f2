//! Perf-backed counters of two real gatord 9.7.2 recordings through the engine's frame sink and store, checked
//! against the truths their READMEs state:
//!
//! - `../shared/data/gatord-9.7.2/arm64-vm-local.apc/` (`0000000000` = gatord's own local capture on an emulated
//!   Cortex-A72, `-icount shift=0`: one instruction per cycle at a virtual 1 GHz; keys from its `captured.xml`).
//! - `../shared/data/gatord-9.7.2/perf-session/` (`d2c.bin` = every byte gatord sent on the capture connection;
//!   keys from `resp-captured.xml`).
//!
//! A missing data folder is a printed skip.

mod common;

use common::gatord_data as data;
use gator_proto::apc::LocalCaptureReader;
use gator_proto::recorded::RecordedResponses;
use gator_proto::ProtocolVersion;
use lizard_core::{
    reduce, Counter, CounterId, FrameSink, KeyMap, Sample, SampleStore, Unavailable, Window,
};

const OFFSET_NS: u64 = 5_000_000_000;

/// Feeds `frames` through a sink with `keys` (key → id) into a store of `ids` counters.
fn replay(frames: &[&[u8]], keys: &[(i32, CounterId)], ids: usize) -> (FrameSink, SampleStore) {
    let mut map = KeyMap::new();
    for &(key, id) in keys {
        assert!(map.insert(key, id));
    }
    let mut sink = FrameSink::new(ProtocolVersion::V950, map, OFFSET_NS);
    let store = SampleStore::new(ids, 1 << 20);
    let mut out = Vec::new();
    for frame in frames {
        sink.frame(frame, &mut out).unwrap();
        store.push_all(out.drain(..));
    }
    (sink, store)
}

fn window_sum(store: &SampleStore, id: CounterId, start_ns: u64, end_ns: u64) -> i64 {
    let samples: Vec<Sample> = store
        .samples(id, Some(Window { start_ns, end_ns }))
        .unwrap();
    reduce::read_int(&Counter::gatord_delta(id, ""), &samples).expect("samples in the window")
}

#[test]
fn arm64_cycle_counter_and_instructions_through_the_engine() {
    let Some(file) = data("arm64-vm-local.apc/0000000000") else {
        return;
    };
    let frames: Vec<&[u8]> = LocalCaptureReader::new(&file).map(Result::unwrap).collect();
    // captured.xml: 0xa ARMv8_Cortex_A72_ccnt, 0xc ARMv8_Cortex_A72_cnt0 (event 0x8), 0x66 task clock,
    // 0x86 Linux_meminfo_memfree.
    let (sink, store) = replay(&frames, &[(0xa, 1), (0xc, 2), (0x66, 3), (0x86, 4)], 4);
    assert_eq!(sink.unavailable(), [(3, Unavailable::CountingOnly)]);
    assert!(store.samples(3, None).unwrap().is_empty());
    assert_eq!(store.samples(1, None).unwrap().len(), 4150);
    // Memory samples (BLOCK_COUNTER) and perf samples share the time base.
    let mem = store.samples(4, None).unwrap();
    let ccnt = store.samples(1, None).unwrap();
    // Memory samples (BLOCK_COUNTER, every 100 ms from t = 0.007 s) and perf samples (t = 0.38 s to 3.39 s)
    // share the time base: both end with the 3 s capture, within one BLOCK_COUNTER period of each other.
    let (mem_end, ccnt_end) = (
        mem.last().unwrap().timestamp_ns,
        ccnt.last().unwrap().timestamp_ns,
    );
    assert!(mem[0].timestamp_ns < ccnt[0].timestamp_ns);
    assert!(
        mem_end.abs_diff(ccnt_end) < 100_000_000,
        "{mem_end} {ccnt_end}"
    );
    assert!((3_000_000_000..3_500_000_000).contains(&(ccnt_end - OFFSET_NS)));
    // Over windows of one second and of 100 ms: cycles ≈ instructions ≈ 1e9 per second.
    for (from_s, len_ns) in [
        (0.5, 1_000_000_000u64),
        (1.2, 100_000_000),
        (2.0, 1_000_000_000),
    ] {
        let start = OFFSET_NS + (from_s * 1e9) as u64;
        let end = start + len_ns;
        let cycles = window_sum(&store, 1, start, end);
        let instructions = window_sum(&store, 2, start, end);
        assert!(
            (cycles - instructions).abs() <= 64,
            "{cycles} {instructions}"
        );
        let per_second = cycles as f64 * 1e9 / len_ns as f64;
        assert!(
            (per_second / 1e9 - 1.0).abs() < 0.05,
            "{from_s}: {per_second}"
        );
    }
    // The whole capture: ≈ 3.005e9 each; they differ only by the 175 counts of the first reading (the two
    // events were enabled one after the other: 12925 cycles and 12750 instructions at the first sample).
    let (cycles, instructions) = (
        window_sum(&store, 1, 0, u64::MAX),
        window_sum(&store, 2, 0, u64::MAX),
    );
    assert_eq!(cycles - instructions, 175);
    assert!((cycles as f64 / 3.005e9 - 1.0).abs() < 0.001, "{cycles}");
}

#[test]
fn perf_session_counters_gatord_never_sends_are_unavailable() {
    let Some(d2c) = data("perf-session/d2c.bin") else {
        return;
    };
    let frames: Vec<&[u8]> = RecordedResponses::new(&d2c)
        .unwrap()
        .apc_frames()
        .collect::<Result<_, _>>()
        .unwrap();
    // resp-captured.xml: 0x1e CPU_CLOCK, 0x22 CONTEXT_SWITCHES, 0x20 TASK_CLOCK, 0xa Perf_Hardware_ccnt,
    // 0x5e memfree, 0x18 Linux_cpu_wait_contention; and gatord's own CPU clock 0x7ffffffd bound to id 7 to
    // check that per-core values add up.
    let keys = [
        (0x1e, 1),
        (0x22, 2),
        (0x20, 3),
        (0xa, 4),
        (0x5e, 5),
        (0x18, 6),
        (0x7fff_fffd, 7),
    ];
    let (sink, store) = replay(&frames, &keys, 7);
    assert_eq!(
        sink.unavailable(),
        [
            (1, Unavailable::CountingOnly),
            (2, Unavailable::CountingOnly),
            (3, Unavailable::CountingOnly),
            (4, Unavailable::NotOpened)
        ]
    );
    for id in [1, 2, 3, 4, 6] {
        assert!(store.samples(id, None).unwrap().is_empty(), "{id}");
    }
    assert_eq!(store.samples(5, None).unwrap().len(), 30);
    // Both CPUs' clocks run for the whole window: 1 s of window reads ≈ 2 s of CPU clock (two cores summed).
    let start = OFFSET_NS + 1_000_000_000;
    let clock = window_sum(&store, 7, start, start + 1_000_000_000);
    assert!((clock as f64 / 2e9 - 1.0).abs() < 0.02, "{clock}");
    assert_eq!(sink.perf().lost_records(), 104_845);
}
