//! Arbitrary sequences of C API calls through the `LizardApi` table that `LoadApi` hands out, against a
//! gatord simulator on loopback: NULL, forged and destroyed handles, any id, captures in any order. No
//! sequence may crash, hang or leave a capture thread running.
#![no_main]

use std::ffi::CString;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use gatord_sim::{self as sim, SimConfig, SimHandle};
use libfuzzer_sys::fuzz_target;
use lizard::abi::{LizardApi, LizardCounterDescription, LizardInstance, LZD_OK};

#[derive(Debug, Arbitrary)]
enum Target {
    Live,
    DeadPort,
    BadPort(i32),
}

#[derive(Debug, Arbitrary)]
enum Op {
    Init(Target),
    Destroy(u8),
    Count(u8),
    Describe { slot: u8, id: u32, null_out: bool },
    Enable(u8, u32),
    Disable(u8, u32),
    DisableAll(u8),
    Start(u8),
    Stop(u8),
    ReadInt(u8, u32),
    ReadDouble(u8, u32),
}

fn simulator() -> &'static SimHandle {
    static SIM: OnceLock<SimHandle> = OnceLock::new();
    SIM.get_or_init(|| sim::start(SimConfig::quick()).expect("start simulator"))
}

fn table() -> &'static LizardApi {
    let mut api: *mut LizardApi = std::ptr::null_mut();
    // SAFETY: `api` is a valid place for one pointer.
    assert_eq!(unsafe { lizard::LoadApi(&mut api) }, LZD_OK);
    // SAFETY: LoadApi succeeded, so `api` points at the library's static table.
    unsafe { &*api }
}

/// The handle a slot number names: a live or destroyed handle, NULL, or a forged value.
fn handle(handles: &[LizardInstance], slot: u8) -> LizardInstance {
    match usize::from(slot) {
        n if n < handles.len() => handles[n],
        n if n % 2 == 0 => std::ptr::null_mut(),
        n => std::ptr::without_provenance_mut(n * 0x10),
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let api = table();
    let live_port = simulator().local_addr().port();
    let host = CString::new("127.0.0.1").expect("no NUL");
    let mut handles: Vec<LizardInstance> = Vec::new();
    for op in ops.into_iter().take(64) {
        // SAFETY (all calls below): the table's functions accept any handle and id; the pointers passed are
        // NULL or valid for the call.
        unsafe {
            match op {
                Op::Init(target) if handles.len() < 2 => {
                    let port = match target {
                        Target::Live => i32::from(live_port),
                        Target::DeadPort => 1,
                        Target::BadPort(port) => port,
                    };
                    handles.push((api.init)(host.as_ptr(), port));
                }
                Op::Init(_) => {}
                Op::Destroy(slot) => (api.destroy)(handle(&handles, slot)),
                Op::Count(slot) => {
                    (api.get_available_counters_count)(handle(&handles, slot));
                }
                Op::Describe { slot, id, null_out } => {
                    let mut description =
                        std::mem::MaybeUninit::<LizardCounterDescription>::uninit();
                    let out = if null_out {
                        std::ptr::null_mut()
                    } else {
                        description.as_mut_ptr()
                    };
                    (api.get_counter_description)(handle(&handles, slot), id, out);
                }
                Op::Enable(slot, id) => (api.enable_counter)(handle(&handles, slot), id),
                Op::Disable(slot, id) => (api.disable_counter)(handle(&handles, slot), id),
                Op::DisableAll(slot) => (api.disable_all_counters)(handle(&handles, slot)),
                Op::Start(slot) => {
                    (api.start_capture)(handle(&handles, slot));
                }
                Op::Stop(slot) => {
                    (api.stop_capture)(handle(&handles, slot));
                }
                Op::ReadInt(slot, id) => {
                    (api.read_counter_int)(handle(&handles, slot), id);
                }
                Op::ReadDouble(slot, id) => {
                    (api.read_counter_double)(handle(&handles, slot), id);
                }
            }
        }
    }
    for ctx in handles {
        // SAFETY: Destroy accepts any handle, destroyed ones included.
        unsafe { (api.destroy)(ctx) };
    }
});
