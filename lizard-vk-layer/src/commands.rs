//! The `vkCmd*` commands the layer intercepts while command buffers are recorded: render pass instances,
//! workloads outside them, draws, debug labels, secondary command buffers and the application's own
//! queries. Each passes the application's command on unchanged, once; the layer's own commands go before
//! or after it.

use std::ffi::c_char;

use ash::vk::{self, Handle};

use crate::boundary::{self, Feature};
use crate::command_buffer::{recording, with_builder, with_builder_locked};
use crate::device::Device;
use crate::instance::text;
use crate::recorder::RenderPassBegin;
use crate::registry;
use crate::workload::Kind;

/// The subpass count of `render_pass`, if the layer saw it created.
fn subpasses(device: &Device, render_pass: vk::RenderPass) -> Option<u32> {
    device
        .render_passes
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&render_pass.as_raw())
        .copied()
}

/// Records the start of a render pass instance before its command goes down.
fn begin_render_pass(device: &Device, cb: vk::CommandBuffer, begin: RenderPassBegin) {
    boundary::work(Feature::Workloads, begin.command, || {
        with_builder(device, cb, |b| b.begin_render_pass(device, cb, begin))
    });
}

/// Records the end of the open render pass instance after its command went down.
fn end_render_pass(device: &Device, cb: vk::CommandBuffer, command: &'static str) {
    boundary::work(Feature::Workloads, command, || {
        with_builder(device, cb, |b| b.end_render_pass(device, cb))
    });
}

/// The layer's `vkCmdBeginRenderPass`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRenderPass`.
pub(crate) unsafe extern "system" fn cmd_begin_render_pass(
    cb: vk::CommandBuffer,
    info: *const vk::RenderPassBeginInfo<'_>,
    contents: vk::SubpassContents,
) {
    const COMMAND: &str = "vkCmdBeginRenderPass";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_begin_render_pass else {
            return;
        };
        // SAFETY: the application's begin info.
        if let Some(i) = unsafe { info.as_ref() } {
            begin_render_pass(
                &dev,
                cb,
                RenderPassBegin {
                    kind: Kind::RenderPass,
                    command: COMMAND,
                    area: i.render_area,
                    secondary_contents: contents == vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
                    subpasses: subpasses(&dev, i.render_pass),
                    split: false,
                },
            );
        }
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info, contents) };
    })
}

/// `vkCmdBeginRenderPass2` and its KHR form.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRenderPass2`.
unsafe fn begin_render_pass2(
    cb: vk::CommandBuffer,
    info: *const vk::RenderPassBeginInfo<'_>,
    subpass: *const vk::SubpassBeginInfo<'_>,
    command: &'static str,
    khr: bool,
) {
    boundary::entry(command, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let next = if khr {
            dev.table.cmd_begin_render_pass2_khr
        } else {
            dev.table.cmd_begin_render_pass2
        };
        let Some(next) = next else {
            return;
        };
        // SAFETY: the application's begin infos.
        if let (Some(i), Some(s)) = unsafe { (info.as_ref(), subpass.as_ref()) } {
            begin_render_pass(
                &dev,
                cb,
                RenderPassBegin {
                    kind: Kind::RenderPass,
                    command,
                    area: i.render_area,
                    secondary_contents: s.contents
                        == vk::SubpassContents::SECONDARY_COMMAND_BUFFERS,
                    subpasses: subpasses(&dev, i.render_pass),
                    split: false,
                },
            );
        }
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info, subpass) };
    })
}

/// The layer's `vkCmdBeginRenderPass2`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRenderPass2`.
pub(crate) unsafe extern "system" fn cmd_begin_render_pass2(
    cb: vk::CommandBuffer,
    info: *const vk::RenderPassBeginInfo<'_>,
    subpass: *const vk::SubpassBeginInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { begin_render_pass2(cb, info, subpass, "vkCmdBeginRenderPass2", false) }
}

/// The layer's `vkCmdBeginRenderPass2KHR`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRenderPass2KHR`.
pub(crate) unsafe extern "system" fn cmd_begin_render_pass2_khr(
    cb: vk::CommandBuffer,
    info: *const vk::RenderPassBeginInfo<'_>,
    subpass: *const vk::SubpassBeginInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { begin_render_pass2(cb, info, subpass, "vkCmdBeginRenderPass2KHR", true) }
}

/// The layer's `vkCmdEndRenderPass`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRenderPass`.
pub(crate) unsafe extern "system" fn cmd_end_render_pass(cb: vk::CommandBuffer) {
    const COMMAND: &str = "vkCmdEndRenderPass";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_end_render_pass else {
            return;
        };
        // SAFETY: the application's argument, passed on.
        unsafe { next(cb) };
        end_render_pass(&dev, cb, COMMAND);
    })
}

/// `vkCmdEndRenderPass2` and its KHR form.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRenderPass2`.
unsafe fn end_render_pass2(
    cb: vk::CommandBuffer,
    info: *const vk::SubpassEndInfo<'_>,
    command: &'static str,
    khr: bool,
) {
    boundary::entry(command, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let next = if khr {
            dev.table.cmd_end_render_pass2_khr
        } else {
            dev.table.cmd_end_render_pass2
        };
        let Some(next) = next else {
            return;
        };
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info) };
        end_render_pass(&dev, cb, command);
    })
}

/// The layer's `vkCmdEndRenderPass2`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRenderPass2`.
pub(crate) unsafe extern "system" fn cmd_end_render_pass2(
    cb: vk::CommandBuffer,
    info: *const vk::SubpassEndInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { end_render_pass2(cb, info, "vkCmdEndRenderPass2", false) }
}

/// The layer's `vkCmdEndRenderPass2KHR`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRenderPass2KHR`.
pub(crate) unsafe extern "system" fn cmd_end_render_pass2_khr(
    cb: vk::CommandBuffer,
    info: *const vk::SubpassEndInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { end_render_pass2(cb, info, "vkCmdEndRenderPass2KHR", true) }
}

/// `vkCmdBeginRendering` and its KHR form.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRendering`.
unsafe fn begin_rendering(
    cb: vk::CommandBuffer,
    info: *const vk::RenderingInfo<'_>,
    command: &'static str,
    khr: bool,
) {
    boundary::entry(command, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let next = if khr {
            dev.table.cmd_begin_rendering_khr
        } else {
            dev.table.cmd_begin_rendering
        };
        let Some(next) = next else {
            return;
        };
        // SAFETY: the application's rendering info.
        if let Some(i) = unsafe { info.as_ref() } {
            begin_render_pass(
                &dev,
                cb,
                RenderPassBegin {
                    kind: Kind::Rendering,
                    command,
                    area: i.render_area,
                    secondary_contents: i
                        .flags
                        .contains(vk::RenderingFlags::CONTENTS_SECONDARY_COMMAND_BUFFERS),
                    subpasses: Some(1),
                    split: i
                        .flags
                        .intersects(vk::RenderingFlags::SUSPENDING | vk::RenderingFlags::RESUMING),
                },
            );
        }
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info) };
    })
}

/// The layer's `vkCmdBeginRendering`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRendering`.
pub(crate) unsafe extern "system" fn cmd_begin_rendering(
    cb: vk::CommandBuffer,
    info: *const vk::RenderingInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { begin_rendering(cb, info, "vkCmdBeginRendering", false) }
}

/// The layer's `vkCmdBeginRenderingKHR`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginRenderingKHR`.
pub(crate) unsafe extern "system" fn cmd_begin_rendering_khr(
    cb: vk::CommandBuffer,
    info: *const vk::RenderingInfo<'_>,
) {
    // SAFETY: the caller's arguments.
    unsafe { begin_rendering(cb, info, "vkCmdBeginRenderingKHR", true) }
}

/// `vkCmdEndRendering` and its KHR form.
fn end_rendering(cb: vk::CommandBuffer, command: &'static str, khr: bool) {
    boundary::entry(command, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let next = if khr {
            dev.table.cmd_end_rendering_khr
        } else {
            dev.table.cmd_end_rendering
        };
        let Some(next) = next else {
            return;
        };
        // SAFETY: the application's argument, passed on.
        unsafe { next(cb) };
        end_render_pass(&dev, cb, command);
    })
}

/// The layer's `vkCmdEndRendering`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRendering`.
pub(crate) unsafe extern "system" fn cmd_end_rendering(cb: vk::CommandBuffer) {
    end_rendering(cb, "vkCmdEndRendering", false)
}

/// The layer's `vkCmdEndRenderingKHR`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndRenderingKHR`.
pub(crate) unsafe extern "system" fn cmd_end_rendering_khr(cb: vk::CommandBuffer) {
    end_rendering(cb, "vkCmdEndRenderingKHR", true)
}

/// A workload command outside render passes: timestamps (and, for a dispatch, a pipeline-statistics
/// query) around the application's command.
macro_rules! workload_command {
    ($name:ident, $field:ident, $command:literal, $kind:expr, ($($arg:ident: $ty:ty),*)) => {
        #[doc = concat!("The layer's `", $command, "`: a workload.")]
        ///
        /// # Safety
        ///
        #[doc = concat!("Called with the arguments of `", $command, "`.")]
        pub(crate) unsafe extern "system" fn $name(cb: vk::CommandBuffer, $($arg: $ty),*) {
            boundary::entry($command, (), || {
                // SAFETY: a live command buffer.
                let Some(dev) = (unsafe { registry::device(cb) }) else {
                    return;
                };
                let Some(next) = dev.table.$field else {
                    return;
                };
                let opened = boundary::work(Feature::Workloads, $command, || {
                    with_builder(&dev, cb, |b| b.begin_work(&dev, cb, $kind, $command))
                })
                .flatten()
                .unwrap_or(false);
                // SAFETY: the application's arguments, passed on.
                unsafe { next(cb, $($arg),*) };
                if opened {
                    boundary::work(Feature::Workloads, $command, || {
                        with_builder(&dev, cb, |b| b.end_work(&dev, cb))
                    });
                }
            })
        }
    };
}

workload_command!(cmd_dispatch, cmd_dispatch, "vkCmdDispatch", Kind::Dispatch, (x: u32, y: u32, z: u32));
workload_command!(cmd_dispatch_indirect, cmd_dispatch_indirect, "vkCmdDispatchIndirect", Kind::Dispatch,
    (buffer: vk::Buffer, offset: vk::DeviceSize));
workload_command!(cmd_dispatch_base, cmd_dispatch_base, "vkCmdDispatchBase", Kind::Dispatch,
    (bx: u32, by: u32, bz: u32, x: u32, y: u32, z: u32));
workload_command!(cmd_dispatch_base_khr, cmd_dispatch_base_khr, "vkCmdDispatchBaseKHR", Kind::Dispatch,
    (bx: u32, by: u32, bz: u32, x: u32, y: u32, z: u32));
workload_command!(cmd_copy_buffer, cmd_copy_buffer, "vkCmdCopyBuffer", Kind::Copy,
    (src: vk::Buffer, dst: vk::Buffer, n: u32, regions: *const vk::BufferCopy));
workload_command!(cmd_copy_image, cmd_copy_image, "vkCmdCopyImage", Kind::Copy,
    (src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, n: u32,
     regions: *const vk::ImageCopy));
workload_command!(cmd_copy_buffer_to_image, cmd_copy_buffer_to_image, "vkCmdCopyBufferToImage", Kind::Copy,
    (src: vk::Buffer, dst: vk::Image, layout: vk::ImageLayout, n: u32, regions: *const vk::BufferImageCopy));
workload_command!(cmd_copy_image_to_buffer, cmd_copy_image_to_buffer, "vkCmdCopyImageToBuffer", Kind::Copy,
    (src: vk::Image, layout: vk::ImageLayout, dst: vk::Buffer, n: u32, regions: *const vk::BufferImageCopy));
workload_command!(cmd_copy_buffer2, cmd_copy_buffer2, "vkCmdCopyBuffer2", Kind::Copy,
    (info: *const vk::CopyBufferInfo2<'_>));
workload_command!(cmd_copy_buffer2_khr, cmd_copy_buffer2_khr, "vkCmdCopyBuffer2KHR", Kind::Copy,
    (info: *const vk::CopyBufferInfo2<'_>));
workload_command!(cmd_copy_image2, cmd_copy_image2, "vkCmdCopyImage2", Kind::Copy,
    (info: *const vk::CopyImageInfo2<'_>));
workload_command!(cmd_copy_image2_khr, cmd_copy_image2_khr, "vkCmdCopyImage2KHR", Kind::Copy,
    (info: *const vk::CopyImageInfo2<'_>));
workload_command!(cmd_copy_buffer_to_image2, cmd_copy_buffer_to_image2, "vkCmdCopyBufferToImage2", Kind::Copy,
    (info: *const vk::CopyBufferToImageInfo2<'_>));
workload_command!(cmd_copy_buffer_to_image2_khr, cmd_copy_buffer_to_image2_khr, "vkCmdCopyBufferToImage2KHR",
    Kind::Copy, (info: *const vk::CopyBufferToImageInfo2<'_>));
workload_command!(cmd_copy_image_to_buffer2, cmd_copy_image_to_buffer2, "vkCmdCopyImageToBuffer2", Kind::Copy,
    (info: *const vk::CopyImageToBufferInfo2<'_>));
workload_command!(cmd_copy_image_to_buffer2_khr, cmd_copy_image_to_buffer2_khr, "vkCmdCopyImageToBuffer2KHR",
    Kind::Copy, (info: *const vk::CopyImageToBufferInfo2<'_>));
workload_command!(cmd_fill_buffer, cmd_fill_buffer, "vkCmdFillBuffer", Kind::Copy,
    (dst: vk::Buffer, offset: vk::DeviceSize, size: vk::DeviceSize, data: u32));
workload_command!(cmd_update_buffer, cmd_update_buffer, "vkCmdUpdateBuffer", Kind::Copy,
    (dst: vk::Buffer, offset: vk::DeviceSize, size: vk::DeviceSize, data: *const std::ffi::c_void));
workload_command!(cmd_blit_image, cmd_blit_image, "vkCmdBlitImage", Kind::Blit,
    (src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, n: u32,
     regions: *const vk::ImageBlit, filter: vk::Filter));
workload_command!(cmd_blit_image2, cmd_blit_image2, "vkCmdBlitImage2", Kind::Blit,
    (info: *const vk::BlitImageInfo2<'_>));
workload_command!(cmd_blit_image2_khr, cmd_blit_image2_khr, "vkCmdBlitImage2KHR", Kind::Blit,
    (info: *const vk::BlitImageInfo2<'_>));
workload_command!(cmd_resolve_image, cmd_resolve_image, "vkCmdResolveImage", Kind::Resolve,
    (src: vk::Image, src_layout: vk::ImageLayout, dst: vk::Image, dst_layout: vk::ImageLayout, n: u32,
     regions: *const vk::ImageResolve));
workload_command!(cmd_resolve_image2, cmd_resolve_image2, "vkCmdResolveImage2", Kind::Resolve,
    (info: *const vk::ResolveImageInfo2<'_>));
workload_command!(cmd_resolve_image2_khr, cmd_resolve_image2_khr, "vkCmdResolveImage2KHR", Kind::Resolve,
    (info: *const vk::ResolveImageInfo2<'_>));
workload_command!(cmd_clear_color_image, cmd_clear_color_image, "vkCmdClearColorImage", Kind::Clear,
    (image: vk::Image, layout: vk::ImageLayout, color: *const vk::ClearColorValue, n: u32,
     ranges: *const vk::ImageSubresourceRange));
workload_command!(cmd_clear_depth_stencil_image, cmd_clear_depth_stencil_image, "vkCmdClearDepthStencilImage",
    Kind::Clear, (image: vk::Image, layout: vk::ImageLayout, value: *const vk::ClearDepthStencilValue, n: u32,
     ranges: *const vk::ImageSubresourceRange));

/// A draw command: counted in the render pass open (or, in a secondary command buffer continuing one,
/// in the render pass that executes it).
macro_rules! draw_command {
    ($name:ident, $field:ident, $command:literal, ($($arg:ident: $ty:ty),*)) => {
        #[doc = concat!("The layer's `", $command, "`: a draw.")]
        ///
        /// # Safety
        ///
        #[doc = concat!("Called with the arguments of `", $command, "`.")]
        pub(crate) unsafe extern "system" fn $name(cb: vk::CommandBuffer, $($arg: $ty),*) {
            boundary::entry($command, (), || {
                // SAFETY: a live command buffer.
                let Some(dev) = (unsafe { registry::device(cb) }) else {
                    return;
                };
                let Some(next) = dev.table.$field else {
                    return;
                };
                boundary::work(Feature::Workloads, $command, || {
                    with_builder_locked(&dev, cb, |b| b.draw())
                });
                // SAFETY: the application's arguments, passed on.
                unsafe { next(cb, $($arg),*) };
            })
        }
    };
}

draw_command!(cmd_draw, cmd_draw, "vkCmdDraw", (vertices: u32, instances: u32, first: u32, first_instance: u32));
draw_command!(cmd_draw_indexed, cmd_draw_indexed, "vkCmdDrawIndexed",
    (indices: u32, instances: u32, first: u32, offset: i32, first_instance: u32));
draw_command!(cmd_draw_indirect, cmd_draw_indirect, "vkCmdDrawIndirect",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count: u32, stride: u32));
draw_command!(cmd_draw_indexed_indirect, cmd_draw_indexed_indirect, "vkCmdDrawIndexedIndirect",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count: u32, stride: u32));
draw_command!(cmd_draw_indirect_count, cmd_draw_indirect_count, "vkCmdDrawIndirectCount",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count_buffer: vk::Buffer, count_offset: vk::DeviceSize,
     max: u32, stride: u32));
draw_command!(cmd_draw_indirect_count_khr, cmd_draw_indirect_count_khr, "vkCmdDrawIndirectCountKHR",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count_buffer: vk::Buffer, count_offset: vk::DeviceSize,
     max: u32, stride: u32));
draw_command!(cmd_draw_indexed_indirect_count, cmd_draw_indexed_indirect_count, "vkCmdDrawIndexedIndirectCount",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count_buffer: vk::Buffer, count_offset: vk::DeviceSize,
     max: u32, stride: u32));
draw_command!(cmd_draw_indexed_indirect_count_khr, cmd_draw_indexed_indirect_count_khr,
    "vkCmdDrawIndexedIndirectCountKHR",
    (buffer: vk::Buffer, offset: vk::DeviceSize, count_buffer: vk::Buffer, count_offset: vk::DeviceSize,
     max: u32, stride: u32));

/// The layer's `vkCmdClearAttachments`: counted in the render pass open.
///
/// # Safety
///
/// Called with the arguments of `vkCmdClearAttachments`.
pub(crate) unsafe extern "system" fn cmd_clear_attachments(
    cb: vk::CommandBuffer,
    n: u32,
    attachments: *const vk::ClearAttachment,
    rects: u32,
    rect: *const vk::ClearRect,
) {
    const COMMAND: &str = "vkCmdClearAttachments";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_clear_attachments else {
            return;
        };
        boundary::work(Feature::Workloads, COMMAND, || {
            with_builder_locked(&dev, cb, |b| b.clear_attachments())
        });
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, n, attachments, rects, rect) };
    })
}

/// The layer's `vkCmdExecuteCommands`: the secondaries' recordings join the primary's.
///
/// # Safety
///
/// Called with the arguments of `vkCmdExecuteCommands`.
pub(crate) unsafe extern "system" fn cmd_execute_commands(
    cb: vk::CommandBuffer,
    n: u32,
    buffers: *const vk::CommandBuffer,
) {
    const COMMAND: &str = "vkCmdExecuteCommands";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_execute_commands else {
            return;
        };
        boundary::work(Feature::Workloads, COMMAND, || {
            if buffers.is_null() {
                return;
            }
            // SAFETY: the application's array of `n` secondary command buffers.
            let secondaries = unsafe { std::slice::from_raw_parts(buffers, n as usize) };
            let recordings = secondaries
                .iter()
                .filter_map(|s| recording(&dev, *s))
                .collect();
            with_builder_locked(&dev, cb, |b| b.execute(recordings));
        });
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, n, buffers) };
    })
}

/// Opens a debug label named `name` in `cb`'s recording.
fn push_label(device: &Device, cb: vk::CommandBuffer, name: *const c_char, command: &'static str) {
    boundary::work(Feature::Workloads, command, || {
        // SAFETY: the application's NUL-terminated label or null.
        let label = unsafe { text(name) };
        with_builder_locked(device, cb, |b| b.push_label(label));
    });
}

/// Closes the innermost debug label of `cb`'s recording.
fn pop_label(device: &Device, cb: vk::CommandBuffer, command: &'static str) {
    boundary::work(Feature::Workloads, command, || {
        with_builder_locked(device, cb, |b| b.pop_label())
    });
}

/// The layer's `vkCmdBeginDebugUtilsLabelEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginDebugUtilsLabelEXT`.
pub(crate) unsafe extern "system" fn cmd_begin_debug_utils_label_ext(
    cb: vk::CommandBuffer,
    info: *const vk::DebugUtilsLabelEXT<'_>,
) {
    const COMMAND: &str = "vkCmdBeginDebugUtilsLabelEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_begin_debug_utils_label_ext else {
            return;
        };
        // SAFETY: the application's label.
        if let Some(i) = unsafe { info.as_ref() } {
            push_label(&dev, cb, i.p_label_name, COMMAND);
        }
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info) };
    })
}

/// The layer's `vkCmdEndDebugUtilsLabelEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndDebugUtilsLabelEXT`.
pub(crate) unsafe extern "system" fn cmd_end_debug_utils_label_ext(cb: vk::CommandBuffer) {
    const COMMAND: &str = "vkCmdEndDebugUtilsLabelEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_end_debug_utils_label_ext else {
            return;
        };
        pop_label(&dev, cb, COMMAND);
        // SAFETY: the application's argument, passed on.
        unsafe { next(cb) };
    })
}

/// The layer's `vkCmdDebugMarkerBeginEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdDebugMarkerBeginEXT`.
pub(crate) unsafe extern "system" fn cmd_debug_marker_begin_ext(
    cb: vk::CommandBuffer,
    info: *const vk::DebugMarkerMarkerInfoEXT<'_>,
) {
    const COMMAND: &str = "vkCmdDebugMarkerBeginEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_debug_marker_begin_ext else {
            return;
        };
        // SAFETY: the application's marker.
        if let Some(i) = unsafe { info.as_ref() } {
            push_label(&dev, cb, i.p_marker_name, COMMAND);
        }
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, info) };
    })
}

/// The layer's `vkCmdDebugMarkerEndEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdDebugMarkerEndEXT`.
pub(crate) unsafe extern "system" fn cmd_debug_marker_end_ext(cb: vk::CommandBuffer) {
    const COMMAND: &str = "vkCmdDebugMarkerEndEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_debug_marker_end_ext else {
            return;
        };
        pop_label(&dev, cb, COMMAND);
        // SAFETY: the application's argument, passed on.
        unsafe { next(cb) };
    })
}

/// The application's query of `pool` opens or closes in `cb`.
fn app_query(
    device: &Device,
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    open: bool,
    command: &'static str,
) {
    boundary::work(Feature::Workloads, command, || {
        let query_type = device
            .query_pools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&pool.as_raw())
            .copied();
        if let Some(t) = query_type {
            with_builder_locked(device, cb, |b| b.app_query(t, open));
        }
    });
}

/// The layer's `vkCmdBeginQuery`: the application's open queries are counted, so the layer opens none
/// of the same type beside them.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginQuery`.
pub(crate) unsafe extern "system" fn cmd_begin_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    flags: vk::QueryControlFlags,
) {
    const COMMAND: &str = "vkCmdBeginQuery";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_begin_query else {
            return;
        };
        app_query(&dev, cb, pool, true, COMMAND);
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, pool, query, flags) };
    })
}

/// The layer's `vkCmdEndQuery`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndQuery`.
pub(crate) unsafe extern "system" fn cmd_end_query(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
) {
    const COMMAND: &str = "vkCmdEndQuery";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_end_query else {
            return;
        };
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, pool, query) };
        app_query(&dev, cb, pool, false, COMMAND);
    })
}

/// The layer's `vkCmdBeginQueryIndexedEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdBeginQueryIndexedEXT`.
pub(crate) unsafe extern "system" fn cmd_begin_query_indexed_ext(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    flags: vk::QueryControlFlags,
    index: u32,
) {
    const COMMAND: &str = "vkCmdBeginQueryIndexedEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_begin_query_indexed_ext else {
            return;
        };
        app_query(&dev, cb, pool, true, COMMAND);
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, pool, query, flags, index) };
    })
}

/// The layer's `vkCmdEndQueryIndexedEXT`.
///
/// # Safety
///
/// Called with the arguments of `vkCmdEndQueryIndexedEXT`.
pub(crate) unsafe extern "system" fn cmd_end_query_indexed_ext(
    cb: vk::CommandBuffer,
    pool: vk::QueryPool,
    query: u32,
    index: u32,
) {
    const COMMAND: &str = "vkCmdEndQueryIndexedEXT";
    boundary::entry(COMMAND, (), || {
        // SAFETY: a live command buffer.
        let Some(dev) = (unsafe { registry::device(cb) }) else {
            return;
        };
        let Some(next) = dev.table.cmd_end_query_indexed_ext else {
            return;
        };
        // SAFETY: the application's arguments, passed on.
        unsafe { next(cb, pool, query, index) };
        app_query(&dev, cb, pool, false, COMMAND);
    })
}
