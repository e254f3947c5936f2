//! Dispatch tables: the next layer's (or the driver's) commands, loaded by name through its
//! `vkGet*ProcAddr`. A command the next one does not give is `None`, never a stand-in that panics.

use std::ffi::CStr;

use ash::vk;

/// Declares a table struct of `Option<PFN>` fields and its `load`.
macro_rules! table {
    ($(#[$meta:meta])* $table:ident { $($field:ident: $pfn:ident = $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy)]
        pub(crate) struct $table {
            $(pub $field: Option<vk::$pfn>,)*
        }

        impl $table {
            /// Loads every command through `load`, which gives a command's address or null.
            ///
            /// # Safety
            ///
            /// `load` returns, for each name, null or the address of the command of that name (a
            /// `vkGet*ProcAddr` of the chain does).
            pub(crate) unsafe fn load(mut load: impl FnMut(&CStr) -> vk::PFN_vkVoidFunction) -> Self {
                $table {
                    $($field: load($name).map(|f| {
                        // SAFETY: the address is that of the command named `$name`, whose type is `$pfn`
                        // (the caller's contract); both are `extern "system"` function pointers.
                        unsafe { std::mem::transmute::<unsafe extern "system" fn(), vk::$pfn>(f) }
                    }),)*
                }
            }
        }

        impl std::fmt::Debug for $table {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($table))
                    $(.field(stringify!($field), &self.$field.is_some()))*
                    .finish()
            }
        }
    };
}

table! {
    /// An instance's commands, of the next layer.
    InstanceTable {
        destroy_instance: PFN_vkDestroyInstance = c"vkDestroyInstance",
        get_physical_device_properties: PFN_vkGetPhysicalDeviceProperties = c"vkGetPhysicalDeviceProperties",
        get_physical_device_queue_family_properties: PFN_vkGetPhysicalDeviceQueueFamilyProperties =
            c"vkGetPhysicalDeviceQueueFamilyProperties",
        get_physical_device_features: PFN_vkGetPhysicalDeviceFeatures = c"vkGetPhysicalDeviceFeatures",
        get_physical_device_memory_properties: PFN_vkGetPhysicalDeviceMemoryProperties =
            c"vkGetPhysicalDeviceMemoryProperties",
        enumerate_device_extension_properties: PFN_vkEnumerateDeviceExtensionProperties =
            c"vkEnumerateDeviceExtensionProperties",
        get_physical_device_calibrateable_time_domains_ext: PFN_vkGetPhysicalDeviceCalibrateableTimeDomainsKHR =
            c"vkGetPhysicalDeviceCalibrateableTimeDomainsEXT",
    }
}

table! {
    /// A device's commands, of the next layer: those the layer intercepts and those it calls itself.
    DeviceTable {
        destroy_device: PFN_vkDestroyDevice = c"vkDestroyDevice",
        get_device_queue: PFN_vkGetDeviceQueue = c"vkGetDeviceQueue",
        get_device_queue2: PFN_vkGetDeviceQueue2 = c"vkGetDeviceQueue2",
        create_command_pool: PFN_vkCreateCommandPool = c"vkCreateCommandPool",
        destroy_command_pool: PFN_vkDestroyCommandPool = c"vkDestroyCommandPool",
        reset_command_pool: PFN_vkResetCommandPool = c"vkResetCommandPool",
        allocate_command_buffers: PFN_vkAllocateCommandBuffers = c"vkAllocateCommandBuffers",
        free_command_buffers: PFN_vkFreeCommandBuffers = c"vkFreeCommandBuffers",
        begin_command_buffer: PFN_vkBeginCommandBuffer = c"vkBeginCommandBuffer",
        end_command_buffer: PFN_vkEndCommandBuffer = c"vkEndCommandBuffer",
        reset_command_buffer: PFN_vkResetCommandBuffer = c"vkResetCommandBuffer",
        create_render_pass: PFN_vkCreateRenderPass = c"vkCreateRenderPass",
        create_render_pass2: PFN_vkCreateRenderPass2 = c"vkCreateRenderPass2",
        create_render_pass2_khr: PFN_vkCreateRenderPass2 = c"vkCreateRenderPass2KHR",
        destroy_render_pass: PFN_vkDestroyRenderPass = c"vkDestroyRenderPass",
        create_query_pool: PFN_vkCreateQueryPool = c"vkCreateQueryPool",
        destroy_query_pool: PFN_vkDestroyQueryPool = c"vkDestroyQueryPool",
        cmd_begin_render_pass: PFN_vkCmdBeginRenderPass = c"vkCmdBeginRenderPass",
        cmd_begin_render_pass2: PFN_vkCmdBeginRenderPass2 = c"vkCmdBeginRenderPass2",
        cmd_begin_render_pass2_khr: PFN_vkCmdBeginRenderPass2 = c"vkCmdBeginRenderPass2KHR",
        cmd_next_subpass: PFN_vkCmdNextSubpass = c"vkCmdNextSubpass",
        cmd_next_subpass2: PFN_vkCmdNextSubpass2 = c"vkCmdNextSubpass2",
        cmd_next_subpass2_khr: PFN_vkCmdNextSubpass2 = c"vkCmdNextSubpass2KHR",
        cmd_end_render_pass: PFN_vkCmdEndRenderPass = c"vkCmdEndRenderPass",
        cmd_end_render_pass2: PFN_vkCmdEndRenderPass2 = c"vkCmdEndRenderPass2",
        cmd_end_render_pass2_khr: PFN_vkCmdEndRenderPass2 = c"vkCmdEndRenderPass2KHR",
        cmd_begin_rendering: PFN_vkCmdBeginRendering = c"vkCmdBeginRendering",
        cmd_begin_rendering_khr: PFN_vkCmdBeginRendering = c"vkCmdBeginRenderingKHR",
        cmd_end_rendering: PFN_vkCmdEndRendering = c"vkCmdEndRendering",
        cmd_end_rendering_khr: PFN_vkCmdEndRendering = c"vkCmdEndRenderingKHR",
        cmd_draw: PFN_vkCmdDraw = c"vkCmdDraw",
        cmd_draw_indexed: PFN_vkCmdDrawIndexed = c"vkCmdDrawIndexed",
        cmd_draw_indirect: PFN_vkCmdDrawIndirect = c"vkCmdDrawIndirect",
        cmd_draw_indexed_indirect: PFN_vkCmdDrawIndexedIndirect = c"vkCmdDrawIndexedIndirect",
        cmd_draw_indirect_count: PFN_vkCmdDrawIndirectCount = c"vkCmdDrawIndirectCount",
        cmd_draw_indirect_count_khr: PFN_vkCmdDrawIndirectCount = c"vkCmdDrawIndirectCountKHR",
        cmd_draw_indexed_indirect_count: PFN_vkCmdDrawIndexedIndirectCount =
            c"vkCmdDrawIndexedIndirectCount",
        cmd_draw_indexed_indirect_count_khr: PFN_vkCmdDrawIndexedIndirectCount =
            c"vkCmdDrawIndexedIndirectCountKHR",
        cmd_dispatch: PFN_vkCmdDispatch = c"vkCmdDispatch",
        cmd_dispatch_indirect: PFN_vkCmdDispatchIndirect = c"vkCmdDispatchIndirect",
        cmd_dispatch_base: PFN_vkCmdDispatchBase = c"vkCmdDispatchBase",
        cmd_dispatch_base_khr: PFN_vkCmdDispatchBase = c"vkCmdDispatchBaseKHR",
        cmd_copy_buffer: PFN_vkCmdCopyBuffer = c"vkCmdCopyBuffer",
        cmd_copy_image: PFN_vkCmdCopyImage = c"vkCmdCopyImage",
        cmd_copy_buffer_to_image: PFN_vkCmdCopyBufferToImage = c"vkCmdCopyBufferToImage",
        cmd_copy_image_to_buffer: PFN_vkCmdCopyImageToBuffer = c"vkCmdCopyImageToBuffer",
        cmd_copy_buffer2: PFN_vkCmdCopyBuffer2 = c"vkCmdCopyBuffer2",
        cmd_copy_buffer2_khr: PFN_vkCmdCopyBuffer2 = c"vkCmdCopyBuffer2KHR",
        cmd_copy_image2: PFN_vkCmdCopyImage2 = c"vkCmdCopyImage2",
        cmd_copy_image2_khr: PFN_vkCmdCopyImage2 = c"vkCmdCopyImage2KHR",
        cmd_copy_buffer_to_image2: PFN_vkCmdCopyBufferToImage2 = c"vkCmdCopyBufferToImage2",
        cmd_copy_buffer_to_image2_khr: PFN_vkCmdCopyBufferToImage2 = c"vkCmdCopyBufferToImage2KHR",
        cmd_copy_image_to_buffer2: PFN_vkCmdCopyImageToBuffer2 = c"vkCmdCopyImageToBuffer2",
        cmd_copy_image_to_buffer2_khr: PFN_vkCmdCopyImageToBuffer2 = c"vkCmdCopyImageToBuffer2KHR",
        cmd_fill_buffer: PFN_vkCmdFillBuffer = c"vkCmdFillBuffer",
        cmd_update_buffer: PFN_vkCmdUpdateBuffer = c"vkCmdUpdateBuffer",
        cmd_blit_image: PFN_vkCmdBlitImage = c"vkCmdBlitImage",
        cmd_blit_image2: PFN_vkCmdBlitImage2 = c"vkCmdBlitImage2",
        cmd_blit_image2_khr: PFN_vkCmdBlitImage2 = c"vkCmdBlitImage2KHR",
        cmd_resolve_image: PFN_vkCmdResolveImage = c"vkCmdResolveImage",
        cmd_resolve_image2: PFN_vkCmdResolveImage2 = c"vkCmdResolveImage2",
        cmd_resolve_image2_khr: PFN_vkCmdResolveImage2 = c"vkCmdResolveImage2KHR",
        cmd_clear_color_image: PFN_vkCmdClearColorImage = c"vkCmdClearColorImage",
        cmd_clear_depth_stencil_image: PFN_vkCmdClearDepthStencilImage = c"vkCmdClearDepthStencilImage",
        cmd_clear_attachments: PFN_vkCmdClearAttachments = c"vkCmdClearAttachments",
        cmd_begin_debug_utils_label_ext: PFN_vkCmdBeginDebugUtilsLabelEXT = c"vkCmdBeginDebugUtilsLabelEXT",
        cmd_end_debug_utils_label_ext: PFN_vkCmdEndDebugUtilsLabelEXT = c"vkCmdEndDebugUtilsLabelEXT",
        cmd_debug_marker_begin_ext: PFN_vkCmdDebugMarkerBeginEXT = c"vkCmdDebugMarkerBeginEXT",
        cmd_debug_marker_end_ext: PFN_vkCmdDebugMarkerEndEXT = c"vkCmdDebugMarkerEndEXT",
        cmd_execute_commands: PFN_vkCmdExecuteCommands = c"vkCmdExecuteCommands",
        cmd_begin_query: PFN_vkCmdBeginQuery = c"vkCmdBeginQuery",
        cmd_end_query: PFN_vkCmdEndQuery = c"vkCmdEndQuery",
        cmd_begin_query_indexed_ext: PFN_vkCmdBeginQueryIndexedEXT = c"vkCmdBeginQueryIndexedEXT",
        cmd_end_query_indexed_ext: PFN_vkCmdEndQueryIndexedEXT = c"vkCmdEndQueryIndexedEXT",
        queue_submit: PFN_vkQueueSubmit = c"vkQueueSubmit",
        queue_submit2: PFN_vkQueueSubmit2 = c"vkQueueSubmit2",
        queue_submit2_khr: PFN_vkQueueSubmit2 = c"vkQueueSubmit2KHR",
        queue_present_khr: PFN_vkQueuePresentKHR = c"vkQueuePresentKHR",
        // What the layer calls itself.
        cmd_write_timestamp: PFN_vkCmdWriteTimestamp = c"vkCmdWriteTimestamp",
        cmd_reset_query_pool: PFN_vkCmdResetQueryPool = c"vkCmdResetQueryPool",
        cmd_copy_query_pool_results: PFN_vkCmdCopyQueryPoolResults = c"vkCmdCopyQueryPoolResults",
        cmd_pipeline_barrier: PFN_vkCmdPipelineBarrier = c"vkCmdPipelineBarrier",
        create_fence: PFN_vkCreateFence = c"vkCreateFence",
        destroy_fence: PFN_vkDestroyFence = c"vkDestroyFence",
        wait_for_fences: PFN_vkWaitForFences = c"vkWaitForFences",
        reset_fences: PFN_vkResetFences = c"vkResetFences",
        create_buffer: PFN_vkCreateBuffer = c"vkCreateBuffer",
        destroy_buffer: PFN_vkDestroyBuffer = c"vkDestroyBuffer",
        get_buffer_memory_requirements: PFN_vkGetBufferMemoryRequirements = c"vkGetBufferMemoryRequirements",
        allocate_memory: PFN_vkAllocateMemory = c"vkAllocateMemory",
        free_memory: PFN_vkFreeMemory = c"vkFreeMemory",
        bind_buffer_memory: PFN_vkBindBufferMemory = c"vkBindBufferMemory",
        map_memory: PFN_vkMapMemory = c"vkMapMemory",
        get_calibrated_timestamps_ext: PFN_vkGetCalibratedTimestampsKHR = c"vkGetCalibratedTimestampsEXT",
        // The renderpass mode's trap.
        create_event: PFN_vkCreateEvent = c"vkCreateEvent",
        destroy_event: PFN_vkDestroyEvent = c"vkDestroyEvent",
        get_event_status: PFN_vkGetEventStatus = c"vkGetEventStatus",
        set_event: PFN_vkSetEvent = c"vkSetEvent",
        reset_event: PFN_vkResetEvent = c"vkResetEvent",
        cmd_set_event: PFN_vkCmdSetEvent = c"vkCmdSetEvent",
        cmd_reset_event: PFN_vkCmdResetEvent = c"vkCmdResetEvent",
        cmd_wait_events: PFN_vkCmdWaitEvents = c"vkCmdWaitEvents",
    }
}
