//! Benches the stp-decode pipeline on OpenCSD's `stm_only` STM snapshot (`shared/data/opencsd-stm/stm_only/
//! cstraceitm.bin`, a 32 KiB CoreSight ETB buffer, STM on trace ID 0x20), against a byte-sum over the same
//! bytes in the same run (see `lizard_benches::stm` for how the inputs are built):
//!
//! - `stp_decode_clean_1mib`: the snapshot's STP stream replicated at ASYNCs to 1 MiB and formatted back into
//!   frames, which decodes without an error: the whole-buffer dump (deformat, decode, elements; a record for
//!   every packet and every element), the same pipeline handing out elements only (what a full trace
//!   decoder such as OpenCSD's outputs), and the deformatter alone.
//! - `stp_decode_stream_clean_1mib`: the STP nibble decoder alone on that 1 MiB stream, and the decoder with
//!   the element decoder after it.
//! - `stp_decode_resync_32_copies`: the snapshot repeated 32 times; every copy boundary cuts a packet, so
//!   this measures the dump through 31 errors and unsynchronised stretches.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use lizard_benches::stm::{check_clean, clean_buffer, clean_stream, resync_buffer, TRACE_ID};
use lizard_benches::Ratios;
use std::hint::black_box;
use stp_decode::deformat::{Deformatter, FrameMode};
use stp_decode::dump::{dump, DumpOptions};
use stp_decode::{ElementDecoder, StpDecoder};

const SIZE: usize = 1 << 20;
const SAMPLES: usize = 50;

fn byte_sum(bytes: &[u8]) -> u64 {
    bytes.iter().map(|&b| u64::from(b)).sum()
}

fn dump_count(buffer: &[u8]) -> usize {
    dump(buffer, DumpOptions::formatted(TRACE_ID)).count()
}

/// A group over `bytes` whose first function is the byte-sum baseline over the same bytes.
fn group_with_baseline<'c>(
    c: &'c mut Criterion,
    name: &str,
    bytes: &[u8],
    ratios: &Ratios,
) -> BenchmarkGroup<'c, WallTime> {
    let mut group = c.benchmark_group(name);
    group.sample_size(SAMPLES);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("baseline_byte_sum", |b| {
        ratios.iter(b, "baseline_byte_sum", || byte_sum(black_box(bytes)))
    });
    group
}

fn pipeline(c: &mut Criterion) {
    let buffer = clean_buffer(SIZE);
    let ratios = Ratios::new();
    let mut group = group_with_baseline(c, "stp_decode_clean_1mib", &buffer, &ratios);
    group.bench_function("dump_records", |b| {
        ratios.iter(b, "dump_records", || dump_count(black_box(&buffer)))
    });
    group.bench_function("dump_elements", |b| {
        ratios.iter(b, "dump_elements", || {
            dump(
                black_box(&buffer),
                DumpOptions::formatted(TRACE_ID).elements(),
            )
            .count()
        })
    });
    group.bench_function("deformat_frames", |b| {
        ratios.iter(b, "deformat_frames", || {
            let mut d = Deformatter::new(FrameMode::Memory);
            d.feed(black_box(&buffer))
                .map(|f| f.map_or(0, |f| f.bytes.as_slice().len()))
                .sum::<usize>()
        })
    });
    group.finish();
    ratios.print("stp_decode_clean_1mib", "baseline_byte_sum", SAMPLES);
}

fn stream(c: &mut Criterion) {
    let stream = clean_stream(SIZE);
    check_clean(&stream);
    let ratios = Ratios::new();
    let mut group = group_with_baseline(c, "stp_decode_stream_clean_1mib", &stream, &ratios);
    group.bench_function("stp_decoder_events", |b| {
        ratios.iter(b, "stp_decoder_events", || {
            let mut d = StpDecoder::new();
            d.feed(black_box(&stream)).count() + d.finish().count()
        })
    });
    group.bench_function("stp_decoder_elements", |b| {
        ratios.iter(b, "stp_decoder_elements", || {
            let mut d = StpDecoder::new();
            let mut elements = ElementDecoder::new();
            d.feed(black_box(&stream))
                .filter_map(|e| elements.on_event(&e))
                .count()
        })
    });
    group.finish();
    ratios.print("stp_decode_stream_clean_1mib", "baseline_byte_sum", SAMPLES);
}

fn resync(c: &mut Criterion) {
    let buffer = resync_buffer(32);
    let ratios = Ratios::new();
    let mut group = group_with_baseline(c, "stp_decode_resync_32_copies", &buffer, &ratios);
    group.bench_function("dump_records", |b| {
        ratios.iter(b, "dump_records", || dump_count(black_box(&buffer)))
    });
    group.finish();
    ratios.print("stp_decode_resync_32_copies", "baseline_byte_sum", SAMPLES);
}

criterion_group!(benches, pipeline, stream, resync);
criterion_main!(benches);
