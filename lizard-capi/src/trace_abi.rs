//! The types of `include/lizard/lizard_trace.h`, laid out as the header declares them (`tests/trace_header.rs`
//! compiles the header and compares).

use std::ffi::c_void;

/// `LizardTraceClient *`: an opaque key issued by the library and never reused, not a pointer to its memory.
pub type LizardTraceClientHandle = *mut c_void;

/// `LizardTraceResult`.
pub type LizardTraceResult = i32;

/// Sent; for a synchronous device record, stored.
pub const LZT_OK: LizardTraceResult = 0;
/// Dropped because the server was slow (counted; nothing failed).
pub const LZT_DROPPED: LizardTraceResult = 1;
/// A required pointer is NULL.
pub const LZT_ERR_NULL: LizardTraceResult = -1;
/// Closed, or never returned by `lizard_trace_connect`.
pub const LZT_ERR_NOT_A_CLIENT: LizardTraceResult = -2;
/// Module tag over 10 bytes or not UTF-8, length over 4 GiB, bad options.
pub const LZT_ERR_ARGUMENT: LizardTraceResult = -3;
/// No trace server listens on the socket.
pub const LZT_ERR_CONNECT: LizardTraceResult = -4;
/// The server went away; the next record reconnects.
pub const LZT_ERR_DISCONNECTED: LizardTraceResult = -5;
/// Sending or receiving failed otherwise.
pub const LZT_ERR_SOCKET: LizardTraceResult = -6;
/// No CUDA driver in this process, or a build without CUDA support.
pub const LZT_ERR_NO_CUDA: LizardTraceResult = -7;
/// The pointer is not CUDA device memory.
pub const LZT_ERR_NOT_DEVICE_MEMORY: LizardTraceResult = -8;
/// The bytes reach past the end of their allocation.
pub const LZT_ERR_OUT_OF_RANGE: LizardTraceResult = -9;
/// Another CUDA driver call failed.
pub const LZT_ERR_CUDA: LizardTraceResult = -10;
/// The server refused the record.
pub const LZT_ERR_REFUSED: LizardTraceResult = -11;
/// No acknowledgement within the deadline: the record may still be stored.
pub const LZT_ERR_TIMEOUT: LizardTraceResult = -12;
/// The server's answer did not decode.
pub const LZT_ERR_PROTOCOL: LizardTraceResult = -13;
/// A bug in the library, caught before it reached the caller.
pub const LZT_ERR_INTERNAL: LizardTraceResult = -14;

/// `LZT_DEVICE_SYNC`: device records return once stored.
pub const LZT_DEVICE_SYNC: u32 = 0;
/// `LZT_DEVICE_ASYNC`: device records return at once.
pub const LZT_DEVICE_ASYNC: u32 = 1;

/// `LizardTraceOptions`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LizardTraceOptions {
    /// `sizeof(LizardTraceOptions)`.
    pub size: u32,
    /// A `LizardTraceDeviceMode`.
    pub device_mode: u32,
    /// Synchronous device records: the longest wait in milliseconds; 0 means 5000.
    pub deadline_ms: u32,
    /// Host and asynchronous records: 0 drops when the server is slow, else the longest wait for room.
    pub block_ms: u32,
}
