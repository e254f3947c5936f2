//! The exported driver functions, with the C types of `cuda.h`. Each counts its call ([`crate::calls()`]),
//! checks its pointers (a NULL output is `CUDA_ERROR_INVALID_VALUE`), and runs inside a panic boundary
//! (`CUDA_ERROR_UNKNOWN`), so no call can unwind into a C caller.
#![allow(non_snake_case, non_camel_case_types, unsafe_code)]

pub mod context;
pub mod device;
pub mod error;
pub mod host;
pub mod ipc;
pub mod memory;
pub mod pointer;

use std::ffi::{c_char, c_int, c_void};

/// `CUdevice`: a device ordinal.
pub type CUdevice = c_int;
/// `CUdeviceptr`: a device address.
pub type CUdeviceptr = u64;
/// `CUcontext`: an opaque context handle.
pub type CUcontext = *mut c_void;

/// `CUipcMemHandle`: the 64 bytes of an IPC handle, passed by value.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUipcMemHandle {
    /// The handle's bytes.
    pub reserved: [c_char; crate::ipc::HANDLE_LEN],
}

/// `CUuuid`: a device's 16-byte UUID.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CUuuid {
    /// The UUID's bytes.
    pub bytes: [c_char; 16],
}

/// Counts the call of `$function` and runs `$body` (an `Outcome<()>`) inside a panic boundary, giving its
/// `CUresult`.
macro_rules! entry {
    ($function:ident, $body:expr) => {{
        $crate::calls::count($crate::calls::Function::$function);
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> $crate::result::Outcome<()> { $body },
        )) {
            Ok(outcome) => $crate::result::code_of(outcome),
            Err(_) => $crate::result::UNKNOWN,
        }
    }};
}
pub(crate) use entry;

/// Writes `value` to the output `out`, which must not be NULL.
///
/// # Safety
///
/// `out` must be NULL or writable for a `T`.
pub(crate) unsafe fn put<T>(out: *mut T, value: T) -> crate::result::Outcome<()> {
    if out.is_null() {
        return Err(crate::result::INVALID_VALUE);
    }
    // SAFETY: not NULL, and writable for a `T` by the caller's promise.
    unsafe { out.write_unaligned(value) };
    Ok(())
}
