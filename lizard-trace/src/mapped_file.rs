//! A file mapped shared into memory, for a ring that outlives its server: the server maps it read-write and
//! holds an exclusive lock on it; any other process may map it read-only and read it while the server
//! writes. The crate's only `unsafe` code besides [`crate::sys`].
//!
//! The mapping's bytes may change at any time in a reader's process (the server writes them), so a reader
//! never borrows them as a slice: it reads aligned 8-byte words through atomic loads
//! ([`MappedFile::load`], [`MappedFile::copy_words`]). The writer, the only process that changes them, borrows
//! them mutably ([`MappedFile::as_mut_slice`]) and publishes through atomic stores
//! ([`MappedFile::store`]).
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::FlockOperation;
use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};

/// How a file is mapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Read-write, by the one process that holds the file's exclusive lock.
    Writer,
    /// Read-only, beside a writer (or none).
    Reader,
}

/// The first `len` bytes of a file, mapped shared; unmapped on drop (the lock goes with the file).
#[derive(Debug)]
pub(crate) struct MappedFile {
    /// Start of the mapping.
    ptr: NonNull<u8>,
    /// Bytes mapped, > 0.
    len: usize,
    /// How it is mapped.
    access: Access,
    /// The file, kept open: it holds the writer's lock.
    _file: File,
}

// SAFETY: the mapping is owned by the value like a `Vec<u8>`; mutation needs `&mut self` (the writer) or goes
// through atomics, so moving it to or sharing it with another thread is sound.
unsafe impl Send for MappedFile {}
// SAFETY: as above: `&MappedFile` reads through atomic loads only.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// Takes the exclusive lock of `file` without waiting: `Ok(false)` when another process holds it.
    pub(crate) fn lock_exclusive(file: &File) -> io::Result<bool> {
        match rustix::fs::flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Maps the first `len` (> 0) bytes of `file`, whose size the caller checked to be at least `len`.
    ///
    /// A writer must hold the file's exclusive lock ([`MappedFile::lock_exclusive`]).
    pub(crate) fn map(file: File, len: usize, access: Access) -> io::Result<MappedFile> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        let prot = match access {
            Access::Writer => ProtFlags::READ | ProtFlags::WRITE,
            Access::Reader => ProtFlags::READ,
        };
        // SAFETY: a NULL hint lets the kernel choose a fresh address, so no existing memory is replaced; the
        // mapping is owned by the returned value, which unmaps it once.
        let ptr =
            unsafe { rustix::mm::mmap(ptr::null_mut(), len, prot, MapFlags::SHARED, &file, 0) }?;
        let ptr =
            NonNull::new(ptr.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(MappedFile {
            ptr,
            len,
            access,
            _file: file,
        })
    }

    /// Bytes mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The start of the mapping, for registering it with a device driver: it never moves.
    pub(crate) fn start(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes, writable: the writer's alone.
    ///
    /// # Panics
    ///
    /// Never in this crate: a reader's mapping is never borrowed mutably (it is read-only, and a write would
    /// fault), which is checked.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        assert_eq!(
            self.access,
            Access::Writer,
            "a reader's mapping is read-only"
        );
        // SAFETY: `len` writable bytes owned by `self`, borrowed mutably through `&mut self`; other processes
        // only read them.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, as the writer reads them back: only the writer changes them, so its shared borrow sees
    /// no change but its own.
    ///
    /// # Panics
    ///
    /// Never in this crate: a reader's mapping is read through [`MappedFile::load`] and
    /// [`MappedFile::copy_words`] only, which is checked.
    pub(crate) fn writer_slice(&self) -> &[u8] {
        assert_eq!(
            self.access,
            Access::Writer,
            "a reader reads words, never a slice"
        );
        // SAFETY: `len` readable bytes owned by `self`; as the writer holds the file's lock, no other process
        // changes them, and this process changes them only through `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The atomic word at `offset`, or `None` when it is not an aligned word inside the mapping.
    fn word(&self, offset: usize) -> Option<&AtomicU64> {
        if !offset.is_multiple_of(8) || offset.checked_add(8)? > self.len {
            return None;
        }
        // SAFETY: the address is 8-aligned (the mapping is page-aligned, `offset` a multiple of 8) and 8
        // bytes inside the mapping, which lives as long as the borrow of `self`. Every process accesses
        // these bytes atomically or, the writer only, through its exclusive borrow.
        Some(unsafe { AtomicU64::from_ptr(self.ptr.as_ptr().add(offset).cast::<u64>()) })
    }

    /// Loads the little-endian word at `offset` with `order`; 0 outside the mapping.
    pub(crate) fn load(&self, offset: usize, order: Ordering) -> u64 {
        self.word(offset).map_or(0, |w| u64::from_le(w.load(order)))
    }

    /// Stores `value` little-endian at `offset` with `order` (the writer's; nothing outside the mapping).
    pub(crate) fn store(&self, offset: usize, value: u64, order: Ordering) {
        if self.access != Access::Writer {
            return;
        }
        if let Some(w) = self.word(offset) {
            w.store(value.to_le(), order);
        }
    }

    /// Copies the bytes `[offset, offset + out.len())` through relaxed loads of the aligned words that hold
    /// them (the bytes may be changing: the caller checks afterwards that they did not). Bytes outside the
    /// mapping read as 0.
    pub(crate) fn copy_words(&self, offset: usize, out: &mut [u8]) {
        let mut at = offset / 8 * 8;
        let mut skip = offset - at;
        let mut done = 0;
        while done < out.len() {
            let word = self.load(at, Ordering::Relaxed).to_le_bytes();
            let n = (8 - skip).min(out.len() - done);
            out[done..done + n].copy_from_slice(&word[skip..skip + n]);
            done += n;
            skip = 0;
            at += 8;
        }
    }

    /// Writes `[offset, offset + len)` back to the file and waits for it (`msync(MS_SYNC)`), whole pages.
    pub(crate) fn sync(&mut self, offset: usize, len: usize) -> io::Result<()> {
        let page = rustix::param::page_size();
        let start = offset / page * page;
        let end = offset.saturating_add(len).min(self.len);
        if end <= start {
            return Ok(());
        }
        // SAFETY: `[start, end)` lies inside the mapping owned by `self`; msync reads the page tables only.
        unsafe {
            rustix::mm::msync(
                self.ptr.as_ptr().add(start).cast(),
                end - start,
                MsyncFlags::SYNC,
            )
        }?;
        Ok(())
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, and no slice borrowed from it outlives `self`.
        // An unmapping error leaves nothing to undo.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(name: &str, len: usize) -> (std::path::PathBuf, File) {
        let path =
            std::env::temp_dir().join(format!("lizard-mapped-{}-{name}", std::process::id()));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.write_all(&vec![0; len]).unwrap();
        (path, f)
    }

    #[test]
    fn a_writer_publishes_words_a_reader_sees() {
        let (path, f) = file("words", 4096);
        assert!(MappedFile::lock_exclusive(&f).unwrap());
        let mut writer = MappedFile::map(f, 4096, Access::Writer).unwrap();
        writer.as_mut_slice()[16..24].copy_from_slice(b"payload!");
        writer.store(8, 0x1122_3344, Ordering::Release);
        let reader = MappedFile::map(File::open(&path).unwrap(), 4096, Access::Reader).unwrap();
        assert_eq!(reader.load(8, Ordering::Acquire), 0x1122_3344);
        let mut out = [0u8; 8];
        reader.copy_words(16, &mut out);
        assert_eq!(&out, b"payload!");
        // An unaligned start and length read the same bytes.
        let mut part = [0u8; 5];
        reader.copy_words(18, &mut part);
        assert_eq!(&part, b"yload");
        // Unaligned or outside: nothing, never a fault.
        assert_eq!(reader.load(4, Ordering::Relaxed), 0);
        assert_eq!(reader.load(4096, Ordering::Relaxed), 0);
        reader.store(8, 7, Ordering::Relaxed);
        assert_eq!(reader.load(8, Ordering::Relaxed), 0x1122_3344);
        writer.sync(0, 4096).unwrap();
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_second_writer_does_not_get_the_lock() {
        let (path, f) = file("lock", 4096);
        assert!(MappedFile::lock_exclusive(&f).unwrap());
        let other = File::open(&path).unwrap();
        assert!(!MappedFile::lock_exclusive(&other).unwrap());
        drop(f);
        assert!(MappedFile::lock_exclusive(&other).unwrap());
        std::fs::remove_file(&path).unwrap();
    }
}
