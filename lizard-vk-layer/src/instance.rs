//! `vkCreateInstance` and `vkDestroyInstance`: the instance's dispatch table, and the session (settings,
//! trace, worker thread) that lives from the first instance to the last.

use std::ffi::{c_char, CStr};
use std::sync::Arc;

use ash::vk;

use crate::boundary::{self, Feature};
use crate::loader;
use crate::registry;
use crate::session::{self, Session};
use crate::table::InstanceTable;

/// An instance the layer is part of.
#[derive(Debug)]
pub(crate) struct Instance {
    /// The handle.
    pub handle: vk::Instance,
    /// The next layer's instance commands.
    pub table: InstanceTable,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    /// `vkGetPhysicalDeviceProperties2` (or its KHR form) where the instance may call it.
    pub get_physical_device_properties2: Option<vk::PFN_vkGetPhysicalDeviceProperties2>,
    /// The session it belongs to (none when the layer could not start one).
    pub session: Option<Arc<Session>>,
}

/// A C string of the application's, as text (lossy); empty for null.
///
/// # Safety
///
/// `text` is null or a NUL-terminated string.
pub(crate) unsafe fn text(text: *const c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: NUL-terminated (the caller's contract).
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// The layer's `vkCreateInstance`.
///
/// # Safety
///
/// Called by the loader with the arguments of `vkCreateInstance`.
pub(crate) unsafe extern "system" fn create_instance(
    create_info: *const vk::InstanceCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    instance: *mut vk::Instance,
) -> vk::Result {
    boundary::entry(
        "vkCreateInstance",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            if create_info.is_null() || instance.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: the loader's create info, whose chain holds its link structures.
            let link_info = unsafe {
                loader::find_instance_info((*create_info).p_next, loader::LAYER_LINK_INFO)
            };
            if link_info.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: the loader's link structure for this layer (vk_layer.h).
            let link = unsafe { (*link_info).u_layer_info };
            if link.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: as above; the loader links each layer to the next.
            let Some(next_gipa) = (unsafe { (*link).pfn_next_get_instance_proc_addr }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the next layer reads the link after ours, as the interface requires.
            unsafe { (*link_info).u_layer_info = (*link).p_next };
            // SAFETY: the next layer's vkGetInstanceProcAddr with a null instance gives vkCreateInstance.
            let next_create =
                unsafe { next_gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()) };
            let Some(next_create) = next_create else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the address of vkCreateInstance, of that type.
            let next_create: vk::PFN_vkCreateInstance = unsafe { std::mem::transmute(next_create) };
            // SAFETY: the application's arguments, passed on unchanged.
            let result = unsafe { next_create(create_info, allocator, instance) };
            if result != vk::Result::SUCCESS {
                return result;
            }
            // SAFETY: created just now.
            let handle = unsafe { *instance };
            // Always, whatever is off: without it the instance's commands could not be found.
            boundary::always(Feature::Layer, "vkCreateInstance", || {
                // SAFETY: the application's create info, valid for this call.
                let info = unsafe { &*create_info };
                register(handle, next_gipa, info);
            });
            result
        },
    )
}

/// Registers a created instance and joins (or starts) the session.
fn register(
    handle: vk::Instance,
    next_gipa: vk::PFN_vkGetInstanceProcAddr,
    info: &vk::InstanceCreateInfo<'_>,
) {
    let load = |name: &CStr| {
        // SAFETY: `handle` is the instance just created by the next layer.
        unsafe { next_gipa(handle, name.as_ptr()) }
    };
    // SAFETY: `load` gives the next layer's commands by name.
    let table = unsafe { InstanceTable::load(load) };
    // SAFETY: the application's info, valid during vkCreateInstance.
    let app = unsafe { info.p_application_info.as_ref() };
    let api_version = app.map_or(vk::API_VERSION_1_0, |a| a.api_version);
    // SAFETY: as above; a NUL-terminated name or null.
    let app_name = app.map_or(String::new(), |a| unsafe { text(a.p_application_name) });
    let extensions: Vec<String> = (0..info.enabled_extension_count as usize)
        .map(|i| {
            // SAFETY: the application's array of `enabled_extension_count` NUL-terminated names.
            unsafe { text(*info.pp_enabled_extension_names.add(i)) }
        })
        .collect();
    let properties2 =
        if vk::api_version_minor(api_version) >= 1 || vk::api_version_major(api_version) > 1 {
            load(c"vkGetPhysicalDeviceProperties2")
        } else if extensions
            .iter()
            .any(|e| e == "VK_KHR_get_physical_device_properties2")
        {
            load(c"vkGetPhysicalDeviceProperties2KHR")
        } else {
            None
        }
        .map(|f| {
            // SAFETY: the address of vkGetPhysicalDeviceProperties2 (or its identical KHR form).
            unsafe {
                std::mem::transmute::<
                    unsafe extern "system" fn(),
                    vk::PFN_vkGetPhysicalDeviceProperties2,
                >(f)
            }
        });
    let session = session::join(&app_name);
    let instance = Instance {
        handle,
        table,
        next_get_instance_proc_addr: next_gipa,
        get_physical_device_properties2: properties2,
        session,
    };
    // SAFETY: a live instance's handle.
    if let Some(key) = unsafe { registry::key_of(handle) } {
        registry::add_instance(key, Arc::new(instance));
    }
}

/// The layer's `vkDestroyInstance`: the session ends with its last instance (its trace and document are
/// complete, its threads joined) before the instance goes.
///
/// # Safety
///
/// Called with the arguments of `vkDestroyInstance`.
pub(crate) unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    boundary::entry("vkDestroyInstance", (), || {
        // SAFETY: a live instance or null.
        let Some(key) = (unsafe { registry::key_of(instance) }) else {
            return;
        };
        let Some(ours) = registry::remove_instance(key) else {
            return;
        };
        if ours.session.is_some() {
            boundary::always(Feature::Layer, "vkDestroyInstance", session::leave);
        }
        if let Some(destroy) = ours.table.destroy_instance {
            // SAFETY: the application's arguments, passed on.
            unsafe { destroy(instance, allocator) };
        }
    })
}

/// The layer's `vkEnumerateDeviceExtensionProperties`: the layer adds no device extension.
///
/// # Safety
///
/// Called with the arguments of `vkEnumerateDeviceExtensionProperties`.
pub(crate) unsafe extern "system" fn enumerate_device_extension_properties(
    physical_device: vk::PhysicalDevice,
    layer_name: *const c_char,
    count: *mut u32,
    properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    boundary::entry(
        "vkEnumerateDeviceExtensionProperties",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            // SAFETY: null or a NUL-terminated name.
            if !layer_name.is_null() && unsafe { CStr::from_ptr(layer_name) } == crate::LAYER_NAME_C
            {
                if count.is_null() {
                    return vk::Result::ERROR_INITIALIZATION_FAILED;
                }
                // SAFETY: the caller's count.
                unsafe { *count = 0 };
                return vk::Result::SUCCESS;
            }
            // SAFETY: a live physical device's handle.
            let Some(ours) = (unsafe { registry::instance(physical_device) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            match ours.table.enumerate_device_extension_properties {
                // SAFETY: the application's arguments, passed on.
                Some(next) => unsafe { next(physical_device, layer_name, count, properties) },
                None => vk::Result::ERROR_INITIALIZATION_FAILED,
            }
        },
    )
}
