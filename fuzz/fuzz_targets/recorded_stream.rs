//! Fuzzes `gator_proto::recorded::RecordedResponses` with arbitrary recorded daemon-to-client streams (the
//! first input byte picks a `GATOR 950` line, a `GATOR 670` line or the raw bytes as the handshake): it must
//! never panic, must end after at most one error, must only step forward, and every APC frame it yields
//! goes through `Frame::parse`; a BLOCK_COUNTER frame's values with the markers applied
//! (`BlockCounter::samples`) must match a walk of its records by hand.
#![no_main]

use gator_proto::apc::{BlockCounter, Frame, Record};
use gator_proto::recorded::RecordedResponses;
use gator_proto::ProtocolVersion;
use libfuzzer_sys::fuzz_target;

fn check_samples(block: &BlockCounter<'_>) {
    // The values, and the error if any, are the records' own, in order.
    let values: Vec<_> = block
        .records()
        .filter_map(|record| match record {
            Ok(Record::Value { key, value }) => Some(Ok((key, value))),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect();
    let mut samples = block.samples();
    let got: Vec<_> = samples
        .by_ref()
        .map(|sample| sample.map(|s| (s.key, s.value)))
        .collect();
    assert_eq!(got, values);
    // The greatest timestamp is the greatest timestamp marker read.
    let stamps = block
        .records()
        .map_while(Result::ok)
        .filter_map(|r| match r {
            Record::Timestamp(t) => Some(t),
            _ => None,
        });
    assert_eq!(samples.latest_time(), stamps.max());
    // Every value carries the latest marker of each kind before it.
    let mut markers = (None, None, None);
    let mut values = block.samples().map_while(Result::ok);
    for record in block.records().map_while(Result::ok) {
        match record {
            Record::Timestamp(t) => markers.0 = Some(t),
            Record::Core(c) => markers.1 = Some(c),
            Record::Tid(t) => markers.2 = Some(t),
            Record::Value { .. } => {
                let s = values.next().expect("one sample per value record");
                assert_eq!((s.time, s.core, s.tid), markers);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut stream = match pick % 3 {
        0 => b"GATOR 950\n".to_vec(),
        1 => b"GATOR 670\n".to_vec(),
        _ => Vec::new(),
    };
    stream.extend_from_slice(rest);
    let Ok(responses) = RecordedResponses::new(&stream) else {
        return;
    };
    let version = responses.version();
    let version = if version.at_least(ProtocolVersion::V950) {
        ProtocolVersion::V950
    } else {
        ProtocolVersion::V670
    };
    let mut walk = responses.clone();
    let mut errors = 0;
    let mut last = walk.offset();
    while let Some(item) = walk.next() {
        errors += usize::from(item.is_err());
        assert!(errors <= 1 && (item.is_err() || walk.offset() > last));
        last = walk.offset();
    }
    for frame in responses.apc_frames() {
        let Ok(bytes) = frame else { break };
        if let Ok(Frame::BlockCounter(block)) = Frame::parse(bytes, version) {
            check_samples(&block);
        }
    }
});
