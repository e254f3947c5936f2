//! The bytes of what a connection sends that the state machine does not make: APC frames of values, the
//! SUMMARY, the ftrace reader's EXTERNAL frame, and the current-configuration document.

use std::time::{SystemTime, UNIX_EPOCH};

use gator_proto::apc::summary::{encode_summary, Clocks};
use gator_proto::apc::{BlockCounter, Counter, External, Record};
use gator_proto::ProtocolVersion;

/// The descriptor gatord's ftrace reader announces itself on (as recorded in the emulated Arm system).
const FTRACE_FD: i32 = 24;

/// The frames carrying `values` (`(key, value)`) at `timestamp_ns` on core 0: one BLOCK_COUNTER, or one
/// COUNTER frame per value when `counter_frames` (as older daemons send).
pub(super) fn value_frames(
    counter_frames: bool,
    timestamp_ns: i64,
    values: impl Iterator<Item = (i32, i64)>,
) -> Vec<Vec<u8>> {
    if counter_frames {
        values
            .map(|(key, value)| {
                let mut out = Vec::new();
                Counter {
                    timestamp: timestamp_ns,
                    core: 0,
                    key,
                    value,
                }
                .encode(&mut out);
                out
            })
            .collect()
    } else {
        let mut out = Vec::new();
        let records = std::iter::once(Record::Timestamp(timestamp_ns))
            .chain(values.map(|(key, value)| Record::Value { key, value }));
        BlockCounter::encode(0, records, &mut out);
        vec![out]
    }
}

/// The SUMMARY frame: the clocks at `uptime_ns` of the simulated CLOCK_MONOTONIC_RAW (and the wall clock
/// now), and the attributes gatord sends.
pub(super) fn summary_frame(protocol: ProtocolVersion, uptime_ns: i64) -> Vec<u8> {
    let realtime = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    let clocks = Clocks {
        realtime_ns: realtime,
        boottime_ns: uptime_ns,
        monotonic_raw_ns: uptime_ns,
        monotonic_ns: Some(uptime_ns),
    };
    let mut frame = Vec::new();
    let attributes: [(&[u8], &[u8]); 3] = [
        (b"uname", b"Linux lizard-sim"),
        (b"PAGESIZE", b"4096"),
        (b"nosync", b""),
    ];
    encode_summary(protocol, &clocks, attributes, &mut frame);
    frame
}

/// The EXTERNAL frame with which gatord's ftrace reader announces itself on its pipe.
pub(super) fn ftrace_frame() -> Vec<u8> {
    let mut frame = Vec::new();
    External::Data {
        fd: FTRACE_FD,
        bytes: b"FTRACE 1\n",
    }
    .encode(&mut frame);
    frame
}

/// The reply to REQUEST_CURRENT_CONFIG: the daemon process `pid`, system-wide, not waiting for a command.
pub(super) fn current_config_document(pid: u32) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<current_config pid=\"{pid}\" uid=\"0\">\n\
         <state is_system_wide=\"yes\" is_waiting_on_command=\"no\" /></current_config>\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gator_proto::apc::Frame;

    #[test]
    fn values_travel_in_one_block_counter_or_one_counter_frame_each() {
        let values = [(0xa, 7), (0xc, -3)];
        let block = value_frames(false, 1000, values.into_iter());
        assert_eq!(block.len(), 1);
        let Ok(Frame::BlockCounter(frame)) = Frame::parse(&block[0], ProtocolVersion::V950) else {
            panic!("a BLOCK_COUNTER")
        };
        let read: Vec<(Option<i64>, i32, i64)> = frame
            .samples()
            .map(|s| s.unwrap())
            .map(|s| (s.time, s.key, s.value))
            .collect();
        assert_eq!(read, [(Some(1000), 0xa, 7), (Some(1000), 0xc, -3)]);
        let counters = value_frames(true, 1000, values.into_iter());
        assert_eq!(counters.len(), 2);
        for (bytes, (key, value)) in counters.iter().zip(values) {
            let Ok(Frame::Counter(frame)) = Frame::parse(bytes, ProtocolVersion::V950) else {
                panic!("a COUNTER")
            };
            assert_eq!(
                (frame.timestamp, frame.key, frame.value),
                (1000, key, value)
            );
        }
    }

    #[test]
    fn the_summary_and_ftrace_frames_parse() {
        let summary = summary_frame(ProtocolVersion::V950, 5_000);
        assert!(matches!(
            Frame::parse(&summary, ProtocolVersion::V950),
            Ok(Frame::Summary(_))
        ));
        assert!(matches!(
            Frame::parse(&ftrace_frame(), ProtocolVersion::V950),
            Ok(Frame::External(_))
        ));
        let config = current_config_document(42);
        assert!(gator_xml::CurrentConfig::parse(&config).is_ok(), "{config}");
    }
}
