//! CPU-wide counters sampled by the kernel (`SamplingMethod::Kernel`): every period of every CPU's ring
//! accounted for, each sample on its CPU, the values the real kernel's clocks give; a task's counters sampled
//! by a thread, which says why. Needs CPU-wide perf events (root or `perf_event_paranoid` ≤ 0); skips,
//! saying why, without them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hwcpipe::counting::{Target, TargetError};
use lizard_core::{open_target, Config, Lizard, NoKernelSampling, Sampling, SamplingMethod};

const INTERVAL: Duration = Duration::from_millis(1);
const WINDOW: Duration = Duration::from_millis(400);

/// Threads spinning on `cpus`, one pinned to each, until dropped: Linux's CPU-clock timer takes no
/// sample on an idle CPU, so a CPU kept busy is sampled every period.
struct Busy {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn on(cpus: &[u32]) -> Busy {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = cpus
            .iter()
            .map(|&cpu| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut set = rustix::thread::CpuSet::new();
                    set.set(cpu as usize);
                    // Best effort: a spinner the kernel will not pin still keeps some CPU busy.
                    let _ = rustix::thread::sched_setaffinity(None, &set);
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        Busy { stop, threads }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// A capture of `names` on `target` for [`WINDOW`] at [`INTERVAL`]: the engine (to read from) and its
/// account, or `None` (said why) where CPU-wide counting is refused or perf is missing.
fn capture(target: &Target, names: &[&str]) -> Option<(Lizard, Vec<u32>, Sampling)> {
    if !hwcpipe::sys::perf_event_open_implemented() {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
        return None;
    }
    let opened = match open_target(target, &[]) {
        Ok(opened) => opened,
        Err(err @ TargetError::SystemWideRefused { .. }) => {
            test_data::skip!(
                test_data::Fixture::PerfCpuWide,
                "CPU-wide counting is refused here: {err}"
            );
            return None;
        }
        Err(err) => panic!("{err}"),
    };
    let mut config = Config::hwcpipe_only();
    config.sample_interval = INTERVAL;
    let mut lizard = Lizard::configure_with_backend(config, opened.backend).expect("the engine");
    let ids: Vec<u32> = names
        .iter()
        .map(|name| {
            let id = lizard
                .counters()
                .iter()
                .find(|c| c.name == *name)
                .unwrap_or_else(|| panic!("no counter {name}"))
                .id;
            lizard.enable(id).expect("enable");
            id
        })
        .collect();
    lizard.start_capture().expect("start");
    std::thread::sleep(WINDOW);
    lizard.stop_capture().expect("stop");
    let sampling = lizard.sampling().expect("an account");
    Some((lizard, ids, sampling))
}

fn online() -> Vec<u32> {
    match Target::system_wide(false).expect("online CPUs") {
        Target::Cpus { cpus, .. } => cpus,
        _ => unreachable!("system_wide gives CPUs"),
    }
}

/// Every period of every ring is delivered or counted missed (the last one may be served by the stop).
/// Each ring's window is its timer's, from just before its enable to just after its disable; the account's
/// window is the longest.
fn assert_every_period_accounted(sampling: &Sampling, rings: usize) {
    let handled = sampling.delivered + sampling.missed;
    let per_ring = sampling.window.as_nanos() / INTERVAL.as_nanos();
    assert!(
        sampling.expected <= per_ring as u64 * rings as u64,
        "{sampling:?}"
    );
    assert!(
        handled <= sampling.expected && sampling.expected <= handled + rings as u64,
        "{sampling:?}"
    );
    assert!(sampling.delivered > 0, "{sampling:?}");
    // Every missed period has its reason: throttled, lost, or an idle CPU.
    if let SamplingMethod::Kernel {
        lost_records,
        throttled_time,
        idle_periods,
        ..
    } = sampling.method
    {
        let throttled = (throttled_time.as_nanos() / INTERVAL.as_nanos()) as u64;
        assert!(
            sampling.missed <= idle_periods + throttled + lost_records,
            "{sampling:?}"
        );
    }
}

#[test]
fn cpu_wide_counters_are_sampled_by_the_kernel_every_period_of_every_cpu() {
    let cpus = online();
    let busy = Busy::on(&cpus);
    let captured = capture(
        &Target::system_wide(false).unwrap(),
        &["CpuClock", "ContextSwitches"],
    );
    drop(busy);
    let Some((lizard, ids, sampling)) = captured else {
        return;
    };
    eprintln!("{sampling:?}");
    // Software events share one group: one ring per CPU.
    assert!(
        matches!(sampling.method, SamplingMethod::Kernel { rings, lost_records: 0, .. } if rings == cpus.len()),
        "{:?}",
        sampling.method
    );
    assert_every_period_accounted(&sampling, cpus.len());
    // Every CPU was busy, so every ring wrote records: each CPU's start is known, after the capture's
    // start and well inside the window, and the skew spans them.
    let start = sampling.start.as_ref().expect("the CPUs' starts");
    eprintln!("{start:?}");
    assert_eq!(start.unknown, 0, "{start:?}");
    let started: Vec<u32> = start.cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(started, cpus, "{start:?}");
    assert!(
        start.cpus.iter().all(|c| c.after_start < WINDOW / 2),
        "{start:?}"
    );
    let first = start.cpus.iter().map(|c| c.after_start).min().unwrap();
    let last = start.cpus.iter().map(|c| c.after_start).max().unwrap();
    assert!(start.largest >= last - first, "{start:?}");
    assert!(start.largest < WINDOW / 2, "{start:?}");
    // A CPU-wide clock counts every CPU's time, idle or not: the window on each CPU, from the timers'
    // start to the read after their stop.
    let cpu_clock = lizard.read_int(ids[0]).unwrap() as f64;
    let expected = sampling.window.as_nanos() as f64 * cpus.len() as f64;
    assert!(
        (cpu_clock / expected - 1.0).abs() < 0.05,
        "CpuClock {cpu_clock} ns against {expected} ns of {} CPUs",
        cpus.len()
    );
    // Each sample is one CPU's period, on that CPU (every CPU busy, so every one is sampled); on each CPU
    // the clock between two delivered periods is the interval (the median, so that a missed period does
    // not count).
    let samples = lizard.samples(ids[0]).unwrap();
    assert!(samples
        .iter()
        .all(|s| s.core.is_some_and(|c| cpus.contains(&c))));
    for &cpu in &cpus {
        let mut deltas: Vec<f64> = samples
            .iter()
            .filter(|s| s.core == Some(cpu))
            .map(|s| s.value.as_f64())
            .collect();
        assert!(deltas.len() > 10, "cpu {cpu}: {} samples", deltas.len());
        deltas.sort_by(f64::total_cmp);
        let median = deltas[deltas.len() / 2];
        assert!(
            (median / INTERVAL.as_nanos() as f64 - 1.0).abs() < 0.1,
            "cpu {cpu}: median clock per sample {median} ns"
        );
    }
}

#[test]
fn per_cpu_series_are_sampled_by_the_kernel_each_on_its_own() {
    let cpus = online();
    let target = Target::Cpus {
        cpus: cpus.clone(),
        per_cpu: true,
        all: true,
    };
    let names: Vec<String> = cpus.iter().map(|c| format!("CpuClock@cpu{c}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let Some((lizard, ids, sampling)) = capture(&target, &names) else {
        return;
    };
    assert_eq!(sampling.method.name(), "kernel", "{sampling:?}");
    assert_every_period_accounted(&sampling, cpus.len());
    for (&id, name) in ids.iter().zip(&names) {
        let samples = lizard.samples(id).unwrap();
        assert!(samples.iter().all(|s| s.core.is_none()), "{name}");
        let total = lizard.read_int(id).unwrap() as f64;
        let window = sampling.window.as_nanos() as f64;
        assert!(
            (total / window - 1.0).abs() < 0.05,
            "{name}: {total} ns in {window} ns"
        );
    }
}

#[test]
fn a_process_is_sampled_by_a_thread_which_says_why() {
    let mut child = std::process::Command::new("sleep")
        .arg("5")
        .spawn()
        .expect("sleep");
    let target = Target::Pid(i32::try_from(child.id()).unwrap());
    let result = capture(&target, &["TaskClock"]);
    let _ = child.kill();
    let _ = child.wait();
    let Some((_, _, sampling)) = result else {
        return;
    };
    match &sampling.method {
        SamplingMethod::Thread { reason } => {
            assert_eq!(*reason, NoKernelSampling::TaskCounters.to_string())
        }
        other => panic!("{other:?}"),
    }
    assert!(sampling.delivered > 0, "{sampling:?}");
}
