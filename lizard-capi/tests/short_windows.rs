//! Start/Stop windows shorter than gatord's sample period, read through the C ABI (`LoadApi` and the function
//! table, as a C caller uses them) against the simulated gatord on loopback: the readings are the window
//! rule's values, and 0 comes back only when no sample exists that the rule can use. `Init` keeps one gatord
//! session across pairs (per-draw use) unless `LIZARD_GATORD_MODE=reconnecting`.

use std::ffi::CString;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

mod common;

use common::{api, id_of};
use gatord_sim::{self as sim, SimConfig, SimHandle, Stream};
use lizard::abi::{LizardApi, LizardInstance, LzdResult, LZD_FAILURE, LZD_OK};

/// `Init` reads `LIZARD_GATORD_MODE`: tests that set it hold this lock across their `Init`.
static MODE_ENV: Mutex<()> = Mutex::new(());

fn init(api: &LizardApi, daemon: &SimHandle) -> LizardInstance {
    let _env = MODE_ENV.lock().unwrap_or_else(PoisonError::into_inner);
    init_unlocked(api, daemon)
}

fn init_unlocked(api: &LizardApi, daemon: &SimHandle) -> LizardInstance {
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), i32::from(daemon.local_addr().port())) };
    assert!(!ctx.is_null());
    ctx
}

/// One 5 ms Start/Stop pair of counter `id` alone; returns StopCapture's result, both reads, and an upper
/// bound of the window's length in milliseconds (the time from before StartCapture to after StopCapture).
fn short_pair(api: &LizardApi, ctx: LizardInstance, id: u32) -> (LzdResult, i64, f64, f64) {
    // SAFETY: `ctx` came from Init and is not destroyed; any id is accepted.
    unsafe {
        (api.disable_all_counters)(ctx);
        (api.enable_counter)(ctx, id);
        let before = Instant::now();
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        std::thread::sleep(Duration::from_millis(5));
        let stopped = (api.stop_capture)(ctx);
        let longest_ms = before.elapsed().as_secs_f64() * 1e3;
        (
            stopped,
            (api.read_counter_int)(ctx, id),
            (api.read_counter_double)(ctx, id),
            longest_ms,
        )
    }
}

/// gatord's polled counters: one sample every 100 ms from the capture's start, worth
/// `synthetic_value(0, n)` = 1000..=1015 for the only enabled counter.
fn polled_daemon(samples: Stream) -> SimHandle {
    sim::start(SimConfig {
        stream: samples,
        ..SimConfig::default()
    })
    .unwrap()
}

#[test]
fn short_windows_read_the_rule_values_not_zero() {
    let daemon = polled_daemon(Stream::Synthetic {
        period: Duration::from_millis(100),
    });
    let api = api();
    let ctx = init(api, &daemon);
    // Absolute (free memory): the level in force during the window, one of the samples' values.
    let memfree = id_of(api, ctx, "Sim_memfree");
    for _ in 0..8 {
        let (stopped, int, double, _) = short_pair(api, ctx, memfree);
        assert_eq!(stopped, LZD_OK);
        assert!(
            (sim::synthetic_value(0, 0)..=sim::synthetic_value(0, 15)).contains(&int),
            "absolute read {int}"
        );
        assert_eq!(double, int as f64);
    }
    // Delta (cycles): about 1000 per 100 ms, so the window's share is 10 to 10.15 per ms of window.
    let ccnt = id_of(api, ctx, "Sim_ccnt");
    for _ in 0..8 {
        let (stopped, int, double, longest_ms) = short_pair(api, ctx, ccnt);
        assert_eq!(stopped, LZD_OK);
        assert!(
            double >= 10.0 * 4.0 && double <= 10.15 * longest_ms,
            "delta read {double} for a window of at most {longest_ms} ms"
        );
        assert_eq!(int, double as i64);
    }
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };
    daemon.shutdown();
}

#[test]
fn zero_only_when_no_sample_exists_and_stop_says_nothing_was_measured() {
    let daemon = polled_daemon(Stream::Samples(Vec::new()));
    let api = api();
    // Per-draw: the session lives on, so the stop succeeds; no sample at all reads 0.
    let ctx = init(api, &daemon);
    let memfree = id_of(api, ctx, "Sim_memfree");
    let (stopped, int, double, _) = short_pair(api, ctx, memfree);
    assert_eq!((stopped, int, double), (LZD_OK, 0, 0.0));
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };
    // One session per pair: the stop ends the session and says nothing was measured.
    let ctx = {
        let _env = MODE_ENV.lock().unwrap_or_else(PoisonError::into_inner);
        std::env::set_var("LIZARD_GATORD_MODE", "reconnecting");
        let ctx = init_unlocked(api, &daemon);
        std::env::remove_var("LIZARD_GATORD_MODE");
        ctx
    };
    let (stopped, int, double, _) = short_pair(api, ctx, memfree);
    assert_eq!((stopped, int, double), (LZD_FAILURE, 0, 0.0));
    // SAFETY: `ctx` came from Init and is destroyed once.
    unsafe { (api.destroy)(ctx) };
    daemon.shutdown();
}
