//! `LIZARD_CPU_EVENTS`: the C API counting Arm PMU events by name beside HWCPipe's counters, and refusing a
//! name that is no event of this CPU. One test, because the setting is the process's environment. On an Arm
//! machine (the emulated Arm system of `.ci/arm-tests`) the events become counters between the CPU and GPU
//! counters and count; elsewhere only the refusals can be seen.

mod common;

use std::ffi::{CStr, CString};
use std::time::Duration;

use common::{api, closed_port, id_of};
use lizard::abi::{LizardApi, LizardCounterDescription, LizardInstance, LZD_OK};

/// `Init` with `LIZARD_CPU_EVENTS` set to `names`.
fn init_with_events(api: &LizardApi, names: &str) -> LizardInstance {
    std::env::set_var("LIZARD_CPU_EVENTS", names);
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), closed_port()) };
    std::env::remove_var("LIZARD_CPU_EVENTS");
    ctx
}

/// The name and category of every counter.
fn counters(api: &LizardApi, ctx: LizardInstance) -> Vec<(String, String)> {
    // SAFETY: `ctx` came from Init.
    let n = unsafe { (api.get_available_counters_count)(ctx) };
    (1..=n)
        .map(|id| {
            let mut desc = std::mem::MaybeUninit::<LizardCounterDescription>::zeroed();
            // SAFETY: `ctx` came from Init, `desc` is a valid out-pointer, the strings live until Destroy.
            unsafe {
                assert_eq!(
                    (api.get_counter_description)(ctx, id, desc.as_mut_ptr()),
                    LZD_OK
                );
                let desc = desc.assume_init();
                (
                    CStr::from_ptr(desc.name).to_string_lossy().into_owned(),
                    CStr::from_ptr(desc.category).to_string_lossy().into_owned(),
                )
            }
        })
        .collect()
}

#[test]
fn lizard_cpu_events_adds_arm_pmu_events_and_refuses_names_of_none() {
    if !hwcpipe::sys::perf_event_open_implemented() {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
        return;
    }
    let api = api();
    // A name that is no Arm PMU event, and one spelled as an event that cannot be: Init fails rather than
    // leave the event out.
    for bad in ["NO_SUCH_EVENT", "0x10000", "armv8_nothing/inst_retired/"] {
        assert!(init_with_events(api, bad).is_null(), "{bad}");
    }
    let arm = {
        use hwcpipe::sys::PerfSys;
        hwcpipe::sys::LinuxPerf.arm_pmu_count() > 0
    };
    if !arm {
        // Without an Arm PMU, even an architected event is none of this CPU's.
        assert!(init_with_events(api, "INST_RETIRED").is_null());
        test_data::skip!(
            test_data::Fixture::ArmPmu,
            "counting named events needs an Arm PMU (the emulated Arm system has one)"
        );
        return;
    }
    // By mnemonic and by number: one counter each, in the Arm PMU event category, after the CPU counters.
    let ctx = init_with_events(api, "INST_RETIRED, r11");
    assert!(!ctx.is_null());
    let listed = counters(api, ctx);
    let position = |name: &str| listed.iter().position(|(n, _)| n == name);
    let inst = position("INST_RETIRED").unwrap_or_else(|| panic!("{listed:?}"));
    let cycles = position("CPU_CYCLES").unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(listed[inst].1, "Arm PMU event");
    let task_clock = position("TaskClock").expect("HWCPipe's counters");
    assert!(task_clock < inst && inst < cycles, "{listed:?}");
    let id = id_of(api, ctx, "CPU_CYCLES");
    // SAFETY: `ctx` came from Init and is destroyed below only.
    let value = unsafe {
        (api.enable_counter)(ctx, id);
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        let work: u64 = (0..5_000_000u64).map(std::hint::black_box).sum();
        std::hint::black_box(work);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!((api.stop_capture)(ctx), LZD_OK);
        (api.read_counter_int)(ctx, id)
    };
    assert!(value > 0, "CPU_CYCLES over a busy window: {value}");
    // SAFETY: `ctx` came from Init and is not used again.
    unsafe { (api.destroy)(ctx) };
}
