//! Fuzzes the decoder of a perf `PERF_FORMAT_GROUP` read record
//! (`hwcpipe::cpu::group_read::GroupRecord::parse`) with arbitrary bytes and member counts: it must
//! never panic, and a record it accepts must re-encode to the same bytes. Seeds come from the
//! fuzzer alone.
#![no_main]

use hwcpipe::cpu::group_read::{encode, GroupRecord};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u8, &[u8])| {
    let (members, bytes) = input;
    if let Ok(record) = GroupRecord::parse(bytes, usize::from(members)) {
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
});
