//! The server's side of device memory: the GPUs' primary contexts, the open IPC handles ([`HandleCache`]) and
//! the copy into the ring, straight into its registered memory or through a pinned staging buffer.
#![allow(unsafe_code)]

use crate::ack::Refusal;
use crate::cuda::driver::{driver, Driver, PinnedBuffer, PrimaryContext};
use crate::device::{DeviceRegion, DeviceUuid};
use crate::device_support::{CopyPath, DeviceSupport, Gpu, Unavailable};
use crate::handle_cache::{HandleCache, HandleLimits, HandleStats};

/// Bytes of the staging buffer used when the ring cannot be registered: 8 MiB, so a record of any size
/// needs no pinned memory of its own size.
pub(crate) const STAGING_CHUNK: usize = 8 << 20;

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
    /// The mapping's base address in the server.
    base: u64,
    /// Bytes of the allocation.
    size: u64,
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
                    .map(|(base, size)| (Mapping { gpu, base, size }, size))
                    .map_err(|e| Refusal::OpenFailed { code: e.code })
            },
            &mut close,
        )?;
        let end = region.offset.checked_add(u64::from(region.len));
        if end.is_none_or(|end| end > mapping.size) {
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

    /// Copies `source`'s bytes into `dst`, which lies in the ring's memory.
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
        copied.map_err(|e| {
            // A mapping that fails a copy is not trusted for the next record.
            if let Some(m) =
                self.cache
                    .forget(source.pid, source.region.handle, source.region.device)
            {
                close_mapping(self.driver, &self.gpus, &mut self.current, m);
            }
            Refusal::CopyFailed { code: e.code }
        })
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
