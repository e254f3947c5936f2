//! The layer's instances and devices by dispatch key: the pointer a dispatchable handle points to, which
//! the loader gives every object of one instance (instance, physical devices) or one device (device,
//! queues, command buffers).

use std::sync::{Arc, RwLock};

use ash::vk::Handle;

use crate::device::Device;
use crate::instance::Instance;

/// A dispatch key.
pub(crate) type Key = usize;

/// The dispatch key of dispatchable handle `handle`; `None` for a null handle.
///
/// # Safety
///
/// `handle` is null or a live dispatchable handle of the loader (it points to the loader's dispatch
/// pointer).
pub(crate) unsafe fn key_of(handle: impl Handle) -> Option<Key> {
    let raw = handle.as_raw() as *const usize;
    if raw.is_null() {
        return None;
    }
    // SAFETY: a dispatchable handle points to its dispatch table pointer (the caller's contract).
    Some(unsafe { raw.read() })
}

static INSTANCES: RwLock<Vec<(Key, Arc<Instance>)>> = RwLock::new(Vec::new());
static DEVICES: RwLock<Vec<(Key, Arc<Device>)>> = RwLock::new(Vec::new());

/// Registers `instance` under `key`.
pub(crate) fn add_instance(key: Key, instance: Arc<Instance>) {
    let mut all = INSTANCES.write().unwrap_or_else(|e| e.into_inner());
    all.retain(|(k, _)| *k != key);
    all.push((key, instance));
}

/// Forgets the instance of `key`, returning it.
pub(crate) fn remove_instance(key: Key) -> Option<Arc<Instance>> {
    let mut all = INSTANCES.write().unwrap_or_else(|e| e.into_inner());
    let at = all.iter().position(|(k, _)| *k == key)?;
    Some(all.swap_remove(at).1)
}

/// The instance of dispatchable handle `handle` (an instance or a physical device).
///
/// # Safety
///
/// As [`key_of`].
pub(crate) unsafe fn instance(handle: impl Handle) -> Option<Arc<Instance>> {
    // SAFETY: the caller's contract.
    let key = unsafe { key_of(handle) }?;
    let all = INSTANCES.read().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, i)| Arc::clone(i))
}

/// Registers `device` under `key`.
pub(crate) fn add_device(key: Key, device: Arc<Device>) {
    let mut all = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    all.retain(|(k, _)| *k != key);
    all.push((key, device));
}

/// Forgets the device of `key`, returning it.
pub(crate) fn remove_device(key: Key) -> Option<Arc<Device>> {
    let mut all = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    let at = all.iter().position(|(k, _)| *k == key)?;
    Some(all.swap_remove(at).1)
}

/// The device of dispatchable handle `handle` (a device, a queue or a command buffer).
///
/// # Safety
///
/// As [`key_of`].
#[inline]
pub(crate) unsafe fn device(handle: impl Handle) -> Option<Arc<Device>> {
    // SAFETY: the caller's contract.
    let key = unsafe { key_of(handle) }?;
    let all = DEVICES.read().unwrap_or_else(|e| e.into_inner());
    all.iter()
        .find(|(k, _)| *k == key)
        .map(|(_, d)| Arc::clone(d))
}
