//! Fuzzes `gator_proto::apc::Frame::parse` with arbitrary frame bytes (the first input byte picks protocol 670 or
//! 950): it must never panic, every nested iterator must terminate, and an accepted frame must re-encode to bytes
//! that decode to an equal frame (the same bytes when the input used canonical integers). Local-capture records
//! are read from the same bytes. PERF_DATA records are split and decoded as samples with the layouts gatord 9.7.2
//! announces, and every frame also goes through a `PerfCounterTracker`.
#![no_main]

use gator_proto::apc::{
    Frame, LocalCaptureReader, PerfAttrsMessage, PerfCounterTracker, PerfFrames, ReadFormat,
    SampleLayout, SampleRecord, SampleType, SummaryFrame,
};
use gator_proto::ProtocolVersion;
use libfuzzer_sys::fuzz_target;

fn walk(frame: &Frame<'_>) {
    match frame {
        Frame::BlockCounter(block) => block.records().for_each(drop),
        Frame::PerfData(data) => {
            data.words().for_each(drop);
            // gatord 9.7.2's layouts: group leader/member, sampled with call chains, counting only.
            let layouts = [(0x10217, 0xf), (0x11237, 0xf), (0x10204, 0x7), (0x40, 0x14)];
            for record in data.records() {
                let Ok(record) = record else { break };
                for (st, rf) in layouts {
                    let layout = SampleLayout {
                        sample_type: SampleType(st),
                        read_format: ReadFormat(rf),
                    };
                    if let Ok(SampleRecord {
                        read: Some(read), ..
                    }) = SampleRecord::parse(&record, layout)
                    {
                        assert!(read.values().count() <= record.body_words);
                    }
                }
            }
        }
        Frame::Summary(SummaryFrame::Summary(summary)) => summary.attributes.iter().for_each(drop),
        Frame::PerfAttrs(attrs) => {
            let messages: Vec<_> = attrs.messages().collect();
            assert_eq!(messages.len(), attrs.count);
            for message in messages {
                match message {
                    PerfAttrsMessage::Keys(map) => assert_eq!(map.iter().count(), map.count),
                    PerfAttrsMessage::Counters(values) => values.iter().for_each(drop),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let version = if selector & 1 == 0 {
        ProtocolVersion::V670
    } else {
        ProtocolVersion::V950
    };
    if let Ok(frame) = Frame::parse(bytes, version) {
        walk(&frame);
        let mut again = Vec::new();
        frame.encode(&mut again);
        assert!(again.len() <= bytes.len());
        assert_eq!(Frame::parse(&again, version).unwrap(), frame);
    }
    let mut tracker = PerfCounterTracker::new();
    let mut samples = Vec::new();
    for record in LocalCaptureReader::new(bytes).with_max_frame_len(1 << 16) {
        match record {
            Ok(frame) => {
                if let Ok(frame) = Frame::parse(frame, version) {
                    walk(&frame);
                    let before = samples.len();
                    let _ = tracker.handle_frame(&frame, &mut samples);
                    if let Frame::PerfData(data) = &frame {
                        assert!(samples.len() - before <= data.raw_words.len());
                    }
                }
            }
            Err(_) => break,
        }
    }
});
