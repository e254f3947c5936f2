//! A map from Vulkan handles to the layer's state of each, read on every intercepted command: a hash
//! map behind a read-write lock, hashing the 64-bit handle with one multiplication.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

/// Hashes one `u64` by a multiplication with an odd constant (handles are addresses or counters, whose
/// low bits alone would collide).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Handles to `V`.
#[derive(Debug)]
pub(crate) struct HandleMap<V> {
    map: RwLock<HashMap<u64, V, BuildHasherDefault<HandleHasher>>>,
}

impl<V> Default for HandleMap<V> {
    fn default() -> Self {
        HandleMap {
            map: RwLock::new(HashMap::default()),
        }
    }
}

impl<V: Clone> HandleMap<V> {
    /// The value of `handle`.
    #[inline]
    pub(crate) fn get(&self, handle: u64) -> Option<V> {
        self.map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&handle)
            .cloned()
    }

    /// Sets the value of `handle`.
    pub(crate) fn insert(&self, handle: u64, value: V) {
        self.map
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(handle, value);
    }

    /// Removes `handles`.
    pub(crate) fn remove_all(&self, handles: impl IntoIterator<Item = u64>) {
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        for h in handles {
            map.remove(&h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_map_to_their_values() {
        let map = HandleMap::default();
        map.insert(0x5555_0000_1000, 1);
        map.insert(0x5555_0000_2000, 2);
        assert_eq!(map.get(0x5555_0000_1000), Some(1));
        map.remove_all([0x5555_0000_1000]);
        assert_eq!(map.get(0x5555_0000_1000), None);
        assert_eq!(map.get(0x5555_0000_2000), Some(2));
    }
}
