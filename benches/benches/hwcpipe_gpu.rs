//! Benches the Mali GPU sample path on a synthetic vinstr dump of a Mali-G78 MP6 with two L2 slices
//! (10 blocks of 64 × u32; the values follow the simulator's ramp, no recorded data exists for a
//! device this machine lacks): summing the blocks per kind and evaluating all 37 `GpuCounter`
//! formulas, against a plain byte-sum over the same dump in the same run, so the result reads as a
//! ratio.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hwcpipe::gpu::dump::{BlockLayout, BlockSums, VINSTR_BLOCK_BYTES};
use hwcpipe::gpu::formula::resolve;
use hwcpipe::gpu::product::identify;
use hwcpipe::gpu::GpuCounter;
use lizard_benches::Ratios;
use std::hint::black_box;

fn dump(layout: &BlockLayout) -> Vec<u8> {
    let mut bytes = vec![0u8; layout.dump_bytes()];
    for (block, chunk) in bytes.chunks_exact_mut(VINSTR_BLOCK_BYTES).enumerate() {
        for (index, word) in chunk.chunks_exact_mut(4).enumerate() {
            word.copy_from_slice(&(1000 + 10 * block as u32 + index as u32).to_ne_bytes());
        }
    }
    bytes
}

fn bench(c: &mut Criterion) {
    let product = identify(0x9002_0010).expect("Mali-G78");
    let table = product.layout.expect("layout");
    let layout = BlockLayout::from_props(0b0111_0111, 2).expect("layout");
    let formulas: Vec<_> = GpuCounter::ALL
        .iter()
        .filter_map(|&counter| resolve(product.family, table, 16, 64, counter).ok())
        .collect();
    let bytes = dump(&layout);

    let ratios = Ratios::new();
    let mut group = c.benchmark_group("hwcpipe_gpu_dump");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("accumulate_and_evaluate", |b| {
        let mut sums = BlockSums::default();
        let mut values = [0.0f64; 37];
        ratios.iter(b, "accumulate_and_evaluate", || {
            sums.clear();
            layout
                .accumulate(black_box(&bytes), &mut sums)
                .expect("dump");
            for (value, formula) in values.iter_mut().zip(&formulas) {
                *value = formula.eval(&sums);
            }
            black_box(&values);
        })
    });
    group.bench_function("baseline_byte_sum", |b| {
        ratios.iter(b, "baseline_byte_sum", || {
            black_box(
                black_box(&bytes)
                    .iter()
                    .fold(0u64, |acc, &x| acc.wrapping_add(u64::from(x))),
            )
        })
    });
    group.finish();
    ratios.print("hwcpipe_gpu_dump", "baseline_byte_sum", 100);
}

criterion_group!(benches, bench);
criterion_main!(benches);
