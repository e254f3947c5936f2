//! Fuzzes the decoders of a perf `PERF_FORMAT_GROUP` read record with arbitrary bytes and member counts:
//! hwcpipe's (`hwcpipe::cpu::group_read::GroupRecord::parse`, the counting profiler's) must never panic, and
//! a record it accepts must re-encode to the same bytes; perf-record's (`perf_record::ReadValues::parse`,
//! what kernel sampling reads after the stop), given the same bytes as the kernel's native words, must
//! never panic and must agree with it: the same times and `(value, id)` entries where both accept, and a
//! refusal by hwcpipe of a read perf-record accepts only for a member count other than `nr`. Seeds come
//! from the fuzzer alone.
#![no_main]

use hwcpipe::cpu::group_read::{encode, GroupRecord};
use libfuzzer_sys::fuzz_target;
use perf_record::{ReadFormat, ReadValues};

/// The read format hwcpipe opens its groups with.
const FORMAT: ReadFormat = ReadFormat(
    ReadFormat::GROUP
        | ReadFormat::ID
        | ReadFormat::TOTAL_TIME_ENABLED
        | ReadFormat::TOTAL_TIME_RUNNING,
);

fuzz_target!(|input: (u8, &[u8])| {
    let (members, bytes) = input;
    let parsed = GroupRecord::parse(bytes, usize::from(members));
    if let Ok(record) = &parsed {
        let entries: Vec<(u64, u64)> = record.entries().collect();
        assert_eq!(entries.len(), usize::from(members));
        let mut again = Vec::new();
        encode(
            record.time_enabled,
            record.time_running,
            &entries,
            &mut again,
        );
        assert_eq!(again, bytes);
    }
    if bytes.len() % 8 != 0 {
        return;
    }
    let words: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|w| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
        .collect();
    match (ReadValues::parse(&words, FORMAT), &parsed) {
        (Ok(read), Ok(record)) => {
            let ReadValues::Group {
                time_enabled,
                time_running,
                ..
            } = read
            else {
                panic!("a group read decoded as a single one");
            };
            assert_eq!(
                (time_enabled, time_running),
                (Some(record.time_enabled), Some(record.time_running))
            );
            let theirs: Vec<(u64, Option<u64>)> = read.values().map(|v| (v.value, v.id)).collect();
            let ours: Vec<(u64, Option<u64>)> = record
                .entries()
                .map(|(value, id)| (value, Some(id)))
                .collect();
            assert_eq!(theirs, ours);
        }
        (Ok(read), Err(_)) => assert_ne!(read.values().count(), usize::from(members)),
        (Err(err), Ok(_)) => panic!("perf-record refused a read hwcpipe accepts: {err}"),
        (Err(_), Err(_)) => {}
    }
});
