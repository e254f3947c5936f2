//! What `lizard capture` and `lizard stat` count: a command, an existing process with all its threads,
//! the whole system (summed or per CPU), a list of CPUs; and the kernel's refusals, each naming the setting
//! that allows it. Everything here is measured by the real kernel of the machine running the tests
//! (software events: hardware events may be absent, as on a VM); refusals are provoked by running the
//! binary as an unprivileged user (uid 65534, no capabilities) in a child process, which changes nothing
//! on the machine.

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use common::{counter, json, lizard, stderr};

/// `false`, after saying why, where the kernel or emulator has no `perf_event_open`.
fn perf_events_present() -> bool {
    let present = hwcpipe::sys::perf_event_open_implemented();
    if !present {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
    }
    present
}

/// `perf_event_paranoid` of this machine.
fn paranoid() -> i32 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2)
}

/// Whether CPU-wide counting works for the user running the tests (root, or paranoid ≤ 0).
fn system_wide_allowed() -> bool {
    let out = lizard(&[
        "stat",
        "--system-wide",
        "--duration",
        "10ms",
        "--counters",
        "CpuClock",
    ]);
    let allowed = out.status.success();
    if !allowed {
        test_data::skip!(
            test_data::Fixture::PerfCpuWide,
            "CPU-wide counting is refused here: {}",
            stderr(&out)
        );
    }
    allowed
}

#[test]
fn capture_of_a_command_lasts_as_long_as_it_and_exits_with_its_status() {
    if !perf_events_present() {
        return;
    }
    let started = Instant::now();
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--interval",
        "5ms",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 5",
    ]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    let doc = json(&out);
    let task = counter(&doc, "TaskClock");
    assert!(
        task["value"].as_i64().expect("counted") > 1_000_000,
        "{task}"
    );
    assert!(
        task["scope"]
            .as_str()
            .expect("scope")
            .starts_with("command 'sh -c"),
        "{task}"
    );
    assert!(task["samples"].as_array().expect("series").len() >= 2);

    // Every output format, and a command that outlives --duration is killed, not left behind.
    for format in ["table", "csv", "chrome-trace"] {
        let out = lizard(&[
            "capture",
            "--no-gatord",
            "--duration",
            "200ms",
            "--format",
            format,
            "--",
            "sleep",
            "30",
        ]);
        assert_eq!(
            out.status.code(),
            Some(128 + 9),
            "{format}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("was killed"), "{}", stderr(&out));
        assert!(!out.stdout.is_empty());
    }
    let missing = lizard(&["capture", "--no-gatord", "--", "/nonexistent/program"]);
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
    assert!(stderr(&missing).contains("cannot run '/nonexistent/program'"));
}

#[test]
fn a_process_is_counted_with_the_threads_it_already_had() {
    if !perf_events_present() {
        return;
    }
    // This test process, with a thread that spins for the whole capture, started before lizard: perf's
    // `inherit` would not follow it, only a counter opened on it does. The main thread only waits.
    let stop = Arc::new(AtomicBool::new(false));
    let (tid_tx, tid_rx) = std::sync::mpsc::channel();
    let spinning = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            // SAFETY: gettid has no preconditions.
            let _ = tid_tx.send(unsafe { libc::gettid() });
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        })
    };
    let tid = tid_rx.recv().expect("the spinning thread's id");
    let pid = std::process::id().to_string();
    let spun_before = on_cpu_ns(&format!("/proc/self/task/{tid}/schedstat"));
    let started = Instant::now();
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--pid",
        &pid,
        "--duration",
        "600ms",
        "--counters",
        "TaskClock",
        "--format",
        "json",
    ]);
    let run = started.elapsed();
    let spun = on_cpu_ns(&format!("/proc/self/task/{tid}/schedstat"))
        .zip(spun_before)
        .map(|(after, before)| after - before);
    stop.store(true, Ordering::Relaxed);
    spinning.join().expect("spinner");
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let task = counter(&doc, "TaskClock");
    let ns = task["value"].as_i64().expect("counted");
    // The other threads only wait, so without the spinner the process would count a few milliseconds.
    // Of the CPU time the kernel gave the spinner while lizard ran, at most the part of the run outside
    // the 600 ms window (lizard starting and ending) can be missing from the count, less a tick's slack
    // (a running task's schedstat is brought up to date at the kernel's ticks).
    if let Some(spun) = spun {
        let outside = u64::try_from(run.saturating_sub(Duration::from_millis(600)).as_nanos())
            .unwrap_or(u64::MAX);
        let least = spun.saturating_sub(outside).saturating_sub(15_000_000);
        assert!(
            u64::try_from(ns).unwrap_or(0) >= least,
            "the spinning thread's time is counted: {ns} ns, of {spun} ns it ran in {run:?}"
        );
    } else {
        test_data::skip!(
            test_data::Fixture::Schedstat,
            "this kernel keeps no schedstat (CONFIG_SCHED_INFO): only a count is checked"
        );
    }
    assert!(ns > 0, "the spinning thread's time is counted: {ns} ns");
    assert_eq!(task["scope"], format!("process {pid}, all threads"));

    let stat = lizard(&[
        "stat",
        "--pid",
        &pid,
        "--duration",
        "100ms",
        "--format",
        "json",
    ]);
    assert!(stat.status.success(), "{}", stderr(&stat));
    assert_eq!(json(&stat)["target"], format!("process {pid}, all threads"));
}

#[test]
fn counting_a_process_ends_when_it_exits() {
    if !perf_events_present() {
        return;
    }
    let mut child = Command::new("sleep").arg("0.3").spawn().expect("sleep");
    let pid = child.id().to_string();
    let started = Instant::now();
    let out = lizard(&["stat", "--pid", &pid, "--format", "json"]);
    child.wait().expect("reap");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn the_whole_system_is_counted_summed_or_per_cpu() {
    if !perf_events_present() || !system_wide_allowed() {
        return;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let doc = json(&lizard(&[
        "capture",
        "--no-gatord",
        "--system-wide",
        "--duration",
        "300ms",
        "--counters",
        "CpuClock",
        "--format",
        "json",
    ]));
    let clock = counter(&doc, "CpuClock");
    assert!(
        clock["scope"].as_str().expect("scope").contains("summed"),
        "{clock}"
    );
    let ns = clock["value"].as_f64().expect("counted");
    let window = doc["duration_s"].as_f64().expect("window") * 1e9;
    // CPU-wide counters are sampled by the kernel: one ring per CPU, every period accounted for.
    let sampling = &doc["sampling"];
    assert_eq!(sampling["method"], "kernel", "{sampling}");
    assert_eq!(sampling["rings"].as_u64(), Some(cpus as u64), "{sampling}");
    assert!(sampling.get("thread_reason").is_none(), "{sampling}");
    let handled = sampling["delivered"].as_u64().unwrap() + sampling["missed"].as_u64().unwrap();
    let expected = sampling["expected"].as_u64().unwrap();
    assert!(
        handled <= expected && expected <= handled + cpus as u64,
        "{sampling}"
    );
    // A CPU-wide clock runs on every CPU, busy or idle: the sum is close to CPUs × window.
    let expected = window * cpus as f64;
    assert!(
        (ns - expected).abs() < expected * 0.25 + 20e6,
        "{ns} ns over {cpus} CPUs × {window} ns"
    );

    let doc = json(&lizard(&[
        "capture",
        "--no-gatord",
        "--per-cpu",
        "--duration",
        "200ms",
        "--counters",
        "TaskClock",
        "--format",
        "json",
    ]));
    let names: Vec<&str> = doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .map(|c| c["counter"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), cpus, "{names:?}");
    assert!(names.contains(&"TaskClock@cpu0"), "{names:?}");
    // Each CPU's series says its counter and CPU as such, not only in its name.
    for c in doc["counters"].as_array().expect("counters") {
        let series = &c["cpu_series"];
        assert_eq!(series["counter"], "TaskClock", "{c}");
        let cpu = series["cpu"].as_u64().expect("the CPU");
        assert_eq!(c["counter"], format!("TaskClock@cpu{cpu}"), "{c}");
    }
    assert!(doc["counters"][0]["scope"]
        .as_str()
        .expect("scope")
        .ends_with("per CPU"));

    let one = json(&lizard(&[
        "capture",
        "--no-gatord",
        "--cpu",
        "0",
        "--duration",
        "100ms",
        "--counters",
        "CpuClock",
        "--format",
        "json",
    ]));
    assert_eq!(counter(&one, "CpuClock")["scope"], "CPUs 0, summed");

    // Without a target and without gatord, the default is the whole system.
    let default = lizard(&[
        "capture",
        "--no-gatord",
        "--duration",
        "100ms",
        "--format",
        "json",
    ]);
    assert!(default.status.success(), "{}", stderr(&default));
    assert!(
        stderr(&default).contains("counting system-wide"),
        "{}",
        stderr(&default)
    );
    let stat = lizard(&["stat", "--system-wide", "--duration", "100ms"]);
    assert!(
        stderr(&stat).contains("Counters for system-wide"),
        "{}",
        stderr(&stat)
    );
}

#[test]
fn bad_targets_fail_with_one_line() {
    let none = lizard(&["capture", "--no-gatord", "--pid", "5000000"]);
    assert_eq!(none.status.code(), Some(2));
    assert_eq!(stderr(&none).trim(), "lizard: there is no process 5000000");
    let offline = lizard(&["capture", "--no-gatord", "--cpu", "4000"]);
    assert_eq!(offline.status.code(), Some(2));
    assert!(stderr(&offline).contains("CPU 4000 is not online"));
    let bad = lizard(&["capture", "--cpu", "3-1"]);
    assert_eq!(bad.status.code(), Some(2));
    let nothing = lizard(&["stat"]);
    assert_eq!(nothing.status.code(), Some(2));
    assert!(
        stderr(&nothing).contains("--pid PID"),
        "{}",
        stderr(&nothing)
    );
    let both = lizard(&["stat", "--pid", "1", "--system-wide"]);
    assert_eq!(both.status.code(), Some(2));
}

/// Runs lizard as uid/gid 65534 (no capabilities); `None`, after saying why, where that is not possible.
fn unprivileged(args: &[&str]) -> Option<Output> {
    if !perf_events_present() {
        return None;
    }
    // Only root can switch users.
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"));
    if !root {
        test_data::skip!(
            test_data::Fixture::Root,
            "refusals are provoked by dropping from root to uid 65534; not root"
        );
        return None;
    }
    match Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(args)
        .uid(65534)
        .gid(65534)
        .output()
    {
        Ok(out) => Some(out),
        Err(e) => {
            test_data::skip!(
                test_data::Fixture::Root,
                "the binary cannot run as uid 65534 here: {e}"
            );
            None
        }
    }
}

#[test]
fn refusals_name_the_setting_that_allows_them() {
    if paranoid() >= 1 {
        let Some(out) = unprivileged(&["capture", "--no-gatord", "--duration", "100ms"]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let text = stderr(&out);
        assert_eq!(text.lines().count(), 1, "{text}");
        for needed in [
            "nothing to count",
            "-- CMD",
            "--pid PID",
            "--gatord",
            &format!("perf_event_paranoid = {}", paranoid()),
            "perf_event_paranoid=0",
            "CAP_PERFMON",
        ] {
            assert!(text.contains(needed), "{needed:?} in {text}");
        }
        let Some(out) = unprivileged(&["stat", "--system-wide", "--duration", "10ms"]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(stderr(&out).contains("counting the whole system is not permitted"));
        // `list` still shows what exists, labelled as a probe, and says why.
        let Some(out) = unprivileged(&["list", "--no-gatord", "--format", "json"]) else {
            return;
        };
        if out.status.success() {
            let doc = json(&out);
            assert!(doc["counters"][0]["scope"]
                .as_str()
                .expect("scope")
                .contains("probe"));
            assert!(stderr(&out).contains("not permitted"));
        }
    } else {
        test_data::skip!(
            test_data::Fixture::PerfParanoid,
            "perf_event_paranoid ≤ 0 allows CPU-wide counting to everyone"
        );
    }
    // Another user's process (pid 1, root's) is refused by the ptrace access check.
    let Some(out) = unprivileged(&["capture", "--no-gatord", "--pid", "1", "--duration", "10ms"])
    else {
        return;
    };
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("counting process 1 is not permitted") && text.contains("CAP_SYS_PTRACE"),
        "{text}"
    );
    // What the unprivileged user may count works: a command of its own (at paranoid ≤ 2).
    if paranoid() <= 2 {
        let Some(out) = unprivileged(&[
            "capture",
            "--no-gatord",
            "--counters",
            "TaskClock",
            "--format",
            "json",
            "--",
            "true",
        ]) else {
            return;
        };
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn a_process_with_more_threads_than_open_files_is_counted_or_the_limit_is_named() {
    if !perf_events_present() {
        return;
    }
    // 48 waiting threads: one TaskClock descriptor each is more than a limit of 32.
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let wait = Arc::new(std::sync::Mutex::new(wait));
    let threads: Vec<_> = (0..48)
        .map(|_| {
            let wait = Arc::clone(&wait);
            std::thread::spawn(move || {
                let _ = wait.lock().map(|w| w.recv_timeout(Duration::from_secs(30)));
            })
        })
        .collect();
    let pid = std::process::id().to_string();
    let with_limit = |ulimit: &str| {
        Command::new("sh")
            .args([
                "-c",
                &format!("ulimit {ulimit} 32 && exec \"$0\" \"$@\""),
                env!("CARGO_BIN_EXE_lizard"),
                "capture",
                "--no-gatord",
                "--pid",
                &pid,
                "--duration",
                "50ms",
                "--counters",
                "TaskClock",
                "--format",
                "json",
            ])
            .output()
            .expect("run lizard under sh")
    };
    // Only the soft limit is low: lizard raises it to the hard limit and counts every thread.
    let soft = with_limit("-Sn");
    // Both limits are low: the shortfall is named, not reported as an unavailable counter.
    let hard = with_limit("-n");
    drop(release);
    for t in threads {
        t.join().expect("waiting thread");
    }
    assert!(soft.status.success(), "{}", stderr(&soft));
    assert_eq!(
        counter(&json(&soft), "TaskClock")["scope"],
        format!("process {pid}, all threads")
    );
    assert_eq!(hard.status.code(), Some(1), "{}", stderr(&hard));
    assert!(
        stderr(&hard).contains("more open files than the limit of 32"),
        "{}",
        stderr(&hard)
    );
}

/// How long a task has run on a CPU, in nanoseconds: the first field of its `schedstat` file.
fn on_cpu_ns(schedstat: &str) -> Option<u64> {
    std::fs::read_to_string(schedstat)
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
