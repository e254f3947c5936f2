//! Devices: `cuDeviceGetCount`, `cuDeviceGet`, `cuDeviceGetName`, `cuDeviceGetUuid` (v1 and v2),
//! `cuDeviceTotalMem`.

use std::ffi::{c_char, c_int};

use super::{entry, put, CUdevice, CUuuid};
use crate::device::{Device, COUNT, NAME, TOTAL_MEMORY};
use crate::result::{CuResult, Outcome, INVALID_DEVICE, INVALID_VALUE};
use crate::state;

/// The device of `device`, checked.
pub(crate) fn device_of(device: CUdevice) -> Outcome<Device> {
    state::with_state(|s| {
        usize::try_from(device)
            .ok()
            .filter(|&d| d < COUNT)
            .map(|_| s.device)
            .ok_or(INVALID_DEVICE)
    })
}

/// `cuDeviceGetCount`.
///
/// # Safety
///
/// `count` must be NULL or writable for an `int`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CuResult {
    entry!(cuDeviceGetCount, {
        state::with_state(|_| Ok(()))?;
        // SAFETY: the caller's promise.
        unsafe { put(count, COUNT as c_int) }
    })
}

/// `cuDeviceGet`.
///
/// # Safety
///
/// `device` must be NULL or writable for a `CUdevice`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CuResult {
    entry!(cuDeviceGet, {
        device_of(ordinal)?;
        // SAFETY: the caller's promise.
        unsafe { put(device, ordinal) }
    })
}

/// `cuDeviceGetName`: at most `len` bytes, NUL included.
///
/// # Safety
///
/// `name` must be NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(
    name: *mut c_char,
    len: c_int,
    device: CUdevice,
) -> CuResult {
    entry!(cuDeviceGetName, {
        device_of(device)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l > 0)
            .ok_or(INVALID_VALUE)?;
        if name.is_null() {
            return Err(INVALID_VALUE);
        }
        let bytes = NAME.to_bytes();
        let n = bytes.len().min(len - 1);
        // SAFETY: `name` holds `len` bytes and `n + 1 <= len` are written.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), name, n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

/// Writes a UUID.
///
/// # Safety
///
/// `uuid` must be NULL or writable for a `CUuuid`.
unsafe fn put_uuid(uuid: *mut CUuuid, bytes: [u8; 16]) -> Outcome<()> {
    // SAFETY: the caller's promise.
    unsafe {
        put(
            uuid,
            CUuuid {
                bytes: bytes.map(|b| b as c_char),
            },
        )
    }
}

/// `cuDeviceGetUuid` (v1): the physical GPU's UUID, also under MIG.
///
/// # Safety
///
/// `uuid` must be NULL or writable for a `CUuuid`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(uuid: *mut CUuuid, device: CUdevice) -> CuResult {
    entry!(cuDeviceGetUuid, {
        let device = device_of(device)?;
        // SAFETY: the caller's promise.
        unsafe { put_uuid(uuid, device.uuid_v1()) }
    })
}

/// `cuDeviceGetUuid_v2`: the MIG instance's UUID under MIG, else the GPU's (what `cudaDeviceProp.uuid`
/// gives).
///
/// # Safety
///
/// `uuid` must be NULL or writable for a `CUuuid`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, device: CUdevice) -> CuResult {
    entry!(cuDeviceGetUuid_v2, {
        let device = device_of(device)?;
        // SAFETY: the caller's promise.
        unsafe { put_uuid(uuid, device.uuid_v2()) }
    })
}

/// `cuDeviceTotalMem_v2`.
///
/// # Safety
///
/// `bytes` must be NULL or writable for a `size_t`.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice) -> CuResult {
    entry!(cuDeviceTotalMem_v2, {
        device_of(device)?;
        // SAFETY: the caller's promise.
        unsafe { put(bytes, TOTAL_MEMORY as usize) }
    })
}
