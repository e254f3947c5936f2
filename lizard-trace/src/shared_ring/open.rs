//! [`TraceRing::open_shared`]: a server creates a ring file, or picks up the one a server before it left.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering;

use super::layout::{self, field, Geometry, HEADER_LEN, MIN_SLOT, NO_COMMIT, SLOT_ALIGN};
use super::recovery::{Recovery, Trim};
use super::walk::{walk, First};
use super::{SharedRingError, SyncPolicy};
use crate::mapped_file::{Access, MappedFile};
use crate::ring::TraceRing;
use crate::ring_memory::{Memory, Shared};

/// How long a server waits for a ring file's lock before taking it for another server's.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_millis(200);

impl TraceRing {
    /// A ring in the shared ring file at `path`, written back as `sync` says.
    ///
    /// A missing or empty file is created (mode 0600) with `capacity` bytes of records (rounded down to a
    /// multiple of 8; `None` is refused for a new file, as there is nothing to take it from). An existing
    /// file is checked as a hostile input: its header must be a ring of this version whose geometry holds
    /// together (and, with `capacity`, has that capacity), or it is refused and left as it is. Then every
    /// record from its oldest is kept while its commit word is the one its head gives and its sequence
    /// number follows; the records a server had begun and not committed are counted lost, and the next
    /// record gets the sequence number after the last one kept. The file stays locked while the ring lives: a second
    /// server is refused.
    pub fn open_shared(
        path: &Path,
        capacity: Option<usize>,
        sync: SyncPolicy,
    ) -> Result<(TraceRing, Recovery), SharedRingError> {
        let io = |what: &'static str| {
            move |source: std::io::Error| SharedRingError::Io {
                path: path.to_owned(),
                what,
                source,
            }
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io("open the ring file"))?;
        // The lock is briefly held by copies of a descriptor in a child between its fork and its exec: a
        // lock still taken after a while is another server's.
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        while !MappedFile::lock_exclusive(&file).map_err(io("lock the ring file"))? {
            if std::time::Instant::now() >= deadline {
                return Err(SharedRingError::Busy {
                    path: path.to_owned(),
                });
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let len = file
            .metadata()
            .map_err(io("read the ring file's size"))?
            .len();
        let created = len == 0;
        let geometry = match created {
            true => create(&mut file, capacity).map_err(|e| match e {
                Created::Io(source) => SharedRingError::Io {
                    path: path.to_owned(),
                    what: "size the new ring file",
                    source,
                },
                Created::Capacity(capacity) => SharedRingError::Capacity { capacity },
            })?,
            false => {
                let mut header = [0u8; 64];
                (&file)
                    .read_exact(&mut header)
                    .map_err(|_| SharedRingError::Format {
                        path: path.to_owned(),
                        source: super::RingFormatError::NotARing,
                    })?;
                let geometry = layout::read_geometry(&header, len).map_err(|source| {
                    SharedRingError::Format {
                        path: path.to_owned(),
                        source,
                    }
                })?;
                if let Some(asked) = capacity {
                    let asked = (asked / SLOT_ALIGN * SLOT_ALIGN) as u64;
                    if asked != geometry.capacity {
                        return Err(SharedRingError::CapacityMismatch {
                            path: path.to_owned(),
                            file: geometry.capacity,
                            asked,
                        });
                    }
                }
                geometry
            }
        };
        let capacity =
            usize::try_from(geometry.capacity).map_err(|_| SharedRingError::Capacity {
                capacity: geometry.capacity,
            })?;
        let map = MappedFile::map(file, HEADER_LEN + capacity, Access::Writer)
            .map_err(io("map the ring file"))?;
        Ok(pick_up(map, capacity, created, sync))
    }
}

/// Why a new ring file could not be made.
enum Created {
    Io(std::io::Error),
    Capacity(u64),
}

/// Sizes the empty `file` for `capacity` bytes of records and writes its header.
fn create(file: &mut File, capacity: Option<usize>) -> Result<Geometry, Created> {
    let capacity = capacity.unwrap_or(0) / SLOT_ALIGN * SLOT_ALIGN;
    if capacity < MIN_SLOT {
        return Err(Created::Capacity(capacity as u64));
    }
    let geometry = Geometry {
        capacity: capacity as u64,
    };
    file.set_len((HEADER_LEN + capacity) as u64)
        .map_err(Created::Io)?;
    let header = layout::header_bytes(geometry, realtime_ns(), std::process::id());
    file.write_all(&header).map_err(Created::Io)?;
    Ok(geometry)
}

/// CLOCK_REALTIME in nanoseconds (0 before 1970).
fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The ring in `map`: every whole record from the oldest kept, the rest counted, the header made to say so.
fn pick_up(
    map: MappedFile,
    capacity: usize,
    created: bool,
    sync: SyncPolicy,
) -> (TraceRing, Recovery) {
    let get = |at| map.load(at, Ordering::Acquire);
    let (tail, low) = layout::start_of(get(field::START));
    // Numbers past what a ring can count are damage: they count for nothing.
    let sane = |n: u64| if n < layout::MAX_SEQ { n } else { 0 };
    let (header_next, claimed) = (sane(get(field::NEXT_SEQ)), sane(get(field::CLAIMED_SEQ)));
    let previous_writer = u32::try_from(get(field::WRITER_PID)).unwrap_or(0);
    // A tail outside the data, or not at a slot, keeps nothing: every record the header counted is lost.
    let tail = Some(tail)
        .filter(|&t| t < capacity && t.is_multiple_of(SLOT_ALIGN))
        .unwrap_or(capacity);
    let end = walk(&map, capacity, tail, First::Low(low), |_| true);
    // The records go on from the last whole one, so that the sequence stays continuous; those a server
    // had begun (or, in a damaged file, counted) after it are lost, and counted. Without a whole record,
    // they go on from the header's count.
    let next_seq = match end.count {
        0 => header_next,
        _ => end.next_seq,
    };
    let first_seq = next_seq - end.count;
    let lost = header_next.max(claimed).saturating_sub(next_seq);
    let trim = end.torn.clone().map(|(offset, reason)| Trim {
        offset: offset as u64,
        seq: next_seq,
        reason,
    });
    let (tail, head, wrap_end) = match end.count {
        0 => (0, 0, None),
        _ => (tail, end.head, end.wrap_end),
    };
    // The place after the last record may hold a torn or stale commit word: it no longer names anything.
    if end.count > 0 && head < capacity {
        map.store(HEADER_LEN + head, NO_COMMIT, Ordering::Release);
    }
    let (kept_first, restarts) = match created {
        true => (next_seq, 0),
        false => (first_seq, sane(get(field::RESTARTS)) + 1),
    };
    let kept_first = match end.count {
        0 => next_seq,
        _ => kept_first,
    };
    let lost_in_all = sane(get(field::LOST)) + lost;
    let set = |at, value| map.store(at, value, Ordering::Release);
    set(field::START, layout::start_word(tail, kept_first));
    set(field::FIRST_SEQ, kept_first);
    set(field::NEXT_SEQ, next_seq);
    set(field::CLAIMED_SEQ, next_seq);
    set(field::LOST, lost_in_all);
    set(field::RESTARTS, restarts);
    set(field::WRITER_PID, u64::from(std::process::id()));
    let overwritten = sane(get(field::OVERWRITTEN));
    let recovery = Recovery {
        created,
        kept: end.count,
        first_seq: kept_first,
        next_seq,
        lost,
        trim,
        lost_in_all,
        restarts,
        previous_writer,
    };
    let memory = Memory::Shared(Box::new(Shared::new(map, sync)));
    let ring = TraceRing::from_memory(
        memory,
        capacity,
        (tail, head, wrap_end),
        (end.count, end.bytes),
        (kept_first, next_seq, overwritten),
    );
    (ring, recovery)
}
