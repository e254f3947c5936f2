//! The layer's state of each queue: its own command pool (for the command buffers that copy query
//! results), its fences, and a host-visible buffer the results are copied into. A submitting thread takes
//! the state out while it records and submits (the application already holds the queue alone then), so no
//! lock is held across a driver call; the worker gives back what a finished submission used through
//! [`QueueShared`].

use std::sync::{Arc, Mutex};

use ash::vk::{self, Handle};

use crate::device::Device;
use crate::error::LayerError;
use crate::ring::Ring;

/// Bytes of each queue's readback buffer.
const READBACK_BYTES: u64 = 2 << 20;

/// What the worker gives back to a queue once a submission's results are read.
#[derive(Debug, Default)]
pub(crate) struct Returned {
    /// The layer's command buffers, free to record again.
    pub command_buffers: Vec<vk::CommandBuffer>,
    /// The layer's fences, reset.
    pub fences: Vec<vk::Fence>,
    /// Readback ranges read, by offset.
    pub ranges: Vec<u64>,
}

/// The part of a queue's state the worker reaches.
#[derive(Debug, Default)]
pub(crate) struct QueueShared {
    returned: Mutex<Returned>,
}

impl QueueShared {
    /// Gives back what a submission used.
    pub(crate) fn give_back(
        &self,
        command_buffers: &[vk::CommandBuffer],
        fence: Option<vk::Fence>,
        range: Option<u64>,
    ) {
        let mut r = self.returned.lock().unwrap_or_else(|e| e.into_inner());
        r.command_buffers.extend_from_slice(command_buffers);
        r.fences.extend(fence);
        r.ranges.extend(range);
    }
}

/// A host-visible, coherent buffer, mapped for the layer's lifetime on the device.
#[derive(Debug)]
pub(crate) struct Readback {
    /// The buffer the GPU copies results into.
    pub buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *const u8,
    size: u64,
}

// SAFETY: the mapping is plain memory the driver keeps mapped until the memory is freed, which happens only
// in `QueueEntry::destroy`, after the worker has stopped reading it; each range is written by the GPU of one
// submission and read by the worker after that submission's fence, never both at once.
unsafe impl Send for Readback {}
// SAFETY: as above; readers only read.
unsafe impl Sync for Readback {}

impl Readback {
    /// The 64-bit words at `offset` (`words` of them), read from the mapping.
    pub(crate) fn words(&self, offset: u64, words: usize) -> Option<Vec<u64>> {
        let end = offset.checked_add(words as u64 * 8)?;
        if end > self.size || !offset.is_multiple_of(8) {
            return None;
        }
        let mut out = vec![0u64; words];
        // SAFETY: `offset..end` lies in the mapping (checked), 8-aligned (the mapping is at least 8-aligned
        // and the offset a multiple of 8); the GPU wrote it before the fence the worker waited for.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.mapped.add(offset as usize) as *const u64,
                out.as_mut_ptr(),
                words,
            )
        };
        Some(out)
    }
}

/// The layer's own objects on one queue.
#[derive(Debug)]
pub(crate) struct QueueState {
    pool: vk::CommandPool,
    free_command_buffers: Vec<vk::CommandBuffer>,
    free_fences: Vec<vk::Fence>,
    /// Ranges of the readback buffer in use.
    pub ring: Ring,
    /// The readback buffer.
    pub readback: Arc<Readback>,
}

/// A queue the application took.
#[derive(Debug)]
pub(crate) struct QueueEntry {
    /// The handle.
    pub handle: u64,
    /// Its family.
    pub family: u32,
    /// Its index in the family.
    pub index: u32,
    /// The layer's objects, while no thread submits.
    pub state: Option<Box<QueueState>>,
    /// Why the layer has none, when it failed to make them.
    pub failed: Option<LayerError>,
    /// What the worker gives back.
    pub shared: Arc<QueueShared>,
}

/// Notes a queue the application took.
pub(crate) fn seen(device: &Device, queue: vk::Queue, family: u32, index: u32) {
    let mut queues = device.queues.lock().unwrap_or_else(|e| e.into_inner());
    if queues.iter().all(|q| q.handle != queue.as_raw()) {
        queues.push(QueueEntry {
            handle: queue.as_raw(),
            family,
            index,
            state: None,
            failed: None,
            shared: Arc::default(),
        });
    }
}

/// A queue's family and index.
pub(crate) fn position(device: &Device, queue: vk::Queue) -> Option<(u32, u32)> {
    let queues = device.queues.lock().unwrap_or_else(|e| e.into_inner());
    queues
        .iter()
        .find(|q| q.handle == queue.as_raw())
        .map(|q| (q.family, q.index))
}

/// The layer's state of `queue`, taken out for one submission (made on first use), with what the worker
/// gave back already taken in. `Err` with the reason when the layer has none.
pub(crate) fn take(
    device: &Device,
    queue: vk::Queue,
) -> Result<(Box<QueueState>, Arc<QueueShared>), LayerError> {
    let (state, shared, family) = {
        let mut queues = device.queues.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = queues.iter_mut().find(|q| q.handle == queue.as_raw()) else {
            return Err(LayerError::UnknownQueue);
        };
        if let Some(reason) = &entry.failed {
            return Err(reason.clone());
        }
        (entry.state.take(), Arc::clone(&entry.shared), entry.family)
    };
    let mut state = match state {
        Some(s) => s,
        None => match QueueState::create(device, family) {
            Ok(s) => Box::new(s),
            Err(reason) => {
                let mut queues = device.queues.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(entry) = queues.iter_mut().find(|q| q.handle == queue.as_raw()) {
                    entry.failed = Some(reason.clone());
                }
                return Err(reason);
            }
        },
    };
    state.reclaim(&shared);
    Ok((state, shared))
}

/// Puts back the state [`take`] took.
pub(crate) fn put_back(device: &Device, queue: vk::Queue, state: Box<QueueState>) {
    let mut queues = device.queues.lock().unwrap_or_else(|e| e.into_inner());
    match queues.iter_mut().find(|q| q.handle == queue.as_raw()) {
        Some(entry) if entry.state.is_none() => entry.state = Some(state),
        _ => {
            drop(queues);
            (*state).destroy(device);
        }
    }
}

impl QueueState {
    /// Makes the layer's objects for a queue of `family`.
    fn create(device: &Device, family: u32) -> Result<QueueState, LayerError> {
        let t = &device.table;
        let pool_info = vk::CommandPoolCreateInfo::default()
            .flags(
                vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER
                    | vk::CommandPoolCreateFlags::TRANSIENT,
            )
            .queue_family_index(family);
        let mut pool = vk::CommandPool::null();
        // SAFETY: a live device; valid create info; output is ours.
        unsafe {
            (t.create_command_pool
                .ok_or(LayerError::Missing("vkCreateCommandPool"))?)(
                device.handle,
                &pool_info,
                std::ptr::null(),
                &mut pool,
            )
        }
        .result()
        .map_err(LayerError::call("vkCreateCommandPool"))?;
        let readback = match Self::readback(device) {
            Ok(r) => r,
            Err(e) => {
                if let Some(destroy) = t.destroy_command_pool {
                    // SAFETY: created above, unused.
                    unsafe { destroy(device.handle, pool, std::ptr::null()) };
                }
                return Err(e);
            }
        };
        Ok(QueueState {
            pool,
            free_command_buffers: Vec::new(),
            free_fences: Vec::new(),
            ring: Ring::new(READBACK_BYTES),
            readback: Arc::new(readback),
        })
    }

    /// The readback buffer, in host-visible coherent memory (cached where the device has it).
    fn readback(device: &Device) -> Result<Readback, LayerError> {
        let t = &device.table;
        let info = vk::BufferCreateInfo::default()
            .size(READBACK_BYTES)
            .usage(vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        let mut buffer = vk::Buffer::null();
        // SAFETY: a live device; valid create info; output is ours.
        unsafe {
            (t.create_buffer
                .ok_or(LayerError::Missing("vkCreateBuffer"))?)(
                device.handle,
                &info,
                std::ptr::null(),
                &mut buffer,
            )
        }
        .result()
        .map_err(LayerError::call("vkCreateBuffer"))?;
        let destroy_buffer = || {
            if let Some(destroy) = t.destroy_buffer {
                // SAFETY: created above, unused.
                unsafe { destroy(device.handle, buffer, std::ptr::null()) };
            }
        };
        let mut requirements = vk::MemoryRequirements::default();
        let Some(get_requirements) = t.get_buffer_memory_requirements else {
            destroy_buffer();
            return Err(LayerError::Missing("vkGetBufferMemoryRequirements"));
        };
        // SAFETY: the buffer above; output is ours.
        unsafe { get_requirements(device.handle, buffer, &mut requirements) };
        let memory = &device.info.memory;
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = &memory.memory_types[..memory.memory_type_count.min(32) as usize];
        let suitable = |i: usize, flags: vk::MemoryPropertyFlags| {
            requirements.memory_type_bits & (1 << i) != 0 && types[i].property_flags.contains(flags)
        };
        let Some(type_index) = (0..types.len())
            .find(|&i| suitable(i, wanted | vk::MemoryPropertyFlags::HOST_CACHED))
            .or_else(|| (0..types.len()).find(|&i| suitable(i, wanted)))
        else {
            destroy_buffer();
            return Err(LayerError::NoHostMemory);
        };
        let allocate = vk::MemoryAllocateInfo::default()
            .allocation_size(requirements.size)
            .memory_type_index(type_index as u32);
        let mut device_memory = vk::DeviceMemory::null();
        let (Some(alloc), Some(free), Some(bind), Some(map)) = (
            t.allocate_memory,
            t.free_memory,
            t.bind_buffer_memory,
            t.map_memory,
        ) else {
            destroy_buffer();
            return Err(LayerError::Missing(
                "vkAllocateMemory, vkBindBufferMemory or vkMapMemory",
            ));
        };
        // SAFETY: a live device; valid allocate info; output is ours.
        if let Err(e) = unsafe {
            alloc(
                device.handle,
                &allocate,
                std::ptr::null(),
                &mut device_memory,
            )
        }
        .result()
        {
            destroy_buffer();
            return Err(LayerError::call("vkAllocateMemory")(e));
        }
        let mut mapped: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: the buffer and memory above, of a type the buffer accepts; the mapping covers the memory.
        let bound = unsafe { bind(device.handle, buffer, device_memory, 0) }
            .result()
            .and_then(|_| {
                // SAFETY: host-visible memory, not mapped yet.
                unsafe {
                    map(
                        device.handle,
                        device_memory,
                        0,
                        vk::WHOLE_SIZE,
                        vk::MemoryMapFlags::empty(),
                        &mut mapped,
                    )
                }
                .result()
            });
        if let Err(e) = bound.map_err(LayerError::call("vkBindBufferMemory or vkMapMemory")) {
            destroy_buffer();
            // SAFETY: allocated above, unused.
            unsafe { free(device.handle, device_memory, std::ptr::null()) };
            return Err(e);
        }
        Ok(Readback {
            buffer,
            memory: device_memory,
            mapped: mapped as *const u8,
            size: READBACK_BYTES,
        })
    }

    /// Takes in what the worker gave back.
    pub(crate) fn reclaim(&mut self, shared: &QueueShared) {
        let returned =
            std::mem::take(&mut *shared.returned.lock().unwrap_or_else(|e| e.into_inner()));
        self.free_command_buffers.extend(returned.command_buffers);
        self.free_fences.extend(returned.fences);
        for at in returned.ranges {
            self.ring.free(at);
        }
    }

    /// A command buffer of the layer's, ready to begin.
    pub(crate) fn command_buffer(
        &mut self,
        device: &Device,
    ) -> Result<vk::CommandBuffer, vk::Result> {
        if let Some(cb) = self.free_command_buffers.pop() {
            return Ok(cb);
        }
        let allocate = device
            .table
            .allocate_command_buffers
            .ok_or(vk::Result::ERROR_EXTENSION_NOT_PRESENT)?;
        let set_loader_data = device
            .set_loader_data
            .ok_or(vk::Result::ERROR_INITIALIZATION_FAILED)?;
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        let mut cb = vk::CommandBuffer::null();
        // SAFETY: the layer's pool on a live device; room for one handle.
        unsafe { allocate(device.handle, &info, &mut cb) }.result()?;
        // SAFETY: a command buffer the layer allocated below the loader: it gets the loader's dispatch
        // pointer, as the loader's interface requires.
        unsafe { set_loader_data(device.handle, cb.as_raw() as *mut std::ffi::c_void) }.result()?;
        Ok(cb)
    }

    /// Gives back a command buffer not submitted after all.
    pub(crate) fn unused_command_buffer(&mut self, cb: vk::CommandBuffer) {
        self.free_command_buffers.push(cb);
    }

    /// An unsignalled fence of the layer's.
    pub(crate) fn fence(&mut self, device: &Device) -> Result<vk::Fence, vk::Result> {
        if let Some(f) = self.free_fences.pop() {
            return Ok(f);
        }
        let create = device
            .table
            .create_fence
            .ok_or(vk::Result::ERROR_EXTENSION_NOT_PRESENT)?;
        let mut fence = vk::Fence::null();
        let info = vk::FenceCreateInfo::default();
        // SAFETY: a live device; valid create info; output is ours.
        unsafe { create(device.handle, &info, std::ptr::null(), &mut fence) }.result()?;
        Ok(fence)
    }

    /// Gives back a fence not submitted after all.
    pub(crate) fn unused_fence(&mut self, fence: vk::Fence) {
        self.free_fences.push(fence);
    }

    /// Destroys the layer's objects (the device is idle, or the state is not in use).
    fn destroy(self, device: &Device) {
        let t = &device.table;
        if let Some(destroy) = t.destroy_fence {
            for fence in &self.free_fences {
                // SAFETY: the layer's fence, not in use.
                unsafe { destroy(device.handle, *fence, std::ptr::null()) };
            }
        }
        if let Some(destroy) = t.destroy_command_pool {
            // SAFETY: the layer's pool; its command buffers are freed with it.
            unsafe { destroy(device.handle, self.pool, std::ptr::null()) };
        }
        if let Some(destroy) = t.destroy_buffer {
            // SAFETY: the layer's buffer, no longer used by any submission.
            unsafe { destroy(device.handle, self.readback.buffer, std::ptr::null()) };
        }
        if let Some(free) = t.free_memory {
            // SAFETY: the buffer's memory; freeing unmaps it, and the worker no longer reads it.
            unsafe { free(device.handle, self.readback.memory, std::ptr::null()) };
        }
    }
}

impl QueueEntry {
    /// Destroys the layer's objects on this queue (the device is being destroyed).
    pub(crate) fn destroy(mut self, device: &Device) {
        if let Some(mut state) = self.state.take() {
            state.reclaim(&self.shared);
            (*state).destroy(device);
        }
    }
}
