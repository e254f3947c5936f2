//! A sampling perf event's ring buffer mapped into the process: the kernel writes one record per period
//! into the ring; [`PerfRing::drain`] copies the whole records written since the last drain and hands the
//! space back. A sampling event is opened as any other ([`PerfSys::perf_event_open`](super::PerfSys)) and
//! its ring mapped through the same seam ([`PerfSys::map_ring`](super::PerfSys::map_ring)).
//!
//! The mapping is the event's first page (`struct perf_event_mmap_page`) followed by a power of two of data
//! pages. The kernel advances `data_head` after writing records; the reader reads `data_head` (acquire),
//! copies the bytes from its own `data_tail` up to it, and stores the new `data_tail` (release), which lets
//! the kernel reuse the space. A ring that fills up makes the kernel drop records and write a
//! `PERF_RECORD_LOST` with their count instead: nothing is overwritten, nothing is lost unannounced.

use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(any(test, feature = "sim"))]
use std::sync::Arc;

use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};

use super::mapping::Mapping;

/// Byte offsets in `struct perf_event_mmap_page` of the ring's fields (Linux uapi `perf_event.h`).
mod offset {
    pub const DATA_HEAD: usize = 1024;
    pub const DATA_TAIL: usize = 1032;
    pub const DATA_OFFSET: usize = 1040;
    pub const DATA_SIZE: usize = 1048;
}

/// Now on CLOCK_MONOTONIC_RAW, the clock this crate's sampling events stamp their records with, in ns.
pub fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // `libc`'s clock_gettime, not `rustix`'s: rustix's crashes under valgrind (rustix issue 1559), and the
    // tests run under valgrind.
    // SAFETY: `ts` is a live, writable timespec; CLOCK_MONOTONIC_RAW exists on every Linux since 2.6.28.
    let ret = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    if ret != 0 {
        return 0;
    }
    u64::try_from(ts.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(ts.tv_nsec).unwrap_or(0))
}

/// The ring buffer of one sampling event, mapped read-write (a read-write mapping is what makes the kernel
/// respect `data_tail` and never overwrite unread records).
#[derive(Debug)]
pub struct PerfRing {
    map: Mapping,
    data_offset: usize,
    data_size: usize,
    tail: u64,
}

/// Why a drain stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RingError {
    /// `data_head` is behind the reader's tail or more than the ring ahead of it: the header is not what
    /// the kernel writes. The ring is skipped to the head.
    #[error("perf ring head {head} is inconsistent with the tail {tail} (ring of {size} bytes)")]
    Inconsistent {
        /// `data_head` as read.
        head: u64,
        /// The reader's tail.
        tail: u64,
        /// The data area's size.
        size: usize,
    },
    /// The bytes written since the last drain are not whole 8-byte words.
    #[error("perf ring holds {bytes} unaligned byte(s)")]
    Unaligned {
        /// Bytes between tail and head.
        bytes: u64,
    },
}

impl PerfRing {
    /// Maps the ring of sampling event `fd`: its first page and `data_pages` pages of data (rounded up to a
    /// power of two, at least one).
    pub fn map(fd: BorrowedFd<'_>, data_pages: usize) -> io::Result<PerfRing> {
        let page = rustix::param::page_size();
        let data_pages = data_pages.max(1).next_power_of_two();
        let len = data_pages
            .checked_add(1)
            .and_then(|n| n.checked_mul(page))
            .ok_or(Errno::NOMEM)?;
        let map = Mapping::new(
            fd,
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED,
        )?;
        let mut ring = PerfRing {
            map,
            data_offset: page,
            data_size: data_pages * page,
            tail: 0,
        };
        // Kernels since 4.1 state where the data area is; before, it is the pages after the first.
        if let Some((offset, size)) = ring.stated_area(len) {
            ring.data_offset = offset;
            ring.data_size = size;
        }
        ring.tail = ring.header(offset::DATA_TAIL).load(Ordering::Relaxed);
        Ok(ring)
    }

    /// The data area the header states (`data_offset`, `data_size`), if it is one: a power of two of bytes
    /// that ends the mapping of `len` bytes.
    fn stated_area(&self, len: usize) -> Option<(usize, usize)> {
        let offset =
            usize::try_from(self.header(offset::DATA_OFFSET).load(Ordering::Relaxed)).ok()?;
        let size = usize::try_from(self.header(offset::DATA_SIZE).load(Ordering::Relaxed)).ok()?;
        (size > 0 && size.is_power_of_two() && offset.checked_add(size) == Some(len))
            .then_some((offset, size))
    }

    /// The data area's size in bytes.
    pub fn capacity(&self) -> usize {
        self.data_size
    }

    /// Appends the records written since the last drain to `out` as 8-byte words (records are whole words)
    /// and hands their space back to the kernel. Returns the number of words appended.
    pub fn drain(&mut self, out: &mut Vec<u64>) -> Result<usize, RingError> {
        let head = self.header(offset::DATA_HEAD).load(Ordering::Acquire);
        let size = self.data_size as u64;
        let bytes = head.wrapping_sub(self.tail);
        if bytes > size {
            let err = RingError::Inconsistent {
                head,
                tail: self.tail,
                size: self.data_size,
            };
            self.release(head);
            return Err(err);
        }
        if !bytes.is_multiple_of(8) {
            self.release(head);
            return Err(RingError::Unaligned { bytes });
        }
        let words = (bytes / 8) as usize;
        out.reserve(words);
        let mut at = self.tail;
        for _ in 0..words {
            let index = (at % size) as usize + self.data_offset;
            // `index` is 8-byte aligned (the data area is page aligned, `at` advances by 8) and
            // `index + 8 <= data_offset + data_size == len`; the kernel wrote these bytes before it
            // published `head`, which was loaded with acquire ordering.
            out.push(self.map.atomic_u64(index).load(Ordering::Relaxed));
            at = at.wrapping_add(8);
        }
        self.release(head);
        Ok(words)
    }

    /// Gives the bytes up to `head` back to the kernel. The tail stays word aligned whatever `head` is (an
    /// unaligned head is never the kernel's), so that every later read is of a whole word in the ring.
    fn release(&mut self, head: u64) {
        let head = head.wrapping_add(7) & !7;
        self.tail = head;
        self.header(offset::DATA_TAIL)
            .store(head, Ordering::Release);
    }

    /// A field of the header page.
    fn header(&self, at: usize) -> &AtomicU64 {
        self.map.atomic_u64(at)
    }
}

/// A ring in ordinary memory, written by the simulated kernel (`cpu::sim`) as the kernel writes a mapped
/// one: a header page stating the data area, then a power of two of data pages. It writes whole records at
/// the head and never over records the reader has not released; a record that does not fit is refused, for
/// the writer to count as lost.
#[cfg(any(test, feature = "sim"))]
#[derive(Debug, Clone)]
pub(crate) struct RingMemory {
    words: Arc<[AtomicU64]>,
    data_offset: usize,
    data_size: usize,
}

#[cfg(any(test, feature = "sim"))]
impl RingMemory {
    /// A ring of `data_pages` pages of `page` bytes (each rounded up to a power of two, at least one page
    /// of at least 2 KiB), its header stating where the data is.
    pub(crate) fn new(data_pages: usize, page: usize) -> RingMemory {
        let page = page.max(offset::DATA_SIZE + 8).next_power_of_two();
        let data_size = data_pages.max(1).next_power_of_two() * page;
        let words: Arc<[AtomicU64]> = (0..(page + data_size) / 8)
            .map(|_| AtomicU64::new(0))
            .collect();
        words[offset::DATA_OFFSET / 8].store(page as u64, Ordering::Relaxed);
        words[offset::DATA_SIZE / 8].store(data_size as u64, Ordering::Relaxed);
        RingMemory {
            words,
            data_offset: page,
            data_size,
        }
    }

    /// The reader's side: a [`PerfRing`] over the same words.
    pub(crate) fn reader(&self) -> PerfRing {
        let map = Mapping::shared(Arc::clone(&self.words));
        PerfRing {
            map,
            data_offset: self.data_offset,
            data_size: self.data_size,
            tail: self.words[offset::DATA_TAIL / 8].load(Ordering::Relaxed),
        }
    }

    /// Writes `record` (whole words) at the head and publishes it, if the space the reader has released
    /// holds it; `false`, writing nothing, if not.
    pub(crate) fn write(&self, record: &[u64]) -> bool {
        let head = self.words[offset::DATA_HEAD / 8].load(Ordering::Relaxed);
        let tail = self.words[offset::DATA_TAIL / 8].load(Ordering::Acquire);
        let bytes = record.len() as u64 * 8;
        if head.wrapping_sub(tail).saturating_add(bytes) > self.data_size as u64 {
            return false;
        }
        let mut at = head;
        for &word in record {
            let index = (at % self.data_size as u64) as usize + self.data_offset;
            self.words[index / 8].store(word, Ordering::Relaxed);
            at = at.wrapping_add(8);
        }
        self.words[offset::DATA_HEAD / 8].store(at, Ordering::Release);
        true
    }
}

#[cfg(test)]
impl PerfRing {
    /// A ring in ordinary memory: a 64-byte header then `data_words` words of data, written by the test as
    /// the kernel would ([`PerfRing::kernel_write`]).
    fn in_memory(data_words: usize) -> PerfRing {
        let header = offset::DATA_SIZE + 8;
        PerfRing {
            map: Mapping::in_memory(header + data_words * 8),
            data_offset: header,
            data_size: data_words * 8,
            tail: 0,
        }
    }

    /// Writes `words` at the head, wrapping, and publishes the new head.
    fn kernel_write(&self, words: &[u64]) {
        let mut head = self.header(offset::DATA_HEAD).load(Ordering::Relaxed);
        for &word in words {
            let at = (head % self.data_size as u64) as usize + self.data_offset;
            self.map.atomic_u64(at).store(word, Ordering::Relaxed);
            head += 8;
        }
        self.header(offset::DATA_HEAD)
            .store(head, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::perf_event_attr::{
        flag, PerfEventAttr, PERF_COUNT_SW_CPU_CLOCK, PERF_TYPE_SOFTWARE,
    };
    use crate::sys::{LinuxPerf, PerfIoctl, PerfSys};
    use perf_record::SampleType;
    use std::os::fd::{AsFd, OwnedFd};

    /// A timer sampling the calling thread every 100 µs of its CPU time, or `None` where perf is missing.
    fn thread_timer() -> Option<OwnedFd> {
        let attr = PerfEventAttr {
            sample_period_or_freq: 100_000,
            sample_type: SampleType(SampleType::TIME),
            flags: flag::DISABLED,
            ..PerfEventAttr::counting(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK)
        }
        .on_clock(crate::sys::perf_event_attr::CLOCK_MONOTONIC_RAW);
        match LinuxPerf.perf_event_open(&attr, 0, -1, None) {
            Ok(fd) => Some(fd),
            Err(e) => {
                test_data::skip!(
                    test_data::Fixture::PerfEvents,
                    "no sampling event here ({e})"
                );
                None
            }
        }
    }

    #[test]
    fn a_drained_ring_holds_whole_sample_records_in_time_order() {
        let Some(fd) = thread_timer() else { return };
        let mut ring = PerfRing::map(fd.as_fd(), 3).unwrap();
        assert_eq!(ring.capacity(), 4 * rustix::param::page_size());
        LinuxPerf.ioctl(fd.as_fd(), PerfIoctl::Enable).unwrap();
        let spin_until = std::time::Instant::now() + std::time::Duration::from_millis(5);
        while std::time::Instant::now() < spin_until {
            std::hint::black_box(0u64);
        }
        LinuxPerf.ioctl(fd.as_fd(), PerfIoctl::Disable).unwrap();
        let mut words = Vec::new();
        let n = ring.drain(&mut words).unwrap();
        assert_eq!(n, words.len());
        // Each record: a header word (type, misc, size) and, for a sample, its time.
        let mut at = 0;
        let mut times = Vec::new();
        while at < words.len() {
            let header = words[at];
            let (kind, size) = (header as u32, (header >> 48) as usize);
            assert!(size >= 8 && size % 8 == 0, "record size {size}");
            if kind == 9 {
                times.push(words[at + 1]);
            }
            at += size / 8;
        }
        assert_eq!(at, words.len(), "whole records only");
        assert!(
            times.len() >= 10,
            "{} samples in 5 ms at 100 us",
            times.len()
        );
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(ring.drain(&mut words).unwrap(), 0, "nothing twice");
    }

    #[test]
    fn records_that_wrap_around_the_end_come_out_whole_and_in_order() {
        let mut ring = PerfRing::in_memory(8);
        let mut out = Vec::new();
        ring.kernel_write(&[1, 2, 3, 4, 5, 6]);
        assert_eq!(ring.drain(&mut out).unwrap(), 6);
        ring.kernel_write(&[7, 8, 9, 10, 11]);
        assert_eq!(ring.drain(&mut out).unwrap(), 5);
        assert_eq!(out, (1..=11).collect::<Vec<u64>>());
        assert_eq!(ring.header(offset::DATA_TAIL).load(Ordering::Relaxed), 88);
    }

    #[test]
    fn a_head_the_kernel_would_never_write_is_an_error_and_the_ring_goes_on() {
        let mut ring = PerfRing::in_memory(4);
        let mut out = Vec::new();
        // More than the ring ahead of the tail.
        ring.header(offset::DATA_HEAD).store(64, Ordering::Release);
        assert_eq!(
            ring.drain(&mut out),
            Err(RingError::Inconsistent {
                head: 64,
                tail: 0,
                size: 32
            })
        );
        // Not a whole word.
        ring.header(offset::DATA_HEAD).store(68, Ordering::Release);
        assert_eq!(ring.drain(&mut out), Err(RingError::Unaligned { bytes: 4 }));
        assert!(out.is_empty());
        // Skipped past the head to a whole word: the next records read normally.
        assert_eq!(ring.header(offset::DATA_TAIL).load(Ordering::Relaxed), 72);
        ring.header(offset::DATA_HEAD).store(72, Ordering::Release);
        ring.kernel_write(&[42, 43]);
        assert_eq!(ring.drain(&mut out).unwrap(), 2);
        assert_eq!(out, [42, 43]);
    }

    #[test]
    fn the_simulated_kernel_writes_whole_records_into_released_space_only() {
        let memory = RingMemory::new(1, 2048);
        let mut ring = memory.reader();
        assert_eq!(ring.capacity(), 2048);
        assert!(memory.write(&[1; 200]));
        assert!(
            !memory.write(&[2; 57]),
            "57 words do not fit in the 56 left"
        );
        assert!(memory.write(&[3; 56]));
        let mut out = Vec::new();
        assert_eq!(ring.drain(&mut out).unwrap(), 256);
        // Released: the next record wraps around the end.
        assert!(memory.write(&[4, 5, 6]));
        out.clear();
        assert_eq!(ring.drain(&mut out).unwrap(), 3);
        assert_eq!(out, [4, 5, 6]);
    }

    #[test]
    fn a_ring_needs_a_perf_event() {
        let file = std::fs::File::open("/proc/self/stat").unwrap();
        assert!(PerfRing::map(file.as_fd(), 1).is_err());
    }
}
