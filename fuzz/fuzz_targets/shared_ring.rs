//! Fuzzes the reading of a shared trace ring file (`lizard_trace::shared_ring`) with fuzzer-made bytes:
//! `inspect` must never panic, and every record it trusts must be whole: its payload inside the file, its
//! sequence numbers consecutive. The same bytes, laid out as a ring file of a real geometry (the fuzzer's
//! bytes as its records), are picked up by `TraceRing::open_shared` as a server would pick them up, and
//! every record it keeps must read back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lizard_trace::shared_ring::{inspect, layout, SyncPolicy};
use lizard_trace::TraceRing;

fuzz_target!(|data: &[u8]| {
    if let Ok(found) = inspect(data) {
        let mut seq = None;
        for (head, at) in &found.records {
            assert!(at + head.len as usize <= data.len());
            if let Some(previous) = seq {
                assert_eq!(head.seq, previous + 1);
            }
            seq = Some(head.seq);
        }
    }
    // A real header over the fuzzer's records and header words.
    let capacity = 4096usize;
    let mut file = vec![0u8; layout::HEADER_LEN + capacity];
    let header = [
        &layout::MAGIC[..],
        &layout::VERSION.to_le_bytes(),
        &(layout::HEADER_LEN as u32).to_le_bytes(),
        &(capacity as u64).to_le_bytes(),
        &(lizard_trace::HEAD_LEN as u32).to_le_bytes(),
        &(layout::SLOT_ALIGN as u32).to_le_bytes(),
    ]
    .concat();
    file[..header.len()].copy_from_slice(&header);
    let (words, records) = data.split_at(data.len().min(64));
    file[64..64 + words.len()].copy_from_slice(words);
    let n = records.len().min(capacity);
    file[layout::HEADER_LEN..layout::HEADER_LEN + n].copy_from_slice(&records[..n]);
    let path = std::env::temp_dir().join(format!("lizard-fuzz-shared-{}.ring", std::process::id()));
    if std::fs::write(&path, &file).is_ok() {
        if let Ok((ring, recovery)) = TraceRing::open_shared(&path, None, SyncPolicy::Never) {
            let mut kept = 0u64;
            for record in ring.iter() {
                assert_eq!(record.seq(), recovery.first_seq + kept);
                kept += 1;
            }
            assert_eq!(kept, recovery.kept);
        }
        let _ = std::fs::remove_file(&path);
    }
});
