//! Live instances, looked up by handle.
//!
//! A `LizardInstance` handed to C is not a pointer to Rust memory: it is a key into this registry,
//! issued once and never reused. A NULL, forged or already-destroyed handle therefore finds nothing and
//! the call fails cleanly, instead of dereferencing freed memory as the original library did.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::abi::LizardInstance;

/// Handles start here and advance by 16, so they look like aligned pointers and are never NULL.
const FIRST_HANDLE: usize = 0x1000;
const HANDLE_STEP: usize = 0x10;

/// The registry of live instances of type `T`.
pub(crate) struct Registry<T> {
    next: AtomicUsize,
    live: OnceLock<Mutex<HashMap<usize, Arc<Mutex<T>>>>>,
}

impl<T> Registry<T> {
    /// An empty registry, usable as a `static`.
    pub(crate) const fn new() -> Self {
        Registry {
            next: AtomicUsize::new(FIRST_HANDLE),
            live: OnceLock::new(),
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<usize, Arc<Mutex<T>>>> {
        self.live
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores `value` and returns its new, never-reused handle.
    pub(crate) fn insert(&self, value: T) -> LizardInstance {
        let key = self.next.fetch_add(HANDLE_STEP, Ordering::Relaxed);
        self.map().insert(key, Arc::new(Mutex::new(value)));
        // The handle is an opaque integer that C code only stores and passes back.
        std::ptr::without_provenance_mut(key)
    }

    /// The instance behind `handle`, if it is live.
    pub(crate) fn get(&self, handle: LizardInstance) -> Option<Arc<Mutex<T>>> {
        self.map().get(&handle.addr()).cloned()
    }

    /// Removes the instance behind `handle`, returning it if it was live.
    pub(crate) fn remove(&self, handle: LizardInstance) -> Option<Arc<Mutex<T>>> {
        self.map().remove(&handle.addr())
    }

    /// Runs `f` on the instance behind `handle` with its lock held; `None` if the handle is not live.
    pub(crate) fn with<R>(&self, handle: LizardInstance, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        let instance = self.get(handle)?;
        let mut guard = instance
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Some(f(&mut guard))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_unique_non_null_and_never_reused() {
        let registry = Registry::new();
        let a = registry.insert(1);
        let b = registry.insert(2);
        assert!(!a.is_null());
        assert_ne!(a, b);
        assert!(registry.remove(a).is_some());
        let c = registry.insert(3);
        assert_ne!(a, c);
        assert_eq!(registry.with(a, |v| *v), None);
        assert_eq!(registry.with(c, |v| *v), Some(3));
    }

    #[test]
    fn null_and_forged_handles_find_nothing() {
        let registry: Registry<u8> = Registry::new();
        registry.insert(0);
        assert!(registry.get(std::ptr::null_mut()).is_none());
        assert!(registry
            .get(std::ptr::without_provenance_mut(0xdead_beef))
            .is_none());
        assert!(registry.remove(std::ptr::null_mut()).is_none());
    }
}
