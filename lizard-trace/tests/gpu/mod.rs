//! Device memory for the GPU tests and the device bench, through the CUDA driver API (`cudarc`'s raw
//! functions): a context on GPU 0, allocations filled from the host, their IPC handles, and the raw calls
//! whose answers the GPU run prints. Each check of a driver result panics with the call's name: these are
//! test programs on a machine with a GPU, or with the driver stand-in (`cuda-standin`).
#![allow(dead_code, unsafe_code)]

pub mod peer;

use std::ffi::{c_int, c_void};

use cudarc::driver::sys;

/// Whether a CUDA driver with a GPU is here; says why not on standard error.
pub fn available() -> bool {
    // SAFETY: only tries to open the driver library by its names.
    if !unsafe { sys::is_culib_present() } {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "no CUDA driver (libcuda.so cannot be loaded)"
        );
        return false;
    }
    // SAFETY: the library is present; cuInit takes flags 0.
    let init = unsafe { sys::cuInit(0) };
    let mut count = 0;
    // SAFETY: the driver writes one int.
    let counted = unsafe { sys::cuDeviceGetCount(&mut count) };
    if init != sys::CUresult::CUDA_SUCCESS || counted != sys::CUresult::CUDA_SUCCESS || count == 0 {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "the CUDA driver sees no GPU (cuInit {init:?}, {count} devices)"
        );
        return false;
    }
    true
}

fn check(call: &str, result: sys::CUresult) {
    assert_eq!(result, sys::CUresult::CUDA_SUCCESS, "{call}");
}

/// GPU 0's primary context, current on the calling thread.
pub struct Gpu {
    device: sys::CUdevice,
}

impl Gpu {
    /// Retains GPU 0's primary context and makes it current on this thread.
    pub fn open() -> Gpu {
        let mut device = 0;
        let mut context = std::ptr::null_mut();
        // SAFETY: plain driver calls writing into the locals; `available` ran cuInit.
        unsafe {
            check("cuInit", sys::cuInit(0));
            check("cuDeviceGet", sys::cuDeviceGet(&mut device, 0));
            check(
                "cuDevicePrimaryCtxRetain",
                sys::cuDevicePrimaryCtxRetain(&mut context, device),
            );
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(context));
        }
        Gpu { device }
    }

    /// Makes the context current on the calling thread too.
    pub fn make_current(&self) {
        let mut context = std::ptr::null_mut();
        // SAFETY: the context is retained while `self` lives.
        unsafe {
            check(
                "cuDevicePrimaryCtxRetain",
                sys::cuDevicePrimaryCtxRetain(&mut context, self.device),
            );
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(context));
            check(
                "cuDevicePrimaryCtxRelease",
                sys::cuDevicePrimaryCtxRelease_v2(self.device),
            );
        }
    }

    /// GPU 0's UUID as the runtime's `cudaDeviceProp.uuid` gives it (`cuDeviceGetUuid_v2`: under MIG, the
    /// MIG instance's).
    pub fn uuid(&self) -> [u8; 16] {
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        // SAFETY: the driver writes 16 bytes.
        unsafe {
            check(
                "cuDeviceGetUuid_v2",
                sys::cuDeviceGetUuid_v2(&mut uuid, self.device),
            )
        };
        uuid.bytes.map(|b| b as u8)
    }

    /// GPU 0's UUID from `cuDeviceGetUuid` (version 1: the physical GPU's, also under MIG).
    pub fn uuid_v1(&self) -> [u8; 16] {
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        // SAFETY: the driver writes 16 bytes.
        unsafe {
            check(
                "cuDeviceGetUuid",
                sys::cuDeviceGetUuid(&mut uuid, self.device),
            )
        };
        uuid.bytes.map(|b| b as u8)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: releases the retain of `open`.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

/// A device allocation, freed on drop.
pub struct DeviceBuffer {
    /// Its device address.
    pub ptr: u64,
    /// Its size.
    pub len: usize,
}

impl DeviceBuffer {
    /// `len` bytes on the current context's GPU, holding `fill(k)` at each offset k.
    pub fn new(len: usize, fill: impl Fn(usize) -> u8) -> DeviceBuffer {
        let mut ptr = 0;
        // SAFETY: the driver writes one device address.
        unsafe { check("cuMemAlloc", sys::cuMemAlloc_v2(&mut ptr, len)) };
        let buffer = DeviceBuffer { ptr, len };
        buffer.write(0, &(0..len).map(fill).collect::<Vec<u8>>());
        buffer
    }

    /// Copies `bytes` to offset `at`.
    pub fn write(&self, at: usize, bytes: &[u8]) {
        assert!(at + bytes.len() <= self.len);
        // SAFETY: `bytes` is readable for the synchronous copy; the range lies inside the allocation.
        unsafe {
            check(
                "cuMemcpyHtoD",
                sys::cuMemcpyHtoD_v2(self.ptr + at as u64, bytes.as_ptr().cast(), bytes.len()),
            )
        };
    }

    /// Its IPC handle's 64 bytes.
    pub fn ipc_handle(&self) -> [u8; 64] {
        let mut handle = sys::CUipcMemHandle { reserved: [0; 64] };
        // SAFETY: the driver writes the 64 bytes for this allocation.
        unsafe {
            check(
                "cuIpcGetMemHandle",
                sys::cuIpcGetMemHandle(&mut handle, self.ptr),
            )
        };
        handle.reserved.map(|b| b as u8)
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: frees the allocation of `new` once.
        let _ = unsafe { sys::cuMemFree_v2(self.ptr) };
    }
}

/// The design's own way to read a record, per record: open the handle, copy into pageable host memory,
/// close the handle. The bench's baseline.
pub fn open_copy_close(handle: &[u8; 64], offset: u64, dst: &mut [u8]) {
    let mut raw = sys::CUipcMemHandle { reserved: [0; 64] };
    for (d, s) in raw.reserved.iter_mut().zip(handle) {
        *d = *s as _;
    }
    let mut base = 0;
    // SAFETY: the handle is passed by value; the copy writes `dst`, borrowed for the synchronous call.
    unsafe {
        check(
            "cuIpcOpenMemHandle",
            sys::cuIpcOpenMemHandle_v2(
                &mut base,
                raw,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            ),
        );
        check(
            "cuMemcpyDtoH",
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), base + offset, dst.len()),
        );
        check("cuIpcCloseMemHandle", sys::cuIpcCloseMemHandle(base));
    }
}

/// The byte at offset `k` of the test pattern `seed`.
pub fn pattern(seed: u64, k: usize) -> u8 {
    (k as u64)
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(seed.wrapping_mul(31))
        .rotate_right(13) as u8
}

/// Initialises the driver without making any context current or active.
pub fn init_only() {
    // SAFETY: cuInit takes flags 0.
    unsafe { check("cuInit", sys::cuInit(0)) };
}

/// The calling thread's current context, as an address (0 for none).
pub fn current_context() -> usize {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: the driver writes one context handle.
    unsafe { check("cuCtxGetCurrent", sys::cuCtxGetCurrent(&mut ctx)) };
    ctx as usize
}

/// Calls of the driver function `name` in this process, where the driver counts them: the driver
/// stand-in's `cuda_standin_calls`; `None` with NVIDIA's driver.
pub fn standin_calls(name: &str) -> Option<u64> {
    type Calls = unsafe extern "C" fn(*const std::ffi::c_char) -> u64;
    let name = std::ffi::CString::new(name).ok()?;
    // SAFETY: looking a symbol up calls nothing; the library is loaded (a GPU test checked `available`).
    let calls = unsafe { sys::culib().get::<Calls>(b"cuda_standin_calls") }.ok()?;
    // SAFETY: the stand-in's function takes a NUL-terminated name and returns a count.
    Some(unsafe { calls(name.as_ptr()) })
}

/// The code of a driver result (0 for success).
fn code(result: sys::CUresult) -> u32 {
    result as u32
}

/// `cuIpcOpenMemHandle` of `handle`: the address, or the driver's code.
pub fn ipc_open(handle: &[u8; 64]) -> Result<u64, u32> {
    let mut raw = sys::CUipcMemHandle { reserved: [0; 64] };
    for (d, s) in raw.reserved.iter_mut().zip(handle) {
        *d = *s as _;
    }
    let mut base = 0;
    // SAFETY: the handle is passed by value; the driver writes one address.
    let result = unsafe {
        sys::cuIpcOpenMemHandle_v2(
            &mut base,
            raw,
            sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
        )
    };
    match code(result) {
        0 => Ok(base),
        c => Err(c),
    }
}

/// `cuIpcCloseMemHandle`'s code.
pub fn ipc_close(ptr: u64) -> u32 {
    // SAFETY: closes a mapping by address; a wrong one is an error code.
    code(unsafe { sys::cuIpcCloseMemHandle(ptr) })
}

/// `cuMemGetAddressRange` of `ptr`: base and size, or the driver's code.
pub fn address_range(ptr: u64) -> Result<(u64, u64), u32> {
    let (mut base, mut size) = (0, 0usize);
    // SAFETY: the driver writes one address and one size.
    match code(unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr) }) {
        0 => Ok((base, size as u64)),
        c => Err(c),
    }
}

/// `cuMemcpyDtoH` of `dst.len()` bytes at `src`: the driver's code.
pub fn copy_code(dst: &mut [u8], src: u64) -> u32 {
    // SAFETY: `dst` is writable for its length during the synchronous copy.
    code(unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, dst.len()) })
}

/// `cuCtxSynchronize`'s code: the current context's sticky error, if any.
pub fn synchronize_code() -> u32 {
    // SAFETY: no arguments.
    code(unsafe { sys::cuCtxSynchronize() })
}

/// `cuDevicePrimaryCtxReset` of GPU 0: its code.
pub fn reset_code() -> u32 {
    // SAFETY: resets GPU 0's primary context; the caller holds nothing made in it.
    code(unsafe { sys::cuDevicePrimaryCtxReset_v2(0) })
}

/// `cuMemHostRegister` (portable) of `len` bytes at `ptr`: its code.
pub fn host_register_code(ptr: *mut u8, len: usize) -> u32 {
    // SAFETY: the caller keeps the memory mapped until it is unregistered or the process ends.
    code(unsafe { sys::cuMemHostRegister_v2(ptr.cast(), len, sys::CU_MEMHOSTREGISTER_PORTABLE) })
}

/// `cuMemHostUnregister` of `ptr`: its code.
pub fn host_unregister_code(ptr: *mut u8) -> u32 {
    // SAFETY: unregistering changes no memory.
    code(unsafe { sys::cuMemHostUnregister(ptr.cast()) })
}

/// The codes of `cuPointerGetAttribute` and of `cuPointerGetAttributes` (the memory type) of `ptr` on the
/// calling thread.
pub fn pointer_codes(ptr: u64) -> (u32, u32) {
    let mut memory_type: u32 = 0;
    // SAFETY: the driver writes one unsigned int for the memory type.
    let one = unsafe {
        sys::cuPointerGetAttribute(
            (&mut memory_type as *mut u32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr,
        )
    };
    let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data: *mut c_void = (&mut memory_type as *mut u32).cast();
    // SAFETY: one attribute, one output of its type.
    let many = unsafe { sys::cuPointerGetAttributes(1, &mut attribute, &mut data, ptr) };
    (code(one), code(many))
}

/// Whether GPU 0's primary context is active.
pub fn primary_active() -> bool {
    let (mut flags, mut active): (u32, c_int) = (0, 0);
    // SAFETY: the driver writes one unsigned int and one int.
    unsafe {
        check(
            "cuDevicePrimaryCtxGetState",
            sys::cuDevicePrimaryCtxGetState(0, &mut flags, &mut active),
        )
    };
    active != 0
}
