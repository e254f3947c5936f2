//! The overwrite-oldest ring: exact directory values through wrap and overwrite, sequence gaps seen by readers,
//! and save/load round trips over random record sizes. All records are built in the test (no external data).

use lizard_trace::{Directory, RecordMeta, RingError, TraceRing, HEAD_LEN};
use proptest::prelude::*;

fn meta(i: u64) -> RecordMeta {
    RecordMeta {
        client_seq: i,
        timestamp_ns: 1_000 + i,
        client_pid: 77,
        ..RecordMeta::new("gpu", "ring.rs", i as u32).unwrap()
    }
}

/// A payload whose bytes identify the record it belongs to.
fn payload(i: u64, len: usize) -> Vec<u8> {
    (0..len).map(|k| (i as usize * 31 + k) as u8).collect()
}

/// The records of these tests: a head and 34 payload bytes.
const RECORD: usize = HEAD_LEN + 34;

/// Ten records fill the ring exactly.
const CAPACITY: usize = 10 * RECORD;

fn dir(first: u64, next: u64, count: u64, used: usize, over: u64) -> Directory {
    Directory {
        capacity: CAPACITY as u64,
        first_seq: first,
        next_seq: next,
        record_count: count,
        bytes_used: used as u64,
        records_overwritten: over,
    }
}

#[test]
fn wrap_and_overwrite_with_exact_directory_values() {
    let mut ring = TraceRing::new(CAPACITY).unwrap();
    assert_eq!(ring.directory(), dir(0, 0, 0, 0, 0));
    // Records of a head and 34 payload bytes: ten fill the ring exactly.
    for i in 0..10 {
        assert_eq!(ring.push(&meta(i), &payload(i, 34)).unwrap(), i);
    }
    assert_eq!(ring.directory(), dir(0, 10, 10, CAPACITY, 0));
    // The eleventh overwrites record 0 and starts again at offset 0.
    ring.push(&meta(10), &payload(10, 34)).unwrap();
    assert_eq!(ring.directory(), dir(1, 11, 10, CAPACITY, 1));
    // A record two and a half records long needs three more records' room.
    let big = 5 * RECORD / 2;
    ring.push(&meta(11), &payload(11, big - HEAD_LEN)).unwrap();
    let used = CAPACITY - 3 * RECORD + big;
    assert_eq!(ring.directory(), dir(4, 12, 8, used, 4));
    // Three more records: each evicts one old record (the free half record never suffices alone).
    for i in 12..15 {
        ring.push(&meta(i), &payload(i, 34)).unwrap();
    }
    assert_eq!(ring.directory(), dir(7, 15, 8, used, 7));
    // Records are read back oldest first with their own payloads, with no seq missing.
    let seqs: Vec<u64> = ring.iter().map(|r| r.seq()).collect();
    assert_eq!(seqs, (7..15).collect::<Vec<_>>());
    for r in ring.iter() {
        let len = if r.seq() == 11 { big - HEAD_LEN } else { 34 };
        assert_eq!(r.payload(), &payload(r.seq(), len)[..]);
        assert_eq!(r.client_seq(), r.seq());
        assert_eq!(r.module(), "gpu");
        assert_eq!(r.file(), "ring.rs");
        assert_eq!(r.line(), r.seq() as u32);
        assert_eq!(r.client_pid(), 77);
        assert_eq!(r.timestamp_ns(), 1_000 + r.seq());
    }
    // A record as large as the ring evicts everything; the ring is then exactly full.
    ring.push(&meta(15), &payload(15, CAPACITY - HEAD_LEN))
        .unwrap();
    assert_eq!(ring.directory(), dir(15, 16, 1, CAPACITY, 15));
    // One byte more than the ring is refused, and nothing changes.
    assert_eq!(
        ring.push(&meta(16), &payload(16, CAPACITY + 1 - HEAD_LEN)),
        Err(RingError::RecordTooLarge {
            size: CAPACITY as u64 + 1,
            capacity: CAPACITY
        })
    );
    assert_eq!(ring.directory(), dir(15, 16, 1, CAPACITY, 15));
}

#[test]
fn readers_see_gaps_after_overwrites() {
    let mut ring = TraceRing::new(CAPACITY).unwrap();
    let mut next_expected = 0;
    let mut seen = Vec::new();
    let mut missed_total = 0;
    for i in 0..100u64 {
        ring.push(&meta(i), &payload(i, 34)).unwrap();
        // The reader looks every 15 records: it misses five each time once the ring has wrapped.
        if i % 15 == 14 {
            let since = ring.since(next_expected);
            missed_total += since.missed;
            for r in since.records {
                seen.push(r.seq());
                next_expected = r.seq() + 1;
            }
        }
    }
    assert_eq!(missed_total + seen.len() as u64, next_expected);
    // Six looks, each after fifteen new records into a ten-record ring: five missed every time.
    assert_eq!(missed_total, 30);
    assert_eq!(seen.len(), 60);
    // The gaps are exactly where the ring overwrote records before the reader came.
    assert_eq!(seen.windows(2).filter(|w| w[1] != w[0] + 1).count(), 5);
}

#[test]
fn window_selects_by_timestamp() {
    let mut ring = TraceRing::new(CAPACITY).unwrap();
    for i in 0..20u64 {
        ring.push(&meta(i), &payload(i, 34)).unwrap();
    }
    // Held: 10..20, timestamps 1010..1020.
    let seqs: Vec<u64> = ring.window(1_005, 1_013).map(|r| r.seq()).collect();
    assert_eq!(seqs, [10, 11, 12]);
    assert_eq!(ring.window(0, 1_010).count(), 0);
}

#[test]
fn save_and_load_through_a_file() {
    let mut ring = TraceRing::new(1000).unwrap();
    for i in 0..37u64 {
        ring.push(&meta(i), &payload(i, (i as usize * 7) % 120))
            .unwrap();
    }
    let dir = std::env::temp_dir().join(format!("lizard-trace-ring-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ring.bin");
    ring.save(&path).unwrap();
    let back = TraceRing::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(back.directory(), ring.directory());
    assert!(back.iter().eq(ring.iter()));
}

#[test]
fn missing_file_is_an_io_error() {
    let err = TraceRing::load("/nonexistent/lizard-trace/ring.bin").unwrap_err();
    assert!(matches!(err, lizard_trace::RingFileError::Io(_)));
}

proptest! {
    #[test]
    fn persist_load_round_trip(capacity in HEAD_LEN..4000,
                               sizes in proptest::collection::vec(0usize..600, 0..80)) {
        let mut ring = TraceRing::new(capacity).unwrap();
        for (i, &len) in sizes.iter().enumerate() {
            let _ = ring.push(&meta(i as u64), &payload(i as u64, len));
        }
        let mut bytes = Vec::new();
        ring.write_to(&mut bytes).unwrap();
        let back = TraceRing::read_from(&mut &bytes[..], 1 << 20).unwrap();
        prop_assert_eq!(back.directory(), ring.directory());
        prop_assert!(back.iter().eq(ring.iter()));
        // The loaded ring continues exactly like the original.
        let (mut a, mut b) = (ring, back);
        let sa = a.push(&meta(999), &payload(999, 10));
        let sb = b.push(&meta(999), &payload(999, 10));
        prop_assert_eq!(sa, sb);
        prop_assert_eq!(a.directory(), b.directory());
        prop_assert!(a.iter().eq(b.iter()));
    }

    #[test]
    fn ring_invariants_hold(capacity in HEAD_LEN..3000,
                            sizes in proptest::collection::vec(0usize..800, 1..150)) {
        let mut ring = TraceRing::new(capacity).unwrap();
        let mut stored = 0u64;
        for (i, &len) in sizes.iter().enumerate() {
            let i = i as u64;
            match ring.push(&meta(i), &payload(i, len)) {
                Ok(seq) => { prop_assert_eq!(seq, stored); stored += 1; }
                Err(RingError::RecordTooLarge { size, .. }) => {
                    prop_assert!(size > capacity as u64);
                    continue;
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
            let d = ring.directory();
            prop_assert!(d.bytes_used <= d.capacity);
            prop_assert_eq!(d.next_seq, stored);
            prop_assert_eq!(d.first_seq + d.record_count, d.next_seq);
            prop_assert_eq!(d.records_overwritten, d.first_seq);
            // The newest record is always kept, and the held records are a gap-free suffix.
            let held: Vec<_> = ring.iter().map(|r| (r.seq(), r.payload().to_vec())).collect();
            prop_assert_eq!(held.len() as u64, d.record_count);
            prop_assert_eq!(held.last().map(|h| h.0), Some(stored - 1));
            let sum: u64 = held.iter().map(|h| (HEAD_LEN + h.1.len()) as u64).sum();
            prop_assert_eq!(sum, d.bytes_used);
            for (k, (seq, bytes)) in held.iter().enumerate() {
                prop_assert_eq!(*seq, d.first_seq + k as u64);
                let client_seq = ring.get(*seq).unwrap().client_seq();
                prop_assert_eq!(&payload(client_seq, bytes.len()), bytes);
            }
        }
    }

    /// `fits_without_overwriting` says exactly whether a push overwrites, and `push_noting` names every
    /// record it overwrites: their owners and sizes add up to what left the ring.
    #[test]
    fn overwrites_are_foretold_and_noted(capacity in HEAD_LEN..3000,
                                         sizes in proptest::collection::vec(0usize..800, 1..150)) {
        let mut ring = TraceRing::new(capacity).unwrap();
        for (i, &len) in sizes.iter().enumerate() {
            let i = i as u64;
            let mut record = meta(i);
            record.client_pid = 1000 + (i % 3) as u32;
            let fits = ring.fits_without_overwriting(len);
            let before = ring.directory();
            let held_before: Vec<(u32, u64)> =
                ring.iter().map(|r| (r.client_pid(), (HEAD_LEN + r.payload().len()) as u64)).collect();
            let mut noted = Vec::new();
            match ring.push_noting(&record, &payload(i, len), |pid, bytes| noted.push((pid, bytes))) {
                Ok(_) => {}
                Err(RingError::RecordTooLarge { .. }) => {
                    prop_assert!(!fits);
                    continue;
                }
                Err(other) => prop_assert!(false, "{other:?}"),
            }
            let after = ring.directory();
            let overwritten = after.records_overwritten - before.records_overwritten;
            prop_assert_eq!(fits, overwritten == 0, "fits {} but {} overwritten", fits, overwritten);
            prop_assert_eq!(noted.len() as u64, overwritten);
            // The oldest records, in order.
            prop_assert_eq!(&noted[..], &held_before[..noted.len()]);
        }
    }
}
