//! The GPU sampled at the driver's pace: how many samples a second the engine's GPU poller delivers
//! (while the CPUs are sampled by the kernel beside it) against `GpuProfiler::run_periodic` alone, the
//! driver's own periodic dumps read by nothing else, at 1 ms and 100 µs, in the same run.
//!
//! Each interval runs the driver alone, the engine with the GPU alone, the engine with the CPUs sampled
//! beside the GPU, the engine with the CPUs alone, the driver with the CPUs sampled beside it, and the
//! driver alone again; each engine rate is put over the mean of the two driver-alone baselines, so a
//! machine that slows down during the run does not favour either side, and the engine's rate beside the
//! CPUs also over the driver's beside the same CPU sampling (the same load on the same CPUs). Every side counts
//! the same things: samples (one dump each), the periods their dumps' own timestamps span (a sample
//! spanning several periods holds them folded), and the periods expected from the wall clock. The engine's
//! CPU sampling is given as the kernel's delivered fraction, beside the GPU and, in a capture of the CPUs
//! alone in the same run, without it; the first is also put over the second.
//!
//! Not a criterion bench: each figure is a whole capture, over the machine's Mali device (`/dev/mali0`);
//! without one it says so and measures nothing (hwcpipe's simulated driver dumps on simulated time, as
//! fast as it is read, so it has no pace to measure against). `LIZARD_BENCH_SECONDS` sets each capture's
//! length (2 s by default). In the emulated Arm system with Arm's kbase driver over its dummy GPUs:
//! `KBASE_BENCH=1 KBASE_GPUS="tBEx tODx" bash .ci/kbase-tests`.

use std::time::{Duration, Instant};

use hwcpipe::counting::Target;
use hwcpipe::gpu::{GpuCounter, GpuProfiler};
use lizard_core::{open_target, Config, Lizard, SamplingMethod};

/// What one side delivered in one window.
#[derive(Clone, Copy, Debug, Default)]
struct Delivered {
    /// Samples taken, one dump each.
    samples: u64,
    /// Periods the samples' dumps span, by their own timestamps (samples + folded periods).
    spanned: u64,
    /// Whole periods in the window, by the wall clock.
    expected: u64,
    /// The window.
    window: Duration,
    /// The engine's CPUs sampled beside the GPU: the kernel's delivered fraction of their periods.
    cpus_fraction: Option<f64>,
}

impl Delivered {
    fn rate(&self) -> f64 {
        self.samples as f64 / self.window.as_secs_f64()
    }
}

/// `run_periodic` alone for `window`: every sample read as soon as the driver has it.
fn driver_alone(interval: Duration, window: Duration) -> Result<Delivered, String> {
    let mut profiler = GpuProfiler::open().map_err(|e| e.to_string())?;
    profiler
        .set_enabled(&[GpuCounter::GpuCycles])
        .map_err(|e| e.to_string())?;
    profiler.run_periodic(interval).map_err(|e| e.to_string())?;
    let period = interval.as_nanos() as u64;
    let (started, mut delivered, mut last) = (Instant::now(), Delivered::default(), None);
    while started.elapsed() < window {
        let timestamp = profiler.sample().map_err(|e| e.to_string())?.timestamp_ns();
        delivered.samples += 1;
        // The first sample's span starts before the window's; count it as one period.
        delivered.spanned += match last {
            Some(previous) => (timestamp.saturating_sub(previous) + period / 2) / period,
            None => 1,
        }
        .max(1);
        last = Some(timestamp);
    }
    delivered.window = started.elapsed();
    profiler.stop().map_err(|e| e.to_string())?;
    delivered.expected = (delivered.window.as_nanos() / interval.as_nanos()) as u64;
    Ok(delivered)
}

/// `run_periodic` for `window` while the engine samples every CPU (CpuClock, by the kernel) beside it, in
/// another thread: the driver's own pace under the load the engine's GPU poller meets beside the CPUs. The
/// CPUs' capture starts first and ends after the driver's window.
fn driver_beside_cpus(interval: Duration, window: Duration) -> Result<Delivered, String> {
    let lead = Duration::from_millis(200);
    let cpus = std::thread::Builder::new()
        .name("cpus-beside".into())
        .spawn(move || capture(interval, window + 2 * lead, |name| name == "CpuClock").map(drop))
        .map_err(|e| e.to_string())?;
    std::thread::sleep(lead);
    let delivered = driver_alone(interval, window);
    cpus.join()
        .map_err(|_| "the CPUs' capture panicked".to_owned())??;
    delivered
}

/// A capture of the whole system for `window`, sampled every `interval`, of the offered counters whose
/// names `wanted` takes; an error when it takes none.
fn capture(
    interval: Duration,
    window: Duration,
    wanted: impl Fn(&str) -> bool,
) -> Result<Lizard, String> {
    let mut config = Config::hwcpipe_only();
    config.sample_interval = interval;
    let target = Target::system_wide(false).map_err(|e| e.to_string())?;
    let backend = open_target(&target, &[])
        .map_err(|e| e.to_string())?
        .backend;
    let mut lizard = Lizard::configure_with_backend(config, backend).map_err(|e| e.to_string())?;
    let mut ids = Vec::new();
    for counter in lizard.counters() {
        if wanted(&counter.name) {
            ids.push(counter.id);
        }
    }
    if ids.is_empty() {
        return Err("none of the wanted counters is offered".to_owned());
    }
    for id in ids {
        lizard.enable(id).map_err(|e| e.to_string())?;
    }
    lizard.start_capture().map_err(|e| e.to_string())?;
    std::thread::sleep(window);
    lizard.stop_capture().map_err(|e| e.to_string())?;
    Ok(lizard)
}

/// The engine's capture of GpuCycles and, with `cpus` and where this machine lets it count every CPU,
/// CpuClock on every CPU (sampled by the kernel), for `window`: the GPU's account and the CPUs' delivered
/// fraction.
fn engine(interval: Duration, window: Duration, cpus: bool) -> Result<(Delivered, String), String> {
    let lizard = capture(interval, window, |name| {
        name == "GpuCycles" || (cpus && name == "CpuClock")
    })?;
    let sampling = lizard.sampling().ok_or("no sampling account")?;
    let account = sampling.gpu.clone().ok_or("no GPU account")?;
    let cpus_fraction = (!matches!(sampling.method, SamplingMethod::GpuOnly))
        .then(|| sampling.delivered_fraction());
    let cpus = match &sampling.method {
        SamplingMethod::GpuOnly => "no CPU counters".to_string(),
        method => format!(
            "CPUs by {}: {:.4} of their {} periods delivered",
            method.name(),
            sampling.delivered_fraction(),
            sampling.expected
        ),
    };
    let delivered = Delivered {
        samples: account.delivered,
        spanned: account.delivered + account.folded,
        expected: account.expected,
        window: account.window,
        cpus_fraction,
    };
    let detail = format!(
        "{} folded, {} missed, {} not counting yet, pace {:?}; {cpus}",
        account.folded, account.missed, account.not_counting, account.pace
    );
    Ok((delivered, detail))
}

/// The engine's capture of CpuClock on every CPU alone, no GPU counter, for `window`: the kernel's
/// delivered fraction of the CPUs' periods, the baseline that the CPUs' fraction beside the GPU is put
/// over. (In the emulated system the dummy GPU's dumps are computed by the guest's own CPUs, so the
/// CPUs' sampling there is not free of the GPU's, as it is on a real one.)
fn cpus_alone(interval: Duration, window: Duration) -> Result<(f64, String), String> {
    let lizard = capture(interval, window, |name| name == "CpuClock")?;
    let sampling = lizard.sampling().ok_or("no sampling account")?;
    let fraction = sampling.delivered_fraction();
    let detail = format!(
        "CPUs alone by {}: {fraction:.4} of their {} periods delivered",
        sampling.method.name(),
        sampling.expected
    );
    Ok((fraction, detail))
}

fn row(interval: Duration, window: Duration) -> Result<(), String> {
    let before = driver_alone(interval, window)?;
    let (gpu_only, gpu_only_detail) = engine(interval, window, false)?;
    let (engine, detail) = engine(interval, window, true)?;
    let cpus = cpus_alone(interval, window);
    let beside = driver_beside_cpus(interval, window);
    let after = driver_alone(interval, window)?;
    let baseline = (before.rate() + after.rate()) / 2.0;
    let name = format!("gpu_pace/{interval:?}");
    for (side, d) in [
        ("driver_before", before),
        ("engine_gpu_only", gpu_only),
        ("engine", engine),
        ("driver_after", after),
    ] {
        println!(
            "{name}/{side}: {} samples in {:.3} s ({:.0}/s), spanning {} of {} periods ({:.4} delivered, {:.4} with their counts)",
            d.samples,
            d.window.as_secs_f64(),
            d.rate(),
            d.spanned,
            d.expected,
            d.samples as f64 / d.expected.max(1) as f64,
            d.spanned.min(d.expected) as f64 / d.expected.max(1) as f64,
        );
    }
    println!("{name}/engine_gpu_only: {gpu_only_detail}");
    println!("{name}/engine: {detail}");
    println!(
        "ratio {name}/engine_gpu_only_over_driver = {:.4} x the driver alone's samples a second",
        gpu_only.rate() / baseline
    );
    println!(
        "ratio {name}/engine_over_driver = {:.4} x the driver alone's samples a second (the CPUs sampled beside it)",
        engine.rate() / baseline
    );
    match beside {
        Ok(beside) => {
            println!(
                "{name}/driver_beside_cpus: {} samples in {:.3} s ({:.0}/s)",
                beside.samples,
                beside.window.as_secs_f64(),
                beside.rate()
            );
            println!(
                "ratio {name}/engine_over_driver_beside_cpus = {:.4} x the driver's samples a second with the CPUs sampled beside both",
                engine.rate() / beside.rate().max(f64::MIN_POSITIVE)
            );
        }
        Err(err) => println!("{name}/driver_beside_cpus: not measured: {err}"),
    }
    match cpus {
        Ok((alone, cpus_detail)) => {
            println!("{name}/engine_cpus_only: {cpus_detail}");
            if let Some(beside) = engine.cpus_fraction {
                println!(
                    "ratio {name}/cpus_beside_gpu_over_cpus_alone = {:.4} x the CPUs' delivered fraction without the GPU",
                    beside / alone.max(f64::MIN_POSITIVE)
                );
            }
        }
        Err(err) => println!("{name}/engine_cpus_only: not measured: {err}"),
    }
    Ok(())
}

fn main() {
    let seconds = std::env::var("LIZARD_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(2.0);
    let window = Duration::from_secs_f64(seconds);
    if let Err(err) = GpuProfiler::open() {
        test_data::skip!(
            test_data::Fixture::Kbase,
            "gpu_pace: no Mali GPU here ({err})"
        );
        return;
    }
    for interval in [Duration::from_millis(1), Duration::from_micros(100)] {
        if let Err(err) = row(interval, window) {
            println!("gpu_pace/{interval:?}: not measured: {err}");
        }
    }
}
