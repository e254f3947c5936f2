//! `cuGetErrorName`, `cuGetErrorString`, `cuDriverGetVersion`, `cuInit`, and `cuda_standin_calls`, the
//! stand-in's own call counter.

use std::ffi::{c_char, c_int, CStr};

use super::{entry, put};
use crate::result::{self, CuResult, INVALID_VALUE};

/// The CUDA version the stand-in says its driver supports (`cuDriverGetVersion`): 12.8.
pub const DRIVER_VERSION: c_int = 12080;

/// `cuInit`: flags must be 0.
#[no_mangle]
pub extern "C" fn cuInit(flags: u32) -> CuResult {
    entry!(cuInit, {
        if flags != 0 {
            return Err(INVALID_VALUE);
        }
        crate::state::init()
    })
}

/// `cuDriverGetVersion`.
///
/// # Safety
///
/// `version` must be NULL or writable for an `int`.
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut c_int) -> CuResult {
    // SAFETY: the caller's promise.
    entry!(cuDriverGetVersion, unsafe { put(version, DRIVER_VERSION) })
}

/// `cuGetErrorName`: a static string, or `CUDA_ERROR_INVALID_VALUE` (and NULL) for an unknown code.
///
/// # Safety
///
/// `text` must be NULL or writable for a pointer.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, text: *mut *const c_char) -> CuResult {
    entry!(cuGetErrorName, {
        let found = result::name(code);
        // SAFETY: the caller's promise.
        unsafe { put(text, found.map_or(std::ptr::null(), CStr::as_ptr))? };
        found.map(|_| ()).ok_or(INVALID_VALUE)
    })
}

/// `cuGetErrorString`: a static string, or `CUDA_ERROR_INVALID_VALUE` (and NULL) for an unknown code.
///
/// # Safety
///
/// `text` must be NULL or writable for a pointer.
#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(code: CuResult, text: *mut *const c_char) -> CuResult {
    entry!(cuGetErrorString, {
        let found = result::description(code);
        // SAFETY: the caller's promise.
        unsafe { put(text, found.map_or(std::ptr::null(), CStr::as_ptr))? };
        found.map(|_| ()).ok_or(INVALID_VALUE)
    })
}

/// How many times the driver function `name` was called in this process (`u64::MAX` for a name the
/// stand-in does not export, or NULL). Not a CUDA function: tests look it up to tell the stand-in from a
/// real driver and to count calls.
///
/// # Safety
///
/// `name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cuda_standin_calls(name: *const c_char) -> u64 {
    if name.is_null() {
        return u64::MAX;
    }
    // SAFETY: a NUL-terminated string by the caller's promise.
    let name = unsafe { CStr::from_ptr(name) };
    name.to_str()
        .ok()
        .and_then(crate::calls::calls)
        .unwrap_or(u64::MAX)
}
