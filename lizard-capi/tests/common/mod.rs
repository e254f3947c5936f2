//! Helpers shared by the C ABI tests: the function table as a C caller gets it, a port no gatord answers
//! on, and counter lookup by name.

#![allow(dead_code)]

use std::ffi::CStr;

use lizard::abi::{LizardApi, LizardCounterDescription, LizardInstance, LZD_OK};

/// The function table, from `LoadApi`.
pub fn api() -> &'static LizardApi {
    let mut table: *mut LizardApi = std::ptr::null_mut();
    // SAFETY: `table` is a valid place for one pointer.
    assert_eq!(unsafe { lizard::LoadApi(&mut table) }, LZD_OK);
    // SAFETY: LoadApi pointed it at the library's static table, valid for the life of the process.
    unsafe { &*table }
}

/// A loopback port nothing listens on: gatord is absent, so only the local counters remain.
pub fn closed_port() -> i32 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    i32::from(listener.local_addr().expect("address").port())
}

/// The id of the counter whose short name is `name`.
pub fn id_of(api: &LizardApi, ctx: LizardInstance, name: &str) -> u32 {
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
