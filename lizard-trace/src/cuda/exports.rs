//! The client's side of device memory: from a device pointer to the [`DeviceRegion`] a server can copy, with
//! each allocation's IPC handle taken once.
//!
//! The cache is keyed by the allocation's identity (`CU_POINTER_ATTRIBUTE_BUFFER_ID`, unique per allocation
//! and never reused), not by its address: an allocation freed and made again at the same address is a new
//! allocation with a new handle, and a cache keyed by address would send the old handle, whose mapping in the
//! server still shows the freed allocation's bytes.

use std::collections::HashMap;

use crate::cuda::driver::{driver, CudaError};
use crate::device::{DeviceRegion, DeviceUuid, IpcHandle};
use crate::error::DeviceError;

/// Most allocations whose handles a client keeps.
pub(crate) const MAX_EXPORTS: usize = 256;

/// One exported allocation.
#[derive(Debug, Clone, Copy)]
struct Export {
    /// Its base address.
    base: u64,
    /// Its size.
    size: u64,
    /// Its IPC handle.
    handle: IpcHandle,
    /// The GPU that owns it.
    device: DeviceUuid,
    /// When it was last used.
    last_used: u64,
}

/// Allocations this client has taken IPC handles of, by buffer id.
#[derive(Debug, Default)]
pub(crate) struct Exports {
    /// The allocations.
    entries: HashMap<u64, Export>,
    /// Advances at each lookup.
    clock: u64,
}

/// A driver error as the client reports it.
fn cuda(err: CudaError) -> DeviceError {
    DeviceError::Cuda {
        call: err.call,
        code: err.code,
    }
}

impl Exports {
    /// The region of `len` bytes at device pointer `ptr`: its allocation's handle, the offset inside it and
    /// the owning GPU's UUID.
    pub(crate) fn region(&mut self, ptr: u64, len: usize) -> Result<DeviceRegion, DeviceError> {
        let driver = driver().map_err(DeviceError::NoCuda)?;
        let len32 = u32::try_from(len).map_err(|_| DeviceError::TooLong { len })?;
        let info = driver
            .pointer_info(ptr)
            .map_err(cuda)?
            .ok_or(DeviceError::NotDeviceMemory { ptr })?;
        self.clock += 1;
        let export = match self.entries.get_mut(&info.buffer_id) {
            Some(export) => {
                export.last_used = self.clock;
                *export
            }
            None => {
                let (base, size, handle) = driver.export(ptr, &info).map_err(cuda)?;
                let ordinal = u32::try_from(info.ordinal).map_err(|_| DeviceError::Cuda {
                    call: "cuPointerGetAttribute",
                    code: crate::cuda::driver::INVALID_VALUE,
                })?;
                let device = driver.device_uuid(ordinal).map_err(cuda)?;
                let export = Export {
                    base,
                    size,
                    handle,
                    device,
                    last_used: self.clock,
                };
                if self.entries.len() >= MAX_EXPORTS {
                    if let Some(oldest) = self
                        .entries
                        .iter()
                        .min_by_key(|(_, e)| e.last_used)
                        .map(|(id, _)| *id)
                    {
                        self.entries.remove(&oldest);
                    }
                }
                self.entries.insert(info.buffer_id, export);
                export
            }
        };
        let offset = ptr.wrapping_sub(export.base);
        if ptr < export.base || offset.saturating_add(len as u64) > export.size {
            return Err(DeviceError::OutsideAllocation {
                offset,
                len: len as u64,
                size: export.size,
            });
        }
        Ok(DeviceRegion {
            handle: export.handle,
            offset,
            len: len32,
            device: export.device,
        })
    }
}
