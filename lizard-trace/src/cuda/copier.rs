//! The server's side of device memory: the GPUs' primary contexts, the open IPC handles ([`HandleCache`]) and
//! the copy into the ring, straight into its registered memory or through a pinned staging buffer.
#![allow(unsafe_code)]

use crate::ack::Refusal;
use crate::cuda::driver::{driver, CudaError, Driver, PinnedBuffer, PrimaryContext};
use crate::device::{DeviceRegion, DeviceUuid};
use crate::device_support::{CopyPath, DeviceSupport, Gpu, Unavailable};
use crate::handle_cache::{HandleCache, HandleLimits, HandleStats};

/// Bytes of the staging buffer used when the ring cannot be registered: 8 MiB, so a record of any size
/// needs no pinned memory of its own size.
pub(crate) const STAGING_CHUNK: usize = 8 << 20;

/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`: the ring's registration outlived a context reset.
const ALREADY_REGISTERED: u32 = 712;

/// Whether `region`'s bytes lie within the `room` bytes its mapping has from the allocation's start to the
/// end of its block, and within the allocation's own size where the client sent it.
pub(crate) fn within(region: &DeviceRegion, room: u64) -> bool {
    let bound = region.allocation_len.map_or(room, |len| len.min(room));
    region
        .offset
        .checked_add(u64::from(region.len))
        .is_some_and(|end| end <= bound)
}

/// A GPU and its retained primary context.
#[derive(Debug)]
struct GpuState {
    /// What clients see of it.
    gpu: Gpu,
    /// Its primary context.
    context: PrimaryContext,
}

/// An open IPC handle: the GPU it is open on and the allocation it maps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mapping {
    /// Index of the GPU in [`Copier::gpus`].
    gpu: usize,
    /// The allocation's address in the server (what the open returned).
    base: u64,
    /// Bytes from `base` to the end of the memory block the handle maps: the most any record may reach. The
    /// block may be larger than the allocation and hold other allocations (`cudaMalloc` sub-allocates).
    room: u64,
}

/// Where one record's bytes are: resolved before the ring makes room, copied after.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source {
    /// Index of the GPU.
    gpu: usize,
    /// Device address of the first byte.
    address: u64,
    /// The region it was resolved from, to drop a handle whose copy failed.
    region: DeviceRegion,
    /// The client process.
    pid: u32,
    /// The GPU's UUID.
    device: DeviceUuid,
}

impl Source {
    /// The UUID of the GPU the bytes are on (the one the server chose when the client left it open).
    pub(crate) fn device(&self) -> DeviceUuid {
        self.device
    }
}

/// Copies device memory named by IPC handles into the ring, for one server thread (the contexts are made
/// current on it).
#[derive(Debug)]
pub(crate) struct Copier {
    /// The loaded driver.
    driver: Driver,
    /// The open handles. Declared before the contexts: they are closed first.
    cache: HandleCache<Mapping>,
    /// Every GPU the driver sees.
    gpus: Vec<GpuState>,
    /// The GPU whose context is current on this thread.
    current: Option<usize>,
    /// How copies reach the ring.
    path: CopyPath,
    /// The ring's memory, while it is registered.
    registered: Option<*mut u8>,
    /// The staging buffer of [`CopyPath::Staged`].
    staging: Option<PinnedBuffer>,
    /// The ring's memory: its start and length.
    ring: (*mut u8, usize),
    /// Times a GPU's context was reset after a sticky error.
    resets: u64,
}

impl Copier {
    /// Loads the driver, retains every GPU's primary context and registers the ring's memory
    /// (`ring.0..ring.0 + ring.1`) as pinned, falling back to a staging buffer if that fails.
    ///
    /// # Safety
    ///
    /// The ring's memory must stay mapped at that address until the copier is dropped.
    pub(crate) unsafe fn start(
        limits: HandleLimits,
        ring: (*mut u8, usize),
    ) -> Result<Copier, Unavailable> {
        let driver = driver()?;
        let init = |err: crate::cuda::driver::CudaError| Unavailable::InitFailed { code: err.code };
        let count = driver.device_count().map_err(init)?;
        if count == 0 {
            return Err(Unavailable::NoDevice);
        }
        let mut gpus = Vec::new();
        for ordinal in 0..count {
            gpus.push(GpuState {
                gpu: Gpu {
                    ordinal,
                    uuid: driver.device_uuid(ordinal).map_err(init)?,
                    name: driver.device_name(ordinal).map_err(init)?,
                },
                context: driver.primary_context(ordinal).map_err(init)?,
            });
        }
        driver.set_current(&gpus[0].context).map_err(init)?;
        let mut copier = Copier {
            driver,
            cache: HandleCache::new(limits),
            gpus,
            current: Some(0),
            path: CopyPath::PinnedRing,
            registered: None,
            staging: None,
            ring,
            resets: 0,
        };
        let (ptr, len) = ring;
        // SAFETY: the caller keeps the ring's memory mapped until the copier drops, which unregisters it.
        match unsafe { driver.host_register(ptr, len) } {
            Ok(()) => copier.registered = Some(ptr),
            Err(err) => {
                copier.staging = Some(
                    driver
                        .pinned(STAGING_CHUNK)
                        .map_err(|e| Unavailable::PinnedMemory { code: e.code })?,
                );
                copier.path = CopyPath::Staged {
                    chunk: STAGING_CHUNK,
                    register_code: err.code,
                };
            }
        }
        Ok(copier)
    }

    /// What the server can do.
    pub(crate) fn support(&self) -> DeviceSupport {
        DeviceSupport::Available {
            gpus: self.gpus.iter().map(|g| g.gpu.clone()).collect(),
            path: self.path,
        }
    }

    /// The handle counters.
    pub(crate) fn stats(&self) -> HandleStats {
        self.cache.stats()
    }

    /// Makes GPU `gpu`'s context current on this thread.
    fn make_current(&mut self, gpu: usize) -> Result<(), Refusal> {
        if self.current != Some(gpu) {
            self.driver
                .set_current(&self.gpus[gpu].context)
                .map_err(|e| Refusal::CopyFailed { code: e.code })?;
            self.current = Some(gpu);
        }
        Ok(())
    }

    /// Finds `region`'s bytes for client process `pid`: its GPU, the handle opened (or kept open), and the range
    /// checked against the allocation.
    pub(crate) fn resolve(&mut self, pid: u32, region: &DeviceRegion) -> Result<Source, Refusal> {
        let gpu = if region.device.is_any() {
            match self.gpus.len() {
                1 => 0,
                _ => return Err(Refusal::UnknownDevice),
            }
        } else {
            self.gpus
                .iter()
                .position(|g| g.gpu.uuid == region.device)
                .ok_or(Refusal::UnknownDevice)?
        };
        self.make_current(gpu)?;
        let Copier {
            driver,
            cache,
            gpus,
            current,
            ..
        } = self;
        let driver = *driver;
        let mut close = |m: Mapping| close_mapping(driver, gpus, current, m);
        let mapping = *cache.get_or_open(
            pid,
            region.handle,
            region.device,
            || {
                driver
                    .ipc_open(&region.handle)
                    .map(|opened| {
                        let mapping = Mapping {
                            gpu,
                            base: opened.base,
                            room: opened.room(),
                        };
                        (mapping, opened.block_end.saturating_sub(opened.block_start))
                    })
                    .map_err(|e| Refusal::OpenFailed { code: e.code })
            },
            &mut close,
        )?;
        if !within(region, mapping.room) {
            return Err(Refusal::OutsideAllocation);
        }
        // Closing evicted handles may have switched contexts.
        self.make_current(gpu)?;
        Ok(Source {
            gpu,
            address: mapping.base + region.offset,
            region: *region,
            pid,
            device: self.gpus[gpu].gpu.uuid,
        })
    }

    /// Copies `source`'s bytes into `dst`, which lies in the ring's memory. A copy that leaves its GPU's
    /// context with a sticky error (it read memory of an exporter that died, for example) resets the
    /// context, so that the records after it are served again.
    pub(crate) fn copy(&mut self, source: &Source, dst: &mut [u8]) -> Result<(), Refusal> {
        self.make_current(source.gpu)?;
        let driver = self.driver;
        let copied = match &mut self.staging {
            None => driver.copy_to_host(dst, source.address),
            Some(staging) => (|| {
                let step = staging.as_mut_slice().len();
                for (i, chunk) in dst.chunks_mut(step).enumerate() {
                    let staged = &mut staging.as_mut_slice()[..chunk.len()];
                    driver.copy_to_host(staged, source.address + (i * step) as u64)?;
                    chunk.copy_from_slice(staged);
                }
                Ok(())
            })(),
        };
        let Err(err) = copied else {
            return Ok(());
        };
        if self.driver.synchronize().is_err() {
            // Sticky: nothing in this context works until it is reset.
            self.recover(source.gpu);
        } else if let Some(m) =
            self.cache
                .forget(source.pid, source.region.handle, source.region.device)
        {
            // A mapping that fails a copy is not trusted for the next record.
            close_mapping(self.driver, &self.gpus, &mut self.current, m);
        }
        Err(Refusal::CopyFailed { code: err.code })
    }

    /// Resets GPU `gpu`'s primary context after a sticky error: its mappings are gone with it (forgotten
    /// without a close); where it is the context the ring was pinned in, the reset freed the staging buffer
    /// and may have dropped the ring's registration, so the ring is registered again (or a staging buffer
    /// made) for the next copies.
    fn recover(&mut self, gpu: usize) {
        self.resets += 1;
        self.cache.forget_where(|m| m.gpu == gpu);
        let driver = self.driver;
        if driver.reset(&self.gpus[gpu].context).is_err() {
            return;
        }
        self.current = None;
        if self.make_current(gpu).is_err() || gpu != 0 {
            return;
        }
        if let Some(staging) = self.staging.take() {
            staging.abandon();
        }
        self.registered = None;
        let (ptr, len) = self.ring;
        // SAFETY: the ring's memory stays mapped until the copier drops (`Copier::start`'s contract).
        match unsafe { driver.host_register(ptr, len) } {
            Ok(())
            | Err(CudaError {
                code: ALREADY_REGISTERED,
                ..
            }) => {
                self.registered = Some(ptr);
                self.path = CopyPath::PinnedRing;
            }
            Err(err) => {
                // Without a staging buffer either, copies go straight into the ring's pageable memory.
                self.staging = driver.pinned(STAGING_CHUNK).ok();
                self.path = CopyPath::Staged {
                    chunk: STAGING_CHUNK,
                    register_code: err.code,
                };
            }
        }
    }

    /// How many times a GPU's context was reset after a sticky error.
    pub(crate) fn resets(&self) -> u64 {
        self.resets
    }

    /// Closes handles beyond the byte bound; call after each record.
    pub(crate) fn trim(&mut self) {
        let Copier {
            driver,
            cache,
            gpus,
            current,
            ..
        } = self;
        let driver = *driver;
        cache.trim(&mut |m| close_mapping(driver, gpus, current, m));
    }

    /// Closes every handle of client process `pid` (its last connection ended).
    pub(crate) fn close_process(&mut self, pid: u32) {
        let Copier {
            driver,
            cache,
            gpus,
            current,
            ..
        } = self;
        let driver = *driver;
        cache.close_process(pid, &mut |m| close_mapping(driver, gpus, current, m));
    }
}

/// Closes a mapping with its GPU's context current.
fn close_mapping(driver: Driver, gpus: &[GpuState], current: &mut Option<usize>, m: Mapping) {
    if *current != Some(m.gpu) {
        if driver.set_current(&gpus[m.gpu].context).is_err() {
            return;
        }
        *current = Some(m.gpu);
    }
    driver.ipc_close(m.base);
}

impl Drop for Copier {
    fn drop(&mut self) {
        let Copier {
            driver,
            cache,
            gpus,
            current,
            ..
        } = self;
        let driver = *driver;
        cache.close_all(&mut |m| close_mapping(driver, gpus, current, m));
        if let Some(ptr) = self.registered.take() {
            self.driver.host_unregister(ptr);
        }
        // The staging buffer and the contexts drop after this, in that order.
        self.staging = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::IpcHandle;

    fn region(offset: u64, len: u32, allocation_len: Option<u64>) -> DeviceRegion {
        DeviceRegion {
            handle: IpcHandle([0; 64]),
            offset,
            len,
            device: DeviceUuid::ANY,
            allocation_len,
        }
    }

    #[test]
    fn a_record_stays_within_the_block_and_the_allocation_the_client_names() {
        // A 1000-byte allocation 64 KiB into a 2 MiB block: 2 MiB - 64 KiB of room after its start.
        let room = (2 << 20) - (64 << 10);
        assert!(within(&region(0, 1000, Some(1000)), room));
        assert!(!within(&region(10, 1000, Some(1000)), room));
        // Without the allocation's size only the block bounds it: neighbours are reachable, the block's end
        // is not.
        assert!(within(&region(10, 1000, None), room));
        assert!(within(&region(room - 8, 8, None), room));
        assert!(!within(&region(room - 8, 16, None), room));
        // A size the client claims beyond the block does not widen it.
        assert!(!within(&region(room - 8, 16, Some(u64::MAX)), room));
        assert!(!within(&region(u64::MAX, 1, None), room));
    }

    #[test]
    fn a_block_that_does_not_hold_the_mapping_leaves_no_room() {
        use crate::cuda::driver::Opened;
        let inside = Opened {
            base: 0x1_0000,
            block_start: 0x8000,
            block_end: 0x20_8000,
        };
        assert_eq!(inside.room(), 0x20_8000 - 0x1_0000);
        let before = Opened {
            block_start: 0x2_0000,
            ..inside
        };
        assert_eq!(before.room(), 0);
        let after = Opened {
            block_end: 0x8000,
            ..inside
        };
        assert_eq!(after.room(), 0);
    }
}
