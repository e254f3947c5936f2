//! Fuzzes the lizard-core path from gatord APC payloads to readings: `lizard_core::FrameSink` over arbitrary
//! frames with an arbitrary `captured` key map, then the samples pushed into a small `SampleStore` and reduced
//! with `read_int` / `read_double` under an arbitrary class, multiplier and unit. Nothing may panic; every
//! sample must belong to a bound counter and carry a timestamp at or after the session offset; the store must
//! never hold more than its capacity per counter.
#![no_main]

use arbitrary::Arbitrary;
use gator_proto::ProtocolVersion;
use libfuzzer_sys::fuzz_target;
use lizard_core::{reduce, Counter, CounterClass, FrameSink, KeyMap, SampleStore, Units};

#[derive(Debug, Arbitrary)]
struct Input {
    new_protocol: bool,
    keys: Vec<(i32, u8)>,
    offset_ns: u32,
    capacity: u8,
    absolute: bool,
    mhz: bool,
    multiplier: f64,
    frames: Vec<Vec<u8>>,
}

const COUNTERS: usize = 4;

fuzz_target!(|input: Input| {
    let mut keys = KeyMap::new();
    for &(key, id) in &input.keys {
        keys.insert(key, u32::from(id % (COUNTERS as u8 + 1)));
    }
    let version = if input.new_protocol {
        ProtocolVersion::V950
    } else {
        ProtocolVersion::V670
    };
    let offset = u64::from(input.offset_ns);
    let mut sink = FrameSink::new(version, keys.clone(), offset);
    let store = SampleStore::new(COUNTERS, usize::from(input.capacity));
    let mut out = Vec::new();
    for frame in &input.frames {
        out.clear();
        let _ = sink.frame(frame, &mut out);
        for (id, sample) in &out {
            assert!(input.keys.iter().any(|&(k, _)| keys.get(k) == Some(*id)));
            assert!(sample.timestamp_ns >= offset);
        }
        store.push_all(out.iter().copied());
    }
    let counter = Counter {
        multiplier: input.multiplier,
        units: if input.mhz {
            Units::Megahertz
        } else {
            Units::Unknown
        },
        class: if input.absolute {
            CounterClass::Absolute
        } else {
            CounterClass::Delta
        },
        ..Counter::gatord_delta(1, "")
    };
    for id in 1..=COUNTERS as u32 {
        let samples = store.samples(id, None).unwrap();
        assert!(samples.len() <= store.capacity());
        let _ = reduce::read_int(&counter, &samples);
        let _ = reduce::read_double(&counter, &samples);
    }
});
