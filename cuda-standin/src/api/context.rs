//! Contexts: the primary context's retain, release, reset and state, and the calling thread's current
//! context.

use std::ffi::{c_int, c_uint};

use super::device::device_of;
use super::{entry, put, CUcontext, CUdevice};
use crate::context;
use crate::result::{CuResult, Outcome, INVALID_CONTEXT, INVALID_VALUE};
use crate::state;

/// The device index of `device`, checked.
fn index(device: CUdevice) -> Outcome<usize> {
    device_of(device)?;
    usize::try_from(device).map_err(|_| INVALID_VALUE)
}

/// `cuDevicePrimaryCtxRetain`: activates the primary context on its first retain.
///
/// # Safety
///
/// `ctx` must be NULL or writable for a `CUcontext`.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(
    ctx: *mut CUcontext,
    device: CUdevice,
) -> CuResult {
    entry!(cuDevicePrimaryCtxRetain, {
        let i = index(device)?;
        if ctx.is_null() {
            return Err(INVALID_VALUE);
        }
        state::with_state(|s| {
            s.contexts[i].retained += 1;
            Ok(())
        })?;
        // SAFETY: the caller's promise.
        unsafe { put(ctx, context::handle(i)) }
    })
}

/// `cuDevicePrimaryCtxRelease_v2`: the last release destroys everything made in the context.
#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(device: CUdevice) -> CuResult {
    entry!(cuDevicePrimaryCtxRelease_v2, {
        let i = index(device)?;
        state::with_state(|s| {
            if s.contexts[i].retained == 0 {
                return Err(INVALID_CONTEXT);
            }
            s.contexts[i].retained -= 1;
            if s.contexts[i].retained == 0 {
                s.clear_context(i);
            }
            Ok(())
        })
    })
}

/// `cuDevicePrimaryCtxReset_v2`: destroys every allocation, mapping and registration of the primary
/// context and clears its sticky error; it stays retained.
#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxReset_v2(device: CUdevice) -> CuResult {
    entry!(cuDevicePrimaryCtxReset_v2, {
        let i = index(device)?;
        state::with_state(|s| {
            s.clear_context(i);
            Ok(())
        })
    })
}

/// `cuDevicePrimaryCtxGetState`: flags (always 0) and whether the primary context is active.
///
/// # Safety
///
/// `flags` and `active` must each be NULL or writable for an `unsigned int` and an `int`.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(
    device: CUdevice,
    flags: *mut c_uint,
    active: *mut c_int,
) -> CuResult {
    entry!(cuDevicePrimaryCtxGetState, {
        let i = index(device)?;
        let retained = state::with_state(|s| Ok(s.contexts[i].retained))?;
        // SAFETY: the caller's promise.
        unsafe {
            put(flags, 0)?;
            put(active, c_int::from(retained > 0))
        }
    })
}

/// The device index of a context handle, checked.
fn context_index(ctx: CUcontext) -> Outcome<usize> {
    state::with_state(|_| context::index_of(ctx).ok_or(INVALID_CONTEXT))
}

/// `cuCtxSetCurrent`: replaces the calling thread's current context (NULL pops it).
#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CuResult {
    entry!(cuCtxSetCurrent, {
        if ctx.is_null() {
            state::with_state(|_| Ok(()))?;
            context::set_current(None);
            return Ok(());
        }
        context::set_current(Some(context_index(ctx)?));
        Ok(())
    })
}

/// `cuCtxGetCurrent`: the calling thread's current context, or NULL.
///
/// # Safety
///
/// `ctx` must be NULL or writable for a `CUcontext`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut CUcontext) -> CuResult {
    entry!(cuCtxGetCurrent, {
        state::with_state(|_| Ok(()))?;
        let current = context::current().map_or(std::ptr::null_mut(), context::handle);
        // SAFETY: the caller's promise.
        unsafe { put(ctx, current) }
    })
}

/// `cuCtxPushCurrent_v2`.
#[no_mangle]
pub extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CuResult {
    entry!(cuCtxPushCurrent_v2, {
        context::push(context_index(ctx)?);
        Ok(())
    })
}

/// `cuCtxPopCurrent_v2`: `CUDA_ERROR_INVALID_CONTEXT` when the thread has none.
///
/// # Safety
///
/// `ctx` must be NULL or writable for a `CUcontext`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(ctx: *mut CUcontext) -> CuResult {
    entry!(cuCtxPopCurrent_v2, {
        state::with_state(|_| Ok(()))?;
        let popped = context::pop().ok_or(INVALID_CONTEXT)?;
        if !ctx.is_null() {
            // SAFETY: the caller's promise.
            unsafe { put(ctx, context::handle(popped))? };
        }
        Ok(())
    })
}

/// `cuCtxGetDevice`: the current context's device.
///
/// # Safety
///
/// `device` must be NULL or writable for a `CUdevice`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CuResult {
    entry!(cuCtxGetDevice, {
        let ctx = state::in_context(|_, ctx| Ok(ctx))?;
        // SAFETY: the caller's promise.
        unsafe { put(device, ctx as CUdevice) }
    })
}

/// `cuCtxSynchronize`: nothing runs asynchronously in the stand-in; gives the context's sticky error.
#[no_mangle]
pub extern "C" fn cuCtxSynchronize() -> CuResult {
    entry!(cuCtxSynchronize, state::in_context(|_, _| Ok(())))
}
