//! The server's open IPC handles, kept per client process and bounded: what makes a device record cost one
//! copy instead of an open, a copy and a close.
//!
//! A handle stays open between records of the process that sent it, keyed by the process, the handle's bytes
//! and the GPU. Keying by the handle's bytes is what keeps it from serving stale bytes: an allocation freed
//! and made again at the same address gets new handle bytes, so the new allocation is opened anew. The cache
//! is bounded twice — handles per process, and bytes of allocations mapped in all — and evicts the least
//! recently used first. Every mapping keeps its allocation's memory alive even after the application freed
//! it, so the byte bound is also the most freed GPU memory the server can hold. A process's handles are closed
//! when its last connection ends.
//!
//! The cache is generic over what an open handle is (`M`), so its bookkeeping is tested without a GPU.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

use std::collections::HashMap;

use crate::device::{DeviceUuid, IpcHandle};

/// Default most handles one client process keeps open.
pub const DEFAULT_HANDLES_PER_PROCESS: usize = 32;

/// Default most bytes of allocations kept mapped, over all processes: 4 GiB.
pub const DEFAULT_MAX_MAPPED_BYTES: u64 = 4 << 30;

/// The bounds of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandleLimits {
    /// Most handles one client process keeps open; its least recently used is closed to open another.
    pub per_process: usize,
    /// Most bytes of allocations kept mapped after a copy, over all processes (an allocation larger than this
    /// is mapped for its copy and closed right after).
    pub max_mapped_bytes: u64,
}

impl Default for HandleLimits {
    fn default() -> Self {
        HandleLimits {
            per_process: DEFAULT_HANDLES_PER_PROCESS,
            max_mapped_bytes: DEFAULT_MAX_MAPPED_BYTES,
        }
    }
}

/// What the cache has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HandleStats {
    /// Handles opened.
    pub opened: u64,
    /// Records served by a handle that was already open.
    pub reused: u64,
    /// Handles closed to stay within a bound (least recently used first).
    pub evicted: u64,
    /// Handles closed because their process's last connection ended, or the server stopped.
    pub closed: u64,
    /// Handles dropped without a close because a reset of their GPU's context (after a fault) unmapped them.
    pub lost: u64,
    /// Handles open now.
    pub open: u64,
    /// Bytes of allocations mapped now (freed ones included: a mapping keeps its memory alive).
    pub mapped_bytes: u64,
    /// The most bytes ever mapped at once.
    pub peak_mapped_bytes: u64,
}

/// What names one open handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    /// The client process that sent it.
    pid: u32,
    /// Its bytes.
    handle: IpcHandle,
    /// The GPU it was opened on.
    device: DeviceUuid,
}

/// One open handle.
#[derive(Debug)]
struct Entry<M> {
    /// What opening it gave.
    mapping: M,
    /// Bytes of its allocation.
    bytes: u64,
    /// When it was last used, on the cache's own clock.
    last_used: u64,
}

/// Open handles by process, handle and GPU, bounded by [`HandleLimits`].
#[derive(Debug)]
pub(crate) struct HandleCache<M> {
    /// The open handles.
    entries: HashMap<Key, Entry<M>>,
    /// The bounds.
    limits: HandleLimits,
    /// Advances at each use.
    clock: u64,
    /// The counters.
    stats: HandleStats,
}

impl<M> HandleCache<M> {
    /// An empty cache.
    pub(crate) fn new(limits: HandleLimits) -> Self {
        HandleCache {
            entries: HashMap::new(),
            limits,
            clock: 0,
            stats: HandleStats::default(),
        }
    }

    /// The counters.
    pub(crate) fn stats(&self) -> HandleStats {
        self.stats
    }

    /// The mapping of `handle` from `pid` on `device`, opened with `open` (which gives the mapping and its
    /// allocation's size) unless already open. Opening may close the process's least recently used handle
    /// with `close`, to stay within [`HandleLimits::per_process`].
    pub(crate) fn get_or_open<E>(
        &mut self,
        pid: u32,
        handle: IpcHandle,
        device: DeviceUuid,
        open: impl FnOnce() -> Result<(M, u64), E>,
        close: &mut impl FnMut(M),
    ) -> Result<&M, E> {
        self.clock += 1;
        let key = Key {
            pid,
            handle,
            device,
        };
        if self.entries.contains_key(&key) {
            self.stats.reused += 1;
        } else {
            let (mapping, bytes) = open()?;
            self.stats.opened += 1;
            self.entries.insert(
                key,
                Entry {
                    mapping,
                    bytes,
                    last_used: self.clock,
                },
            );
            self.stats.mapped_bytes += bytes;
            self.stats.peak_mapped_bytes =
                self.stats.peak_mapped_bytes.max(self.stats.mapped_bytes);
            while self.entries.keys().filter(|k| k.pid == pid).count()
                > self.limits.per_process.max(1)
            {
                let Some(oldest) = self.least_recent(|k| k.pid == pid && *k != key) else {
                    break;
                };
                self.evict(oldest, close);
            }
        }
        self.stats.open = self.entries.len() as u64;
        let entry = self
            .entries
            .get_mut(&key)
            .expect("the entry was found or inserted above");
        entry.last_used = self.clock;
        Ok(&entry.mapping)
    }

    /// Closes least recently used handles until the mapped bytes are within
    /// [`HandleLimits::max_mapped_bytes`]; call it after each copy.
    pub(crate) fn trim(&mut self, close: &mut impl FnMut(M)) {
        while self.stats.mapped_bytes > self.limits.max_mapped_bytes {
            let Some(oldest) = self.least_recent(|_| true) else {
                break;
            };
            self.evict(oldest, close);
        }
    }

    /// Closes every handle of `pid` (its last connection ended).
    pub(crate) fn close_process(&mut self, pid: u32, close: &mut impl FnMut(M)) {
        self.close_where(|k| k.pid == pid, close);
    }

    /// Closes every handle (the server stops).
    pub(crate) fn close_all(&mut self, close: &mut impl FnMut(M)) {
        self.close_where(|_| true, close);
    }

    /// Drops the handle `key` from the cache without counting it as an eviction (it failed: closed by the
    /// caller, or not openable any more).
    pub(crate) fn forget(&mut self, pid: u32, handle: IpcHandle, device: DeviceUuid) -> Option<M> {
        let entry = self.entries.remove(&Key {
            pid,
            handle,
            device,
        })?;
        self.stats.mapped_bytes -= entry.bytes;
        self.stats.open = self.entries.len() as u64;
        Some(entry.mapping)
    }

    /// Drops every handle whose mapping `pick` accepts without closing it (a context reset already unmapped
    /// it), counting each as lost.
    pub(crate) fn forget_where(&mut self, pick: impl Fn(&M) -> bool) {
        let keys: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, e)| pick(&e.mapping))
            .map(|(k, _)| *k)
            .collect();
        for key in keys {
            if let Some(entry) = self.entries.remove(&key) {
                self.stats.lost += 1;
                self.stats.mapped_bytes -= entry.bytes;
            }
        }
        self.stats.open = self.entries.len() as u64;
    }

    /// The least recently used key that `pick` accepts.
    fn least_recent(&self, pick: impl Fn(&Key) -> bool) -> Option<Key> {
        self.entries
            .iter()
            .filter(|(k, _)| pick(k))
            .min_by_key(|(_, e)| e.last_used)
            .map(|(k, _)| *k)
    }

    /// Closes `key` as an eviction.
    fn evict(&mut self, key: Key, close: &mut impl FnMut(M)) {
        if let Some(entry) = self.entries.remove(&key) {
            self.stats.evicted += 1;
            self.stats.mapped_bytes -= entry.bytes;
            self.stats.open = self.entries.len() as u64;
            close(entry.mapping);
        }
    }

    /// Closes every key that `pick` accepts, counting them as closed.
    fn close_where(&mut self, pick: impl Fn(&Key) -> bool, close: &mut impl FnMut(M)) {
        let keys: Vec<Key> = self.entries.keys().filter(|k| pick(k)).copied().collect();
        for key in keys {
            if let Some(entry) = self.entries.remove(&key) {
                self.stats.closed += 1;
                self.stats.mapped_bytes -= entry.bytes;
                close(entry.mapping);
            }
        }
        self.stats.open = self.entries.len() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handle(n: u8) -> IpcHandle {
        IpcHandle([n; 64])
    }

    /// A cache whose "mappings" are the handle's first byte, recording what it closes.
    struct Fixture {
        cache: HandleCache<u8>,
        closed: Vec<u8>,
        opens: u32,
    }

    impl Fixture {
        fn new(per_process: usize, max_mapped_bytes: u64) -> Self {
            Fixture {
                cache: HandleCache::new(HandleLimits {
                    per_process,
                    max_mapped_bytes,
                }),
                closed: Vec::new(),
                opens: 0,
            }
        }

        fn use_handle(&mut self, pid: u32, n: u8, bytes: u64) -> u8 {
            let closed = &mut self.closed;
            let opens = &mut self.opens;
            let got = *self
                .cache
                .get_or_open(
                    pid,
                    handle(n),
                    DeviceUuid::ANY,
                    || {
                        *opens += 1;
                        Ok::<_, ()>((n, bytes))
                    },
                    &mut |m| closed.push(m),
                )
                .unwrap();
            self.cache.trim(&mut |m| closed.push(m));
            got
        }
    }

    #[test]
    fn a_handle_is_opened_once_and_reused() {
        let mut f = Fixture::new(4, 1 << 30);
        for _ in 0..5 {
            assert_eq!(f.use_handle(1, 7, 100), 7);
        }
        assert_eq!(f.opens, 1);
        let stats = f.cache.stats();
        assert_eq!((stats.opened, stats.reused, stats.open), (1, 4, 1));
        assert_eq!(stats.mapped_bytes, 100);
    }

    #[test]
    fn new_handle_bytes_at_the_same_address_open_anew() {
        // Freed and allocated again: the same address, other handle bytes. The cache never maps the old
        // allocation for the new one.
        let mut f = Fixture::new(4, 1 << 30);
        f.use_handle(1, 0xAA, 1 << 20);
        assert_eq!(f.use_handle(1, 0xBB, 1 << 20), 0xBB);
        assert_eq!(f.opens, 2);
    }

    #[test]
    fn each_process_keeps_at_most_its_bound_least_recent_first() {
        let mut f = Fixture::new(2, 1 << 30);
        f.use_handle(1, 1, 10);
        f.use_handle(1, 2, 10);
        f.use_handle(1, 1, 10); // 2 is now the least recently used
        f.use_handle(2, 9, 10); // another process does not count against pid 1
        f.use_handle(1, 3, 10);
        assert_eq!(f.closed, [2]);
        assert_eq!(f.cache.stats().evicted, 1);
        assert_eq!(f.cache.stats().open, 3);
        // Handles are per process: pid 2 opening pid 1's handle bytes opens its own.
        f.use_handle(2, 1, 10);
        assert_eq!(f.opens, 5);
    }

    #[test]
    fn mapped_bytes_stay_within_the_bound_and_a_huge_allocation_is_closed_after_use() {
        let mut f = Fixture::new(8, 1000);
        f.use_handle(1, 1, 400);
        f.use_handle(2, 2, 400);
        f.use_handle(1, 3, 400); // 1200 mapped: the least recent (1) goes
        assert_eq!(f.closed, [1]);
        assert_eq!(f.cache.stats().mapped_bytes, 800);
        f.use_handle(3, 4, 5000); // larger than the bound alone: mapped for its copy, then every handle closes
        assert_eq!(f.closed, [1, 2, 3, 4]);
        let stats = f.cache.stats();
        assert_eq!((stats.mapped_bytes, stats.open), (0, 0));
        assert_eq!(stats.peak_mapped_bytes, 5800);
    }

    #[test]
    fn a_process_that_leaves_closes_its_handles_only() {
        let mut f = Fixture::new(8, 1 << 30);
        f.use_handle(1, 1, 10);
        f.use_handle(1, 2, 10);
        f.use_handle(2, 3, 10);
        let closed = &mut f.closed;
        f.cache.close_process(1, &mut |m| closed.push(m));
        f.closed.sort_unstable();
        assert_eq!(f.closed, [1, 2]);
        let stats = f.cache.stats();
        assert_eq!((stats.closed, stats.open, stats.mapped_bytes), (2, 1, 10));
        let closed = &mut f.closed;
        f.cache.close_all(&mut |m| closed.push(m));
        assert_eq!(f.cache.stats().open, 0);
        assert_eq!(f.closed.len(), 3);
    }

    #[test]
    fn a_failed_open_leaves_nothing_behind_and_forget_drops_without_evicting() {
        let mut f = Fixture::new(8, 1 << 30);
        let result = f.cache.get_or_open(
            1,
            handle(1),
            DeviceUuid::ANY,
            || Err::<(u8, u64), _>("stale"),
            &mut |_| {},
        );
        assert_eq!(result.unwrap_err(), "stale");
        assert_eq!(f.cache.stats(), HandleStats::default());
        f.use_handle(1, 2, 10);
        assert_eq!(f.cache.forget(1, handle(2), DeviceUuid::ANY), Some(2));
        let stats = f.cache.stats();
        assert_eq!((stats.open, stats.mapped_bytes, stats.evicted), (0, 0, 0));
        assert_eq!(f.cache.forget(1, handle(2), DeviceUuid::ANY), None);
    }

    #[test]
    fn a_reset_loses_the_mappings_it_picks_without_closing_them() {
        let mut f = Fixture::new(8, 1 << 30);
        f.use_handle(1, 2, 10);
        f.use_handle(1, 3, 20);
        f.use_handle(2, 4, 40);
        f.cache.forget_where(|&m| m != 3);
        let stats = f.cache.stats();
        assert_eq!((stats.lost, stats.open, stats.mapped_bytes), (2, 1, 20));
        assert!(f.closed.is_empty());
        // A lost handle opens again.
        f.use_handle(1, 2, 10);
        assert_eq!(f.opens, 4);
    }
}
