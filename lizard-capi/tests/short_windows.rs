//! Start/Stop windows shorter than gatord's sample period, read through the C ABI (`LoadApi` and the function
//! table, as a C caller uses them) against the simulated gatord on loopback: the readings are the window
//! rule's values, and 0 comes back only when no sample exists that the rule can use.

use std::ffi::{CStr, CString};
use std::time::Duration;

use lizard::abi::{
    LizardApi, LizardCounterDescription, LizardInstance, LzdResult, LZD_FAILURE, LZD_OK,
};
use lizard_core::sim::{self, SimConfig, SimHandle, Stream};

fn api() -> &'static LizardApi {
    let mut table: *mut LizardApi = std::ptr::null_mut();
    // SAFETY: `table` is a valid place for one pointer.
    assert_eq!(unsafe { lizard::LoadApi(&mut table) }, LZD_OK);
    // SAFETY: LoadApi pointed it at the library's static table, valid for the life of the process.
    unsafe { &*table }
}

/// The id of the counter whose short name is `name`.
fn id_of(api: &LizardApi, ctx: LizardInstance, name: &str) -> u32 {
    // SAFETY: `ctx` came from Init; every out-pointer is valid for the call.
    let count = unsafe { (api.get_available_counters_count)(ctx) };
    (1..=count)
        .find(|&id| {
            let mut desc = std::mem::MaybeUninit::<LizardCounterDescription>::zeroed();
            // SAFETY: as above; the description's strings live until Destroy.
            unsafe {
                (api.get_counter_description)(ctx, id, desc.as_mut_ptr()) == LZD_OK
                    && CStr::from_ptr(desc.assume_init().short_name).to_str() == Ok(name)
            }
        })
        .unwrap_or_else(|| panic!("no counter {name}"))
}

fn init(api: &LizardApi, daemon: &SimHandle) -> LizardInstance {
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), i32::from(daemon.local_addr().port())) };
    assert!(!ctx.is_null());
    ctx
}

/// One 5 ms Start/Stop pair of counter `id` alone; returns StopCapture's result and both reads.
fn short_pair(api: &LizardApi, ctx: LizardInstance, id: u32) -> (LzdResult, i64, f64) {
    // SAFETY: `ctx` came from Init and is not destroyed; any id is accepted.
    unsafe {
        (api.disable_all_counters)(ctx);
        (api.enable_counter)(ctx, id);
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        std::thread::sleep(Duration::from_millis(5));
        let stopped = (api.stop_capture)(ctx);
        (
            stopped,
            (api.read_counter_int)(ctx, id),
            (api.read_counter_double)(ctx, id),
        )
    }
}

#[test]
fn short_windows_read_the_rule_values_not_zero() {
    // gatord's polled counters: one sample every 100 ms, the first at the capture's start.
    let daemon = sim::start(SimConfig {
        stream: Stream::Synthetic {
            period: Duration::from_millis(100),
        },
        ..SimConfig::default()
    })
    .unwrap();
    let api = api();
    let ctx = init(api, &daemon);
    let first = sim::synthetic_value(0, 0);
    // Absolute (free memory): the level in force in the window, the sample at its start.
    let memfree = id_of(api, ctx, "Sim_memfree");
    assert_eq!(short_pair(api, ctx, memfree), (LZD_OK, first, first as f64));
    // Delta (cycles): the capture's first sample counts in full (its interval began with the capture).
    let ccnt = id_of(api, ctx, "Sim_ccnt");
    assert_eq!(short_pair(api, ctx, ccnt), (LZD_OK, first, first as f64));
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };
    daemon.shutdown();
}

#[test]
fn zero_only_when_no_sample_exists_and_stop_says_nothing_was_measured() {
    let daemon = sim::start(SimConfig {
        stream: Stream::Samples(Vec::new()),
        ..SimConfig::default()
    })
    .unwrap();
    let api = api();
    let ctx = init(api, &daemon);
    let memfree = id_of(api, ctx, "Sim_memfree");
    assert_eq!(short_pair(api, ctx, memfree), (LZD_FAILURE, 0, 0.0));
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };
    daemon.shutdown();
}
