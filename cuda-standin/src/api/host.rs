//! Page-locked host memory: `cuMemAllocHost`, `cuMemFreeHost`, `cuMemHostRegister`, `cuMemHostUnregister`.

use std::ffi::c_void;

use super::{entry, put};
use crate::result::{CuResult, INVALID_VALUE};
use crate::state;

/// `cuMemAllocHost_v2`.
///
/// # Safety
///
/// `ptr` must be NULL or writable for a pointer.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(ptr: *mut *mut c_void, size: usize) -> CuResult {
    entry!(cuMemAllocHost_v2, {
        if ptr.is_null() {
            return Err(INVALID_VALUE);
        }
        let start = state::in_context(|s, ctx| {
            let id = s.next_id();
            s.host.allocate(size, ctx, id)
        })?;
        // SAFETY: the caller's promise.
        unsafe { put(ptr, start as *mut c_void) }
    })
}

/// `cuMemFreeHost`.
#[no_mangle]
pub extern "C" fn cuMemFreeHost(ptr: *mut c_void) -> CuResult {
    entry!(cuMemFreeHost, {
        state::in_context(|s, _| s.host.free(ptr as usize))
    })
}

/// `cuMemHostRegister_v2`: page-aligned start and length, mapped, not overlapping another registration.
#[no_mangle]
pub extern "C" fn cuMemHostRegister_v2(ptr: *mut c_void, size: usize, flags: u32) -> CuResult {
    entry!(cuMemHostRegister_v2, {
        state::in_context(|s, ctx| {
            let id = s.next_id();
            s.host.register(ptr as usize, size, flags, ctx, id)
        })
    })
}

/// `cuMemHostUnregister`.
#[no_mangle]
pub extern "C" fn cuMemHostUnregister(ptr: *mut c_void) -> CuResult {
    entry!(cuMemHostUnregister, {
        state::in_context(|s, _| s.host.unregister(ptr as usize))
    })
}
