//! The real gatord 9.7.2 recording (`../shared/data/gatord-9.7.2/live-session/`: `d2c.bin` = every byte the
//! daemon sent, `resp-counters.xml`, `resp-captured.xml`) replayed through the simulated gatord and the engine:
//! the merged events document and the APC frames are taken from `d2c.bin` with gator-proto's decoders, and the
//! engine must read exactly the memfree / memused2 / net_rx samples the recorded BLOCK_COUNTER frames hold.

mod common;

use std::collections::HashMap;

use common::{config_for, id_of};
use gator_proto::apc::{Frame, Record};
use gator_proto::recorded::RecordedResponses;
use gator_proto::response::ResponseType;
use gator_proto::ProtocolVersion;
use gatord_sim::{self as sim, SimConfig, Stream};
use lizard_core::{CounterClass, Lizard, Value};

/// The first XML reply (the events document) and every non-empty APC payload of the recording.
fn split_recording(bytes: &[u8]) -> (String, Vec<Vec<u8>>) {
    let responses = RecordedResponses::new(bytes).expect("the handshake line");
    assert_eq!(responses.version(), ProtocolVersion::V950);
    let mut events = None;
    let mut frames = Vec::new();
    for response in responses {
        let value = response.expect("a whole response");
        match value.kind {
            ResponseType::Xml if events.is_none() => {
                events = Some(String::from_utf8(value.payload.to_vec()).unwrap());
            }
            ResponseType::ApcData if !value.payload.is_empty() => {
                frames.push(value.payload.to_vec())
            }
            _ => {}
        }
    }
    (events.unwrap(), frames)
}

/// The values per key the recorded BLOCK_COUNTER frames hold, in order.
fn recorded_values(frames: &[Vec<u8>]) -> HashMap<i32, Vec<i64>> {
    let mut out: HashMap<i32, Vec<i64>> = HashMap::new();
    for frame in frames {
        if let Ok(Frame::BlockCounter(block)) = Frame::parse(frame, ProtocolVersion::V950) {
            for record in block.records() {
                if let Ok(Record::Value { key, value }) = record {
                    out.entry(key).or_default().push(value);
                }
            }
        }
    }
    out
}

#[test]
fn replayed_recording_gives_the_recorded_samples() {
    let (Some(d2c), Some(counters_xml), Some(captured)) = (
        test_data::gatord_bytes("live-session/d2c.bin"),
        test_data::gatord_text("live-session/resp-counters.xml"),
        test_data::gatord_text("live-session/resp-captured.xml"),
    ) else {
        return;
    };
    let (events, frames) = split_recording(&d2c);
    assert!(events.len() > 3_000_000, "the merged events document");
    let counters: Vec<String> = gator_xml::roxmltree::Document::parse(&counters_xml)
        .unwrap()
        .root_element()
        .children()
        .filter_map(|n| n.attribute("name").map(str::to_owned))
        .collect();
    let expected = recorded_values(&frames);
    let daemon = sim::start(SimConfig {
        events_xml: Some(events),
        counters: Some(counters),
        captured_xml: Some(captured),
        stream: Stream::Raw(frames),
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let memfree = id_of(&lizard, "Linux_meminfo_memfree");
    let memused = id_of(&lizard, "Linux_meminfo_memused2");
    let net_rx = id_of(&lizard, "Linux_net_rx");
    assert_eq!(
        lizard.counter(memfree).unwrap().class,
        CounterClass::Absolute
    );
    assert_eq!(lizard.counter(net_rx).unwrap().class, CounterClass::Delta);
    for id in [memfree, memused, net_rx] {
        lizard.enable(id).unwrap();
    }
    lizard.start_capture().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    lizard.stop_capture().unwrap();

    for (id, key) in [(memfree, 0x5e), (memused, 0x5c), (net_rx, 0x66)] {
        let got: Vec<i64> = lizard
            .samples(id)
            .unwrap()
            .iter()
            .map(|s| match s.value {
                Value::Int(v) => v,
                Value::Float(f) => panic!("gatord values are integers, got {f}"),
            })
            .collect();
        assert_eq!(got, expected[&key], "counter {id} (key {key:#x})");
        assert!(got.len() >= 30, "31 BLOCK_COUNTER frames in the recording");
    }
    let first = lizard.samples(memfree).unwrap()[0];
    assert_eq!(first.value, Value::Int(24_318_210_048));
    let mean = expected[&0x5e].iter().map(|&v| i128::from(v)).sum::<i128>()
        / expected[&0x5e].len() as i128;
    assert_eq!(
        i128::from(lizard.read_int(memfree).unwrap()),
        mean,
        "absolute: mean"
    );
    assert_eq!(
        lizard.read_int(net_rx).unwrap(),
        expected[&0x66].iter().sum::<i64>(),
        "delta: sum"
    );
}
