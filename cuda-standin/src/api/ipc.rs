//! IPC: `cuIpcGetMemHandle`, `cuIpcOpenMemHandle_v2`, `cuIpcCloseMemHandle`.

use std::ffi::c_char;

use super::{entry, put, CUdeviceptr, CUipcMemHandle};
use crate::ipc::{HandleFields, HANDLE_LEN};
use crate::result::{CuResult, INVALID_VALUE};
use crate::state;

/// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`, the one flag of `cuIpcOpenMemHandle`.
pub const LAZY_ENABLE_PEER_ACCESS: u32 = 1;

/// `cuIpcGetMemHandle`: `ptr` must be an allocation's base; the handle names its block and its place in
/// it.
///
/// # Safety
///
/// `handle` must be NULL or writable for a `CUipcMemHandle`.
#[no_mangle]
pub unsafe extern "C" fn cuIpcGetMemHandle(
    handle: *mut CUipcMemHandle,
    ptr: CUdeviceptr,
) -> CuResult {
    entry!(cuIpcGetMemHandle, {
        let bytes = state::in_context(|s, _| {
            let allocation = s
                .memory
                .find(ptr)
                .filter(|a| a.base == ptr)
                .ok_or(INVALID_VALUE)?;
            let block = s.memory.block_of(allocation).ok_or(INVALID_VALUE)?;
            Ok(HandleFields::of(block, allocation).encode())
        })?;
        // SAFETY: the caller's promise.
        unsafe {
            put(
                handle,
                CUipcMemHandle {
                    reserved: bytes.map(|b| b as c_char),
                },
            )
        }
    })
}

/// `cuIpcOpenMemHandle_v2`: maps the block another process exported; `*ptr` is the allocation's address in
/// it. A block already open here is not mapped again: the same address comes back and counts a reference.
///
/// # Safety
///
/// `ptr` must be NULL or writable for a `CUdeviceptr`.
#[no_mangle]
pub unsafe extern "C" fn cuIpcOpenMemHandle_v2(
    ptr: *mut CUdeviceptr,
    handle: CUipcMemHandle,
    flags: u32,
) -> CuResult {
    entry!(cuIpcOpenMemHandle_v2, {
        if ptr.is_null() || flags & !LAZY_ENABLE_PEER_ACCESS != 0 {
            return Err(INVALID_VALUE);
        }
        let bytes: [u8; HANDLE_LEN] = handle.reserved.map(|b| b as u8);
        let fields = HandleFields::decode(&bytes);
        let opened = state::in_context(|s, ctx| {
            let crate::state::State {
                imports,
                space,
                last_id,
                ..
            } = s;
            imports.open(space, fields, ctx, || {
                *last_id += 1;
                *last_id
            })
        })?;
        // SAFETY: the caller's promise.
        unsafe { put(ptr, opened) }
    })
}

/// `cuIpcCloseMemHandle`: one close per open; the last unmaps the block.
#[no_mangle]
pub extern "C" fn cuIpcCloseMemHandle(ptr: CUdeviceptr) -> CuResult {
    entry!(cuIpcCloseMemHandle, {
        state::in_context(|s, _| s.imports.close(&mut s.space, ptr))
    })
}
