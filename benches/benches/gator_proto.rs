//! Benches gator-proto on the real gatord 9.7.2 live session (`shared/data/gatord-9.7.2/live-session/d2c.bin`):
//! BLOCK_COUNTER decoding on one large frame built from the records of the 31 recorded BLOCK_COUNTER frames
//! (repeated to about 1 MiB), as records and as values with the markers applied, and whole-stream decoding of
//! `d2c.bin` by the client session with every APC frame parsed. Each group also measures a plain byte-sum over the
//! same buffer in the same run, so the result reads as a ratio of the byte-sum's throughput; the BLOCK_COUNTER
//! group also measures a byte-at-a-time SLEB128 loop, the algorithm Lizard decodes with.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gator_proto::apc::{BlockCounter, Frame, Record};
use gator_proto::{client, ProtocolVersion};
use lizard_benches::Ratios;
use std::hint::black_box;

fn d2c() -> Vec<u8> {
    test_data::gatord_bytes("live-session/d2c.bin").expect("d2c.bin")
}

/// The commands the recorded client sent, so that the session expects the recorded replies.
fn recorded_client() -> client::Session {
    let mut session = client::Session::new(client::Config::default());
    session.ping().unwrap();
    for kind in [
        "events",
        "counters",
        "configuration",
        "defaults",
        "captured",
        "bogus",
    ] {
        session.request_xml(kind).unwrap();
    }
    session.request_current_config().unwrap();
    session.deliver_xml(b"<session/>").unwrap();
    session.request_xml("captured").unwrap();
    session.start_capture().unwrap();
    session.stop_capture().unwrap();
    session
}

/// Every APC frame of the recording, in order.
fn recorded_frames(stream: &[u8]) -> Vec<Vec<u8>> {
    let mut session = recorded_client();
    session.handle_input(stream).unwrap();
    std::iter::from_fn(|| session.poll_event())
        .filter_map(|event| match event {
            client::Event::ApcFrame(frame) => Some(frame.to_vec()),
            _ => None,
        })
        .collect()
}

/// One BLOCK_COUNTER frame holding the records of every recorded BLOCK_COUNTER frame, repeated to ~1 MiB.
fn large_block_counter(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut records = Vec::new();
    for bytes in frames {
        if let Ok(Frame::BlockCounter(block)) = Frame::parse(bytes, ProtocolVersion::V950) {
            records.extend(block.records().map(Result::unwrap));
        }
    }
    assert_eq!(records.len(), 31 * 4);
    let mut out = Vec::new();
    while out.len() < 1 << 20 {
        let mut one = Vec::new();
        BlockCounter::encode(0, records.iter().copied(), &mut one);
        if out.is_empty() {
            out = one;
        } else {
            out.extend_from_slice(&one[2..]);
        }
    }
    out
}

/// The BLOCK_COUNTER frame `frame` holds.
fn block_of(frame: &[u8]) -> BlockCounter<'_> {
    match Frame::parse(frame, ProtocolVersion::V950) {
        Ok(Frame::BlockCounter(block)) => block,
        other => panic!("not a BLOCK_COUNTER frame: {other:?}"),
    }
}

fn byte_sum(bytes: &[u8]) -> u64 {
    bytes.iter().map(|&b| u64::from(b)).sum()
}

/// The textbook decode of a BLOCK_COUNTER body: LLVM's byte-at-a-time `decodeSLEB128` for every integer, the
/// algorithm Lizard uses (`docs/lizard.md`), written in Rust with its position in a register; pairs are read while
/// more than one byte remains and summed as `decode_records` sums. A same-shape baseline for the word path.
fn byte_loop(frame: &[u8]) -> i64 {
    fn packed_int(bytes: &[u8], pos: &mut usize) -> i64 {
        let (mut value, mut shift) = (0u64, 0u32);
        loop {
            let byte = bytes[*pos];
            *pos += 1;
            value |= u64::from(byte & 0x7f).wrapping_shl(shift);
            shift += 7;
            if byte < 0x80 {
                if shift < 64 && byte & 0x40 != 0 {
                    value |= !0u64 << shift;
                }
                return value as i64;
            }
        }
    }
    let mut pos = 0;
    let _frame_type = packed_int(frame, &mut pos);
    let _core = packed_int(frame, &mut pos);
    let mut sum = 0i64;
    while pos < frame.len() - 1 {
        let key = packed_int(frame, &mut pos);
        let value = packed_int(frame, &mut pos);
        if key != 1 && key != 2 {
            sum = sum.wrapping_add(value);
        }
    }
    sum
}

fn block_counter(c: &mut Criterion) {
    let frames = recorded_frames(&d2c());
    let frame = large_block_counter(&frames);
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("gator_proto_block_counter_1mib");
    group.throughput(Throughput::Bytes(frame.len() as u64));
    group.bench_function("baseline_byte_sum", |b| {
        ratios.iter(b, "baseline_byte_sum", || byte_sum(black_box(&frame)))
    });
    group.bench_function("baseline_byte_loop", |b| {
        ratios.iter(b, "baseline_byte_loop", || byte_loop(black_box(&frame)))
    });
    group.bench_function("decode_records", |b| {
        ratios.iter(b, "decode_records", || {
            let block = block_of(black_box(&frame));
            let mut sum = 0i64;
            for record in block.records() {
                match record.unwrap() {
                    Record::Value { value, .. } => sum = sum.wrapping_add(value),
                    Record::Timestamp(t) => sum = sum.wrapping_add(t),
                    _ => {}
                }
            }
            sum
        })
    });
    group.bench_function("decode_samples", |b| {
        ratios.iter(b, "decode_samples", || {
            let block = block_of(black_box(&frame));
            // The values with the markers applied, as the engine and apc-dump read them.
            let mut sum = 0i64;
            for sample in block.samples() {
                let sample = sample.unwrap();
                sum = sum
                    .wrapping_add(sample.value)
                    .wrapping_add(sample.time.unwrap_or(0));
            }
            sum
        })
    });
    group.finish();
    ratios.print("gator_proto_block_counter_1mib", "baseline_byte_sum", 100);
    ratios.print("gator_proto_block_counter_1mib", "baseline_byte_loop", 100);
}

fn whole_stream(c: &mut Criterion) {
    let stream = d2c();
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("gator_proto_d2c_stream");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.sample_size(20);
    group.bench_function("baseline_byte_sum", |b| {
        ratios.iter(b, "baseline_byte_sum", || byte_sum(black_box(&stream)))
    });
    group.bench_function("client_session_and_frames", |b| {
        ratios.iter(b, "client_session_and_frames", || {
            let mut session = recorded_client();
            session.handle_input(black_box(&stream)).unwrap();
            let mut frames = 0usize;
            while let Some(event) = session.poll_event() {
                if let client::Event::ApcFrame(bytes) = event {
                    let frame = Frame::parse(&bytes, ProtocolVersion::V950).unwrap();
                    if let Frame::BlockCounter(block) = frame {
                        block.records().for_each(|r| {
                            black_box(r.unwrap());
                        });
                    }
                    frames += 1;
                }
            }
            frames
        })
    });
    group.finish();
    ratios.print("gator_proto_d2c_stream", "baseline_byte_sum", 20);
}

criterion_group!(benches, block_counter, whole_stream);
criterion_main!(benches);
