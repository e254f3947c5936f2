//! IPC handles: what `cuIpcGetMemHandle` writes and what `cuIpcOpenMemHandle` maps.
//!
//! A handle names a **block**, not an allocation, and the allocation's place in it. Its 64 bytes:
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 8 | format byte (1) and padding: **not checked** when opened, as the H200 showed for byte 0 |
//! | 8 | 4 | the exporting process's id |
//! | 12 | 4 | the block's memfd descriptor number in that process |
//! | 16 | 8 | the memfd's inode |
//! | 24 | 8 | the block's size |
//! | 32 | 8 | the allocation's offset in the block |
//! | 40 | 8 | the block's identity (in its memfd's name): a new block has new bytes here |
//! | 48 | 16 | zero, not checked |
//!
//! Opening fetches the exporter's descriptor (`pidfd_getfd`, or `/proc/PID/fd/N` where the kernel refuses
//! that to a process that is not the exporter's ancestor), checks that it is the memfd the handle names (inode,
//! size, name), maps it and places the block in this process's device address space: the pointer returned
//! is the allocation's, and `cuMemGetAddressRange` of it gives the whole block. A mapping keeps the block's
//! memory alive after the exporter freed it. Opening a block this process already has open returns the same
//! mapping and counts a reference; each open needs its own close. The importer keeps a pidfd of the
//! exporter: a copy from the mapping after the exporter has exited is a fault (`copy`).
#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;

use crate::address_space::AddressSpace;
use crate::host_map::{self, HostMap};
use crate::memory::{block_name, Allocation, Block};
use crate::result::{Outcome, INVALID_CONTEXT, INVALID_VALUE};

/// Bytes of an IPC handle.
pub const HANDLE_LEN: usize = 64;

/// The format byte a handle's byte 0 carries (and that opening ignores).
const FORMAT: u8 = 1;

/// What a handle's bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HandleFields {
    /// The exporting process.
    pub(crate) pid: u32,
    /// The block's memfd descriptor there.
    pub(crate) fd: RawFd,
    /// The memfd's inode.
    pub(crate) inode: u64,
    /// The block's size.
    pub(crate) size: u64,
    /// The allocation's offset in the block.
    pub(crate) offset: u64,
    /// The block's identity.
    pub(crate) block_id: u64,
}

impl HandleFields {
    /// The fields of `allocation`'s handle, exported from this process.
    pub(crate) fn of(block: &Block, allocation: &Allocation) -> HandleFields {
        HandleFields {
            pid: std::process::id(),
            fd: block.fd.as_raw_fd(),
            inode: block.inode,
            size: block.size,
            offset: allocation.offset,
            block_id: block.id,
        }
    }

    /// The 64 handle bytes.
    pub(crate) fn encode(&self) -> [u8; HANDLE_LEN] {
        let mut out = [0; HANDLE_LEN];
        out[0] = FORMAT;
        out[8..12].copy_from_slice(&self.pid.to_le_bytes());
        out[12..16].copy_from_slice(&self.fd.to_le_bytes());
        out[16..24].copy_from_slice(&self.inode.to_le_bytes());
        out[24..32].copy_from_slice(&self.size.to_le_bytes());
        out[32..40].copy_from_slice(&self.offset.to_le_bytes());
        out[40..48].copy_from_slice(&self.block_id.to_le_bytes());
        out
    }

    /// The fields of 64 handle bytes (bytes 0..8 and 48..64 are not read).
    pub(crate) fn decode(bytes: &[u8; HANDLE_LEN]) -> HandleFields {
        let u64_at = |at: usize| {
            let mut b = [0; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let u32_at = |at: usize| {
            let mut b = [0; 4];
            b.copy_from_slice(&bytes[at..at + 4]);
            u32::from_le_bytes(b)
        };
        HandleFields {
            pid: u32_at(8),
            fd: u32_at(12) as RawFd,
            inode: u64_at(16),
            size: u64_at(24),
            offset: u64_at(32),
            block_id: u64_at(40),
        }
    }
}

/// Which exported block a mapping shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BlockKey {
    /// The exporter.
    pid: u32,
    /// The memfd's inode.
    inode: u64,
    /// The block's identity.
    block_id: u64,
}

/// One block of another process mapped here.
#[derive(Debug)]
pub(crate) struct Import {
    /// The block's device address here.
    pub(crate) base: u64,
    /// Its size.
    pub(crate) size: u64,
    /// Its bytes.
    pub(crate) map: Arc<HostMap>,
    /// What it shows.
    key: BlockKey,
    /// Pointers returned by opens, with how many opens each still has.
    opened: BTreeMap<u64, u32>,
    /// A pidfd of the exporter: readable once it has exited.
    pub(crate) exporter: Arc<OwnedFd>,
    /// The mapping's identity (`CU_POINTER_ATTRIBUTE_BUFFER_ID`).
    pub(crate) buffer_id: u64,
    /// The context it was opened in.
    pub(crate) context: usize,
}

/// The blocks of other processes mapped here, by device address.
#[derive(Debug, Default)]
pub(crate) struct Imports {
    /// The mappings.
    by_base: BTreeMap<u64, Import>,
}

impl Imports {
    /// `cuIpcOpenMemHandle` of `fields` in context `ctx`: the allocation's device address here.
    pub(crate) fn open(
        &mut self,
        space: &mut AddressSpace,
        fields: HandleFields,
        ctx: usize,
        id: impl FnOnce() -> u64,
    ) -> Outcome<u64> {
        if fields.pid == std::process::id() {
            // A process cannot open its own handles.
            return Err(INVALID_CONTEXT);
        }
        if fields.size == 0 || fields.offset >= fields.size {
            return Err(INVALID_VALUE);
        }
        let key = BlockKey {
            pid: fields.pid,
            inode: fields.inode,
            block_id: fields.block_id,
        };
        if let Some(import) = self
            .by_base
            .values_mut()
            .find(|i| i.key == key && i.context == ctx)
        {
            if import.size != fields.size {
                return Err(INVALID_VALUE);
            }
            let ptr = import.base + fields.offset;
            *import.opened.entry(ptr).or_insert(0) += 1;
            return Ok(ptr);
        }
        let (fd, exporter) = fetch(fields)?;
        let map = Arc::new(HostMap::shared(fd.as_raw_fd(), fields.size)?);
        drop(fd);
        let base = space.allocate(fields.size)?;
        let ptr = base + fields.offset;
        self.by_base.insert(
            base,
            Import {
                base,
                size: fields.size,
                map,
                key,
                opened: [(ptr, 1)].into_iter().collect(),
                exporter: Arc::new(exporter),
                buffer_id: id(),
                context: ctx,
            },
        );
        Ok(ptr)
    }

    /// `cuIpcCloseMemHandle` of a pointer an open returned.
    pub(crate) fn close(&mut self, space: &mut AddressSpace, ptr: u64) -> Outcome<()> {
        let import = self
            .by_base
            .values_mut()
            .find(|i| i.opened.contains_key(&ptr))
            .ok_or(INVALID_VALUE)?;
        let base = import.base;
        if let Some(count) = import.opened.get_mut(&ptr) {
            *count -= 1;
            if *count == 0 {
                import.opened.remove(&ptr);
            }
        }
        if import.opened.is_empty() {
            self.by_base.remove(&base);
            space.free(base);
        }
        Ok(())
    }

    /// The mapping holding device address `ptr`.
    pub(crate) fn find(&self, ptr: u64) -> Option<&Import> {
        let (_, import) = self.by_base.range(..=ptr).next_back()?;
        (ptr < import.base + import.size).then_some(import)
    }

    /// Closes every mapping opened in context `ctx`.
    pub(crate) fn drop_context(&mut self, space: &mut AddressSpace, ctx: usize) {
        let gone: Vec<u64> = self
            .by_base
            .values()
            .filter(|i| i.context == ctx)
            .map(|i| i.base)
            .collect();
        for base in gone {
            self.by_base.remove(&base);
            space.free(base);
        }
    }
}

/// The exporter's memfd named by `fields`, checked, and a pidfd of the exporter.
fn fetch(fields: HandleFields) -> Outcome<(OwnedFd, OwnedFd)> {
    let pid = libc::pid_t::try_from(fields.pid).map_err(|_| INVALID_VALUE)?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if raw < 0 {
        // The exporter has exited (or never was).
        return Err(INVALID_VALUE);
    }
    // SAFETY: `raw` is a descriptor just returned to this process.
    let pidfd = unsafe { OwnedFd::from_raw_fd(raw as RawFd) };
    // SAFETY: pidfd_getfd duplicates descriptor `fd` of the process behind `pidfd` into this one, or fails.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fields.fd, 0) };
    let fd = if got >= 0 {
        // SAFETY: a descriptor just returned to this process.
        unsafe { OwnedFd::from_raw_fd(got as RawFd) }
    } else {
        // The kernel asks for ptrace rights over the exporter; /proc asks only to read it.
        use std::os::unix::fs::OpenOptionsExt;
        // Never blocks, never takes a terminal: a forged handle may name any descriptor of any process.
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(format!("/proc/{}/fd/{}", fields.pid, fields.fd))
            .map_err(|_| INVALID_VALUE)?
            .into()
    };
    let (inode, size) = host_map::identity(fd.as_raw_fd()).ok_or(INVALID_VALUE)?;
    let name = host_map::link_of(fd.as_raw_fd()).unwrap_or_default();
    let wanted = format!("/memfd:{} ", block_name(fields.pid, fields.block_id));
    if inode != fields.inode || size != fields.size || !name.starts_with(&wanted) {
        return Err(INVALID_VALUE);
    }
    Ok((fd, pidfd))
}

/// Whether the process behind `pidfd` has exited.
pub(crate) fn exited(pidfd: &OwnedFd) -> bool {
    let mut entry = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one descriptor this process owns, without waiting.
    let ready = unsafe { libc::poll(&mut entry, 1, 0) };
    ready > 0 && entry.revents & libc::POLLIN != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_bytes_round_trip_and_byte_zero_is_not_read() {
        let fields = HandleFields {
            pid: 4242,
            fd: 17,
            inode: 0x1122_3344_5566,
            size: 4 << 20,
            offset: 1024,
            block_id: 9,
        };
        let mut bytes = fields.encode();
        assert_eq!(bytes[0], FORMAT);
        assert_eq!(HandleFields::decode(&bytes), fields);
        bytes[0] ^= 0xff;
        bytes[60] = 7;
        assert_eq!(HandleFields::decode(&bytes), fields);
        let mut next = fields;
        next.block_id = 10;
        let changed: Vec<usize> = (0..HANDLE_LEN)
            .filter(|&i| next.encode()[i] != fields.encode()[i])
            .collect();
        assert_eq!(changed, [40]);
    }

    #[test]
    fn this_process_cannot_open_its_own_handles() {
        let mut space = AddressSpace::reserve(16 << 20).unwrap();
        let fields = HandleFields {
            pid: std::process::id(),
            fd: 3,
            inode: 1,
            size: 2 << 20,
            offset: 0,
            block_id: 1,
        };
        let mut imports = Imports::default();
        assert_eq!(
            imports.open(&mut space, fields, 0, || 1),
            Err(INVALID_CONTEXT)
        );
        assert_eq!(imports.close(&mut space, 12345), Err(INVALID_VALUE));
    }
}
