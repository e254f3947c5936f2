//! The CPU profiler against the real kernel of the machine running the tests: software events
//! must count real work, hardware events must either count or be reported unavailable with the
//! kernel's reason, and a spawned child's work must be attributed to it. The measured bytes are the
//! kernel's own `perf_event_open` group records; nothing is simulated here.

#[path = "support/real_kernel.rs"]
mod real_kernel;

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::io::Errno;

use hwcpipe::cpu::{CpuConfig, CpuCounter, CpuProfiler, CpuTarget, PerfEvent, UnavailableReason};
use hwcpipe::{Availability, Counter, HwcPipe, Value};
use real_kernel::perf_events_present;

/// Spins until this thread has used `ms` milliseconds of CPU time (or 20 s have passed, on a machine too
/// busy to give it that) while touching freshly mapped pages (page faults). Each block is larger than
/// glibc's largest mmap threshold (32 MiB), so it is a fresh mapping every time. CPU time rather than
/// wall time, so a loaded machine stretches the loop instead of shrinking the work counted.
fn busy_allocating(ms: u64) -> u64 {
    const BLOCK: usize = 34 << 20;
    let cpu_start = thread_cpu_time();
    let start = Instant::now();
    let mut acc = 0u64;
    loop {
        let mut pages = vec![0u8; BLOCK];
        for i in (0..pages.len()).step_by(4096) {
            pages[i] = i as u8;
        }
        acc = acc.wrapping_add(u64::from(black_box(pages[BLOCK - 4096])));
        drop(pages);
        let used = thread_cpu_time().saturating_sub(cpu_start);
        if used >= Duration::from_millis(ms) || start.elapsed() >= Duration::from_secs(20) {
            return acc;
        }
    }
}

/// The CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // `libc`'s clock_gettime, not `rustix`'s, which crashes under valgrind (rustix issue 1559).
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[test]
fn software_counters_count_a_busy_allocating_loop() {
    if !perf_events_present() {
        return;
    }
    let mut p =
        CpuProfiler::new(CpuConfig::new(&CpuCounter::SOFTWARE)).expect("software perf events");
    assert_eq!(p.available_counters(), CpuCounter::SOFTWARE);
    p.run().unwrap();
    black_box(busy_allocating(50));
    let s = p.sample().unwrap();
    let task_clock = s.get(CpuCounter::TaskClock).unwrap();
    assert!(
        task_clock >= 20_000_000,
        "task-clock {task_clock} ns for 50 ms of the thread's CPU time spinning"
    );
    assert!(s.get(CpuCounter::CpuClock).unwrap() > 0);
    assert!(s.get(CpuCounter::PageFaults).unwrap() > 0);
    assert!(s.get(CpuCounter::MinorFaults).unwrap() > 0);
    assert!(!s.is_multiplexed(), "software events are never multiplexed");
    p.stop().unwrap();
}

#[test]
fn hardware_counters_count_or_say_why_not() {
    if !perf_events_present() {
        return;
    }
    let mut p = CpuProfiler::new(CpuConfig::all()).expect("at least the software events open");
    for c in CpuCounter::HWCPIPE {
        match p.availability(c) {
            Ok(()) => {}
            Err(UnavailableReason::Unsupported { errno }) => {
                assert!(
                    [
                        Errno::NOENT.raw_os_error(),
                        Errno::OPNOTSUPP.raw_os_error(),
                        Errno::NODEV.raw_os_error()
                    ]
                    .contains(&errno),
                    "{c}: {errno}"
                );
            }
            Err(UnavailableReason::NotImplementedByCpu { event }) => {
                assert!(
                    matches!(c.event(), PerfEvent::Arm(e) if e.code() == event),
                    "{c}"
                );
            }
            Err(UnavailableReason::NotOnThisArchitecture) => {
                assert!(matches!(c.event(), PerfEvent::Arm(_)));
                assert_ne!(std::env::consts::ARCH, "aarch64");
            }
            Err(other) => panic!("{c}: unexpected reason {other}"),
        }
    }
    // Never listed as working when it did not open.
    for (c, _) in p.unavailable_counters() {
        assert!(!p.available_counters().contains(c));
    }
    p.run().unwrap();
    black_box(busy_allocating(20));
    let s = p.sample().unwrap();
    for c in [CpuCounter::Cycles, CpuCounter::Instructions] {
        if let Some(v) = s.get(c) {
            assert!(v > 0, "{c} is available, so it must count the loop");
        }
    }
}

#[test]
fn deltas_add_up_to_the_totals() {
    if !perf_events_present() {
        return;
    }
    let mut p = CpuProfiler::new(CpuConfig::new(&[
        CpuCounter::TaskClock,
        CpuCounter::PageFaults,
    ]))
    .unwrap();
    p.run().unwrap();
    let mut sums = [0u64; 2];
    for _ in 0..5 {
        black_box(busy_allocating(5));
        let s = p.sample().unwrap();
        for (sum, c) in sums
            .iter_mut()
            .zip([CpuCounter::TaskClock, CpuCounter::PageFaults])
        {
            *sum += s.get(c).unwrap();
            assert_eq!(s.total(c), Some(*sum), "{c}");
        }
    }
    assert!(sums[0] > 0 && sums[1] > 0);
}

#[test]
fn a_spawned_child_is_measured_not_the_parent() {
    if !perf_events_present() {
        return;
    }
    // The child spins for about 200 ms of CPU time; the parent only sleeps.
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"]);
    let config = CpuConfig::new(&[CpuCounter::TaskClock, CpuCounter::ContextSwitches])
        .target(CpuTarget::Spawn(cmd));
    let mut child_profiler = CpuProfiler::new(config).expect("child counters");
    assert!(child_profiler.target_pid() > 0);
    assert!(
        child_profiler.child().is_none(),
        "held before exec until run()"
    );
    let mut parent_profiler = CpuProfiler::new(CpuConfig::new(&[CpuCounter::TaskClock])).unwrap();
    parent_profiler.run().unwrap();
    child_profiler.run().unwrap();
    let status = child_profiler.child().expect("running").wait().unwrap();
    assert!(status.success());
    let child_ns = child_profiler
        .sample()
        .unwrap()
        .get(CpuCounter::TaskClock)
        .unwrap();
    let parent_ns = parent_profiler
        .sample()
        .unwrap()
        .get(CpuCounter::TaskClock)
        .unwrap();
    assert!(child_ns > 10_000_000, "child task-clock {child_ns} ns");
    assert!(
        parent_ns < child_ns / 2,
        "parent {parent_ns} ns vs child {child_ns} ns"
    );
}

#[test]
fn an_existing_process_is_measured_by_pid() {
    if !perf_events_present() {
        return;
    }
    let mut child = Command::new("sh")
        .args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let config = CpuConfig::new(&[CpuCounter::TaskClock]).target(CpuTarget::Pid(pid));
    let mut p = CpuProfiler::new(config).expect("counters of a child of ours");
    p.run().unwrap();
    child.wait().unwrap();
    let ns = p.sample().unwrap().get(CpuCounter::TaskClock).unwrap();
    assert!(ns > 0, "task-clock of pid {pid}: {ns}");
}

/// A busy process's two clocks in one group count through every run of the profiler, not only the first
/// (lizard serve's back-to-back windows): in each run both clocks read at least 80 % of what the scheduler
/// says the process ran (`/proc/PID/schedstat`), however loaded the machine is.
/// Enabling every member of the group with `PERF_IOC_FLAG_GROUP` left the cpu-clock member of another
/// task's group at 0 after the first run on Linux 6.18, until the task was next scheduled in.
#[test]
fn another_processs_clocks_count_in_every_run_not_only_the_first() {
    if !perf_events_present() {
        return;
    }
    struct Spinner(std::process::Child);
    impl Drop for Spinner {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let spinner = Spinner(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let pid = spinner.0.id() as i32;
    let counters = [CpuCounter::TaskClock, CpuCounter::CpuClock];
    let config = CpuConfig::new(&counters).target(CpuTarget::Pid(pid));
    let mut p = CpuProfiler::new(config).expect("counters of a child of ours");
    let ran_ns = || {
        let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
        text.split_whitespace()
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    for run in 1..=4 {
        p.run().unwrap();
        let before = ran_ns();
        std::thread::sleep(Duration::from_millis(200));
        let sample = p.sample().unwrap();
        let ran = ran_ns() - before;
        for counter in counters {
            let ns = sample.get(counter).unwrap();
            assert!(
                ns >= ran / 10 * 8,
                "run {run}: {} of the busy pid {pid} counted {ns} ns while it ran {ran} ns",
                counter.name()
            );
        }
        p.stop().unwrap();
    }
}

#[test]
fn a_program_that_does_not_exist_is_a_spawn_error() {
    if !perf_events_present() {
        return;
    }
    let config = CpuConfig::new(&[CpuCounter::TaskClock])
        .target(CpuTarget::Spawn(Command::new("/nonexistent/hwcpipe-test")));
    let mut p = CpuProfiler::new(config).expect("the fork itself works");
    let err = p.run().unwrap_err();
    assert!(matches!(err, hwcpipe::CpuError::Spawn(_)), "{err:?}");
    assert!(!p.is_running());
    assert!(p.child().is_none());
    assert!(matches!(p.sample(), Err(hwcpipe::CpuError::NotRunning)));
}

#[test]
fn hwcpipe_new_lists_every_counter_with_its_availability() {
    if !perf_events_present() {
        return;
    }
    let mut pipe = HwcPipe::new();
    let listed: Vec<_> = pipe.counters().collect();
    assert_eq!(listed.len(), 24 + 37);
    assert_eq!(listed[0].0, Counter::Cpu(CpuCounter::Cycles));
    assert_eq!(listed[24].1.name, "GpuCycles");
    for (counter, info, availability) in &listed {
        assert_eq!(info.name, counter.info().name);
        if let Counter::Cpu(c) = counter {
            if CpuCounter::SOFTWARE.contains(c) {
                assert!(availability.is_available(), "{c}: {availability}");
            }
        }
    }
    if pipe.gpu_profiler().is_none() {
        assert!(pipe.gpu_error().is_some(), "a missing GPU keeps its reason");
        let why = pipe.availability(hwcpipe::GpuCounter::GpuCycles);
        assert!(matches!(why, Availability::NoGpuProfiler(_)), "{why}");
    }
    pipe.run().unwrap();
    black_box(busy_allocating(10));
    let m = pipe.sample().unwrap();
    match m.get(CpuCounter::TaskClock) {
        Some(Value::Int(ns)) => assert!(ns > 0),
        other => panic!("task clock {other:?}"),
    }
    assert!(m.iter().count() >= 7);
    pipe.stop().unwrap();
}

#[cfg(feature = "json")]
#[test]
fn json_selection_opens_the_named_counters() {
    if !perf_events_present() {
        return;
    }
    let mut pipe = HwcPipe::from_json(r#"{"cpu": ["TaskClock", "PageFaults"]}"#).unwrap();
    assert!(pipe.gpu_profiler().is_none() && pipe.gpu_error().is_none());
    assert!(matches!(
        pipe.availability(hwcpipe::GpuCounter::GpuCycles),
        Availability::SideNotSelected
    ));
    pipe.run().unwrap();
    black_box(busy_allocating(5));
    let m = pipe.sample().unwrap();
    let counters: Vec<_> = m.iter().map(|(c, _)| c).collect();
    assert_eq!(
        counters,
        [
            Counter::Cpu(CpuCounter::TaskClock),
            Counter::Cpu(CpuCounter::PageFaults)
        ]
    );
    let err = HwcPipe::from_json(r#"{"cpu": ["TaskClok"]}"#).unwrap_err();
    assert!(err.to_string().contains("TaskClock"), "{err}");
}

#[test]
fn a_cpu_target_counts_what_runs_on_that_cpu() {
    if !perf_events_present() {
        return;
    }
    let config = CpuConfig::new(&[CpuCounter::CpuClock]).target(CpuTarget::Cpu(0));
    let mut p = match CpuProfiler::new(config) {
        Ok(p) => p,
        Err(hwcpipe::CpuError::CpuWideDenied { paranoid, .. }) => {
            test_data::skip!(
                test_data::Fixture::PerfCpuWide,
                "CPU-wide counting is not permitted here (perf_event_paranoid = {paranoid:?})"
            );
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_eq!(p.target_pid(), -1);
    p.run().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let ns = p.sample().unwrap().get(CpuCounter::CpuClock).unwrap();
    // The CPU clock of a CPU-wide event runs for the whole interval, busy or idle.
    assert!(ns >= 50_000_000, "cpu-clock of CPU 0 over 100 ms: {ns} ns");
}
