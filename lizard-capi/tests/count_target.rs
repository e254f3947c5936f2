//! `LIZARD_COUNT`: the C API counting another process or the whole system instead of the calling process,
//! and refusing a value that names no target. One test, because the setting is the process's environment.

mod common;

use std::ffi::{CStr, CString};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{api, closed_port, id_of};
use lizard::abi::{
    LizardApi, LizardCounterDescription, LizardInstance, LizardSamplingDetail, LZD_FAILURE, LZD_OK,
    LZD_SAMPLING_KERNEL,
};
use lizard::{LizardGetSamplingDetail, LizardGetStartSkew};

/// `Init` with `LIZARD_COUNT` set to `spec`.
fn init_counting(api: &LizardApi, spec: &str) -> LizardInstance {
    std::env::set_var("LIZARD_COUNT", spec);
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), closed_port()) };
    std::env::remove_var("LIZARD_COUNT");
    ctx
}

/// The title of counter `id`.
fn title(api: &LizardApi, ctx: LizardInstance, id: u32) -> String {
    let mut desc = std::mem::MaybeUninit::<LizardCounterDescription>::zeroed();
    // SAFETY: `ctx` came from Init, `desc` is a valid out-pointer, and the strings live until Destroy.
    unsafe {
        assert_eq!(
            (api.get_counter_description)(ctx, id, desc.as_mut_ptr()),
            LZD_OK
        );
        CStr::from_ptr(desc.assume_init().title)
            .to_string_lossy()
            .into_owned()
    }
}

/// TaskClock over a 300 ms window.
fn task_clock_over_300_ms(api: &LizardApi, ctx: LizardInstance) -> i64 {
    let id = id_of(api, ctx, "TaskClock");
    // SAFETY: `ctx` came from Init and is destroyed by the caller only.
    unsafe {
        (api.enable_counter)(ctx, id);
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!((api.stop_capture)(ctx), LZD_OK);
        (api.read_counter_int)(ctx, id)
    }
}

struct Spinner(Child);

impl Drop for Spinner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn lizard_count_names_what_the_local_counters_count() {
    if !hwcpipe::sys::perf_event_open_implemented() {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
        return;
    }
    let api = api();

    // Values that name no target, or a process that does not exist: Init fails rather than count the
    // calling process instead.
    for bad in ["pid:x", "everything", "pid:2147483647"] {
        assert!(init_counting(api, bad).is_null(), "{bad}");
    }

    // Another process: a spinner's task clock over 300 ms is most of 300 ms, which this idle thread
    // could never have used.
    let spinner = Spinner(
        Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .stdout(Stdio::null())
            .spawn()
            .expect("sh"),
    );
    let pid = spinner.0.id();
    let ctx = init_counting(api, &format!("pid:{pid}"));
    assert!(!ctx.is_null());
    let id = id_of(api, ctx, "TaskClock");
    assert_eq!(
        title(api, ctx, id),
        format!("HWCPipe CPU (process {pid}, all threads)")
    );
    // The spinner's task clock lies between the CPU time the kernel gave it while the capture surely
    // ran and the time it had from before the start to after the stop (its schedstat, brought up to
    // date at the kernel's ticks: a tick's slack), and the capture lasts until that is 100 ms, however
    // busy the machine: far more than this idle thread could have used.
    let pid = i32::try_from(pid).expect("pid");
    if let Some(before_start) = on_cpu_ns(pid) {
        // SAFETY: `ctx` came from Init and is destroyed below only.
        let ns = unsafe {
            (api.enable_counter)(ctx, id);
            assert_eq!((api.start_capture)(ctx), LZD_OK);
            let after_start = on_cpu_ns(pid).expect("schedstat");
            let deadline = Instant::now() + Duration::from_secs(30);
            let mut before_stop = after_start;
            while before_stop - after_start < 100_000_000 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                before_stop = on_cpu_ns(pid).expect("schedstat");
            }
            assert_eq!((api.stop_capture)(ctx), LZD_OK);
            let after_stop = on_cpu_ns(pid).expect("schedstat");
            let ns = u64::try_from((api.read_counter_int)(ctx, id)).expect("a count");
            let slack = 15_000_000;
            assert!(
                ns + slack >= before_stop - after_start,
                "the spinner ran {ns} ns counted, {} ns while counted",
                before_stop - after_start
            );
            assert!(
                ns <= after_stop - before_start + slack,
                "the spinner ran {ns} ns counted, {} ns in all",
                after_stop - before_start
            );
            ns
        };
        assert!(ns >= 85_000_000, "the spinner ran {ns} ns");
    } else {
        test_data::skip!(
            test_data::Fixture::Schedstat,
            "this kernel keeps no /proc/PID/schedstat (CONFIG_SCHED_INFO)"
        );
    }
    // A process's counters are read by a thread, every CPU at once: there is no start skew to give.
    let mut skew = 7u64;
    // SAFETY: `skew` is writable; `ctx` came from Init.
    assert_eq!(unsafe { LizardGetStartSkew(ctx, &mut skew) }, LZD_FAILURE);
    assert_eq!(skew, 7, "untouched");
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };

    // The whole system, where the kernel allows CPU-wide counting.
    let ctx = init_counting(api, "system");
    if ctx.is_null() {
        test_data::skip!(
            test_data::Fixture::PerfCpuWide,
            "CPU-wide counting is refused here (Init said why on standard error)"
        );
        return;
    }
    let id = id_of(api, ctx, "TaskClock");
    assert!(title(api, ctx, id).starts_with("HWCPipe CPU (system-wide, "));
    let ns = task_clock_over_300_ms(api, ctx);
    assert!(ns > 100_000_000, "the system ran {ns} ns of tasks");
    // Every CPU's counters were sampled by the kernel, and the C API says so.
    let mut detail = LizardSamplingDetail::default();
    // SAFETY: `detail` is writable; `ctx` came from Init.
    assert_eq!(unsafe { LizardGetSamplingDetail(ctx, &mut detail) }, LZD_OK);
    assert_eq!(detail.method, LZD_SAMPLING_KERNEL, "{detail:?}");
    assert!(detail.rings >= 1, "{detail:?}");
    // The CPUs' counters started one group after another, within a small part of the window.
    let mut skew = u64::MAX;
    // SAFETY: `skew` is writable; `ctx` came from Init.
    assert_eq!(unsafe { LizardGetStartSkew(ctx, &mut skew) }, LZD_OK);
    assert!(skew < 100_000_000, "{skew} ns");
    // SAFETY: a NULL pointer is refused, not written.
    let null = unsafe { LizardGetStartSkew(ctx, std::ptr::null_mut()) };
    assert_eq!(null, LZD_FAILURE);
    // SAFETY: as above.
    unsafe { (api.destroy)(ctx) };
    drop(spinner);
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
