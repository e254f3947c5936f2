//! `cuPointerGetAttribute` and `cuPointerGetAttributes`. Both need a current context
//! (`CUDA_ERROR_INVALID_CONTEXT` without one).

use std::ffi::{c_uint, c_void};

use super::{entry, CUdeviceptr};
use crate::pointer::{owner, value};
use crate::result::{CuResult, INVALID_VALUE};
use crate::state;

/// `cuPointerGetAttribute`: `CUDA_ERROR_INVALID_VALUE` for a pointer the driver does not know.
///
/// # Safety
///
/// `data` must be NULL or writable for the attribute's type.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: c_uint,
    ptr: CUdeviceptr,
) -> CuResult {
    entry!(cuPointerGetAttribute, {
        if data.is_null() {
            return Err(INVALID_VALUE);
        }
        let found = state::in_context(|s, _| owner(s, ptr).ok_or(INVALID_VALUE))?;
        let v = value(Some(found), attribute, ptr)?;
        // SAFETY: the caller's promise.
        unsafe { v.write(data) };
        Ok(())
    })
}

/// `cuPointerGetAttributes`: `count` attributes in one call; a pointer the driver does not know gets each
/// attribute's zero value and `CUDA_SUCCESS`.
///
/// # Safety
///
/// `attributes` must hold `count` attributes and `data` `count` pointers, each NULL or writable for its
/// attribute's type.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttributes(
    count: c_uint,
    attributes: *mut c_uint,
    data: *mut *mut c_void,
    ptr: CUdeviceptr,
) -> CuResult {
    entry!(cuPointerGetAttributes, {
        if count == 0 || attributes.is_null() || data.is_null() {
            return Err(INVALID_VALUE);
        }
        let found = state::in_context(|s, _| Ok(owner(s, ptr)))?;
        for i in 0..count as usize {
            // SAFETY: both arrays hold `count` elements by the caller's promise.
            let (attribute, out) = unsafe { (attributes.add(i).read(), data.add(i).read()) };
            let v = value(found, attribute, ptr)?;
            if !out.is_null() {
                // SAFETY: the caller's promise for each output.
                unsafe { v.write(out) };
            }
        }
        Ok(())
    })
}
