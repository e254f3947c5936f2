//! What a local capture costs outside its counters: how many of the sampling periods the engine's direct
//! source delivers and how much CPU it takes per wall-clock second (from `getrusage`), at 100 µs, 1 ms and
//! 10 ms — this process's counters sampled by the engine's thread, and every CPU's counters (where CPU-wide
//! counting is allowed) sampled by the thread (the baseline) and by the kernel (on idle CPUs, then on CPUs
//! kept busy by spinning child processes), with the kernel's CPU over the thread's in the same run; and how much longer `lizard capture --duration D` runs than `sleep D` (interleaved runs, medians),
//! the time spent outside the window.
//!
//! Not a criterion bench: each figure is a whole capture. Run with
//! `cargo build --release -p lizard-cli && cargo bench -p lizard-benches --bench capture`; without the
//! release `lizard` binary the command rows are skipped with a note. `LIZARD_BENCH_SECONDS` sets the
//! sampling captures' length (1 s by default).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hwcpipe::counting::Target;
use lizard_core::{open_target, Config, HwcBackend, HwcCounterInfo, Lizard, SamplingMethod, Value};

/// Who samples a row's counters.
#[derive(Clone, Copy, Debug)]
enum Sampled {
    /// This process's counters, sampled by the engine's thread (one `read()` of its own groups).
    Process,
    /// Every online CPU's counters, sampled by the engine's thread: the baseline of `Kernel`.
    Thread,
    /// Every online CPU's counters, sampled by the kernel's timers.
    Kernel,
    /// The same with every CPU kept busy by a spinning child process (Linux's CPU-clock timer takes no
    /// sample on an idle CPU); the children's CPU is not this process's.
    KernelBusy,
}

/// One spinning `sh` per online CPU, killed when dropped.
struct Spinners(Vec<std::process::Child>);

impl Spinners {
    fn start() -> Spinners {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        Spinners(
            (0..cpus)
                .filter_map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .ok()
                })
                .collect(),
        )
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A backend that never offers kernel sampling, so that the engine samples it with its thread.
#[derive(Debug)]
struct ThreadOnly(Box<dyn HwcBackend>);

impl HwcBackend for ThreadOnly {
    fn counters(&self) -> Vec<HwcCounterInfo> {
        self.0.counters()
    }
    fn start(&mut self, enabled: &[usize]) -> Result<(), lizard_core::Error> {
        self.0.start(enabled)
    }
    fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), lizard_core::Error> {
        self.0.sample(out)
    }
    fn stop(&mut self) {
        self.0.stop()
    }
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    // SAFETY: `getrusage` writes one `rusage` into the zeroed value it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// One capture of every local CPU counter (of this process, or of every CPU) for `window`, sampled every
/// `interval`: the CPU it used per wall-clock second, or `None` when it could not run here.
fn sampling_row(sampled: Sampled, interval: Duration, window: Duration) -> Option<f64> {
    let mut config = Config::hwcpipe_only();
    config.sample_interval = interval;
    let engine = match sampled {
        Sampled::Process => Lizard::configure(config).map_err(|e| e.to_string()),
        Sampled::Thread | Sampled::Kernel | Sampled::KernelBusy => Target::system_wide(false)
            .and_then(|target| open_target(&target, &[]))
            .map_err(|e| e.to_string())
            .and_then(|opened| {
                let backend = match sampled {
                    Sampled::Thread => Box::new(ThreadOnly(opened.backend)),
                    _ => opened.backend,
                };
                Lizard::configure_with_backend(config, backend).map_err(|e| e.to_string())
            }),
    };
    let mut lizard = match engine {
        Ok(lizard) => lizard,
        Err(err) => {
            test_data::skip!(
                test_data::Fixture::PerfEvents,
                "sampling/{sampled:?}/{interval:?}: no local counter here ({err})"
            );
            return None;
        }
    };
    let ids: Vec<u32> = lizard.counters().iter().map(|c| c.id).collect();
    for id in ids {
        lizard.enable(id).expect("a listed counter");
    }
    let spinners = matches!(sampled, Sampled::KernelBusy).then(Spinners::start);
    let (cpu_before, wall_before) = (cpu_time(), Instant::now());
    lizard.start_capture().expect("start");
    std::thread::sleep(window);
    lizard.stop_capture().expect("stop");
    let (cpu, wall) = (cpu_time() - cpu_before, wall_before.elapsed());
    drop(spinners);
    let s = lizard.sampling().expect("the direct source sampled");
    let how = match &s.method {
        SamplingMethod::Kernel {
            rings,
            lost_records,
            throttled,
            throttled_time,
            idle_periods,
            ..
        } => format!(
            "kernel, {rings} rings, {lost_records} records lost, throttled {throttled} times for \
             {throttled_time:?}, {idle_periods} periods of idle CPUs unsampled"
        ),
        other => other.name().to_string(),
    };
    println!(
        "ratio sampling/{sampled:?}/{interval:?}/delivered = {:.4} x expected ({} of {} periods, {} missed, largest gap {:?}; {how})",
        s.delivered_fraction(),
        s.delivered,
        s.expected,
        s.missed,
        s.largest_gap
    );
    if let Some(start) = &s.start {
        // The CPUs' counters are enabled one group after another: how far apart they started, against
        // the interval, as the kernel's records tell.
        println!(
            "ratio sampling/{sampled:?}/{interval:?}/start_skew = {:.4} x the interval ({:?} over {} CPUs, \
             {} groups unknown)",
            start.largest.as_secs_f64() / interval.as_secs_f64(),
            start.largest,
            start.cpus.len(),
            start.unknown
        );
    }
    let share = cpu.as_secs_f64() / wall.as_secs_f64();
    println!(
        "ratio sampling/{sampled:?}/{interval:?}/cpu = {share:.4} x one core ({cpu:?} CPU in {wall:?})"
    );
    Some(share)
}

/// The release `lizard` beside this bench's own binary (`target/release/deps/capture-…`).
fn lizard_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("lizard");
    path.exists().then_some(path)
}

fn run(program: &std::path::Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    assert!(status.success(), "{} {args:?}: {status}", program.display());
    started.elapsed()
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort_unstable();
    values[values.len() / 2]
}

/// `lizard capture --duration D` against `sleep D`, interleaved, 7 rounds each.
fn overhead_row(lizard: &std::path::Path, seconds: &str) {
    let sleep = std::path::Path::new("/bin/sleep");
    let duration = format!("{seconds}s");
    let (mut capture, mut baseline) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        baseline.push(run(sleep, &[seconds]));
        capture.push(run(lizard, &["capture", "--duration", &duration]));
    }
    let (capture, baseline) = (median(capture), median(baseline));
    println!(
        "ratio capture_wall/{seconds}s = {:.4} x sleep ({:.1} ms over sleep {seconds}: {capture:?} against {baseline:?})",
        capture.as_secs_f64() / baseline.as_secs_f64(),
        (capture.as_secs_f64() - baseline.as_secs_f64()) * 1e3
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter would be the next argument, which this bench does not take.
    let window = std::env::var("LIZARD_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_secs_f64);
    for interval in [
        Duration::from_micros(100),
        Duration::from_millis(1),
        Duration::from_millis(10),
    ] {
        sampling_row(Sampled::Process, interval, window);
        let thread = sampling_row(Sampled::Thread, interval, window);
        let kernel = sampling_row(Sampled::Kernel, interval, window);
        sampling_row(Sampled::KernelBusy, interval, window);
        if let (Some(thread), Some(kernel)) = (thread, kernel) {
            println!(
                "ratio sampling/kernel_over_thread/{interval:?}/cpu = {:.4} x the thread's CPU (both sampling every CPU's counters)",
                kernel / thread.max(f64::MIN_POSITIVE)
            );
        }
    }
    match lizard_binary() {
        Some(lizard) => {
            for seconds in ["0.1", "1"] {
                overhead_row(&lizard, seconds);
            }
        }
        None => test_data::skip!(
            test_data::Fixture::ReleaseBinary,
            "capture_wall: no release lizard beside this bench (cargo build --release -p lizard-cli)"
        ),
    }
}
