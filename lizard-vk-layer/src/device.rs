//! `vkCreateDevice`, `vkDestroyDevice` and the device's queues: the device's dispatch table, what the
//! layer asked of the device beyond the application (pipeline-statistics queries, calibrated timestamps)
//! and what it learned of it.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ash::vk;

use crate::boundary::{self, Feature};
use crate::command_buffer::CommandBufferCell;
use crate::handle_map::HandleMap;
use crate::instance::{self, Instance};
use crate::loader::{self, PfnSetDeviceLoaderData};
use crate::query_blocks::BlockCache;
use crate::queue::QueueEntry;
use crate::registry;
use crate::session::Session;
use crate::table::DeviceTable;
use crate::trap::EventCache;

/// Arm's PCI vendor id.
const ARM_VENDOR: u32 = 0x13B5;

/// One queue family as the layer needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Family {
    /// What its queues do.
    pub flags: vk::QueueFlags,
    /// Valid bits of its timestamps (0: no timestamps).
    pub timestamp_valid_bits: u32,
}

/// What the layer knows of a device and what it turned on.
#[derive(Debug, Clone)]
pub(crate) struct DeviceInfo {
    /// `deviceName`.
    pub name: String,
    /// `vendorID`.
    pub vendor_id: u32,
    /// The driver, by `VkDriverId`, where the instance can ask.
    pub driver: Option<vk::DriverId>,
    /// `driverVersion`, as the driver encodes it.
    pub driver_version: u32,
    /// `apiVersion`.
    pub api_version: u32,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period: f64,
    /// The queue families.
    pub families: Vec<Family>,
    /// The memory types and heaps.
    pub memory: vk::PhysicalDeviceMemoryProperties,
    /// Pipeline-statistics queries are enabled on the device.
    pub pipeline_statistics: bool,
    /// `inheritedQueries` is enabled: secondary command buffers may run inside a pipeline-statistics query.
    pub inherited_queries: bool,
    /// `VK_EXT_calibrated_timestamps` is enabled and its device and `CLOCK_MONOTONIC` domains are there.
    pub calibrated: bool,
    /// What the layer could not turn on, and why.
    pub notes: Vec<String>,
}

impl DeviceInfo {
    /// A device the layer could not look at.
    fn unknown() -> DeviceInfo {
        DeviceInfo {
            name: "a device the layer could not look at".to_owned(),
            vendor_id: 0,
            driver: None,
            driver_version: 0,
            api_version: 0,
            timestamp_period: 1.0,
            families: Vec::new(),
            memory: vk::PhysicalDeviceMemoryProperties::default(),
            pipeline_statistics: false,
            inherited_queries: false,
            calibrated: false,
            notes: vec![
                "the layer could not read the device's properties: nothing is measured on it"
                    .to_owned(),
            ],
        }
    }

    /// Whether the device is driven by Arm's own Mali driver.
    pub(crate) fn is_arm_driver(&self) -> bool {
        self.vendor_id == ARM_VENDOR && self.driver == Some(vk::DriverId::ARM_PROPRIETARY)
    }

    /// The driver's name for people, with its version as the driver encodes it and the Vulkan version.
    pub(crate) fn driver_name(&self) -> String {
        let api = format!(
            "Vulkan {}.{}.{}",
            vk::api_version_major(self.api_version),
            vk::api_version_minor(self.api_version),
            vk::api_version_patch(self.api_version)
        );
        match self.driver {
            Some(id) => format!("{id:?} {:#x}, {api}", self.driver_version),
            None => format!(
                "driver {:#x} (its id unknown: vkGetPhysicalDeviceProperties2 not enabled), {api}",
                self.driver_version
            ),
        }
    }
}

/// A device the layer is part of.
#[derive(Debug)]
pub(crate) struct Device {
    /// The handle.
    pub handle: vk::Device,
    /// The device's number in the session (0, 1, …).
    pub id: u32,
    /// The next layer's device commands.
    pub table: DeviceTable,
    /// The next layer's `vkGetDeviceProcAddr`.
    pub next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    /// The loader's function that makes the layer's own command buffers dispatchable.
    pub set_loader_data: Option<PfnSetDeviceLoaderData>,
    /// What the layer knows of it.
    pub info: DeviceInfo,
    /// The session.
    pub session: Arc<Session>,
    /// Command buffers by handle.
    pub command_buffers: HandleMap<Arc<CommandBufferCell>>,
    /// Command pools by handle: their queue family and their command buffers.
    pub command_pools: Mutex<HashMap<u64, (u32, Vec<u64>)>>,
    /// Render passes by handle: their subpass count.
    pub render_passes: RwLock<HashMap<u64, u32>>,
    /// The application's query pools by handle: their type.
    pub query_pools: RwLock<HashMap<u64, vk::QueryType>>,
    /// The queues the application took, with the layer's state of each.
    pub queues: Mutex<Vec<QueueEntry>>,
    /// The layer's query pools.
    pub blocks: Arc<BlockCache>,
    /// The layer's events (the `renderpass` mode's traps).
    pub events: Arc<EventCache>,
    /// The device is being destroyed: the worker stops waiting for its fences.
    pub closing: std::sync::atomic::AtomicBool,
}

/// What precedes the application's `VkPhysicalDeviceFeatures2` in its chain.
#[derive(Debug, Clone, Copy)]
enum Before {
    /// Nothing: it is the create info's `pNext`.
    Nothing,
    /// Only the loader's structures, the last of them this one.
    Loader(*mut vk::BaseOutStructure<'static>),
    /// A structure of the application's.
    Application,
}

/// What the layer adds to the application's `VkDeviceCreateInfo`, with the storage it points to.
struct Additions {
    features: Option<vk::PhysicalDeviceFeatures>,
    features2: Option<Box<vk::PhysicalDeviceFeatures2<'static>>>,
    /// The loader's structure before the application's features, and those features: the loader's
    /// structure points to the layer's copy during the call, then back.
    relink: Option<(
        *mut vk::BaseOutStructure<'static>,
        *mut vk::BaseOutStructure<'static>,
    )>,
    extensions: Vec<*const c_char>,
    changed: bool,
}

/// The supported features and extensions of `physical`, and what to turn on.
struct Plan {
    info: DeviceInfo,
    additions: Additions,
    calibrated_wanted: bool,
}

/// Reads what the layer needs of `physical` and decides what to add to `create_info`.
///
/// # Safety
///
/// `create_info` is the application's valid create info, `physical` a physical device of `instance`.
unsafe fn plan(
    instance: &Instance,
    physical: vk::PhysicalDevice,
    create_info: &vk::DeviceCreateInfo<'_>,
    session: Option<&Session>,
) -> Option<Plan> {
    let queries = session.map(|s| s.config.queries).unwrap_or_default();
    let t = &instance.table;
    let mut properties = vk::PhysicalDeviceProperties::default();
    // SAFETY: a physical device of the instance; the output is ours.
    unsafe { (t.get_physical_device_properties?)(physical, &mut properties) };
    let mut driver = None;
    if let Some(get2) = instance.get_physical_device_properties2 {
        if vk::api_version_minor(properties.api_version) >= 2
            || vk::api_version_major(properties.api_version) > 1
        {
            let mut driver_properties = vk::PhysicalDeviceDriverProperties::default();
            let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver_properties);
            // SAFETY: the device supports Vulkan 1.2, whose driver properties are core; outputs are ours.
            unsafe { get2(physical, &mut p2) };
            driver = Some(driver_properties.driver_id);
        }
    }
    let mut count = 0u32;
    let get_families = t.get_physical_device_queue_family_properties?;
    // SAFETY: the count query, then the array of that size.
    unsafe { get_families(physical, &mut count, std::ptr::null_mut()) };
    let mut families = vec![vk::QueueFamilyProperties::default(); count as usize];
    // SAFETY: as above.
    unsafe { get_families(physical, &mut count, families.as_mut_ptr()) };
    families.truncate(count as usize);
    let mut supported = vk::PhysicalDeviceFeatures::default();
    // SAFETY: output is ours.
    unsafe { (t.get_physical_device_features?)(physical, &mut supported) };
    let mut memory = vk::PhysicalDeviceMemoryProperties::default();
    // SAFETY: output is ours.
    unsafe { (t.get_physical_device_memory_properties?)(physical, &mut memory) };
    let extensions = {
        let enumerate = t.enumerate_device_extension_properties?;
        let mut n = 0u32;
        // SAFETY: the count query, then the array of that size.
        let counted =
            unsafe { enumerate(physical, std::ptr::null(), &mut n, std::ptr::null_mut()) };
        let mut list = vec![vk::ExtensionProperties::default(); n as usize];
        // SAFETY: as above.
        let listed = unsafe { enumerate(physical, std::ptr::null(), &mut n, list.as_mut_ptr()) };
        if counted != vk::Result::SUCCESS || listed.as_raw() < 0 {
            list.clear();
        }
        list.truncate(n as usize);
        list
    };
    let has_extension = |name: &CStr| {
        extensions
            .iter()
            .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
    };
    let mut notes = Vec::new();

    // The application's features, wherever it gave them, and what comes before them in the chain: nothing
    // (the create info's pNext), only the loader's structures (which layers may relink), or the
    // application's own (which the layer leaves alone).
    let chain_features2 = {
        let mut at = create_info.p_next;
        let mut found = None;
        let mut before = Before::Nothing;
        while !at.is_null() {
            // SAFETY: a structure of the application's valid chain.
            let base = unsafe { &*(at as *const vk::BaseInStructure<'_>) };
            if base.s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
                found = Some((at as *const vk::PhysicalDeviceFeatures2<'_>, before));
                break;
            }
            before = match before {
                Before::Application => Before::Application,
                _ if base.s_type == vk::StructureType::LOADER_DEVICE_CREATE_INFO => {
                    Before::Loader(at as *mut vk::BaseOutStructure<'static>)
                }
                _ => Before::Application,
            };
            at = base.p_next as *const c_void;
        }
        found
    };
    let app_features = if !create_info.p_enabled_features.is_null() {
        // SAFETY: the application's features.
        unsafe { *create_info.p_enabled_features }
    } else if let Some((f2, _)) = chain_features2 {
        // SAFETY: the application's features in its chain.
        unsafe { (*f2).features }
    } else {
        vk::PhysicalDeviceFeatures::default()
    };
    let want_statistics =
        queries.pipeline_statistics && supported.pipeline_statistics_query == vk::TRUE;
    if queries.pipeline_statistics && supported.pipeline_statistics_query != vk::TRUE {
        notes.push("pipeline statistics: the device has no pipelineStatisticsQuery".to_owned());
    }
    let want_inherited = want_statistics && supported.inherited_queries == vk::TRUE;
    let needs = |on: bool, app: vk::Bool32| on && app != vk::TRUE;
    let mut wanted = app_features;
    if want_statistics {
        wanted.pipeline_statistics_query = vk::TRUE;
    }
    if want_inherited {
        wanted.inherited_queries = vk::TRUE;
    }
    let features_change = needs(want_statistics, app_features.pipeline_statistics_query)
        || needs(want_inherited, app_features.inherited_queries);
    let mut additions = Additions {
        features: None,
        features2: None,
        relink: None,
        extensions: (0..create_info.enabled_extension_count as usize)
            // SAFETY: the application's array of `enabled_extension_count` names.
            .map(|i| unsafe { *create_info.pp_enabled_extension_names.add(i) })
            .collect(),
        changed: false,
    };
    let mut statistics = want_statistics;
    let mut inherited = want_inherited;
    if features_change {
        match chain_features2 {
            None => {
                additions.features = Some(wanted);
                additions.changed = true;
            }
            Some((f2, before @ (Before::Nothing | Before::Loader(_)))) => {
                // SAFETY: the application's structure, copied; its pNext (the rest of the chain) is kept.
                let mut copy: vk::PhysicalDeviceFeatures2<'static> =
                    unsafe { std::ptr::read(f2.cast::<vk::PhysicalDeviceFeatures2<'static>>()) };
                copy.features = wanted;
                additions.features2 = Some(Box::new(copy));
                additions.relink = match before {
                    Before::Loader(previous) => {
                        Some((previous, f2 as *mut vk::BaseOutStructure<'static>))
                    }
                    _ => None,
                };
                additions.changed = true;
            }
            Some((_, Before::Application)) => {
                notes.push(
                    "pipeline statistics: the application's VkPhysicalDeviceFeatures2 is not first in its \
                     VkDeviceCreateInfo chain, so the layer cannot add pipelineStatisticsQuery"
                        .to_owned(),
                );
                statistics = app_features.pipeline_statistics_query == vk::TRUE;
                inherited = app_features.inherited_queries == vk::TRUE;
            }
        }
    }
    // Calibrated timestamps: the extension, and both domains the layer maps between.
    let mut calibrated_wanted = false;
    if queries.timestamps {
        let name = ash::ext::calibrated_timestamps::NAME;
        if !has_extension(name) {
            notes.push(
                "calibrated timestamps: the device has no VK_EXT_calibrated_timestamps; times are the \
                 device's own clock"
                    .to_owned(),
            );
        } else {
            let domains = domains(instance, physical);
            let ok = domains.contains(&vk::TimeDomainKHR::DEVICE)
                && domains.contains(&vk::TimeDomainKHR::CLOCK_MONOTONIC);
            if !ok {
                notes.push(format!(
                    "calibrated timestamps: the device's domains {domains:?} lack DEVICE or CLOCK_MONOTONIC; \
                     times are the device's own clock"
                ));
            } else {
                calibrated_wanted = true;
                let enabled = additions.extensions.iter().any(|&e| {
                    // SAFETY: the application's NUL-terminated names.
                    (unsafe { CStr::from_ptr(e) }) == name
                });
                if !enabled {
                    additions.extensions.push(name.as_ptr());
                    additions.changed = true;
                }
            }
        }
    }
    let info = DeviceInfo {
        // SAFETY: a NUL-terminated name in a fixed array.
        name: unsafe { instance::text(properties.device_name.as_ptr()) },
        vendor_id: properties.vendor_id,
        driver,
        driver_version: properties.driver_version,
        api_version: properties.api_version,
        timestamp_period: f64::from(properties.limits.timestamp_period),
        families: families
            .iter()
            .map(|f| Family {
                flags: f.queue_flags,
                timestamp_valid_bits: f.timestamp_valid_bits,
            })
            .collect(),
        memory,
        pipeline_statistics: statistics,
        inherited_queries: inherited,
        calibrated: false,
        notes,
    };
    Some(Plan {
        info,
        additions,
        calibrated_wanted,
    })
}

/// The time domains `physical` can calibrate.
fn domains(instance: &Instance, physical: vk::PhysicalDevice) -> Vec<vk::TimeDomainKHR> {
    let Some(get) = instance
        .table
        .get_physical_device_calibrateable_time_domains_ext
    else {
        return Vec::new();
    };
    let mut n = 0u32;
    // SAFETY: the count query, then the array of that size.
    if unsafe { get(physical, &mut n, std::ptr::null_mut()) } != vk::Result::SUCCESS {
        return Vec::new();
    }
    let mut list = vec![vk::TimeDomainKHR::default(); n as usize];
    // SAFETY: as above.
    if unsafe { get(physical, &mut n, list.as_mut_ptr()) }.as_raw() < 0 {
        return Vec::new();
    }
    list.truncate(n as usize);
    list
}

/// The layer's `vkCreateDevice`.
///
/// # Safety
///
/// Called by the loader with the arguments of `vkCreateDevice`.
pub(crate) unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    create_info: *const vk::DeviceCreateInfo<'_>,
    allocator: *const vk::AllocationCallbacks<'_>,
    device: *mut vk::Device,
) -> vk::Result {
    boundary::entry(
        "vkCreateDevice",
        vk::Result::ERROR_INITIALIZATION_FAILED,
        || {
            if create_info.is_null() || device.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: a physical device of a live instance.
            let Some(instance) = (unsafe { registry::instance(physical) }) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the application's create info.
            let info = unsafe { &*create_info };
            // SAFETY: the loader's chain in it.
            let link_info =
                unsafe { loader::find_device_info(info.p_next, loader::LAYER_LINK_INFO) };
            if link_info.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: the loader's link structure (vk_layer.h).
            let link = unsafe { (*link_info).u } as *mut loader::LayerDeviceLink;
            if link.is_null() {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            }
            // SAFETY: as above.
            let (next_gipa, next_gdpa, after_us) = unsafe {
                (
                    (*link).pfn_next_get_instance_proc_addr,
                    (*link).pfn_next_get_device_proc_addr,
                    (*link).p_next,
                )
            };
            let (Some(next_gipa), Some(next_gdpa)) = (next_gipa, next_gdpa) else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the next layer reads the link after ours.
            unsafe { (*link_info).u = after_us as *mut c_void };
            // SAFETY: the next layer's vkCreateDevice, by name, for this instance.
            let Some(next_create) =
                (unsafe { next_gipa(instance.handle, c"vkCreateDevice".as_ptr()) })
            else {
                return vk::Result::ERROR_INITIALIZATION_FAILED;
            };
            // SAFETY: the address of vkCreateDevice, of that type.
            let next_create: vk::PFN_vkCreateDevice = unsafe { std::mem::transmute(next_create) };
            let session = instance.session.clone();
            let plan = boundary::work(Feature::Workloads, "vkCreateDevice", || {
                // SAFETY: the application's create info and physical device.
                unsafe { plan(&instance, physical, info, session.as_deref()) }
            })
            .flatten();
            let mut result = vk::Result::ERROR_INITIALIZATION_FAILED;
            let mut plan = plan;
            let mut added = false;
            if let Some(p) = plan.as_mut().filter(|p| p.additions.changed) {
                let mut modified = *info;
                if let Some(features) = &p.additions.features {
                    modified.p_enabled_features = features;
                }
                if let Some(features2) = &p.additions.features2 {
                    let copy = &**features2 as *const vk::PhysicalDeviceFeatures2<'static>;
                    match p.additions.relink {
                        // SAFETY: the loader's own structure, which layers may change during
                        // vkCreateDevice; restored below.
                        Some((previous, _)) => unsafe { (*previous).p_next = copy as *mut _ },
                        None => modified.p_next = copy as *const c_void,
                    }
                }
                modified.enabled_extension_count = p.additions.extensions.len() as u32;
                modified.pp_enabled_extension_names = p.additions.extensions.as_ptr();
                // SAFETY: the application's create info with the layer's features and extension added; every
                // pointer in it is live until the call returns.
                result = unsafe { next_create(physical, &modified, allocator, device) };
                if let Some((previous, original)) = p.additions.relink {
                    // SAFETY: as above: the loader's structure points to the application's features again.
                    unsafe { (*previous).p_next = original };
                }
                added = result == vk::Result::SUCCESS;
                if !added {
                    p.info.notes.push(format!(
                    "the device refused the layer's additions ({result}); created as the application asked, \
                     without pipeline statistics or calibrated timestamps"
                ));
                    p.info.pipeline_statistics = false;
                    p.info.inherited_queries = false;
                    p.calibrated_wanted = false;
                    // SAFETY: the next layer reads the link after ours again.
                    unsafe { (*link_info).u = after_us as *mut c_void };
                }
            }
            if !added {
                // SAFETY: the application's arguments, passed on unchanged.
                result = unsafe { next_create(physical, create_info, allocator, device) };
            }
            if result != vk::Result::SUCCESS {
                return result;
            }
            // SAFETY: created just now.
            let handle = unsafe { *device };
            // Always, whatever is off: without it the device's commands could not be found.
            boundary::always(Feature::Layer, "vkCreateDevice", || {
                // SAFETY: the loader's chain in the application's create info.
                let data =
                    unsafe { loader::find_device_info(info.p_next, loader::LOADER_DATA_CALLBACK) };
                let set_loader_data = if data.is_null() {
                    None
                } else {
                    // SAFETY: the union holds pfnSetDeviceLoaderData for this function.
                    let f = unsafe { (*data).u };
                    // SAFETY: that function's address, of that type.
                    (!f.is_null()).then(|| unsafe {
                        std::mem::transmute::<*mut c_void, PfnSetDeviceLoaderData>(f)
                    })
                };
                let load = |name: &CStr| {
                    // SAFETY: the device just created by the next layer.
                    unsafe { next_gdpa(handle, name.as_ptr()) }
                };
                // SAFETY: `load` gives the next layer's commands by name.
                let table = unsafe { DeviceTable::load(load) };
                register(handle, table, next_gdpa, set_loader_data, plan, session);
            });
            result
        },
    )
}

/// Registers a created device.
fn register(
    handle: vk::Device,
    table: DeviceTable,
    next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    set_loader_data: Option<PfnSetDeviceLoaderData>,
    plan: Option<Plan>,
    session: Option<Arc<Session>>,
) {
    let Some(session) = session else {
        return;
    };
    // Without a plan (the layer's look at the device failed) the device is still registered, so that its
    // commands are passed on, knowing nothing of it: no queue family, so nothing is recorded.
    let mut info = plan
        .as_ref()
        .map(|p| p.info.clone())
        .unwrap_or_else(DeviceInfo::unknown);
    info.calibrated = plan.as_ref().is_some_and(|p| p.calibrated_wanted)
        && table.get_calibrated_timestamps_ext.is_some();
    let device = Device {
        handle,
        id: session.next_device_id(),
        table,
        next_get_device_proc_addr,
        set_loader_data,
        info,
        session,
        command_buffers: HandleMap::default(),
        command_pools: Mutex::new(HashMap::new()),
        render_passes: RwLock::new(HashMap::new()),
        query_pools: RwLock::new(HashMap::new()),
        queues: Mutex::new(Vec::new()),
        blocks: Arc::new(BlockCache::default()),
        events: Arc::new(EventCache::default()),
        closing: std::sync::atomic::AtomicBool::new(false),
    };
    // SAFETY: a live device's handle.
    if let Some(key) = unsafe { registry::key_of(handle) } {
        let device = Arc::new(device);
        device.session.device_created(&device);
        registry::add_device(key, device);
    }
}

/// The layer's `vkDestroyDevice`: the worker finishes reading the device's submissions, then the layer's
/// objects on it are destroyed, then the device.
///
/// # Safety
///
/// Called with the arguments of `vkDestroyDevice`.
pub(crate) unsafe extern "system" fn destroy_device(
    device: vk::Device,
    allocator: *const vk::AllocationCallbacks<'_>,
) {
    boundary::entry("vkDestroyDevice", (), || {
        // SAFETY: a live device or null.
        let Some(key) = (unsafe { registry::key_of(device) }) else {
            return;
        };
        let Some(ours) = registry::remove_device(key) else {
            return;
        };
        boundary::always(Feature::Layer, "vkDestroyDevice", || ours.close());
        if let Some(destroy) = ours.table.destroy_device {
            // SAFETY: the application's arguments, passed on.
            unsafe { destroy(device, allocator) };
        }
    })
}

impl Device {
    /// Ends the layer's work on the device: the worker reads what it can of the submissions in flight
    /// (waiting at most a few seconds), then the layer's queues' objects and query pools are destroyed.
    fn close(self: &Arc<Self>) {
        self.closing
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.session.device_closing(self, Duration::from_secs(5));
        let queues = std::mem::take(&mut *self.queues.lock().unwrap_or_else(|e| e.into_inner()));
        for entry in queues {
            entry.destroy(self);
        }
        self.blocks.destroy_all(&self.table, self.handle);
        self.events.destroy_all(self);
    }
}

/// The layer's `vkGetDeviceQueue`: the queue's family and index are kept.
///
/// # Safety
///
/// Called with the arguments of `vkGetDeviceQueue`.
pub(crate) unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    queue: *mut vk::Queue,
) {
    boundary::entry("vkGetDeviceQueue", (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        let Some(next) = ours.table.get_device_queue else {
            return;
        };
        // SAFETY: the application's arguments, passed on.
        unsafe { next(device, family, index, queue) };
        boundary::work(Feature::Layer, "vkGetDeviceQueue", || {
            // SAFETY: the queue written by the driver.
            if let Some(q) = unsafe { queue.as_ref() } {
                crate::queue::seen(&ours, *q, family, index);
            }
        });
    })
}

/// The layer's `vkGetDeviceQueue2`.
///
/// # Safety
///
/// Called with the arguments of `vkGetDeviceQueue2`.
pub(crate) unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    info: *const vk::DeviceQueueInfo2<'_>,
    queue: *mut vk::Queue,
) {
    boundary::entry("vkGetDeviceQueue2", (), || {
        // SAFETY: a live device.
        let Some(ours) = (unsafe { registry::device(device) }) else {
            return;
        };
        let Some(next) = ours.table.get_device_queue2 else {
            return;
        };
        // SAFETY: the application's arguments, passed on.
        unsafe { next(device, info, queue) };
        boundary::work(Feature::Layer, "vkGetDeviceQueue2", || {
            // SAFETY: the application's info and the queue written by the driver.
            if let (Some(i), Some(q)) = unsafe { (info.as_ref(), queue.as_ref()) } {
                crate::queue::seen(&ours, *q, i.queue_family_index, i.queue_index);
            }
        });
    })
}
