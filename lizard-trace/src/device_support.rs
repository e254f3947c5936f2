//! Whether this process can read GPU device memory, and if not, why.
//!
//! A server built with the `cuda` feature loads the CUDA driver (`libcuda.so`) at run time when it starts;
//! without the feature, or on a machine without the driver, it still serves host-memory records and refuses
//! each device-memory record with the [`Unavailable`] reason ([`crate::ack::Refusal::DeviceUnavailable`]).

use std::fmt;

use crate::device::DeviceUuid;

/// The CUDA driver functions this crate calls, all looked up before the first call so that an old or partial
/// driver is a typed [`Unavailable::SymbolMissing`], never a panic. An acknowledgement names a missing one
/// by its index in this list (new functions are added at its end).
pub const DRIVER_SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetUuid_v2",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxPushCurrent_v2",
    "cuCtxPopCurrent_v2",
    "cuIpcGetMemHandle",
    "cuIpcOpenMemHandle_v2",
    "cuIpcCloseMemHandle",
    "cuMemGetAddressRange_v2",
    "cuPointerGetAttributes",
    "cuMemcpyDtoH_v2",
    "cuMemAllocHost_v2",
    "cuMemFreeHost",
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuCtxSynchronize",
    "cuDevicePrimaryCtxReset_v2",
    "cuDevicePrimaryCtxGetState",
];

/// Why device memory cannot be read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Unavailable {
    /// This build has no CUDA support (the `cuda` feature is off).
    FeatureOff,
    /// The server was started with device memory turned off ([`crate::server::DeviceConfig::enabled`]).
    Disabled,
    /// No CUDA driver library (`libcuda.so`, `libcuda.so.1`) could be loaded: no NVIDIA driver is installed,
    /// or its folder is not on the loader's path.
    LibraryMissing,
    /// The driver library lacks a function this crate calls (a driver older than CUDA 11.4).
    SymbolMissing {
        /// The function, one of [`DRIVER_SYMBOLS`] (`"?"` when an acknowledgement named none of them).
        name: &'static str,
    },
    /// `cuInit` failed (for example, no GPU is visible to this process, or the kernel module is not loaded).
    InitFailed {
        /// The `CUresult` it returned.
        code: u32,
    },
    /// The driver works but sees no GPU.
    NoDevice,
    /// No page-locked host memory could be had: neither the ring could be registered nor a staging buffer
    /// allocated.
    PinnedMemory {
        /// The `CUresult` of `cuMemAllocHost`.
        code: u32,
    },
}

impl Unavailable {
    /// The reason byte and code an acknowledgement carries for this reason.
    pub(crate) fn to_wire(self) -> (u8, u32) {
        match self {
            Unavailable::FeatureOff => (1, 0),
            Unavailable::LibraryMissing => (2, 0),
            Unavailable::SymbolMissing { name } => (
                3,
                DRIVER_SYMBOLS
                    .iter()
                    .position(|s| *s == name)
                    .map_or(u32::MAX, |i| i as u32),
            ),
            Unavailable::InitFailed { code } => (4, code),
            Unavailable::NoDevice => (5, 0),
            Unavailable::PinnedMemory { code } => (6, code),
            Unavailable::Disabled => (7, 0),
        }
    }

    /// The reason of an acknowledgement's reason byte and code.
    pub(crate) fn from_wire(reason: u8, code: u32) -> Option<Unavailable> {
        Some(match reason {
            1 => Unavailable::FeatureOff,
            2 => Unavailable::LibraryMissing,
            3 => Unavailable::SymbolMissing {
                name: DRIVER_SYMBOLS.get(code as usize).copied().unwrap_or("?"),
            },
            4 => Unavailable::InitFailed { code },
            5 => Unavailable::NoDevice,
            6 => Unavailable::PinnedMemory { code },
            7 => Unavailable::Disabled,
            _ => return None,
        })
    }
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::FeatureOff => f.write_str("built without CUDA support (feature `cuda`)"),
            Unavailable::Disabled => f.write_str("device memory turned off when the server started"),
            Unavailable::LibraryMissing => f.write_str(
                "no CUDA driver: libcuda.so could not be loaded (no NVIDIA driver, or its folder is not on LD_LIBRARY_PATH)",
            ),
            Unavailable::SymbolMissing { name } => {
                write!(f, "the CUDA driver lacks {name} (a driver older than CUDA 11.4)")
            }
            Unavailable::InitFailed { code } => {
                write!(f, "cuInit failed with CUresult {code} (no GPU visible, or the driver's kernel module is not loaded)")
            }
            Unavailable::NoDevice => f.write_str("the CUDA driver sees no GPU"),
            Unavailable::PinnedMemory { code } => write!(
                f,
                "no page-locked host memory (cuMemAllocHost: CUresult {code}; see `ulimit -l`)"
            ),
        }
    }
}

/// Whether this process can use the CUDA driver, and its GPUs — what a server would copy from — without
/// pinning or opening anything else (`lizard doctor`'s check).
pub fn probe() -> Result<Vec<Gpu>, Unavailable> {
    #[cfg(feature = "cuda")]
    {
        let driver = crate::cuda::driver::driver()?;
        let init = |e: crate::cuda::driver::CudaError| Unavailable::InitFailed { code: e.code };
        let count = driver.device_count().map_err(init)?;
        if count == 0 {
            return Err(Unavailable::NoDevice);
        }
        (0..count)
            .map(|ordinal| {
                Ok(Gpu {
                    ordinal,
                    uuid: driver.device_uuid(ordinal).map_err(init)?,
                    name: driver.device_name(ordinal).map_err(init)?,
                })
            })
            .collect()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Unavailable::FeatureOff)
    }
}

/// One GPU a server can copy from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gpu {
    /// The driver's ordinal of the GPU.
    pub ordinal: u32,
    /// Its UUID, what clients name it by.
    pub uuid: DeviceUuid,
    /// Its name (`NVIDIA H200`).
    pub name: String,
}

/// How a server copies device memory into its ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyPath {
    /// Straight into the ring, whose memory is registered with the driver as pinned (`cuMemHostRegister`).
    PinnedRing,
    /// Through a pinned staging buffer of this many bytes, chunk by chunk, then into the ring: registering the
    /// ring failed (the `CUresult` says why).
    Staged {
        /// Bytes of the staging buffer.
        chunk: usize,
        /// What `cuMemHostRegister` returned for the ring.
        register_code: u32,
    },
}

/// Whether a server can copy device memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSupport {
    /// It can, from these GPUs, by this path.
    Available {
        /// The GPUs.
        gpus: Vec<Gpu>,
        /// How copies reach the ring.
        path: CopyPath,
    },
    /// It cannot: every device-memory record is refused with this reason.
    Unavailable(Unavailable),
}

impl fmt::Display for DeviceSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSupport::Available { gpus, path } => {
                f.write_str("copies GPU device memory from ")?;
                for (i, gpu) in gpus.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{} ({}, {})", gpu.ordinal, gpu.name, gpu.uuid)?;
                }
                match path {
                    CopyPath::PinnedRing => f.write_str(" straight into its pinned ring"),
                    CopyPath::Staged {
                        chunk,
                        register_code,
                    } => write!(
                        f,
                        " through a {chunk}-byte pinned staging buffer (pinning the ring failed with CUresult {register_code})"
                    ),
                }
            }
            DeviceSupport::Unavailable(reason) => {
                write!(f, "cannot copy GPU device memory: {reason}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_crosses_the_wire() {
        let reasons = [
            Unavailable::FeatureOff,
            Unavailable::LibraryMissing,
            Unavailable::SymbolMissing {
                name: "cuIpcOpenMemHandle_v2",
            },
            Unavailable::InitFailed { code: 100 },
            Unavailable::NoDevice,
            Unavailable::PinnedMemory { code: 2 },
            Unavailable::Disabled,
        ];
        for reason in reasons {
            let (kind, code) = reason.to_wire();
            assert_eq!(Unavailable::from_wire(kind, code), Some(reason));
        }
        assert_eq!(Unavailable::from_wire(0, 0), None);
        assert_eq!(Unavailable::from_wire(8, 0), None);
        assert_eq!(
            Unavailable::from_wire(3, 9999),
            Some(Unavailable::SymbolMissing { name: "?" })
        );
    }

    #[test]
    fn the_probe_says_why_there_is_no_device_memory_here() {
        match probe() {
            Ok(gpus) => assert!(!gpus.is_empty()),
            Err(reason) if cfg!(feature = "cuda") => assert_ne!(reason, Unavailable::FeatureOff),
            Err(reason) => assert_eq!(reason, Unavailable::FeatureOff),
        }
    }

    #[test]
    fn reasons_say_what_to_do() {
        assert!(Unavailable::LibraryMissing
            .to_string()
            .contains("LD_LIBRARY_PATH"));
        let unavailable = DeviceSupport::Unavailable(Unavailable::FeatureOff);
        assert_eq!(
            unavailable.to_string(),
            "cannot copy GPU device memory: built without CUDA support (feature `cuda`)"
        );
        let available = DeviceSupport::Available {
            gpus: vec![Gpu {
                ordinal: 0,
                uuid: DeviceUuid([1; 16]),
                name: "NVIDIA H200".into(),
            }],
            path: CopyPath::PinnedRing,
        };
        assert!(available
            .to_string()
            .starts_with("copies GPU device memory from 0 (NVIDIA H200, GPU-01010101-"));
    }
}
