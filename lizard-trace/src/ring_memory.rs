//! Where a [`TraceRing`](crate::TraceRing) keeps its records: private anonymous memory (a record is its head
//! then its payload), or a shared ring file ([`crate::shared_ring`]: a record is its commit word, its head,
//! its payload and padding, and the file's header follows the ring's state) that outlives the server.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::head::HEAD_LEN;
use crate::mapped_file::MappedFile;
use crate::shared_ring::layout::{self, field, HEADER_LEN, NO_COMMIT, WRAP};
use crate::shared_ring::SyncPolicy;
use crate::sys::Anonymous;

/// A ring file mapped by its server.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The whole file: header, then records.
    pub map: MappedFile,
    /// When to write it back.
    pub sync: SyncPolicy,
    /// Records committed since the last write-back.
    since_sync: u64,
    /// When the last write-back was.
    last_sync: Instant,
    /// Write-backs that failed (the records are in memory; a power cut would lose them).
    pub sync_failures: u64,
}

impl Shared {
    /// A mapped ring file written back as `sync` says.
    pub(crate) fn new(map: MappedFile, sync: SyncPolicy) -> Shared {
        Shared {
            map,
            sync,
            since_sync: 0,
            last_sync: Instant::now(),
            sync_failures: 0,
        }
    }

    /// Stores the header word `at`.
    fn set(&self, at: usize, value: u64) {
        self.map.store(at, value, Ordering::Release);
    }

    /// Sets a record's commit word at data offset `pos`.
    fn set_commit(&self, pos: usize, word: u64) {
        self.map.store(HEADER_LEN + pos, word, Ordering::Release);
    }
}

/// The memory of a ring.
#[derive(Debug)]
pub(crate) enum Memory {
    /// Private, gone with the process.
    Anonymous(Anonymous),
    /// A ring file.
    Shared(Box<Shared>),
}

impl Memory {
    /// Where a record's head starts inside its slot.
    pub(crate) fn head_offset(&self) -> usize {
        match self {
            Memory::Anonymous(_) => 0,
            Memory::Shared(_) => layout::COMMIT_LEN,
        }
    }

    /// Bytes a record with `payload_len` bytes of payload takes.
    pub(crate) fn slot_len(&self, payload_len: usize) -> usize {
        match self {
            Memory::Anonymous(_) => HEAD_LEN + payload_len,
            Memory::Shared(_) => layout::slot_len(payload_len),
        }
    }

    /// The records' bytes.
    pub(crate) fn data(&self) -> &[u8] {
        match self {
            Memory::Anonymous(a) => a.as_slice(),
            Memory::Shared(s) => &s.map.writer_slice()[HEADER_LEN..],
        }
    }

    /// The records' bytes, writable.
    pub(crate) fn data_mut(&mut self) -> &mut [u8] {
        match self {
            Memory::Anonymous(a) => a.as_mut_slice(),
            Memory::Shared(s) => &mut s.map.as_mut_slice()[HEADER_LEN..],
        }
    }

    /// The whole memory, for a device driver to pin: page-aligned, and never moving.
    pub(crate) fn pages(&mut self) -> (*mut u8, usize) {
        match self {
            Memory::Anonymous(a) => a.pages(),
            Memory::Shared(s) => (s.map.start(), s.map.len()),
        }
    }

    /// The record `seq` is about to be written: a ring file says so, so that the next server counts it
    /// lost if this one stops before committing it.
    pub(crate) fn claim(&self, seq: u64) {
        if let Memory::Shared(s) = self {
            s.set(field::CLAIMED_SEQ, seq.wrapping_add(1));
        }
    }

    /// The oldest record, at `pos`, was dropped: the ring now starts at `tail` with `first_seq`. A ring file's
    /// header moves first, then the record's commit word goes, before any of its bytes are overwritten.
    pub(crate) fn evicted(&self, pos: usize, tail: usize, first_seq: u64, overwritten: u64) {
        if let Memory::Shared(s) = self {
            s.set(field::START, layout::start_word(tail, first_seq));
            s.set(field::FIRST_SEQ, first_seq);
            s.set(field::OVERWRITTEN, overwritten);
            s.set_commit(pos, NO_COMMIT);
        }
    }

    /// The ring is empty again: the next record goes at offset 0 and gets `next_seq`.
    pub(crate) fn emptied(&self, next_seq: u64) {
        if let Memory::Shared(s) = self {
            s.set(field::START, layout::start_word(0, next_seq));
            s.set(field::FIRST_SEQ, next_seq);
        }
    }

    /// The records at the top end at `pos`; the next one starts at offset 0.
    pub(crate) fn wrapped_at(&self, pos: usize, capacity: usize) {
        if let Memory::Shared(s) = self {
            if pos < capacity {
                s.set_commit(pos, WRAP);
            }
        }
    }

    /// The record `seq` at `pos` is complete (payload and `head` written): a ring file gets its commit word,
    /// then its header's `next_seq`, and is written back if its policy says so.
    pub(crate) fn committed(&mut self, pos: usize, seq: u64, head: &[u8; HEAD_LEN]) {
        if let Memory::Shared(s) = self {
            s.set_commit(pos, layout::commit_word(seq, head));
            s.set(field::NEXT_SEQ, seq + 1);
            s.since_sync += 1;
            let due = match s.sync {
                SyncPolicy::Never => false,
                SyncPolicy::Records(n) => s.since_sync >= n.get(),
                SyncPolicy::Every(period) => s.last_sync.elapsed() >= period,
            };
            if due {
                let len = s.map.len();
                if s.map.sync(0, len).is_err() {
                    s.sync_failures += 1;
                }
                s.since_sync = 0;
                s.last_sync = Instant::now();
            }
        }
    }
}
