//! GPU device memory named by a CUDA IPC handle: what a client sends instead of the bytes themselves.
//!
//! A client that records a device buffer does not copy it to the host. It sends a [`DeviceRegion`]: the 64
//! bytes of the allocation's IPC handle (`cudaIpcGetMemHandle` and `cuIpcGetMemHandle` give the same bytes),
//! the offset of the recorded bytes inside the allocation (a handle names the whole allocation), their length,
//! and the UUID of the GPU that owns the allocation. The server opens the handle on that GPU, copies the bytes
//! into its ring and keeps the handle open for the client's next record (feature `cuda`).
//!
//! These types are plain values: they exist, and are encoded and decoded, on every machine, with or without
//! a GPU or the `cuda` feature.

use std::fmt;

/// Bytes of a CUDA IPC memory handle (`CUipcMemHandle`, `cudaIpcMemHandle_t`).
pub const IPC_HANDLE_LEN: usize = 64;

/// The 64 bytes of a CUDA IPC memory handle.
///
/// A handle is a capability: whoever holds it can map the allocation it names. A server only opens handles
/// that admitted peers send (see [`crate::PeerPolicy`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpcHandle(pub [u8; IPC_HANDLE_LEN]);

impl fmt::Debug for IpcHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The first bytes tell handles apart in a log; the whole handle is a capability and stays out of it.
        write!(
            f,
            "IpcHandle({:02x}{:02x}{:02x}{:02x}…)",
            self.0[0], self.0[1], self.0[2], self.0[3]
        )
    }
}

/// The UUID of a GPU (`CUuuid`), as `nvidia-smi -L` prints it after `GPU-`.
///
/// All zeros ([`DeviceUuid::ANY`]) means "the server's only GPU": a server with several GPUs refuses it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DeviceUuid(pub [u8; 16]);

impl DeviceUuid {
    /// No particular GPU: the server's only one.
    pub const ANY: DeviceUuid = DeviceUuid([0; 16]);

    /// Whether this is [`DeviceUuid::ANY`].
    pub fn is_any(&self) -> bool {
        *self == Self::ANY
    }
}

impl fmt::Display for DeviceUuid {
    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, or `any` for [`DeviceUuid::ANY`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_any() {
            return f.write_str("any");
        }
        f.write_str("GPU-")?;
        for (i, byte) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for DeviceUuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceUuid({self})")
    }
}

/// Bytes of device memory to record: `len` bytes at `offset` inside the allocation that `handle` names, on
/// the GPU `device`.
///
/// A handle maps the whole **memory block** that holds the allocation, and `cudaMalloc` sub-allocates small
/// buffers from larger blocks, so the server alone can only check a record against the block's end. With
/// `allocation_len` (what the exporting process's driver says of the allocation, as
/// [`crate::TraceClient::record_device`] sends it) it also refuses bytes past the allocation's own end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRegion {
    /// The allocation's IPC handle.
    pub handle: IpcHandle,
    /// Where the recorded bytes start inside the allocation.
    pub offset: u64,
    /// How many bytes to record.
    pub len: u32,
    /// The GPU that owns the allocation.
    pub device: DeviceUuid,
    /// The allocation's size, when the sender knows it (`cuMemGetAddressRange` in the exporting process).
    pub allocation_len: Option<u64>,
}

/// Whether the client waited for the server's copy of a device record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyMode {
    /// The client's call returned after the server had copied the bytes: they are the bytes of the call.
    Sync,
    /// The client's call returned at once; the server copied the bytes when it got to the record, so they may
    /// include writes made after the call. The record carries both times.
    Async,
}

impl CopyMode {
    /// The byte that stands for the mode in the ring's record heads.
    pub(crate) fn code(self) -> u8 {
        match self {
            CopyMode::Sync => 1,
            CopyMode::Async => 2,
        }
    }

    /// The mode of a record head's byte.
    pub(crate) fn from_code(code: u8) -> Option<CopyMode> {
        match code {
            1 => Some(CopyMode::Sync),
            2 => Some(CopyMode::Async),
            _ => None,
        }
    }
}

impl fmt::Display for CopyMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CopyMode::Sync => "sync",
            CopyMode::Async => "async",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_prints_as_nvidia_smi_does() {
        let uuid = DeviceUuid([
            0x4e, 0x1b, 0x2c, 0x3d, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99,
            0xaa, 0xbb,
        ]);
        assert_eq!(uuid.to_string(), "GPU-4e1b2c3d-0011-2233-4455-66778899aabb");
        assert_eq!(DeviceUuid::ANY.to_string(), "any");
        assert!(DeviceUuid::default().is_any());
    }

    #[test]
    fn handles_do_not_print_whole() {
        let text = format!("{:?}", IpcHandle([0xab; IPC_HANDLE_LEN]));
        assert_eq!(text, "IpcHandle(abababab…)");
    }

    #[test]
    fn modes_round_trip_their_codes() {
        for mode in [CopyMode::Sync, CopyMode::Async] {
            assert_eq!(CopyMode::from_code(mode.code()), Some(mode));
        }
        assert_eq!(CopyMode::from_code(0), None);
        assert_eq!(CopyMode::from_code(3), None);
    }
}
