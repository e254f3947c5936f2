//! Benches the pmu-regs overflow arithmetic and software PMU. Inputs are generated, not recorded: a
//! fixed xorshift sequence of 4096 increments below 2^32, turned into the raw reads a 32-bit counter
//! would give. Each group measures the crate's code against a baseline of the same shape in the same run:
//! the same arithmetic written inline over the same input (the serial `delta = (new - prev) & mask` chain
//! with a checked total; six counters each with an enable and event check, a masked add and an overflow
//! flag), so the ratio is the cost of the API and the model, not of a loop the compiler vectorised.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lizard_benches::Ratios;
use pmu_regs::encoding::PmuRegister;
use pmu_regs::overflow::{CounterWidth, OverflowAccumulator};
use pmu_regs::soft_pmu::{SoftPmu, SoftPmuConfig};
use pmu_regs::{CommonEvent, PmuVersion};
use std::hint::black_box;

const READS: usize = 4096;
const SAMPLES: usize = 100;
const MASK32: u64 = 0xFFFF_FFFF;

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

    let ratios = Ratios::new();
    let mut group = c.benchmark_group("pmu_overflow_accumulator_4096_reads");
    group.throughput(Throughput::Elements(READS as u64));
    group.bench_function("baseline_inline_delta", |b| {
        ratios.iter(b, "baseline_inline_delta", || {
            let (mut total, mut last) = (0u64, 0u64);
            for &raw in black_box(&reads) {
                let current = raw & MASK32;
                let events = current.wrapping_sub(last) & MASK32;
                let Some(t) = total.checked_add(events) else {
                    break;
                };
                total = t;
                last = current;
            }
            total
        })
    });
    group.bench_function("update_within_range", |b| {
        ratios.iter(b, "update_within_range", || {
            let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
            for &raw in black_box(&reads) {
                let _ = acc.update_within_range(raw);
            }
            acc.total()
        })
    });
    group.finish();
    ratios.print(
        "pmu_overflow_accumulator_4096_reads",
        "baseline_inline_delta",
        SAMPLES,
    );

    let ratios = Ratios::new();
    let mut group = c.benchmark_group("pmu_overflow_count_4096_reads");
    group.throughput(Throughput::Elements(READS as u64));
    group.bench_function("baseline_inline_wraps", |b| {
        ratios.iter(b, "baseline_inline_wraps", || {
            let (mut total, mut last, mut prev_raw) = (0u64, 0u64, 0u64);
            for &raw in black_box(&reads) {
                let overflows = u64::from(raw < prev_raw);
                prev_raw = raw;
                let current = raw & MASK32;
                let Some(events) = ((u128::from(overflows) << 32) + u128::from(current))
                    .checked_sub(u128::from(last))
                else {
                    continue;
                };
                let t = u128::from(total) + events;
                if t > u128::from(u64::MAX) {
                    continue;
                }
                total = t as u64;
                last = current;
            }
            total
        })
    });
    group.bench_function("update_with_overflow_count", |b| {
        ratios.iter(b, "update_with_overflow_count", || {
            let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
            let mut last = 0u64;
            for &raw in black_box(&reads) {
                let overflows = u64::from(raw < last);
                last = raw;
                let _ = acc.update(raw, overflows);
            }
            acc.total()
        })
    });
    group.finish();
    ratios.print(
        "pmu_overflow_count_4096_reads",
        "baseline_inline_wraps",
        SAMPLES,
    );
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

    let ratios = Ratios::new();
    let mut group = c.benchmark_group("pmu_soft_pmu_4096_bursts_6_counters");
    group.throughput(Throughput::Elements(READS as u64));
    group.bench_function("baseline_inline_6_counters", |b| {
        // The same per-counter work as the model: enabled and programmed with the event, a masked add,
        // the overflow flag; the configuration hidden from the optimiser like the model's registers.
        let enabled = black_box(0x3Fu32);
        let events = black_box([inst; 6]);
        ratios.iter(b, "baseline_inline_6_counters", || {
            let mut counters = [0u64; 6];
            let mut overflow = 0u32;
            for &k in black_box(&increments) {
                for (n, c) in counters.iter_mut().enumerate() {
                    if enabled & (1 << n) == 0 || events[n] != inst {
                        continue;
                    }
                    let sum = *c + k;
                    if sum > MASK32 {
                        overflow |= 1 << n;
                    }
                    *c = sum & MASK32;
                }
            }
            (counters, overflow)
        })
    });
    group.bench_function("count_event", |b| {
        ratios.iter(b, "count_event", || {
            let mut p = pmu.clone();
            for &k in black_box(&increments) {
                p.count_event(inst, k);
            }
            p.overflow_flags()
        })
    });
    group.finish();
    ratios.print(
        "pmu_soft_pmu_4096_bursts_6_counters",
        "baseline_inline_6_counters",
        SAMPLES,
    );
}

criterion_group!(benches, accumulator, soft_pmu);
criterion_main!(benches);
