//! Benches the lizard-core engine against the simulated gatord (`gatord-sim`, a real TCP server on
//! loopback) with the real daemon's timing (`sim::Timing::default()`: handshake, XML and stop latencies, a
//! session released 100 ms after its connection closes, polled counters every 100 ms, perf counters at the
//! session's sample rate, frames flushed every `live_rate`): the cost of one Start/Stop/Read pair, as a
//! RenderDoc-style caller makes per draw, in persistent mode (`Config::per_draw`: one gatord session kept,
//! samples selected by window) beside the same pair in reconnecting mode (a configuration connection and a
//! capture connection per pair), in the same run, and prints their ratio. One absolute counter (polled) and
//! one delta counter (a perf counter, whose read waits for the sample closing its window) are enabled. A
//! second group reduces 65 536 stored samples with `read_int` beside a plain sum over the same values.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gatord_sim::{self as sim, SimConfig};
use lizard_core::{CaptureMode, Config, Lizard, Timeouts};

fn realistic_daemon() -> sim::SimHandle {
    sim::start(SimConfig {
        perf_counters: vec!["Sim_ccnt".into()],
        ..SimConfig::default()
    })
    .expect("simulator")
}

fn engine(daemon: &sim::SimHandle, mode: CaptureMode) -> Lizard {
    let per_draw = Config::per_draw(daemon.address());
    let config = {
        let mut config = match mode {
            CaptureMode::Persistent => per_draw,
            CaptureMode::Reconnecting => {
                let mut config = per_draw;
                config.mode = mode;
                config.live_rate_ms = Config::default().live_rate_ms;
                config
            }
        };
        config.hwcpipe = false;
        config.timeouts = Timeouts::new(Duration::from_secs(2), Duration::from_secs(2));
        config
    };
    let mut lizard = Lizard::configure(config).expect("configure against the simulator");
    for name in ["Sim_ccnt", "Sim_memfree"] {
        let id = lizard
            .counters()
            .iter()
            .find(|c| c.key == name)
            .expect(name)
            .id;
        lizard.enable(id).expect("enable");
    }
    lizard
}

/// One Start/Stop/Read pair of the two enabled counters. A reconnecting pair this short may end before
/// gatord sent any sample (`NothingCaptured`, then no value): that is its reading, not a failure.
fn pair(lizard: &mut Lizard) -> i64 {
    lizard.start_capture().expect("start");
    match lizard.stop_capture() {
        Ok(()) | Err(lizard_core::Error::NothingCaptured(_)) => {}
        Err(err) => panic!("stop: {err}"),
    }
    lizard.read_int(1).unwrap_or(0) + lizard.read_int(3).unwrap_or(0)
}

/// The median time of `n` pairs.
fn median_pair(lizard: &mut Lizard, n: usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let started = Instant::now();
            black_box(pair(lizard));
            started.elapsed()
        })
        .collect();
    times.sort();
    times[n / 2]
}

fn start_stop_cycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("lizard_core/start_stop_read_pair");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(6));
    let persistent_daemon = realistic_daemon();
    let mut persistent = engine(&persistent_daemon, CaptureMode::Persistent);
    group.bench_function("persistent (per draw)", |b| {
        b.iter(|| black_box(pair(&mut persistent)))
    });
    let reconnecting_daemon = realistic_daemon();
    let mut reconnecting = engine(&reconnecting_daemon, CaptureMode::Reconnecting);
    group.bench_function("reconnecting (baseline)", |b| {
        b.iter(|| black_box(pair(&mut reconnecting)))
    });
    group.finish();
    // The ratio, from medians measured here, one after the other.
    let fast = median_pair(&mut persistent, 201);
    let slow = median_pair(&mut reconnecting, 11);
    println!(
        "lizard_core/start_stop_read_pair: persistent {fast:?}, reconnecting {slow:?}: \
         persistent is {:.0}x cheaper",
        slow.as_secs_f64() / fast.as_secs_f64()
    );
    persistent.close_session().expect("close");
}

fn reduce_samples(c: &mut Criterion) {
    use lizard_core::{reduce, Counter, Sample, Value};
    let samples: Vec<Sample> = (0..65_536u64)
        .map(|t| Sample {
            timestamp_ns: t * 1_000_000,
            value: Value::Int((t as i64 * 7919) % 100_000),
            core: None,
        })
        .collect();
    let counter = Counter {
        name: "n".into(),
        title: "t".into(),
        category: "c".into(),
        ..Counter::gatord_delta(1, "k")
    };
    let mut group = c.benchmark_group("lizard_core/reduce_65536_samples");
    group.throughput(Throughput::Elements(samples.len() as u64));
    group.bench_function("read_int", |b| {
        b.iter(|| reduce::read_int(black_box(&counter), black_box(&samples)))
    });
    group.bench_function("plain sum (baseline)", |b| {
        b.iter(|| {
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
}

criterion_group!(benches, start_stop_cycle, reduce_samples);
criterion_main!(benches);
