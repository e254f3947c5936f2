//! Command pools and command buffers: which family and level each command buffer has, its recording in
//! progress and its last finished recording; `vkBeginCommandBuffer`, `vkEndCommandBuffer` and every way a
//! recording ends (reset, pool reset, free, pool destroyed).

use std::sync::{Arc, Mutex};

use ash::vk::{self, Handle};

use crate::boundary::{self, Feature};
use crate::config::Mode;
use crate::device::Device;
use crate::query_blocks::GRAPHICS_STATISTICS;
use crate::recorder::{Allowed, Builder};
use crate::registry;
use crate::workload::Recording;

/// One command buffer's state.
#[derive(Debug)]
pub(crate) struct CommandBufferState {
    /// Its pool's queue family.
    pub family: u32,
    /// Whether it is a secondary command buffer.
    pub secondary: bool,
    /// The recording in progress.
    pub builder: Option<Box<Builder>>,
    /// The last finished recording.
    pub done: Option<Arc<Recording>>,
}

/// A command buffer's state behind its lock (locked only by the thread recording or submitting it, and
/// never across a driver call).
pub(crate) type CommandBufferCell = Mutex<CommandBufferState>;

fn lock(cell: &CommandBufferCell) -> std::sync::MutexGuard<'_, CommandBufferState> {
    cell.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` on `cb`'s recording in progress, taken out of its cell so that no lock is held while `f`
/// records the layer's commands. `None` when `cb` has no recording in progress.
#[inline]
pub(crate) fn with_builder<R>(
    device: &Device,
    cb: vk::CommandBuffer,
    f: impl FnOnce(&mut Builder) -> R,
) -> Option<R> {
    let cell = device.command_buffers.get(cb.as_raw())?;
    let mut builder = lock(&cell).builder.take()?;
    let r = f(&mut builder);
    let mut state = lock(&cell);
    if state.builder.is_none() {
        state.builder = Some(builder);
    }
    Some(r)
}

/// Runs `f` on `cb`'s recording in progress under its lock (for bookkeeping without driver calls).
#[inline]
pub(crate) fn with_builder_locked<R>(
    device: &Device,
    cb: vk::CommandBuffer,
    f: impl FnOnce(&mut Builder) -> R,
) -> Option<R> {
    let cell = device.command_buffers.get(cb.as_raw())?;
    let mut state = lock(&cell);
    state.builder.as_mut().map(|b| f(b))
}

/// The last finished recording of `cb`.
pub(crate) fn recording(device: &Device, cb: vk::CommandBuffer) -> Option<Arc<Recording>> {
    let cell = device.command_buffers.get(cb.as_raw())?;
    let state = lock(&cell);
    state.done.clone()
}

/// Forgets the recordings of `buffers`.
fn clear(device: &Device, buffers: &[u64]) {
    for &cb in buffers {
        if let Some(cell) = device.command_buffers.get(cb) {
            let mut state = lock(&cell);
            state.builder = None;
            state.done = None;
        }
    }
}

/// The layer's `vkCreateCommandPool`: the pool's family is kept.
///
/// # Safety
///
/// Called with the arguments of `vkCreateCommandPool`.
pub(crate) unsafe extern "system" fn create_command_pool(
    device: vk::Device,
    info: *const vk::CommandPoolCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    pool: *mut vk::CommandPool,
) -> vk::Result {
    boundary::entry(
        "vkCreateCommandPool",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live device.
            let Some(ours) = (unsafe { registry::device(device) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.create_command_pool else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's arguments, passed on.
            let result = unsafe { next(device, info, allocator, pool) };
            if result == vk::Result::SUCCESS {
                boundary::work(Feature::Workloads, "vkCreateCommandPool", || {
                    // SAFETY: the application's info and the pool just created.
                    let (family, handle) =
                        unsafe { ((*info).queue_family_index, (*pool).as_raw()) };
                    ours.command_pools
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(handle, (family, Vec::new()));
                });
            }
            result
        },
    )
}

/// The command buffers of `pool`, forgotten with it (`remove`) or kept.
fn pool_buffers(device: &Device, pool: vk::CommandPool, remove: bool) -> Vec<u64> {
    let mut pools = device
        .command_pools
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if remove {
        pools
            .remove(&pool.as_raw())
            .map(|(_, b)| b)
            .unwrap_or_default()
    } else {
        pools
            .get(&pool.as_raw())
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    }
}

/// The layer's `vkDestroyCommandPool`: its command buffers are forgotten.
///
/// # Safety
///
/// Called with the arguments of `vkDestroyCommandPool`.
pub(crate) unsafe extern "system" fn destroy_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    boundary::entry("vkDestroyCommandPool", (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        if let Some(next) = ours.table.destroy_command_pool {
            // SAFETY: the application's arguments, passed on.
            unsafe { next(device, pool, allocator) };
        }
        boundary::work(Feature::Workloads, "vkDestroyCommandPool", || {
            let buffers = pool_buffers(&ours, pool, true);
            clear(&ours, &buffers);
            ours.command_buffers.remove_all(buffers);
        });
    })
}

/// The layer's `vkResetCommandPool`: its command buffers' recordings end.
///
/// # Safety
///
/// Called with the arguments of `vkResetCommandPool`.
pub(crate) unsafe extern "system" fn reset_command_pool(
    device: vk::Device,
    pool: vk::CommandPool,
    flags: vk::CommandPoolResetFlags,
) -> vk::Result {
    boundary::entry(
        "vkResetCommandPool",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live device.
            let Some(ours) = (unsafe { registry::device(device) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.reset_command_pool else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's arguments, passed on.
            let result = unsafe { next(device, pool, flags) };
            boundary::work(Feature::Workloads, "vkResetCommandPool", || {
                clear(&ours, &pool_buffers(&ours, pool, false));
            });
            result
        },
    )
}

/// The layer's `vkAllocateCommandBuffers`.
///
/// # Safety
///
/// Called with the arguments of `vkAllocateCommandBuffers`.
pub(crate) unsafe extern "system" fn allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo<'_>,
    buffers: *mut vk::CommandBuffer,
) -> vk::Result {
    boundary::entry(
        "vkAllocateCommandBuffers",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live device.
            let Some(ours) = (unsafe { registry::device(device) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.allocate_command_buffers else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's arguments, passed on.
            let result = unsafe { next(device, info, buffers) };
            if result == vk::Result::SUCCESS {
                boundary::work(Feature::Workloads, "vkAllocateCommandBuffers", || {
                    // SAFETY: the application's info and the array the driver filled.
                    let info = unsafe { &*info };
                    // SAFETY: as above, `command_buffer_count` handles.
                    let handles = unsafe {
                        std::slice::from_raw_parts(buffers, info.command_buffer_count as usize)
                    };
                    let secondary = info.level == vk::CommandBufferLevel::SECONDARY;
                    let mut pools = ours.command_pools.lock().unwrap_or_else(|e| e.into_inner());
                    let Some((family, list)) = pools.get_mut(&info.command_pool.as_raw()) else {
                        return;
                    };
                    for cb in handles {
                        list.push(cb.as_raw());
                        ours.command_buffers.insert(
                            cb.as_raw(),
                            Arc::new(Mutex::new(CommandBufferState {
                                family: *family,
                                secondary,
                                builder: None,
                                done: None,
                            })),
                        );
                    }
                });
            }
            result
        },
    )
}

/// The layer's `vkFreeCommandBuffers`.
///
/// # Safety
///
/// Called with the arguments of `vkFreeCommandBuffers`.
pub(crate) unsafe extern "system" fn free_command_buffers(
    device: vk::Device,
    pool: vk::CommandPool,
    count: u32,
    buffers: *const vk::CommandBuffer,
) {
    boundary::entry("vkFreeCommandBuffers", (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        if let Some(next) = ours.table.free_command_buffers {
            // SAFETY: the application's arguments, passed on.
            unsafe { next(device, pool, count, buffers) };
        }
        boundary::work(Feature::Workloads, "vkFreeCommandBuffers", || {
            if buffers.is_null() {
                return;
            }
            // SAFETY: the application's array of `count` handles (some may be null).
            let freed: Vec<u64> = unsafe { std::slice::from_raw_parts(buffers, count as usize) }
                .iter()
                .map(|b| b.as_raw())
                .filter(|&b| b != 0)
                .collect();
            clear(&ours, &freed);
            ours.command_buffers.remove_all(freed.iter().copied());
            let mut pools = ours.command_pools.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, list)) = pools.get_mut(&pool.as_raw()) {
                list.retain(|b| !freed.contains(b));
            }
        });
    })
}

/// What the layer may record into command buffers of `family` on `device` now.
fn allowed(device: &Device, family: u32, trappable: bool) -> Option<Allowed> {
    if !device.session.records_workloads() {
        return None;
    }
    let queries = device.session.config.queries;
    let f = device.info.families.get(family as usize)?;
    let statistics = queries.pipeline_statistics && device.info.pipeline_statistics;
    let allowed = Allowed {
        timestamps: queries.timestamps && f.timestamp_valid_bits > 0,
        graphics_statistics: statistics && f.flags.contains(vk::QueueFlags::GRAPHICS),
        compute_statistics: statistics && f.flags.contains(vk::QueueFlags::COMPUTE),
        traps: trappable && device.session.mode_on(device) == Mode::RenderPass,
    };
    (allowed.timestamps || allowed.graphics_statistics || allowed.compute_statistics)
        .then_some(allowed)
}

/// The layer's `vkBeginCommandBuffer`: a recording starts. A secondary command buffer continuing a render
/// pass is told that pipeline-statistics queries may be open in its primary, where the device allows it.
///
/// # Safety
///
/// Called with the arguments of `vkBeginCommandBuffer`.
pub(crate) unsafe extern "system" fn begin_command_buffer(
    cb: vk::CommandBuffer,
    info: *const vk::CommandBufferBeginInfo<'_>,
) -> vk::Result {
    boundary::entry(
        "vkBeginCommandBuffer",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live command buffer.
            let Some(ours) = (unsafe { registry::device(cb) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.begin_command_buffer else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let plan = boundary::work(Feature::Workloads, "vkBeginCommandBuffer", || {
                let cell = ours.command_buffers.get(cb.as_raw())?;
                let (family, secondary) = {
                    let mut state = lock(&cell);
                    state.builder = None;
                    state.done = None;
                    (state.family, state.secondary)
                };
                // SAFETY: the application's begin info.
                let info = unsafe { info.as_ref() }?;
                let continues = secondary
                    && info
                        .flags
                        .contains(vk::CommandBufferUsageFlags::RENDER_PASS_CONTINUE);
                // Traps only in primaries (a `SIMULTANEOUS_USE` one too: the layer serves every submission of
                // a trapped command buffer, waiting for each, so it is never pending twice).
                let trappable = !secondary;
                let allowed = allowed(&ours, family, trappable)?;
                Some((cell, secondary, continues, allowed))
            })
            .flatten();
            let mut inheritance = None;
            if let Some((_, true, true, allowed)) = &plan {
                if allowed.graphics_statistics && ours.info.inherited_queries {
                    // SAFETY: the application's begin info and its inheritance info, read-only here.
                    let inherit =
                        unsafe { info.as_ref().and_then(|i| i.p_inheritance_info.as_ref()) };
                    if let Some(inherit) = inherit {
                        let mut copy = *inherit;
                        copy.pipeline_statistics |= GRAPHICS_STATISTICS
                            .iter()
                            .fold(vk::QueryPipelineStatisticFlags::empty(), |a, (b, _)| a | *b);
                        inheritance = Some(copy);
                    }
                }
            }
            let result = match &inheritance {
                Some(inherit) => {
                    // SAFETY: the application's begin info, copied with its inheritance info widened.
                    let mut begin = unsafe { *info };
                    begin.p_inheritance_info = inherit;
                    // SAFETY: every pointer in `begin` is live during the call.
                    unsafe { next(cb, &begin) }
                }
                // SAFETY: the application's arguments, passed on.
                None => unsafe { next(cb, info) },
            };
            if result == vk::Result::SUCCESS {
                if let Some((cell, secondary, continues, allowed)) = plan {
                    lock(&cell).builder =
                        Some(Box::new(Builder::new(secondary, continues, allowed)));
                }
            }
            result
        },
    )
}

/// The layer's `vkEndCommandBuffer`: the recording is finished.
///
/// # Safety
///
/// Called with the arguments of `vkEndCommandBuffer`.
pub(crate) unsafe extern "system" fn end_command_buffer(cb: vk::CommandBuffer) -> vk::Result {
    boundary::entry(
        "vkEndCommandBuffer",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live command buffer.
            let Some(ours) = (unsafe { registry::device(cb) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.end_command_buffer else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's argument, passed on.
            let result = unsafe { next(cb) };
            boundary::work(Feature::Workloads, "vkEndCommandBuffer", || {
                let Some(cell) = ours.command_buffers.get(cb.as_raw()) else {
                    return;
                };
                let builder = lock(&cell).builder.take();
                if let (Some(builder), vk::Result::SUCCESS) = (builder, result) {
                    let recording =
                        builder.finish(cb.as_raw(), ours.session.next_recording_serial());
                    lock(&cell).done = Some(Arc::new(recording));
                }
            });
            result
        },
    )
}

/// The layer's `vkResetCommandBuffer`: the recording ends.
///
/// # Safety
///
/// Called with the arguments of `vkResetCommandBuffer`.
pub(crate) unsafe extern "system" fn reset_command_buffer(
    cb: vk::CommandBuffer,
    flags: vk::CommandBufferResetFlags,
) -> vk::Result {
    boundary::entry(
        "vkResetCommandBuffer",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: a live command buffer.
            let Some(ours) = (unsafe { registry::device(cb) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            let Some(next) = ours.table.reset_command_buffer else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's arguments, passed on.
            let result = unsafe { next(cb, flags) };
            boundary::work(Feature::Workloads, "vkResetCommandBuffer", || {
                clear(&ours, &[cb.as_raw()]);
            });
            result
        },
    )
}
