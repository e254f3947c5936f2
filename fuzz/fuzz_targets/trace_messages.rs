//! Fuzzes the lizard-trace server's input path with fuzzer-made bytes: each datagram goes through
//! `Message::decode` (it must never panic; an accepted message must re-encode to the same bytes) and into a
//! `TraceRing` whose directory invariants are checked after every push; the ring is saved and loaded back at
//! the end. Device-memory messages go through `push_filled`, whose fill fails for some lengths, as a failed
//! device copy does. The same bytes are also read as a ring file, which must fail cleanly or (for the current
//! version) re-save byte for byte.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lizard_trace::message::{encode_region, Message, Payload};
use lizard_trace::ring_file::RING_FILE_VERSION;
use lizard_trace::{CopyMode, Origin, RecordMeta, TraceRing, HEAD_LEN};

#[derive(Arbitrary, Debug)]
enum Op {
    /// A datagram as the server would receive it.
    Datagram(Vec<u8>),
    /// A reader asks for the records after a sequence number.
    Since(u64),
    /// A reader selects a time window.
    Window(u64, u64),
}

#[derive(Arbitrary, Debug)]
struct Input {
    capacity: u16,
    max_payload: u16,
    ops: Vec<Op>,
    ring_file: Vec<u8>,
}

fn check_ring(ring: &TraceRing) {
    let dir = ring.directory();
    assert!(dir.bytes_used <= dir.capacity);
    assert_eq!(dir.first_seq + dir.record_count, dir.next_seq);
    assert_eq!(dir.records_overwritten, dir.first_seq);
    let mut used = 0;
    for (expected, record) in (dir.first_seq..).zip(ring.iter()) {
        assert_eq!(record.seq(), expected);
        used += (HEAD_LEN + record.payload().len()) as u64;
    }
    assert_eq!(used, dir.bytes_used);
}

fuzz_target!(|input: Input| {
    if let Ok(mut ring) = TraceRing::new(usize::from(input.capacity)) {
        for op in &input.ops {
            match op {
                Op::Datagram(bytes) => {
                    let Ok(message) = Message::decode(bytes, u32::from(input.max_payload)) else {
                        continue;
                    };
                    let mut again = message.head.encode().to_vec();
                    again[0] = bytes[0];
                    match message.payload {
                        Payload::Inline(payload) => again.extend_from_slice(payload),
                        Payload::Memfd => {}
                        Payload::Device(region) => again.extend_from_slice(&encode_region(&region)),
                    }
                    assert_eq!(&again, bytes);
                    let head = message.head;
                    let mut meta = RecordMeta {
                        module: head.module,
                        timestamp_ns: head.timestamp_ns,
                        file: head.file,
                        line: head.line,
                        client_pid: 1,
                        client_seq: head.client_seq,
                        origin: Origin::Inline,
                        stored_ns: head.timestamp_ns / 2,
                    };
                    let before = ring.directory();
                    let filled = vec![0xA5; head.payload_len as usize];
                    let stored = match message.payload {
                        Payload::Inline(payload) => {
                            ring.push(&meta, payload).map(|seq| (seq, payload))
                        }
                        Payload::Memfd => {
                            meta.origin = Origin::Memfd;
                            ring.push(&meta, &filled).map(|seq| (seq, &filled[..]))
                        }
                        Payload::Device(region) => {
                            meta.origin = Origin::Device {
                                mode: if head.ack {
                                    CopyMode::Sync
                                } else {
                                    CopyMode::Async
                                },
                                device: region.device,
                                offset: region.offset,
                            };
                            // A copy that fails leaves no record, only the evictions it caused.
                            let fails = region.len % 7 == 3;
                            match ring.push_filled(
                                meta,
                                region.len,
                                |dst, _| {
                                    dst.fill(0xA5);
                                    if fails {
                                        Err(())
                                    } else {
                                        Ok(())
                                    }
                                },
                                |_, _| {},
                            ) {
                                Ok(Ok(seq)) => Ok((seq, &filled[..])),
                                Ok(Err(())) => {
                                    let after = ring.directory();
                                    assert_eq!(after.next_seq, before.next_seq);
                                    check_ring(&ring);
                                    continue;
                                }
                                Err(err) => Err(err),
                            }
                        }
                    };
                    match stored {
                        Ok((seq, payload)) => {
                            assert_eq!(seq, before.next_seq);
                            let newest = ring.iter().last().unwrap();
                            assert_eq!(newest.payload(), payload);
                            assert_eq!(newest.head().meta, meta);
                        }
                        Err(_) => assert_eq!(ring.directory(), before),
                    }
                    check_ring(&ring);
                }
                Op::Since(seq) => {
                    let since = ring.since(*seq);
                    let dir = ring.directory();
                    let records: Vec<_> = since.records.collect();
                    if let Some(first) = records.first() {
                        assert_eq!(first.seq(), (*seq).max(dir.first_seq));
                    }
                    assert_eq!(since.missed, dir.first_seq.saturating_sub(*seq));
                }
                Op::Window(start, end) => {
                    for record in ring.window(*start, *end) {
                        assert!(record.timestamp_ns() >= *start && record.timestamp_ns() < *end);
                    }
                }
            }
        }
        let mut saved = Vec::new();
        ring.write_to(&mut saved).unwrap();
        let back = TraceRing::read_from(&mut &saved[..], 1 << 16).unwrap();
        assert_eq!(back.directory(), ring.directory());
        assert!(back.iter().eq(ring.iter()));
    }
    if let Ok(ring) = TraceRing::read_from(&mut &input.ring_file[..], 1 << 16) {
        check_ring(&ring);
        let mut saved = Vec::new();
        ring.write_to(&mut saved).unwrap();
        if input.ring_file[8..12] == RING_FILE_VERSION.to_le_bytes() {
            assert_eq!(saved, input.ring_file);
        } else {
            // An older file re-saves as the current version, which loads to the same records.
            let again = TraceRing::read_from(&mut &saved[..], 1 << 20).unwrap();
            assert!(again.iter().eq(ring.iter()));
        }
    }
});
