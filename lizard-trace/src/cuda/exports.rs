//! The client's side of device memory: from a device pointer to the [`DeviceRegion`] a server can copy, with
//! each allocation's IPC handle taken once.
//!
//! One driver call per record: `cuPointerGetAttributes` gives the allocation's identity, GPU, context, base
//! and size together. The cache is keyed by the allocation's identity (`CU_POINTER_ATTRIBUTE_BUFFER_ID`,
//! unique per allocation and never reused), not by its address: an allocation freed and made again at the
//! same address is a new allocation with a new handle, and a cache keyed by address would send the old
//! handle, whose mapping in the server still shows the freed allocation's bytes.
//!
//! A thread with no current context (a worker thread of a runtime-API program that never called the
//! runtime) cannot ask the driver about a pointer: the driver answers `CUDA_ERROR_INVALID_CONTEXT`. The
//! client then asks through a GPU's primary context that the process already uses (retained once and kept),
//! pushed for the call and popped after, so the thread's own context stack is left as it was.

use std::collections::HashMap;

use crate::cuda::driver::{
    driver, CudaError, Driver, PointerInfo, PrimaryContext, INVALID_CONTEXT,
};
use crate::device::{DeviceRegion, DeviceUuid, IpcHandle};
use crate::error::DeviceError;

/// Most allocations whose handles a client keeps.
pub(crate) const MAX_EXPORTS: usize = 256;

/// One exported allocation.
#[derive(Debug, Clone, Copy)]
struct Export {
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
    /// The primary context that threads without a current context ask through, once one was needed.
    lookup: Option<PrimaryContext>,
}

/// A driver error as the client reports it.
fn cuda(err: CudaError) -> DeviceError {
    DeviceError::Cuda {
        call: err.call,
        code: err.code,
    }
}

impl Exports {
    /// The region of `len` bytes at device pointer `ptr`: its allocation's handle, the offset inside it, the
    /// allocation's size and the owning GPU's UUID.
    pub(crate) fn region(&mut self, ptr: u64, len: usize) -> Result<DeviceRegion, DeviceError> {
        let driver = driver().map_err(DeviceError::NoCuda)?;
        let len32 = u32::try_from(len).map_err(|_| DeviceError::TooLong { len })?;
        let info = self
            .pointer_info(driver, ptr)?
            .ok_or(DeviceError::NotDeviceMemory { ptr })?;
        let offset = ptr.wrapping_sub(info.base);
        if ptr < info.base || offset.saturating_add(len as u64) > info.size {
            return Err(DeviceError::OutsideAllocation {
                offset,
                len: len as u64,
                size: info.size,
            });
        }
        self.clock += 1;
        let export = match self.entries.get_mut(&info.buffer_id) {
            Some(export) => {
                export.last_used = self.clock;
                *export
            }
            None => {
                let handle = driver.export(&info).map_err(cuda)?;
                let ordinal = u32::try_from(info.ordinal).map_err(|_| DeviceError::Cuda {
                    call: "cuPointerGetAttributes",
                    code: crate::cuda::driver::INVALID_VALUE,
                })?;
                let device = driver.device_uuid(ordinal).map_err(cuda)?;
                let export = Export {
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
        Ok(DeviceRegion {
            handle: export.handle,
            offset,
            len: len32,
            device: export.device,
            allocation_len: Some(info.size),
        })
    }

    /// What the driver knows of `ptr`, asked in the calling thread's context or, where it has none, through
    /// an active primary context.
    fn pointer_info(
        &mut self,
        driver: Driver,
        ptr: u64,
    ) -> Result<Option<PointerInfo>, DeviceError> {
        match driver.pointer_info(ptr) {
            Err(err) if err.code == INVALID_CONTEXT => {}
            other => return other.map_err(cuda),
        }
        if self.lookup.is_none() {
            self.lookup = driver.active_primary_context().map_err(cuda)?;
        }
        let context = self.lookup.as_ref().ok_or(DeviceError::NoContext)?.raw();
        driver
            .with_context(context, || driver.pointer_info(ptr))
            .map_err(cuda)
    }
}
