//! `LizardGetSampling` and `LizardGetSamplingDetail`: how the local counters' sampling went in the last
//! stopped capture and who sampled, refused before one and for bad arguments, with the output untouched
//! then.

mod common;

use std::ffi::CString;
use std::time::Duration;

use common::{api, closed_port, id_of};
use lizard::abi::{
    LizardGpuSampling, LizardSampling, LizardSamplingDetail, LZD_FAILURE, LZD_OK,
    LZD_SAMPLING_KERNEL, LZD_SAMPLING_THREAD,
};
use lizard::{LizardGetGpuSampling, LizardGetSampling, LizardGetSamplingDetail};

#[test]
fn the_gpus_sampling_is_refused_for_bad_arguments_and_before_a_capture() {
    let api = api();
    let port = closed_port();
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), port) };
    let marker = LizardGpuSampling {
        struct_size: LizardGpuSampling::SIZE,
        delivered: 77,
        ..LizardGpuSampling::default()
    };
    let mut gpu = marker;
    let mut too_small = LizardGpuSampling {
        struct_size: 4,
        ..marker
    };
    // SAFETY: the structs are writable; NULL, unknown handles and a short struct_size are in the contract.
    unsafe {
        assert_eq!(LizardGetGpuSampling(ctx, std::ptr::null_mut()), LZD_FAILURE);
        assert_eq!(
            LizardGetGpuSampling(0xdead as *mut _, &mut gpu),
            LZD_FAILURE
        );
        assert_eq!(LizardGetGpuSampling(ctx, &mut too_small), LZD_FAILURE);
        assert_eq!(
            LizardGetGpuSampling(ctx, &mut gpu),
            LZD_FAILURE,
            "no capture yet"
        );
        if !ctx.is_null() {
            (api.destroy)(ctx);
        }
    }
    assert_eq!(gpu, marker, "untouched on failure");
    assert_eq!(too_small.struct_size, 4, "untouched on failure");
}

#[test]
fn sampling_is_reported_after_a_capture_and_refused_before() {
    if !hwcpipe::sys::perf_event_open_implemented() {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
        return;
    }
    let api = api();
    let port = closed_port();
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call.
    let ctx = unsafe { (api.init)(host.as_ptr(), port) };
    assert!(!ctx.is_null());
    let marker = LizardSampling {
        missed: 77,
        ..LizardSampling::default()
    };
    let mut out = marker;
    // SAFETY: `out` is writable; NULL and unknown handles are part of the contract.
    unsafe {
        assert_eq!(
            LizardGetSampling(ctx, &mut out),
            LZD_FAILURE,
            "no capture yet"
        );
        assert_eq!(LizardGetSampling(ctx, std::ptr::null_mut()), LZD_FAILURE);
        assert_eq!(LizardGetSampling(0xdead as *mut _, &mut out), LZD_FAILURE);
    }
    assert_eq!(out, marker, "untouched on failure");
    let detail_marker = LizardSamplingDetail {
        idle_periods: 77,
        ..LizardSamplingDetail::default()
    };
    let mut detail = detail_marker;
    // SAFETY: as above.
    unsafe {
        assert_eq!(LizardGetSamplingDetail(ctx, &mut detail), LZD_FAILURE);
        assert_eq!(
            LizardGetSamplingDetail(ctx, std::ptr::null_mut()),
            LZD_FAILURE
        );
        assert_eq!(
            LizardGetSamplingDetail(0xdead as *mut _, &mut detail),
            LZD_FAILURE
        );
    }
    assert_eq!(detail, detail_marker, "untouched on failure");
    let id = id_of(api, ctx, "TaskClock");
    // SAFETY: `ctx` came from Init and is destroyed once, at the end.
    unsafe {
        (api.enable_counter)(ctx, id);
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!((api.stop_capture)(ctx), LZD_OK);
        assert_eq!(LizardGetSampling(ctx, &mut out), LZD_OK);
        assert_eq!(LizardGetSamplingDetail(ctx, &mut detail), LZD_OK);
        // No GPU counter was captured: no GPU account, and the struct untouched.
        let gpu_marker = LizardGpuSampling {
            struct_size: LizardGpuSampling::SIZE,
            missed: 77,
            ..LizardGpuSampling::default()
        };
        let mut gpu = gpu_marker;
        assert_eq!(LizardGetGpuSampling(ctx, &mut gpu), LZD_FAILURE);
        assert_eq!(gpu, gpu_marker);
        (api.destroy)(ctx);
    }
    // The calling process's counters are sampled by a thread (the kernel samples CPU-wide targets).
    assert_eq!(detail.method, LZD_SAMPLING_THREAD, "{detail:?}");
    assert_eq!(
        detail,
        LizardSamplingDetail {
            method: LZD_SAMPLING_THREAD,
            ..LizardSamplingDetail::default()
        }
    );
    assert_ne!(LZD_SAMPLING_KERNEL, LZD_SAMPLING_THREAD);
    assert!(out.interval_ns > 0, "{out:?}");
    assert!(out.window_ns >= 100_000_000, "{out:?}");
    assert_eq!(
        out.expected,
        out.window_ns / out.interval_ns,
        "whole periods: {out:?}"
    );
    let handled = out.delivered + out.missed;
    assert!(
        handled <= out.expected && out.expected <= handled + 1,
        "{out:?}"
    );
    assert!(out.largest_gap_ns >= out.interval_ns / 2, "{out:?}");
}
