//! Benches the lizard-core engine against the simulated gatord (`lizard_core::sim`, a real TCP server on
//! loopback streaming synthetic BLOCK_COUNTER frames every millisecond): the cost of one start/stop capture pair
//! in persistent mode (one gatord session kept open, samples selected by timestamp window) beside the same pair
//! in reconnecting mode (a configuration connection and a capture connection per pair), in the same run, so
//! the result reads as a ratio. A second group reduces 65 536 stored samples with `read_int` beside a plain sum
//! over the same values.

use lizard_benches::Ratios;
use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lizard_core::sim::{self, SimConfig};
use lizard_core::{CaptureMode, Config, Lizard, Timeouts};

fn engine(daemon: &sim::SimHandle, mode: CaptureMode) -> Lizard {
    let config = Config {
        mode,
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            io: Duration::from_secs(2),
        },
        ..Config::gatord_only(daemon.address())
    };
    let mut lizard = Lizard::configure(config).expect("configure against the simulator");
    lizard.enable(1).expect("counter 1");
    lizard
}

fn start_stop_cycle(c: &mut Criterion) {
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("lizard_core/start_stop_cycle");
    group.sample_size(20);
    {
        let daemon = sim::start(SimConfig::default()).expect("simulator");
        let mut lizard = engine(&daemon, CaptureMode::Persistent);
        group.bench_function("persistent", |b| {
            ratios.iter(b, "persistent", || {
                lizard.start_capture().expect("start");
                lizard.stop_capture().expect("stop");
                black_box(lizard.read_int(1).expect("read"))
            })
        });
        lizard.close_session().expect("close");
    }
    {
        let daemon = sim::start(SimConfig::default()).expect("simulator");
        let mut lizard = engine(&daemon, CaptureMode::Reconnecting);
        group.bench_function("reconnecting (baseline)", |b| {
            ratios.iter(b, "reconnecting (baseline)", || {
                lizard.start_capture().expect("start");
                lizard.stop_capture().expect("stop");
                black_box(lizard.read_int(1).expect("read"))
            })
        });
    }
    group.finish();
    ratios.print(
        "lizard_core/start_stop_cycle",
        "reconnecting (baseline)",
        20,
    );
}

fn reduce_samples(c: &mut Criterion) {
    use lizard_core::{reduce, Counter, CounterClass, ResultType, Sample, Source, Units, Value};
    let samples: Vec<Sample> = (0..65_536u64)
        .map(|t| Sample {
            timestamp_ns: t * 1_000_000,
            value: Value::Int((t as i64 * 7919) % 100_000),
        })
        .collect();
    let counter = Counter {
        id: 1,
        key: "k".into(),
        name: "n".into(),
        title: "t".into(),
        description: String::new(),
        category: "c".into(),
        multiplier: 1.0,
        units: Units::Unknown,
        class: CounterClass::Delta,
        source: Source::Gatord,
        result_type: ResultType::Integer,
    };
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("lizard_core/reduce_65536_samples");
    group.throughput(Throughput::Elements(samples.len() as u64));
    group.bench_function("read_int", |b| {
        ratios.iter(b, "read_int", || {
            reduce::read_int(black_box(&counter), black_box(&samples))
        })
    });
    group.bench_function("plain sum (baseline)", |b| {
        ratios.iter(b, "plain sum (baseline)", || {
            black_box(&samples)
                .iter()
                .map(|s| match s.value {
                    Value::Int(v) => v,
                    Value::Float(f) => f as i64,
                })
                .sum::<i64>()
        })
    });
    group.finish();
    ratios.print(
        "lizard_core/reduce_65536_samples",
        "plain sum (baseline)",
        100,
    );
}

criterion_group!(benches, start_stop_cycle, reduce_samples);
criterion_main!(benches);
