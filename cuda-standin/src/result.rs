//! The `CUresult` codes the stand-in returns, with the names and descriptions `cuGetErrorName` and
//! `cuGetErrorString` give for them. The numbers are NVIDIA's (`cuda.h`'s `cudaError_enum`).

use std::ffi::CStr;

/// A `CUresult`: 0 is success, anything else an error code.
pub type CuResult = u32;

/// What an internal step gives: a value, or the `CUresult` to return.
pub(crate) type Outcome<T> = Result<T, CuResult>;

/// `CUDA_SUCCESS`.
pub const SUCCESS: CuResult = 0;
/// `CUDA_ERROR_INVALID_VALUE`: an argument out of range, or a pointer the driver does not know.
pub const INVALID_VALUE: CuResult = 1;
/// `CUDA_ERROR_OUT_OF_MEMORY`.
pub const OUT_OF_MEMORY: CuResult = 2;
/// `CUDA_ERROR_NOT_INITIALIZED`: a call before `cuInit`.
pub const NOT_INITIALIZED: CuResult = 3;
/// `CUDA_ERROR_INVALID_DEVICE`.
pub const INVALID_DEVICE: CuResult = 101;
/// `CUDA_ERROR_INVALID_CONTEXT`: no context is current on the calling thread, or the handle names none.
pub const INVALID_CONTEXT: CuResult = 201;
/// `CUDA_ERROR_MAP_FAILED`: the memory behind an IPC handle could not be mapped.
pub const MAP_FAILED: CuResult = 205;
/// `CUDA_ERROR_INVALID_HANDLE`.
pub const INVALID_HANDLE: CuResult = 400;
/// `CUDA_ERROR_NOT_FOUND`: `cuMemGetAddressRange` of an address no allocation holds.
pub const NOT_FOUND: CuResult = 500;
/// `CUDA_ERROR_ILLEGAL_ADDRESS`: a copy touched memory it may not; sticky, the context is unusable after.
pub const ILLEGAL_ADDRESS: CuResult = 700;
/// `CUDA_ERROR_CONTEXT_IS_DESTROYED`: the current context is a primary context nobody retains any more.
pub const CONTEXT_IS_DESTROYED: CuResult = 709;
/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`.
pub const HOST_MEMORY_ALREADY_REGISTERED: CuResult = 712;
/// `CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED`.
pub const HOST_MEMORY_NOT_REGISTERED: CuResult = 713;
/// `CUDA_ERROR_NOT_SUPPORTED`: a pointer attribute or flag the stand-in does not model.
pub const NOT_SUPPORTED: CuResult = 801;
/// `CUDA_ERROR_UNKNOWN`: a bug in the stand-in, caught before it crossed into the caller.
pub const UNKNOWN: CuResult = 999;

/// Every code with its name and description.
const TABLE: &[(CuResult, &CStr, &CStr)] = &[
    (SUCCESS, c"CUDA_SUCCESS", c"no error"),
    (
        INVALID_VALUE,
        c"CUDA_ERROR_INVALID_VALUE",
        c"invalid argument",
    ),
    (OUT_OF_MEMORY, c"CUDA_ERROR_OUT_OF_MEMORY", c"out of memory"),
    (
        NOT_INITIALIZED,
        c"CUDA_ERROR_NOT_INITIALIZED",
        c"initialization error",
    ),
    (
        INVALID_DEVICE,
        c"CUDA_ERROR_INVALID_DEVICE",
        c"invalid device ordinal",
    ),
    (
        INVALID_CONTEXT,
        c"CUDA_ERROR_INVALID_CONTEXT",
        c"invalid device context",
    ),
    (
        MAP_FAILED,
        c"CUDA_ERROR_MAP_FAILED",
        c"mapping of buffer object failed",
    ),
    (
        INVALID_HANDLE,
        c"CUDA_ERROR_INVALID_HANDLE",
        c"invalid resource handle",
    ),
    (
        NOT_FOUND,
        c"CUDA_ERROR_NOT_FOUND",
        c"named symbol not found",
    ),
    (
        ILLEGAL_ADDRESS,
        c"CUDA_ERROR_ILLEGAL_ADDRESS",
        c"an illegal memory access was encountered",
    ),
    (
        CONTEXT_IS_DESTROYED,
        c"CUDA_ERROR_CONTEXT_IS_DESTROYED",
        c"context is destroyed",
    ),
    (
        HOST_MEMORY_ALREADY_REGISTERED,
        c"CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
        c"part or all of the requested memory range is already mapped",
    ),
    (
        HOST_MEMORY_NOT_REGISTERED,
        c"CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
        c"pointer does not correspond to a registered memory region",
    ),
    (
        NOT_SUPPORTED,
        c"CUDA_ERROR_NOT_SUPPORTED",
        c"operation not supported",
    ),
    (UNKNOWN, c"CUDA_ERROR_UNKNOWN", c"unknown error"),
];

/// The name of `code` (`CUDA_ERROR_INVALID_VALUE`), if the stand-in knows it.
pub(crate) fn name(code: CuResult) -> Option<&'static CStr> {
    TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, n, _)| *n)
}

/// The description of `code`, if the stand-in knows it.
pub(crate) fn description(code: CuResult) -> Option<&'static CStr> {
    TABLE
        .iter()
        .find(|(c, _, _)| *c == code)
        .map(|(_, _, d)| *d)
}

/// `Ok` as `SUCCESS`, an error as its code.
pub(crate) fn code_of(outcome: Outcome<()>) -> CuResult {
    match outcome {
        Ok(()) => SUCCESS,
        Err(code) => code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_name_and_a_description() {
        for (code, name_, text) in TABLE {
            assert_eq!(name(*code), Some(*name_));
            assert_eq!(description(*code), Some(*text));
        }
        assert_eq!(name(12345), None);
        assert_eq!(code_of(Ok(())), SUCCESS);
        assert_eq!(code_of(Err(ILLEGAL_ADDRESS)), ILLEGAL_ADDRESS);
    }
}
