//! How often each exported function was called in this process, for tests that check how many driver calls
//! a caller makes (`cuda_standin_calls`). The real driver has no such counter; a test asks for it by name
//! and finds it only in the stand-in.

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! functions {
    ($($name:ident),* $(,)?) => {
        /// Every driver function the stand-in exports, each with a call counter.
        pub const FUNCTIONS: &[&str] = &[$(stringify!($name)),*];

        /// One exported driver function.
        #[allow(non_camel_case_types, clippy::enum_variant_names)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Function {
            $(
                #[doc = concat!("`", stringify!($name), "`.")]
                $name,
            )*
        }
    };
}

functions!(
    cuInit,
    cuDriverGetVersion,
    cuGetErrorName,
    cuGetErrorString,
    cuDeviceGetCount,
    cuDeviceGet,
    cuDeviceGetName,
    cuDeviceGetUuid,
    cuDeviceGetUuid_v2,
    cuDeviceTotalMem_v2,
    cuDevicePrimaryCtxRetain,
    cuDevicePrimaryCtxRelease_v2,
    cuDevicePrimaryCtxReset_v2,
    cuDevicePrimaryCtxGetState,
    cuCtxSetCurrent,
    cuCtxGetCurrent,
    cuCtxPushCurrent_v2,
    cuCtxPopCurrent_v2,
    cuCtxGetDevice,
    cuCtxSynchronize,
    cuMemAlloc_v2,
    cuMemFree_v2,
    cuMemGetAddressRange_v2,
    cuMemcpyHtoD_v2,
    cuMemcpyDtoH_v2,
    cuMemsetD8_v2,
    cuMemAllocHost_v2,
    cuMemFreeHost,
    cuMemHostRegister_v2,
    cuMemHostUnregister,
    cuIpcGetMemHandle,
    cuIpcOpenMemHandle_v2,
    cuIpcCloseMemHandle,
    cuPointerGetAttribute,
    cuPointerGetAttributes,
);

/// One counter per exported function.
static COUNTS: [AtomicU64; FUNCTIONS.len()] = [const { AtomicU64::new(0) }; FUNCTIONS.len()];

/// Counts one call of `function`.
pub(crate) fn count(function: Function) {
    COUNTS[function as usize].fetch_add(1, Ordering::Relaxed);
}

/// Calls of the function called `name` so far, or `None` for a name the stand-in does not export.
pub fn calls(name: &str) -> Option<u64> {
    let index = FUNCTIONS.iter().position(|f| *f == name)?;
    Some(COUNTS[index].load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_function_has_its_own_counter() {
        let before = calls("cuMemsetD8_v2").unwrap();
        count(Function::cuMemsetD8_v2);
        assert!(calls("cuMemsetD8_v2").unwrap() > before);
        assert_eq!(calls("cuNoSuchFunction"), None);
        assert_eq!(
            FUNCTIONS[Function::cuIpcCloseMemHandle as usize],
            "cuIpcCloseMemHandle"
        );
    }
}
