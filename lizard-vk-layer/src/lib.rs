#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

pub mod config;

mod boundary;
mod clock;
mod command_buffer;
mod commands;
mod device;
mod document;
mod error;
mod frame_counters;
mod handle_map;
mod instance;
mod loader;
mod message;
mod objects;
mod pin;
mod present;
mod proc_addr;
mod query_blocks;
mod queue;
mod recorder;
mod registry;
mod render_pass_mode;
mod results;
mod ring;
mod serialise;
mod session;
mod submit;
mod table;
mod trace;
mod trap;
mod worker;
mod workload;

use std::ffi::{c_void, CStr};

use ash::vk;

/// The layer's name, as `VK_INSTANCE_LAYERS` and the manifest give it.
pub const LAYER_NAME: &str = "VK_LAYER_LIZARD_workloads";

/// [`LAYER_NAME`] as a C string.
pub(crate) const LAYER_NAME_C: &CStr = c"VK_LAYER_LIZARD_workloads";

/// The file name of the layer's manifest, in this crate's folder.
pub const MANIFEST: &str = "VkLayer_lizard_workloads.json";

/// The loader's negotiation of the loader–layer interface (the one symbol the layer exports): the layer
/// speaks version 2 and gives its `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`.
///
/// # Safety
///
/// `interface` points to the loader's `VkNegotiateLayerInterface`.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    interface: *mut c_void,
) -> vk::Result {
    boundary::entry(
        "vkNegotiateLoaderLayerInterfaceVersion",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            let interface = interface as *mut loader::NegotiateLayerInterface;
            // SAFETY: the loader's structure (the caller's contract).
            let Some(interface) = (unsafe { interface.as_mut() }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            if interface.s_type != loader::NEGOTIATE_INTERFACE_STRUCT
                || interface.loader_layer_interface_version < loader::INTERFACE_VERSION
            {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            interface.loader_layer_interface_version = loader::INTERFACE_VERSION;
            interface.pfn_get_instance_proc_addr = Some(proc_addr::get_instance_proc_addr);
            interface.pfn_get_device_proc_addr = Some(proc_addr::get_device_proc_addr);
            interface.pfn_get_physical_device_proc_addr = None;
            vk::Result::SUCCESS
        },
    )
}
