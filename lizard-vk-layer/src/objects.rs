//! Objects whose creation the layer notes: render passes (their subpass count decides whether a
//! pipeline-statistics query may span one) and the application's query pools (their type tells which
//! queries the application has open).

use ash::vk::{self, Handle};

use crate::boundary::{self, Feature};
use crate::registry;

/// Notes render pass `handle` with `subpasses` subpasses.
fn note_render_pass(
    device: vk::Device,
    handle: *const vk::RenderPass,
    subpasses: u32,
    command: &'static str,
) {
    boundary::work(Feature::Workloads, command, || {
        // SAFETY: a live device and the render pass the driver wrote.
        if let (Some(ours), Some(rp)) = unsafe { (registry::device(device), handle.as_ref()) } {
            ours.render_passes
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(rp.as_raw(), subpasses);
        }
    });
}

/// The layer's `vkCreateRenderPass`.
///
/// # Safety
///
/// Called with the arguments of `vkCreateRenderPass`.
pub(crate) unsafe extern "system" fn create_render_pass(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    render_pass: *mut vk::RenderPass,
) -> vk::Result {
    const COMMAND: &str = "vkCreateRenderPass";
    boundary::entry(COMMAND, vk::Result::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let Some(next) = ours.table.create_render_pass else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the application's arguments, passed on.
        let result = unsafe { next(device, info, allocator, render_pass) };
        if result == vk::Result::SUCCESS {
            // SAFETY: the application's create info.
            if let Some(i) = unsafe { info.as_ref() } {
                note_render_pass(device, render_pass, i.subpass_count, COMMAND);
            }
        }
        result
    })
}

/// `vkCreateRenderPass2` and its KHR form.
///
/// # Safety
///
/// Called with the arguments of `vkCreateRenderPass2`.
unsafe fn create_render_pass2(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    render_pass: *mut vk::RenderPass,
    command: &'static str,
    khr: bool,
) -> vk::Result {
    boundary::entry(command, vk::Result::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let next = if khr {
            ours.table.create_render_pass2_khr
        } else {
            ours.table.create_render_pass2
        };
        let Some(next) = next else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the application's arguments, passed on.
        let result = unsafe { next(device, info, allocator, render_pass) };
        if result == vk::Result::SUCCESS {
            // SAFETY: the application's create info.
            if let Some(i) = unsafe { info.as_ref() } {
                note_render_pass(device, render_pass, i.subpass_count, command);
            }
        }
        result
    })
}

/// The layer's `vkCreateRenderPass2`.
///
/// # Safety
///
/// Called with the arguments of `vkCreateRenderPass2`.
pub(crate) unsafe extern "system" fn create_render_pass2_core(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    render_pass: *mut vk::RenderPass,
) -> vk::Result {
    // SAFETY: the caller's arguments.
    unsafe {
        create_render_pass2(
            device,
            info,
            allocator,
            render_pass,
            "vkCreateRenderPass2",
            false,
        )
    }
}

/// The layer's `vkCreateRenderPass2KHR`.
///
/// # Safety
///
/// Called with the arguments of `vkCreateRenderPass2KHR`.
pub(crate) unsafe extern "system" fn create_render_pass2_khr(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    render_pass: *mut vk::RenderPass,
) -> vk::Result {
    // SAFETY: the caller's arguments.
    unsafe {
        create_render_pass2(
            device,
            info,
            allocator,
            render_pass,
            "vkCreateRenderPass2KHR",
            true,
        )
    }
}

/// The layer's `vkDestroyRenderPass`.
///
/// # Safety
///
/// Called with the arguments of `vkDestroyRenderPass`.
pub(crate) unsafe extern "system" fn destroy_render_pass(
    device: vk::Device,
    render_pass: vk::RenderPass,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    const COMMAND: &str = "vkDestroyRenderPass";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        if let Some(next) = ours.table.destroy_render_pass {
            // SAFETY: the application's arguments, passed on.
            unsafe { next(device, render_pass, allocator) };
        }
        boundary::work(Feature::Workloads, COMMAND, || {
            ours.render_passes
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&render_pass.as_raw());
        });
    })
}

/// The layer's `vkCreateQueryPool`.
///
/// # Safety
///
/// Called with the arguments of `vkCreateQueryPool`.
pub(crate) unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    pool: *mut vk::QueryPool,
) -> vk::Result {
    const COMMAND: &str = "vkCreateQueryPool";
    boundary::entry(COMMAND, vk::Result::ERROR_INITIALIZATION_FAILED, || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        let Some(next) = ours.table.create_query_pool else {
            return vk::Result::ERROR_INITIALIZATION_FAILED;
        };
        // SAFETY: the application's arguments, passed on.
        let result = unsafe { next(device, info, allocator, pool) };
        if result == vk::Result::SUCCESS {
            boundary::work(Feature::Workloads, COMMAND, || {
                // SAFETY: the application's create info and the pool the driver wrote.
                if let (Some(i), Some(p)) = unsafe { (info.as_ref(), pool.as_ref()) } {
                    ours.query_pools
                        .write()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(p.as_raw(), i.query_type);
                }
            });
        }
        result
    })
}

/// The layer's `vkDestroyQueryPool`.
///
/// # Safety
///
/// Called with the arguments of `vkDestroyQueryPool`.
pub(crate) unsafe extern "system" fn destroy_query_pool(
    device: vk::Device,
    pool: vk::QueryPool,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    const COMMAND: &str = "vkDestroyQueryPool";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        if let Some(next) = ours.table.destroy_query_pool {
            // SAFETY: the application's arguments, passed on.
            unsafe { next(device, pool, allocator) };
        }
        boundary::work(Feature::Workloads, COMMAND, || {
            ours.query_pools
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&pool.as_raw());
        });
    })
}
