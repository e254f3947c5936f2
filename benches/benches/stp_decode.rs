//! Benches the stp-decode pipeline on OpenCSD's `stm_only` STM snapshot (`shared/data/opencsd-stm/stm_only/
//! cstraceitm.bin`, a 32 KiB CoreSight ETB buffer, STM on trace ID 0x20) replicated 32 times (1 MiB), against a
//! byte-sum over the same buffer in the same run: the whole-buffer dump (deformat, decode, elements), the
//! deformatter alone, and the STP nibble decoder alone on the extracted STM stream.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;
use stp_decode::deformat::{Deformatter, FrameMode};
use stp_decode::dump::{dump, DumpOptions};
use stp_decode::StpDecoder;

fn replicated_stm_only() -> Vec<u8> {
    let one = std::fs::read(lizard_benches::data_dir().join("opencsd-stm/stm_only/cstraceitm.bin"))
        .expect("stm_only snapshot");
    one.repeat(32)
}

fn byte_sum(bytes: &[u8]) -> u64 {
    bytes.iter().map(|&b| u64::from(b)).sum()
}

fn stp_decode(c: &mut Criterion) {
    let buffer = replicated_stm_only();
    let mut stream = Vec::new();
    for frame in Deformatter::new(FrameMode::Memory).feed(&buffer) {
        let frame = frame.expect("stm_only has no bad frames");
        stream.extend(frame.bytes.iter().filter(|b| b.id == 0x20).map(|b| b.byte));
    }

    let mut group = c.benchmark_group("stp_decode_stm_only_1mib");
    group.throughput(Throughput::Bytes(buffer.len() as u64));
    group.bench_function("baseline_byte_sum", |b| {
        b.iter(|| black_box(byte_sum(black_box(&buffer))))
    });
    group.bench_function("dump_records", |b| {
        b.iter(|| black_box(dump(black_box(&buffer), DumpOptions::formatted(0x20)).count()))
    });
    group.bench_function("deformat_frames", |b| {
        b.iter(|| {
            let mut d = Deformatter::new(FrameMode::Memory);
            let n: usize = d
                .feed(black_box(&buffer))
                .map(|f| f.map_or(0, |f| f.bytes.as_slice().len()))
                .sum();
            black_box(n)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("stp_decode_stream_only");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.bench_function("baseline_byte_sum", |b| {
        b.iter(|| black_box(byte_sum(black_box(&stream))))
    });
    group.bench_function("stp_decoder_events", |b| {
        b.iter(|| {
            let mut d = StpDecoder::new();
            let n = d.feed(black_box(&stream)).count() + d.finish().count();
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, stp_decode);
criterion_main!(benches);
