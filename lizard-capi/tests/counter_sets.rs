//! A programmable event of a gatord counter set through the C ABI: an ordinary counter, found by its short
//! name (`Sim:0x08`, the built-in simulator's `Sim_cnt` set event 0x08), described, enabled, captured and
//! read like any other.

mod common;

use std::ffi::{CStr, CString};
use std::time::Duration;

use common::{api, id_of};
use gatord_sim::{self as sim, synthetic_event_value, SimConfig, Timing};
use lizard::abi::{LizardCounterDescription, LZD_OK};

#[test]
fn a_set_event_is_an_ordinary_counter() {
    let daemon = sim::start(SimConfig {
        cores: 2,
        ..SimConfig::default()
    })
    .unwrap();
    let api = api();
    let host = CString::new("127.0.0.1").unwrap();
    // SAFETY: `host` is a NUL-terminated string alive for the call; every later call gets the live `ctx`,
    // valid out-pointers, and `ctx` is destroyed once.
    unsafe {
        let ctx = (api.init)(host.as_ptr(), i32::from(daemon.local_addr().port()));
        assert!(!ctx.is_null());
        let id = id_of(api, ctx, "Sim:0x08");
        let mut desc = std::mem::MaybeUninit::<LizardCounterDescription>::zeroed();
        assert_eq!(
            (api.get_counter_description)(ctx, id, desc.as_mut_ptr()),
            LZD_OK
        );
        let desc = desc.assume_init();
        assert_eq!(desc.id, id);
        assert_eq!(CStr::from_ptr(desc.name).to_str(), Ok("Instructions"));
        (api.enable_counter)(ctx, id);
        assert_eq!((api.start_capture)(ctx), LZD_OK);
        // gatord starts its perf events (the set's slots among them) after its polled counters.
        std::thread::sleep(Timing::default().perf_start + Duration::from_millis(50));
        assert_eq!((api.stop_capture)(ctx), LZD_OK);
        let value = (api.read_counter_int)(ctx, id);
        // Two cores, each growing per sample by the event's synthetic value: at least one sample each.
        assert!(value >= 2 * synthetic_event_value(0x08, 0), "{value}");
        (api.destroy)(ctx);
    }
    assert_eq!(daemon.slot_events(), [("Sim_cnt0".to_owned(), 0x08)]);
    daemon.shutdown();
}
