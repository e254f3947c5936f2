//! The stand-in's GPU: one device, ordinal 0, whose memory is host memory. Its UUID follows NVIDIA's rule
//! for MIG: `cuDeviceGetUuid` (v1) gives the physical GPU's UUID, `cuDeviceGetUuid_v2` (and the runtime's
//! `cudaDeviceProp.uuid`, which follows v2) the MIG instance's, so the two differ when
//! [`MIG_VARIABLE`] is set and agree otherwise.

use std::ffi::CStr;

/// The environment variable that puts the stand-in's GPU in MIG mode (any value but `0` or empty), read by
/// `cuInit`.
pub const MIG_VARIABLE: &str = "CUDA_STANDIN_MIG";

/// The device's name, as `cuDeviceGetName` gives it.
pub const NAME: &CStr = c"lizard cuda-standin (host memory)";

/// The number of devices.
pub const COUNT: usize = 1;

/// What `cuDeviceTotalMem` reports: the size of the device address space the stand-in reserves.
pub const TOTAL_MEMORY: u64 = 64 << 30;

/// The physical GPU's UUID (v1 and v2 without MIG).
pub const GPU_UUID: [u8; 16] = [
    0x5c, 0x0d, 0xa5, 0x7a, 0x4e, 0x1b, 0x4c, 0x2d, 0x9a, 0x31, 0x00, 0x57, 0xa4, 0xd1, 0x0e, 0x01,
];

/// The MIG instance's UUID (v2 under MIG).
pub const MIG_UUID: [u8; 16] = [
    0x6d, 0x16, 0x0a, 0x00, 0x4e, 0x1b, 0x4c, 0x2d, 0x9a, 0x31, 0x00, 0x57, 0xa4, 0xd1, 0x0e, 0x02,
];

/// The device's identity, fixed at `cuInit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Device {
    /// Whether it is a MIG instance.
    pub(crate) mig: bool,
}

impl Device {
    /// The device as the environment sets it.
    pub(crate) fn from_env() -> Device {
        let mig = std::env::var_os(MIG_VARIABLE).is_some_and(|v| !v.is_empty() && v != "0");
        Device { mig }
    }

    /// `cuDeviceGetUuid`'s answer: the physical GPU's UUID.
    pub(crate) fn uuid_v1(self) -> [u8; 16] {
        GPU_UUID
    }

    /// `cuDeviceGetUuid_v2`'s answer: the MIG instance's UUID under MIG, else the GPU's.
    pub(crate) fn uuid_v2(self) -> [u8; 16] {
        if self.mig {
            MIG_UUID
        } else {
            GPU_UUID
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2_differ_only_under_mig() {
        let plain = Device { mig: false };
        assert_eq!(plain.uuid_v1(), plain.uuid_v2());
        let mig = Device { mig: true };
        assert_ne!(mig.uuid_v1(), mig.uuid_v2());
        assert_eq!(mig.uuid_v1(), plain.uuid_v1());
    }
}
