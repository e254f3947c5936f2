//! [`RingReader`]: another process reads a shared ring while its server writes it, taking no lock the server
//! waits on: each record is copied, then its commit word read again; a record the server overwrote meanwhile
//! is not kept.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{fence, Ordering};

use super::layout::{self, field, HEADER_LEN};
use super::walk::{walk, First, Slot};
use super::{RingFormatError, SharedRingError};
use crate::head::RecordHead;
use crate::mapped_file::{Access, MappedFile};
use crate::ring::Directory;

/// Snapshots tried before giving up, when the server keeps overwriting the oldest record under the reader.
const ATTEMPTS: u32 = 1000;

/// One record of a shared ring, copied out whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotRecord {
    /// Its head.
    pub head: RecordHead,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// A consistent range of a shared ring's records: every record whole, sequence numbers consecutive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// What the range holds (`first_seq` to `next_seq - 1`), and what the ring overwrote so far.
    pub directory: Directory,
    /// The records, oldest first.
    pub records: Vec<SnapshotRecord>,
    /// Records lost in servers' crashes so far.
    pub lost_in_crashes: u64,
    /// Times a server picked the ring up.
    pub restarts: u64,
    /// The process id of the last server that wrote it.
    pub writer_pid: u32,
    /// Times the snapshot started again because the server overwrote its first record meanwhile.
    pub retries: u32,
}

/// Where a follower is: the sequence number it reads next and where that record will be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursor {
    /// The sequence number of the next record to read.
    pub next_seq: u64,
    /// Where it will be, once known.
    offset: Option<usize>,
}

/// A shared ring file opened for reading.
#[derive(Debug)]
pub struct RingReader {
    map: MappedFile,
    capacity: usize,
}

impl RingReader {
    /// Opens the shared ring file at `path` read-only, checking its header (a ring of this version whose
    /// geometry holds together).
    pub fn open(path: &Path) -> Result<RingReader, SharedRingError> {
        let io = |what: &'static str| {
            move |source: std::io::Error| SharedRingError::Io {
                path: path.to_owned(),
                what,
                source,
            }
        };
        let mut file = File::open(path).map_err(io("open the ring file"))?;
        let len = file
            .metadata()
            .map_err(io("read the ring file's size"))?
            .len();
        let format = |source| SharedRingError::Format {
            path: path.to_owned(),
            source,
        };
        let mut header = [0u8; 64];
        file.read_exact(&mut header)
            .map_err(|_| format(RingFormatError::NotARing))?;
        let geometry = layout::read_geometry(&header, len).map_err(format)?;
        let capacity =
            usize::try_from(geometry.capacity).map_err(|_| SharedRingError::Capacity {
                capacity: geometry.capacity,
            })?;
        let map = MappedFile::map(file, HEADER_LEN + capacity, Access::Reader)
            .map_err(io("map the ring file"))?;
        Ok(RingReader { map, capacity })
    }

    /// Whether the file at `path` starts as a shared ring does (a saved ring file does not).
    pub fn is_shared_ring(path: &Path) -> bool {
        let mut magic = [0u8; 8];
        File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok_and(|()| magic == layout::MAGIC)
    }

    /// The bytes of records the ring holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn get(&self, at: usize) -> u64 {
        self.map.load(at, Ordering::Acquire)
    }

    /// Copies the records from the one at `offset` with `seq`: first the walk finds them (commit words and
    /// heads), then each is copied and kept only if its commit word is unchanged once it is copied. A record
    /// the server overwrote meanwhile is dropped with every record before it (the server overwrites the
    /// oldest first), so what is kept is a consecutive range. Returns it and where the next record will be.
    fn copy_from(&self, offset: usize, first: First) -> (Vec<SnapshotRecord>, usize, u64) {
        let mut slots = Vec::new();
        let end = walk(&self.map, self.capacity, offset, first, |slot: &Slot| {
            slots.push(*slot);
            true
        });
        let mut records = Vec::with_capacity(slots.len());
        for slot in &slots {
            let mut payload = vec![0u8; slot.head.len as usize];
            self.map.copy_words(slot.payload_offset(), &mut payload);
            fence(Ordering::Acquire);
            if self.map.load(HEADER_LEN + slot.offset, Ordering::Relaxed) != slot.commit {
                records.clear();
                continue;
            }
            records.push(SnapshotRecord {
                head: slot.head,
                payload,
            });
        }
        (records, end.head, end.next_seq)
    }

    /// A consistent snapshot of the records the ring holds now (see [`Snapshot`]).
    pub fn snapshot(&self) -> Snapshot {
        let mut retries = 0;
        let records = loop {
            let start = self.get(field::START);
            let (tail, low) = layout::start_of(start);
            let (records, _, _) = self.copy_from(tail, First::Low(low));
            // Nothing whole although the ring had records: its oldest was overwritten under the reader.
            let emptied = records.is_empty() && self.get(field::START) != start;
            if !emptied || retries >= ATTEMPTS {
                break records;
            }
            retries += 1;
        };
        let first_seq = records
            .first()
            .map_or(self.get(field::NEXT_SEQ), |r| r.head.seq);
        let bytes_used = records
            .iter()
            .map(|r| layout::slot_len(r.payload.len()) as u64)
            .sum();
        Snapshot {
            directory: Directory {
                capacity: self.capacity as u64,
                first_seq,
                next_seq: first_seq + records.len() as u64,
                record_count: records.len() as u64,
                bytes_used,
                records_overwritten: self.get(field::OVERWRITTEN),
            },
            records,
            lost_in_crashes: self.get(field::LOST),
            restarts: self.get(field::RESTARTS),
            writer_pid: u32::try_from(self.get(field::WRITER_PID)).unwrap_or(0),
            retries,
        }
    }

    /// A cursor at the oldest record the ring holds now.
    pub fn cursor(&self) -> Cursor {
        let (tail, low) = layout::start_of(self.get(field::START));
        Cursor {
            next_seq: self.first_of(tail, low),
            offset: Some(tail),
        }
    }

    /// The whole sequence number of the oldest record, at `tail` with the low bits `low`: its head's, or
    /// the header's next one when the ring holds none.
    fn first_of(&self, tail: usize, low: u32) -> u64 {
        let mut first = None;
        walk(&self.map, self.capacity, tail, First::Low(low), |slot| {
            first = Some(slot.head.seq);
            false
        });
        first.unwrap_or_else(|| self.get(field::NEXT_SEQ))
    }

    /// The records committed since `cursor`, oldest first, and how many the reader missed because the ring
    /// overwrote them before it looked; moves the cursor past them.
    pub fn follow(&self, cursor: &mut Cursor) -> (Vec<SnapshotRecord>, u64) {
        let (tail, low) = layout::start_of(self.get(field::START));
        let oldest = self.first_of(tail, low);
        if let Some(offset) = cursor.offset {
            if oldest <= cursor.next_seq {
                let (records, at, next) = self.copy_from(offset, First::Seq(cursor.next_seq));
                // Records overwritten while they were copied are missed too.
                let missed = records.first().map_or(0, |r| r.head.seq - cursor.next_seq);
                if !records.is_empty() {
                    cursor.offset = Some(at);
                    cursor.next_seq = next;
                }
                return (records, missed);
            }
        }
        // The record the cursor waits for was overwritten (or the ring started anew): from the oldest.
        let (records, at, next) = self.copy_from(tail, First::Seq(oldest));
        let first = records.first().map_or(oldest, |r| r.head.seq);
        let missed = first.saturating_sub(cursor.next_seq);
        cursor.offset = Some(at);
        cursor.next_seq = match records.is_empty() {
            true => first,
            false => next,
        };
        (records, missed)
    }
}
