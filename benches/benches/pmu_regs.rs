//! Benches the pmu-regs overflow arithmetic and software PMU. Inputs are generated, not recorded: a
//! fixed xorshift sequence of 4096 increments below 2^32, turned into the raw reads a 32-bit counter
//! would give. Each group measures the crate's code against a plain wrapping add over the same input
//! in the same run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pmu_regs::encoding::PmuRegister;
use pmu_regs::overflow::{CounterWidth, OverflowAccumulator};
use pmu_regs::soft_pmu::{SoftPmu, SoftPmuConfig};
use pmu_regs::{CommonEvent, PmuVersion};
use std::hint::black_box;

const READS: usize = 4096;

/// Deterministic increments below 2^32 (xorshift64), so every bench run sees the same input.
fn increments() -> Vec<u64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..READS)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state & 0xFFFF_FFFF
        })
        .collect()
}

/// The raw 32-bit counter values after each increment, starting from zero.
fn raw_reads(increments: &[u64]) -> Vec<u64> {
    let mut value = 0u64;
    increments
        .iter()
        .map(|&k| {
            value = value.wrapping_add(k) & 0xFFFF_FFFF;
            value
        })
        .collect()
}

fn accumulator(c: &mut Criterion) {
    let increments = increments();
    let reads = raw_reads(&increments);

    let mut group = c.benchmark_group("pmu_overflow_accumulator_4096_reads");
    group.throughput(Throughput::Elements(READS as u64));
    group.bench_function("baseline_wrapping_add", |b| {
        b.iter(|| {
            let mut total = 0u64;
            for &k in black_box(&increments) {
                total = total.wrapping_add(k);
            }
            black_box(total)
        })
    });
    group.bench_function("update_within_range", |b| {
        b.iter(|| {
            let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
            for &raw in black_box(&reads) {
                let _ = acc.update_within_range(raw);
            }
            black_box(acc.total())
        })
    });
    group.bench_function("update_with_overflow_count", |b| {
        b.iter(|| {
            let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
            let mut last = 0u64;
            for &raw in black_box(&reads) {
                let overflows = u64::from(raw < last);
                last = raw;
                let _ = acc.update(raw, overflows);
            }
            black_box(acc.total())
        })
    });
    group.finish();
}

fn soft_pmu(c: &mut Criterion) {
    let increments = increments();
    let inst = CommonEvent::InstRetired.code();
    let mut pmu = SoftPmu::new(SoftPmuConfig::new(PmuVersion::V3p1, 6)).expect("6 counters");
    for n in 0..6 {
        pmu.write(PmuRegister::Pmevtyper(n), inst.into())
            .expect("counter exists");
    }
    pmu.write(PmuRegister::Pmcntenset, 0x8000_003F)
        .expect("enables");
    pmu.write(PmuRegister::Pmcr, 1).expect("PMCR");

    let mut group = c.benchmark_group("pmu_soft_pmu_4096_bursts_6_counters");
    group.throughput(Throughput::Elements(READS as u64));
    group.bench_function("baseline_wrapping_add_6_counters", |b| {
        b.iter(|| {
            let mut counters = [0u64; 6];
            for &k in black_box(&increments) {
                for c in &mut counters {
                    *c = c.wrapping_add(k) & 0xFFFF_FFFF;
                }
            }
            black_box(counters)
        })
    });
    group.bench_function("count_event", |b| {
        b.iter(|| {
            let mut p = pmu.clone();
            for &k in black_box(&increments) {
                p.count_event(inst, k);
            }
            black_box(p.overflow_flags())
        })
    });
    group.finish();
}

criterion_group!(benches, accumulator, soft_pmu);
criterion_main!(benches);
