//! The engine counting something other than its own process: another process (all its threads) and the
//! whole system, through `open_target` and `Lizard::configure_with_backend`, measured by the real kernel of
//! the machine running the tests (software events; hardware events may be absent, as on a VM).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hwcpipe::counting::{Target, TargetError};
use lizard_core::{open_target, Config, Lizard};

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

/// A process that keeps one CPU busy until it is killed.
struct Spinner(Child);

impl Spinner {
    fn start() -> Spinner {
        let child = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh");
        Spinner(child)
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.0.id()).expect("pid")
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The engine over `target`'s counters with `names` enabled, captured for `window`: each counter's value.
fn capture(target: &Target, names: &[&str], window: Duration) -> Result<Vec<i64>, TargetError> {
    let opened = open_target(target, &[])?;
    let mut config = Config::hwcpipe_only();
    config.sample_interval = Duration::from_millis(5);
    let mut lizard = Lizard::configure_with_backend(config, opened.backend).expect("the engine");
    let ids: Vec<u32> = names
        .iter()
        .map(|name| {
            lizard
                .counters()
                .iter()
                .find(|c| c.name == *name)
                .unwrap_or_else(|| panic!("no counter {name}"))
                .id
        })
        .collect();
    for &id in &ids {
        lizard.enable(id).expect("enable");
    }
    lizard.start_capture().expect("start");
    std::thread::sleep(window);
    lizard.stop_capture().expect("stop");
    Ok(ids
        .iter()
        .map(|&id| lizard.read_int(id).expect("a value"))
        .collect())
}

#[test]
fn another_process_is_counted_with_its_scope_named() {
    if !perf_events_present() {
        return;
    }
    let spinner = Spinner::start();
    let target = Target::Pid(spinner.pid());
    let opened = open_target(&target, &[]).expect("open the process's counters");
    let config = Config::hwcpipe_only();
    let lizard = Lizard::configure_with_backend(config, opened.backend).expect("the engine");
    let task_clock = lizard
        .counters()
        .iter()
        .find(|c| c.name == "TaskClock")
        .expect("TaskClock");
    assert_eq!(
        task_clock.title,
        format!("HWCPipe CPU (process {}, all threads)", spinner.pid())
    );
    drop(lizard);

    // The spinner's task clock over the capture lies between the CPU time the kernel says it had while
    // the capture surely ran and the time it had from before the start to after the stop (its schedstat), and
    // is far more than this idle test thread could ever have used. The capture lasts until the spinner
    // has had 100 ms of CPU, however busy the machine.
    let Some(before_start) = on_cpu_ns(spinner.pid()) else {
        test_data::skip!(
            test_data::Fixture::Schedstat,
            "this kernel keeps no /proc/PID/schedstat (CONFIG_SCHED_INFO)"
        );
        return;
    };
    let opened = open_target(&target, &[]).expect("open the process's counters");
    let mut config = Config::hwcpipe_only();
    config.sample_interval = Duration::from_millis(5);
    let mut lizard = Lizard::configure_with_backend(config, opened.backend).expect("the engine");
    let id = lizard
        .counters()
        .iter()
        .find(|c| c.name == "TaskClock")
        .expect("TaskClock")
        .id;
    lizard.enable(id).expect("enable");
    lizard.start_capture().expect("start");
    let after_start = on_cpu_ns(spinner.pid()).expect("schedstat");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut before_stop = after_start;
    while before_stop - after_start < 100_000_000 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        before_stop = on_cpu_ns(spinner.pid()).expect("schedstat");
    }
    lizard.stop_capture().expect("stop");
    let after_stop = on_cpu_ns(spinner.pid()).expect("schedstat");
    let ns = u64::try_from(lizard.read_int(id).expect("a value")).expect("a count");
    // The kernel brings a running task's schedstat up to date at its ticks: a tick's worth either way.
    let slack = 15_000_000;
    assert!(
        ns + slack >= before_stop - after_start,
        "the spinner ran {ns} ns counted, {} ns by the kernel while counted",
        before_stop - after_start
    );
    assert!(
        ns <= after_stop - before_start + slack,
        "the spinner ran {ns} ns counted, {} ns by the kernel in all",
        after_stop - before_start
    );
    assert!(ns >= 85_000_000, "{ns} ns");
}

/// How long task `pid` has run on a CPU, in nanoseconds: the first field of its schedstat.
fn on_cpu_ns(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
fn a_process_that_does_not_exist_is_a_typed_error() {
    let err = open_target(&Target::Pid(i32::MAX), &[])
        .err()
        .expect("an error");
    assert!(
        matches!(err, TargetError::NoProcess(pid) if pid == i32::MAX),
        "{err}"
    );
}

#[test]
fn the_whole_system_is_counted_where_the_kernel_allows_it() {
    if !perf_events_present() {
        return;
    }
    let target = match Target::system_wide(false) {
        Ok(target) => target,
        Err(err) => {
            test_data::skip!(
                test_data::Fixture::PerfCpuWide,
                "the online CPUs cannot be listed: {err}"
            );
            return;
        }
    };
    let Target::Cpus { cpus, .. } = &target else {
        unreachable!("system_wide gives CPUs")
    };
    let cpu_count = cpus.len();
    let spinner = Spinner::start();
    match capture(
        &target,
        &["CpuClock", "TaskClock"],
        Duration::from_millis(300),
    ) {
        Ok(values) => {
            // CPU-wide clocks count every CPU's time, idle or not: about 300 ms per CPU, the spinner's
            // among them.
            let cpu_clock = values[0];
            let expected = 300_000_000 * i64::try_from(cpu_count).unwrap();
            assert!(
                cpu_clock > expected / 2 && cpu_clock < expected * 4,
                "CpuClock {cpu_clock} ns over {cpu_count} CPUs in 300 ms"
            );
            assert!(values[1] > 100_000_000, "TaskClock {} ns", values[1]);
        }
        Err(err @ TargetError::SystemWideRefused { .. }) => {
            test_data::skip!(
                test_data::Fixture::PerfCpuWide,
                "CPU-wide counting is refused here: {err}"
            );
        }
        Err(err) => panic!("{err}"),
    }
    drop(spinner);
}

/// Without a Mali device the GPU's reason comes back as hwcpipe's own error, not its text.
#[test]
fn a_missing_gpu_is_given_as_its_typed_error() {
    if !perf_events_present() {
        return;
    }
    let own = Target::Pid(i32::try_from(std::process::id()).expect("pid"));
    let opened = match open_target(&own, &[]) {
        Ok(opened) => opened,
        Err(err) => panic!("this process's counters: {err}"),
    };
    let any_device = (0..32).any(|n| std::path::Path::new(&format!("/dev/mali{n}")).exists());
    let no_device = matches!(opened.gpu_error, Some(hwcpipe::gpu::GpuError::NoDevice));
    // With a device, the GPU opens or fails for what is wrong with it, never for its absence.
    assert_eq!(no_device, !any_device, "{:?}", opened.gpu_error);
}
