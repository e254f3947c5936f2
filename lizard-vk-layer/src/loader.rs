//! The loader–layer interface of the Vulkan loader (`vk_layer.h`): the structures the loader puts in the
//! `pNext` chains of `VkInstanceCreateInfo` and `VkDeviceCreateInfo` to tell each layer where the next one
//! is, and the negotiation structure. `ash` has the Vulkan API's types but not these, which belong to the
//! loader; their layouts are those of the header, field for field.

use std::ffi::c_void;

use ash::vk;

/// `VkLayerFunction`: what a `VkLayer*CreateInfo` of the chain carries.
pub(crate) const LAYER_LINK_INFO: i32 = 0;
/// `VK_LOADER_DATA_CALLBACK`: the loader's function that sets a dispatchable object's dispatch pointer.
pub(crate) const LOADER_DATA_CALLBACK: i32 = 1;

/// `VkNegotiateLayerStructType::LAYER_NEGOTIATE_INTERFACE_STRUCT`.
pub(crate) const NEGOTIATE_INTERFACE_STRUCT: i32 = 1;

/// The newest loader–layer interface version this layer speaks: 2 (the loader asks for the layer's
/// `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr` through negotiation, not by symbol name).
pub(crate) const INTERFACE_VERSION: u32 = 2;

/// `PFN_GetPhysicalDeviceProcAddr`.
pub(crate) type PfnGetPhysicalDeviceProcAddr = Option<
    unsafe extern "system" fn(vk::Instance, *const std::ffi::c_char) -> vk::PFN_vkVoidFunction,
>;

/// `PFN_vkSetDeviceLoaderData`.
pub(crate) type PfnSetDeviceLoaderData =
    unsafe extern "system" fn(vk::Device, *mut c_void) -> vk::Result;

/// `VkNegotiateLayerInterface`.
#[repr(C)]
pub(crate) struct NegotiateLayerInterface {
    pub s_type: i32,
    pub p_next: *mut c_void,
    pub loader_layer_interface_version: u32,
    pub pfn_get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub pfn_get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
    pub pfn_get_physical_device_proc_addr: PfnGetPhysicalDeviceProcAddr,
}

/// `VkLayerInstanceLink`: one layer below, as the loader links them.
#[repr(C)]
pub(crate) struct LayerInstanceLink {
    pub p_next: *mut LayerInstanceLink,
    pub pfn_next_get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub pfn_next_get_physical_device_proc_addr: PfnGetPhysicalDeviceProcAddr,
}

/// `VkLayerInstanceCreateInfo` (`sType` `VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO`). The union `u` is
/// two pointers wide (its largest member, `layerDevice`); only its first pointer is read, as `pLayerInfo`.
#[repr(C)]
pub(crate) struct LayerInstanceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: i32,
    pub u_layer_info: *mut LayerInstanceLink,
    pub u_second: *mut c_void,
}

/// `VkLayerDeviceLink`.
#[repr(C)]
pub(crate) struct LayerDeviceLink {
    pub p_next: *mut LayerDeviceLink,
    pub pfn_next_get_instance_proc_addr: Option<vk::PFN_vkGetInstanceProcAddr>,
    pub pfn_next_get_device_proc_addr: Option<vk::PFN_vkGetDeviceProcAddr>,
}

/// `VkLayerDeviceCreateInfo` (`sType` `VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO`): the union `u` is
/// `pLayerInfo` or `pfnSetDeviceLoaderData`, as `function` says.
#[repr(C)]
pub(crate) struct LayerDeviceCreateInfo {
    pub s_type: vk::StructureType,
    pub p_next: *const c_void,
    pub function: i32,
    pub u: *mut c_void,
}

/// The first `VkLayerInstanceCreateInfo` of `chain` carrying `function`.
///
/// # Safety
///
/// `chain` is null or the `pNext` of a valid `VkInstanceCreateInfo`: every structure on it starts with
/// `sType` and `pNext`.
pub(crate) unsafe fn find_instance_info(
    mut chain: *const c_void,
    function: i32,
) -> *mut LayerInstanceCreateInfo {
    while !chain.is_null() {
        // SAFETY: every structure of a pNext chain starts like `VkBaseInStructure` (the caller's contract).
        let base = unsafe { &*(chain as *const vk::BaseInStructure<'_>) };
        if base.s_type == vk::StructureType::LOADER_INSTANCE_CREATE_INFO {
            let info = chain as *mut LayerInstanceCreateInfo;
            // SAFETY: the loader's structure of that sType has this layout (vk_layer.h).
            if unsafe { (*info).function } == function {
                return info;
            }
        }
        chain = base.p_next as *const c_void;
    }
    std::ptr::null_mut()
}

/// The first `VkLayerDeviceCreateInfo` of `chain` carrying `function`.
///
/// # Safety
///
/// As [`find_instance_info`], for a `VkDeviceCreateInfo`.
pub(crate) unsafe fn find_device_info(
    mut chain: *const c_void,
    function: i32,
) -> *mut LayerDeviceCreateInfo {
    while !chain.is_null() {
        // SAFETY: as in `find_instance_info`.
        let base = unsafe { &*(chain as *const vk::BaseInStructure<'_>) };
        if base.s_type == vk::StructureType::LOADER_DEVICE_CREATE_INFO {
            let info = chain as *mut LayerDeviceCreateInfo;
            // SAFETY: the loader's structure of that sType has this layout (vk_layer.h).
            if unsafe { (*info).function } == function {
                return info;
            }
        }
        chain = base.p_next as *const c_void;
    }
    std::ptr::null_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_loader_header() {
        // vk_layer.h on LP64: sType 4 + pad 4, pNext 8, function 4 + pad 4, union of two pointers 16;
        // the negotiation: sType, pNext, version (padded to 8) and three function pointers.
        assert_eq!(std::mem::size_of::<LayerInstanceCreateInfo>(), 40);
        assert_eq!(std::mem::size_of::<LayerDeviceCreateInfo>(), 32);
        assert_eq!(std::mem::size_of::<LayerInstanceLink>(), 24);
        assert_eq!(std::mem::size_of::<LayerDeviceLink>(), 24);
        assert_eq!(std::mem::size_of::<NegotiateLayerInterface>(), 48);
        assert_eq!(std::mem::offset_of!(LayerDeviceCreateInfo, u), 24);
    }
}
