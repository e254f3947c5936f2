//! `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`: the layer's commands by name, for those the next
//! layer has; every other name is the next layer's own answer.

use std::ffi::{c_char, CStr};

use ash::vk;

use crate::boundary;
use crate::{command_buffer, commands, device, instance, objects, present, registry, submit};

/// When the layer intercepts a device command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// Always: the layer's bookkeeping needs it.
    Always,
    /// Only when queries are recorded around workloads (`LIZARD_VK_QUERIES` not `none`).
    Workloads,
}

/// `f`, a command of the layer's, as the loader's void function pointer.
macro_rules! void {
    ($f:expr) => {{
        let f: *const () = $f as *const ();
        // SAFETY: `f` is an `extern "system"` function of the layer with the command's signature; callers
        // cast it back to that signature before calling it, as the Vulkan loader does.
        Some(unsafe { std::mem::transmute::<*const (), unsafe extern "system" fn()>(f) })
    }};
}

/// The layer's global and instance commands.
fn instance_command(name: &[u8]) -> vk::PFN_vkVoidFunction {
    match name {
        b"vkGetInstanceProcAddr" => void!(get_instance_proc_addr),
        b"vkGetDeviceProcAddr" => void!(get_device_proc_addr),
        b"vkCreateInstance" => void!(instance::create_instance),
        b"vkDestroyInstance" => void!(instance::destroy_instance),
        b"vkCreateDevice" => void!(device::create_device),
        b"vkEnumerateDeviceExtensionProperties" => {
            void!(instance::enumerate_device_extension_properties)
        }
        _ => None,
    }
}

/// The layer's device commands, and when it intercepts each.
fn device_command(name: &[u8]) -> Option<(vk::PFN_vkVoidFunction, Group)> {
    use Group::{Always, Workloads};
    Some(match name {
        b"vkGetDeviceProcAddr" => (void!(get_device_proc_addr), Always),
        b"vkDestroyDevice" => (void!(device::destroy_device), Always),
        b"vkGetDeviceQueue" => (void!(device::get_device_queue), Always),
        b"vkGetDeviceQueue2" => (void!(device::get_device_queue2), Always),
        b"vkCreateCommandPool" => (void!(command_buffer::create_command_pool), Always),
        b"vkDestroyCommandPool" => (void!(command_buffer::destroy_command_pool), Always),
        b"vkResetCommandPool" => (void!(command_buffer::reset_command_pool), Always),
        b"vkAllocateCommandBuffers" => (void!(command_buffer::allocate_command_buffers), Always),
        b"vkFreeCommandBuffers" => (void!(command_buffer::free_command_buffers), Always),
        b"vkBeginCommandBuffer" => (void!(command_buffer::begin_command_buffer), Always),
        b"vkEndCommandBuffer" => (void!(command_buffer::end_command_buffer), Always),
        b"vkResetCommandBuffer" => (void!(command_buffer::reset_command_buffer), Always),
        b"vkCreateRenderPass" => (void!(objects::create_render_pass), Always),
        b"vkCreateRenderPass2" => (void!(objects::create_render_pass2_core), Always),
        b"vkCreateRenderPass2KHR" => (void!(objects::create_render_pass2_khr), Always),
        b"vkDestroyRenderPass" => (void!(objects::destroy_render_pass), Always),
        b"vkCreateQueryPool" => (void!(objects::create_query_pool), Always),
        b"vkDestroyQueryPool" => (void!(objects::destroy_query_pool), Always),
        b"vkQueueSubmit" => (void!(submit::queue_submit), Always),
        b"vkQueueSubmit2" => (void!(submit::queue_submit2), Always),
        b"vkQueueSubmit2KHR" => (void!(submit::queue_submit2_khr), Always),
        b"vkQueuePresentKHR" => (void!(present::queue_present_khr), Always),
        b"vkCmdBeginRenderPass" => (void!(commands::cmd_begin_render_pass), Workloads),
        b"vkCmdBeginRenderPass2" => (void!(commands::cmd_begin_render_pass2), Workloads),
        b"vkCmdBeginRenderPass2KHR" => (void!(commands::cmd_begin_render_pass2_khr), Workloads),
        b"vkCmdEndRenderPass" => (void!(commands::cmd_end_render_pass), Workloads),
        b"vkCmdEndRenderPass2" => (void!(commands::cmd_end_render_pass2), Workloads),
        b"vkCmdEndRenderPass2KHR" => (void!(commands::cmd_end_render_pass2_khr), Workloads),
        b"vkCmdBeginRendering" => (void!(commands::cmd_begin_rendering), Workloads),
        b"vkCmdBeginRenderingKHR" => (void!(commands::cmd_begin_rendering_khr), Workloads),
        b"vkCmdEndRendering" => (void!(commands::cmd_end_rendering), Workloads),
        b"vkCmdEndRenderingKHR" => (void!(commands::cmd_end_rendering_khr), Workloads),
        b"vkCmdDraw" => (void!(commands::cmd_draw), Workloads),
        b"vkCmdDrawIndexed" => (void!(commands::cmd_draw_indexed), Workloads),
        b"vkCmdDrawIndirect" => (void!(commands::cmd_draw_indirect), Workloads),
        b"vkCmdDrawIndexedIndirect" => (void!(commands::cmd_draw_indexed_indirect), Workloads),
        b"vkCmdDrawIndirectCount" => (void!(commands::cmd_draw_indirect_count), Workloads),
        b"vkCmdDrawIndirectCountKHR" => (void!(commands::cmd_draw_indirect_count_khr), Workloads),
        b"vkCmdDrawIndexedIndirectCount" => {
            (void!(commands::cmd_draw_indexed_indirect_count), Workloads)
        }
        b"vkCmdDrawIndexedIndirectCountKHR" => (
            void!(commands::cmd_draw_indexed_indirect_count_khr),
            Workloads,
        ),
        b"vkCmdDispatch" => (void!(commands::cmd_dispatch), Workloads),
        b"vkCmdDispatchIndirect" => (void!(commands::cmd_dispatch_indirect), Workloads),
        b"vkCmdDispatchBase" => (void!(commands::cmd_dispatch_base), Workloads),
        b"vkCmdDispatchBaseKHR" => (void!(commands::cmd_dispatch_base_khr), Workloads),
        b"vkCmdCopyBuffer" => (void!(commands::cmd_copy_buffer), Workloads),
        b"vkCmdCopyImage" => (void!(commands::cmd_copy_image), Workloads),
        b"vkCmdCopyBufferToImage" => (void!(commands::cmd_copy_buffer_to_image), Workloads),
        b"vkCmdCopyImageToBuffer" => (void!(commands::cmd_copy_image_to_buffer), Workloads),
        b"vkCmdCopyBuffer2" => (void!(commands::cmd_copy_buffer2), Workloads),
        b"vkCmdCopyBuffer2KHR" => (void!(commands::cmd_copy_buffer2_khr), Workloads),
        b"vkCmdCopyImage2" => (void!(commands::cmd_copy_image2), Workloads),
        b"vkCmdCopyImage2KHR" => (void!(commands::cmd_copy_image2_khr), Workloads),
        b"vkCmdCopyBufferToImage2" => (void!(commands::cmd_copy_buffer_to_image2), Workloads),
        b"vkCmdCopyBufferToImage2KHR" => {
            (void!(commands::cmd_copy_buffer_to_image2_khr), Workloads)
        }
        b"vkCmdCopyImageToBuffer2" => (void!(commands::cmd_copy_image_to_buffer2), Workloads),
        b"vkCmdCopyImageToBuffer2KHR" => {
            (void!(commands::cmd_copy_image_to_buffer2_khr), Workloads)
        }
        b"vkCmdFillBuffer" => (void!(commands::cmd_fill_buffer), Workloads),
        b"vkCmdUpdateBuffer" => (void!(commands::cmd_update_buffer), Workloads),
        b"vkCmdBlitImage" => (void!(commands::cmd_blit_image), Workloads),
        b"vkCmdBlitImage2" => (void!(commands::cmd_blit_image2), Workloads),
        b"vkCmdBlitImage2KHR" => (void!(commands::cmd_blit_image2_khr), Workloads),
        b"vkCmdResolveImage" => (void!(commands::cmd_resolve_image), Workloads),
        b"vkCmdResolveImage2" => (void!(commands::cmd_resolve_image2), Workloads),
        b"vkCmdResolveImage2KHR" => (void!(commands::cmd_resolve_image2_khr), Workloads),
        b"vkCmdClearColorImage" => (void!(commands::cmd_clear_color_image), Workloads),
        b"vkCmdClearDepthStencilImage" => {
            (void!(commands::cmd_clear_depth_stencil_image), Workloads)
        }
        b"vkCmdClearAttachments" => (void!(commands::cmd_clear_attachments), Workloads),
        b"vkCmdExecuteCommands" => (void!(commands::cmd_execute_commands), Workloads),
        b"vkCmdBeginDebugUtilsLabelEXT" => {
            (void!(commands::cmd_begin_debug_utils_label_ext), Workloads)
        }
        b"vkCmdEndDebugUtilsLabelEXT" => {
            (void!(commands::cmd_end_debug_utils_label_ext), Workloads)
        }
        b"vkCmdDebugMarkerBeginEXT" => (void!(commands::cmd_debug_marker_begin_ext), Workloads),
        b"vkCmdDebugMarkerEndEXT" => (void!(commands::cmd_debug_marker_end_ext), Workloads),
        b"vkCmdBeginQuery" => (void!(commands::cmd_begin_query), Workloads),
        b"vkCmdEndQuery" => (void!(commands::cmd_end_query), Workloads),
        b"vkCmdBeginQueryIndexedEXT" => (void!(commands::cmd_begin_query_indexed_ext), Workloads),
        b"vkCmdEndQueryIndexedEXT" => (void!(commands::cmd_end_query_indexed_ext), Workloads),
        _ => return None,
    })
}

/// The layer's `vkGetInstanceProcAddr`.
///
/// # Safety
///
/// Called with the arguments of `vkGetInstanceProcAddr`.
pub(crate) unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    boundary::entry("vkGetInstanceProcAddr", None, || {
        if name.is_null() {
            return None;
        }
        // SAFETY: the application's NUL-terminated name.
        let name_c = unsafe { CStr::from_ptr(name) };
        let bytes = name_c.to_bytes();
        if let found @ Some(_) = instance_command(bytes) {
            return found;
        }
        // SAFETY: a live instance or null.
        let ours = unsafe { registry::instance(instance) }?;
        // SAFETY: the next layer's vkGetInstanceProcAddr for this instance.
        let next = unsafe { (ours.next_get_instance_proc_addr)(instance, name) };
        if let Some((f, group)) = device_command(bytes) {
            let queries = ours
                .session
                .as_ref()
                .is_some_and(|s| s.config.queries.any());
            if next.is_some() && (group == Group::Always || queries) {
                return f;
            }
        }
        next
    })
}

/// The layer's `vkGetDeviceProcAddr`.
///
/// # Safety
///
/// Called with the arguments of `vkGetDeviceProcAddr`.
pub(crate) unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    boundary::entry("vkGetDeviceProcAddr", None, || {
        if name.is_null() {
            return None;
        }
        // SAFETY: a live device.
        let ours = unsafe { registry::device(device) }?;
        // SAFETY: the next layer's vkGetDeviceProcAddr for this device.
        let next = unsafe { (ours.next_get_device_proc_addr)(device, name) };
        // SAFETY: the application's NUL-terminated name.
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
        if let Some((f, group)) = device_command(bytes) {
            if next.is_some() && (group == Group::Always || ours.session.config.queries.any()) {
                return f;
            }
        }
        next
    })
}
