//! Property tests of the perf record codecs: PERF_RECORD_SAMPLE words encoded for any layout gatord can
//! announce decode back to the same fields, and arbitrary bytes never panic the record and sample decoders.

use gator_proto::apc::{
    PerfData, PerfRecords, ReadFormat, ReadValue, ReadValues, SampleLayout, SampleRecord,
    SampleType, WordSlice,
};
use proptest::prelude::*;

/// The sample_type bits decoded up to and including READ.
const DECODED: [u64; 10] = [
    SampleType::IDENTIFIER,
    SampleType::IP,
    SampleType::TID,
    SampleType::TIME,
    SampleType::ADDR,
    SampleType::ID,
    SampleType::STREAM_ID,
    SampleType::CPU,
    SampleType::PERIOD,
    SampleType::READ,
];

fn layout() -> impl Strategy<Value = SampleLayout> {
    (any::<u16>(), 0u64..32).prop_map(|(bits, rf)| SampleLayout {
        sample_type: SampleType(
            DECODED
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .fold(0, |acc, (_, b)| acc | b),
        ),
        read_format: ReadFormat(rf),
    })
}

fn pick(layout: SampleLayout, bit: u64, value: u64) -> Option<u64> {
    layout.sample_type.contains(bit).then_some(value)
}

proptest! {
    #[test]
    fn samples_round_trip(
        layout in layout(),
        fields in proptest::array::uniform10(any::<u64>()),
        values in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>()), 1..6),
        times in (any::<u64>(), any::<u64>()),
        tail in proptest::collection::vec(any::<u64>(), 0..4),
        cpu in 0i32..64,
    ) {
        let rf = layout.read_format;
        let values: Vec<ReadValue> = values
            .iter()
            .map(|&(value, id, lost)| ReadValue {
                value,
                id: rf.contains(ReadFormat::ID).then_some(id),
                lost: rf.contains(ReadFormat::LOST).then_some(lost),
            })
            .collect();
        let mut tail_bytes = Vec::new();
        for &w in &tail {
            gator_proto::sleb128::encode_i64(w as i64, &mut tail_bytes);
        }
        let sample = SampleRecord {
            identifier: pick(layout, SampleType::IDENTIFIER, fields[0]),
            ip: pick(layout, SampleType::IP, fields[1]),
            pid_tid: pick(layout, SampleType::TID, fields[2]).map(|w| (w as u32, (w >> 32) as u32)),
            time: pick(layout, SampleType::TIME, fields[3]),
            addr: pick(layout, SampleType::ADDR, fields[4]),
            id: pick(layout, SampleType::ID, fields[5]),
            stream_id: pick(layout, SampleType::STREAM_ID, fields[6]),
            cpu: pick(layout, SampleType::CPU, fields[7] & 0xffff_ffff).map(|c| c as u32),
            period: pick(layout, SampleType::PERIOD, fields[8]),
            read: None,
            tail: WordSlice::Packed(&tail_bytes),
        };
        let mut words = Vec::new();
        sample.encode_words(layout, times.0, times.1, &values, &mut words);
        let mut frame = Vec::new();
        PerfData::encode(cpu, &words, &mut frame);
        let data = PerfData::parse(&frame[1..]).unwrap();
        let records: Vec<_> = PerfRecords::new(&data).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(records.len(), 1);
        prop_assert_eq!(usize::from(records[0].size), words.len() * 8);
        let decoded = SampleRecord::parse(&records[0], layout).unwrap();
        prop_assert_eq!(
            (decoded.identifier, decoded.ip, decoded.pid_tid, decoded.time, decoded.addr),
            (sample.identifier, sample.ip, sample.pid_tid, sample.time, sample.addr)
        );
        prop_assert_eq!(
            (decoded.id, decoded.stream_id, decoded.cpu, decoded.period),
            (sample.id, sample.stream_id, sample.cpu, sample.period)
        );
        prop_assert_eq!(decoded.sample_id(), sample.identifier.or(sample.id));
        match decoded.read {
            None => prop_assert!(!layout.sample_type.contains(SampleType::READ)),
            Some(read) => {
                let got: Vec<_> = read.values().collect();
                let expected = if rf.contains(ReadFormat::GROUP) { &values[..] } else { &values[..1] };
                prop_assert_eq!(&got[..], expected);
                let (te, tr) = match read {
                    ReadValues::Group { time_enabled, time_running, .. } => (time_enabled, time_running),
                    ReadValues::Single { time_enabled, time_running, .. } => (time_enabled, time_running),
                };
                prop_assert_eq!(te, rf.contains(ReadFormat::TOTAL_TIME_ENABLED).then_some(times.0));
                prop_assert_eq!(tr, rf.contains(ReadFormat::TOTAL_TIME_RUNNING).then_some(times.1));
            }
        }
        let tail_words: Vec<u64> = decoded.tail.iter().map(Result::unwrap).collect();
        prop_assert_eq!(tail_words, tail);
    }

    #[test]
    fn arbitrary_words_never_panic(
        layout in layout(),
        packed in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let data = PerfData { cpu: 0, packed_length: packed.len() as u32, raw_words: &packed };
        for record in PerfRecords::new(&data) {
            let Ok(record) = record else { break };
            if let Ok(sample) = SampleRecord::parse(&record, layout) {
                if let Some(read) = sample.read {
                    prop_assert!(read.values().count() <= record.body_words);
                }
            }
        }
    }
}
