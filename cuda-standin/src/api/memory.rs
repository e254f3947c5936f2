//! Device memory: `cuMemAlloc`, `cuMemFree`, `cuMemGetAddressRange`, `cuMemcpyHtoD`, `cuMemcpyDtoH`,
//! `cuMemsetD8`.

use std::ffi::c_void;

use super::{entry, put, CUdeviceptr};
use crate::copy::{self, Direction};
use crate::result::{CuResult, INVALID_VALUE, NOT_FOUND};
use crate::state;

/// `cuMemAlloc_v2`: sizes under 2 MiB share 2 MiB blocks; larger ones get their own.
///
/// # Safety
///
/// `ptr` must be NULL or writable for a `CUdeviceptr`.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(ptr: *mut CUdeviceptr, size: usize) -> CuResult {
    entry!(cuMemAlloc_v2, {
        if ptr.is_null() {
            return Err(INVALID_VALUE);
        }
        let base = state::in_context(|s, ctx| {
            let crate::state::State {
                memory,
                space,
                last_id,
                ..
            } = s;
            memory.allocate(space, size as u64, ctx, || {
                *last_id += 1;
                *last_id
            })
        })?;
        // SAFETY: the caller's promise.
        unsafe { put(ptr, base) }
    })
}

/// `cuMemFree_v2`: `ptr` must be an allocation's base.
#[no_mangle]
pub extern "C" fn cuMemFree_v2(ptr: CUdeviceptr) -> CuResult {
    entry!(cuMemFree_v2, {
        state::in_context(|s, _| s.memory.free(&mut s.space, ptr))
    })
}

/// `cuMemGetAddressRange_v2`: for this process's memory, the allocation holding `ptr`; for a block opened
/// from another process's handle, the whole block. Either output may be NULL.
///
/// # Safety
///
/// `base` and `size` must each be NULL or writable for a `CUdeviceptr` and a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut CUdeviceptr,
    size: *mut usize,
    ptr: CUdeviceptr,
) -> CuResult {
    entry!(cuMemGetAddressRange_v2, {
        let (start, len) = state::in_context(|s, _| {
            if let Some(a) = s.memory.find(ptr) {
                return Ok((a.base, a.size));
            }
            if let Some(i) = s.imports.find(ptr) {
                return Ok((i.base, i.size));
            }
            Err(NOT_FOUND)
        })?;
        // SAFETY: the caller's promise; NULL outputs are skipped.
        unsafe {
            if !base.is_null() {
                put(base, start)?;
            }
            if !size.is_null() {
                put(size, len as usize)?;
            }
        }
        Ok(())
    })
}

/// `cuMemcpyHtoD_v2`.
///
/// # Safety
///
/// `src` must be readable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dst: CUdeviceptr,
    src: *const c_void,
    len: usize,
) -> CuResult {
    entry!(cuMemcpyHtoD_v2, {
        if src.is_null() && len > 0 {
            return Err(INVALID_VALUE);
        }
        // SAFETY: the caller's promise for the host bytes.
        unsafe { copy::copy(src.cast_mut().cast(), dst, len, Direction::ToDevice) }
    })
}

/// `cuMemcpyDtoH_v2`: a fault (the exporter of an opened block has exited) sticks to the context.
///
/// # Safety
///
/// `dst` must be writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dst: *mut c_void,
    src: CUdeviceptr,
    len: usize,
) -> CuResult {
    entry!(cuMemcpyDtoH_v2, {
        if dst.is_null() && len > 0 {
            return Err(INVALID_VALUE);
        }
        // SAFETY: the caller's promise for the host bytes.
        unsafe { copy::copy(dst.cast(), src, len, Direction::ToHost) }
    })
}

/// `cuMemsetD8_v2`.
#[no_mangle]
pub extern "C" fn cuMemsetD8_v2(dst: CUdeviceptr, value: u8, len: usize) -> CuResult {
    entry!(cuMemsetD8_v2, copy::set(dst, value, len))
}
