//! [`TraceRing`]: the server-private, fixed-capacity ring that overwrites its oldest records.

use std::fmt;

use crate::error::RingError;
use crate::head::{RecordHead, RecordMeta, HEAD_LEN};
use crate::ledger::ClientLedger;
use crate::ring_memory::Memory;
use crate::sys::Anonymous;

/// The ring's directory: what it holds and what it lost. With the `serde` feature it serializes as a map of
/// its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Directory {
    /// Bytes the ring may use for records (heads and payloads).
    pub capacity: u64,
    /// Sequence number of the oldest record held; equals `next_seq` when the ring is empty.
    pub first_seq: u64,
    /// Sequence number the next record will get; also the number of records ever stored.
    pub next_seq: u64,
    /// Records held.
    pub record_count: u64,
    /// Bytes held by records (heads and payloads), never more than `capacity`.
    pub bytes_used: u64,
    /// Records dropped to make room for newer ones.
    pub records_overwritten: u64,
}

/// A stored record: its head and a view of its payload inside the ring.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// The decoded head.
    head: RecordHead,
    /// The payload bytes.
    payload: &'a [u8],
}

impl<'a> Record<'a> {
    /// Makes a record view from its parts (used by readers of other stores of the same format).
    pub fn new(head: RecordHead, payload: &'a [u8]) -> Self {
        Record { head, payload }
    }

    /// The whole head.
    pub fn head(&self) -> &RecordHead {
        &self.head
    }

    /// The ring's sequence number of this record.
    pub fn seq(&self) -> u64 {
        self.head.seq
    }

    /// The module tag.
    pub fn module(&self) -> &str {
        self.head.meta.module.as_str()
    }

    /// The source file name.
    pub fn file(&self) -> &str {
        self.head.meta.file.as_str()
    }

    /// The source line.
    pub fn line(&self) -> u32 {
        self.head.meta.line
    }

    /// `CLOCK_MONOTONIC_RAW` nanoseconds when the client recorded it.
    pub fn timestamp_ns(&self) -> u64 {
        self.head.meta.timestamp_ns
    }

    /// Process id of the client that sent it.
    pub fn client_pid(&self) -> u32 {
        self.head.meta.client_pid
    }

    /// The client's own sequence number for it.
    pub fn client_seq(&self) -> u64 {
        self.head.meta.client_seq
    }

    /// The payload.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }
}

impl fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("head", &self.head)
            .field("payload_len", &self.payload.len())
            .finish()
    }
}

/// A bounded ring of trace records that overwrites the oldest ones when a new one does not fit.
///
/// Each record is its 100-byte head ([`crate::head`]) followed by its payload, stored contiguously: a record that
/// does not fit before the end of the buffer starts again at offset 0, and the unused tail is skipped. The buffer
/// is mapped once at creation (anonymous memory, `capacity` bytes) and never grows or moves; pages are touched
/// only as records reach them. Because it never moves, a server can register it with the CUDA driver and copy
/// device memory straight into it. Every stored record gets the next sequence number, so a reader that remembers the last sequence it saw
/// learns exactly how many records were overwritten since ([`TraceRing::since`]).
///
/// Call contract: [`TraceRing::push`] stores; [`TraceRing::iter`], [`TraceRing::since`] and
/// [`TraceRing::window`] read, oldest first; [`TraceRing::directory`] summarises. Saving and loading are in
/// [`crate::ring_file`].
pub struct TraceRing {
    /// Record bytes: `capacity` bytes of anonymous memory, or a ring file's.
    buf: Memory,
    /// The ring capacity.
    capacity: usize,
    /// Offset of the oldest record.
    tail: usize,
    /// Offset one past the newest record.
    head: usize,
    /// While records wrap around: the end of the records at the top of the buffer.
    wrap_end: Option<usize>,
    /// Records held.
    count: u64,
    /// Sequence number of the oldest record.
    first_seq: u64,
    /// Sequence number of the next record.
    next_seq: u64,
    /// Bytes held by records.
    bytes_used: u64,
    /// Records overwritten.
    overwritten: u64,
    /// What each client stored, lost and had refused.
    ledger: ClientLedger,
}

impl fmt::Debug for TraceRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceRing")
            .field("directory", &self.directory())
            .finish()
    }
}

impl TraceRing {
    /// The smallest capacity: one head with an empty payload.
    pub const MIN_CAPACITY: usize = HEAD_LEN;

    /// An empty ring holding at most `capacity` bytes of records; sequence numbers start at 0.
    pub fn new(capacity: usize) -> Result<TraceRing, RingError> {
        Self::with_start(capacity, 0, 0)
    }

    /// An empty ring whose next record gets `next_seq`, as after `overwritten` records were dropped.
    pub(crate) fn with_start(
        capacity: usize,
        next_seq: u64,
        overwritten: u64,
    ) -> Result<TraceRing, RingError> {
        if capacity < Self::MIN_CAPACITY {
            return Err(RingError::CapacityTooSmall {
                capacity,
                min: Self::MIN_CAPACITY,
            });
        }
        let buf = Anonymous::new(capacity).map_err(|_| RingError::Alloc { capacity })?;
        Ok(TraceRing {
            buf: Memory::Anonymous(buf),
            capacity,
            tail: 0,
            head: 0,
            wrap_end: None,
            count: 0,
            first_seq: next_seq,
            next_seq,
            bytes_used: 0,
            overwritten,
            ledger: ClientLedger::new(),
        })
    }

    /// A ring over `buf` holding the records a walk found: from `tail` (the oldest, `first_seq`) to `head`,
    /// wrapping at `wrap_end`; its next record gets `next_seq`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_memory(
        buf: Memory,
        capacity: usize,
        (tail, head, wrap_end): (usize, usize, Option<usize>),
        (count, bytes_used): (u64, u64),
        (first_seq, next_seq, overwritten): (u64, u64, u64),
    ) -> TraceRing {
        TraceRing {
            buf,
            capacity,
            tail,
            head,
            wrap_end,
            count,
            first_seq,
            next_seq,
            bytes_used,
            overwritten,
            ledger: ClientLedger::new(),
        }
    }

    /// The bytes a record with `payload_len` bytes of payload takes in this ring (its head, its payload and,
    /// in a shared ring file, its commit word and padding).
    pub fn footprint(&self, payload_len: usize) -> u64 {
        match payload_len > self.capacity {
            true => (HEAD_LEN + payload_len) as u64,
            false => self.buf.slot_len(payload_len) as u64,
        }
    }

    /// Whether the ring lives in a shared ring file.
    pub fn is_shared(&self) -> bool {
        matches!(self.buf, Memory::Shared(_))
    }

    /// Write-backs of a shared ring file that failed ([`crate::shared_ring::SyncPolicy`]); 0 otherwise.
    pub fn sync_failures(&self) -> u64 {
        match &self.buf {
            Memory::Shared(s) => s.sync_failures,
            Memory::Anonymous(_) => 0,
        }
    }

    /// A ring of capacity 0 that allocates nothing and stores nothing: what a stopped server keeps.
    pub(crate) fn unallocated() -> TraceRing {
        TraceRing {
            buf: Memory::Anonymous(Anonymous::empty()),
            capacity: 0,
            tail: 0,
            head: 0,
            wrap_end: None,
            count: 0,
            first_seq: 0,
            next_seq: 0,
            bytes_used: 0,
            overwritten: 0,
            ledger: ClientLedger::new(),
        }
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the ring holds no record.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The directory.
    pub fn directory(&self) -> Directory {
        Directory {
            capacity: self.capacity as u64,
            first_seq: self.first_seq,
            next_seq: self.next_seq,
            record_count: self.count,
            bytes_used: self.bytes_used,
            records_overwritten: self.overwritten,
        }
    }

    /// Stores a record, overwriting the oldest records until it fits, and returns its sequence number.
    ///
    /// Fails only when head plus payload exceed the capacity; the ring is then unchanged.
    pub fn push(&mut self, meta: &RecordMeta, payload: &[u8]) -> Result<u64, RingError> {
        self.push_noting(meta, payload, |_, _| {})
    }

    /// Like [`push`](Self::push), calling `overwritten(client_pid, bytes)` for every record it overwrites to
    /// make room (what a server keeping each client's share needs).
    pub fn push_noting(
        &mut self,
        meta: &RecordMeta,
        payload: &[u8],
        mut overwritten: impl FnMut(u32, u64),
    ) -> Result<u64, RingError> {
        let seq = self.next_seq;
        let (size, len) = self.record_size(payload)?;
        let pos = loop {
            if let Some(pos) = self.free_slot(size) {
                break pos;
            }
            let (pid, bytes) = self.evict_oldest();
            self.ledger.note_overwritten(pid);
            overwritten(pid, bytes);
        };
        self.buf.claim(seq);
        self.write_record(pos, seq, len, meta, payload);
        self.ledger.note_stored(meta.client_pid, &meta.origin);
        self.next_seq += 1;
        Ok(seq)
    }

    /// What each client process stored, lost to overwriting and had refused.
    pub fn ledger(&self) -> &ClientLedger {
        &self.ledger
    }

    /// Counts a message of `pid` that was refused, so the ledger (and a saved ring) says whose it was.
    pub fn note_refused(&mut self, pid: u32) {
        self.ledger.note_refused(pid);
    }

    /// The ledger, for the loader to restore.
    pub(crate) fn ledger_mut(&mut self) -> &mut ClientLedger {
        &mut self.ledger
    }

    /// The client process of the oldest record, the next to be overwritten (`None` when empty).
    pub fn oldest_client(&self) -> Option<u32> {
        self.iter().next().map(|r| r.client_pid())
    }

    /// Whether a record with `payload_len` bytes of payload would be stored without overwriting any.
    pub fn fits_without_overwriting(&self, payload_len: usize) -> bool {
        if payload_len > self.capacity {
            return false;
        }
        let size = self.buf.slot_len(payload_len);
        if size > self.capacity {
            return false;
        }
        if self.count == 0 {
            return true;
        }
        match self.wrap_end {
            None => self.capacity - self.head >= size || self.tail >= size,
            Some(_) => self.tail - self.head >= size,
        }
    }

    /// Head plus payload size of a record, if it can fit the ring at all.
    fn record_size(&self, payload: &[u8]) -> Result<(usize, u32), RingError> {
        let size = match payload.len() > self.capacity {
            true => HEAD_LEN as u64 + payload.len() as u64,
            false => self.buf.slot_len(payload.len()) as u64,
        };
        match u32::try_from(payload.len()) {
            Ok(len) if size <= self.capacity as u64 => Ok((size as usize, len)),
            _ => Err(RingError::RecordTooLarge {
                size,
                capacity: self.capacity,
            }),
        }
    }

    /// Writes a record at `pos`, where [`Self::free_slot`] or [`Self::restore_record`] found room.
    fn write_record(&mut self, pos: usize, seq: u64, len: u32, meta: &RecordMeta, payload: &[u8]) {
        let start = pos + self.buf.head_offset() + HEAD_LEN;
        self.buf.data_mut()[start..start + payload.len()].copy_from_slice(payload);
        self.commit_record(pos, seq, len, meta);
    }

    /// Writes the head of a record whose payload is already in place at `pos + HEAD_LEN`, and counts it.
    fn commit_record(&mut self, pos: usize, seq: u64, len: u32, meta: &RecordMeta) {
        let size = self.buf.slot_len(len as usize);
        let head = RecordHead {
            seq,
            len,
            meta: *meta,
        };
        let at = pos + self.buf.head_offset();
        let encoded = head.encode();
        self.buf.data_mut()[at..at + HEAD_LEN].copy_from_slice(&encoded);
        self.buf.committed(pos, seq, &encoded);
        self.head = pos + size;
        self.count += 1;
        self.bytes_used += size as u64;
    }

    /// Stores a record of `len` payload bytes that `fill` writes straight into the ring (a device copy needs no
    /// buffer of its own), overwriting the oldest records until it fits, and returns its sequence number.
    ///
    /// When `fill` fails the record is not stored and its error is returned inside `Ok`; the records it
    /// overwrote to make room stay overwritten (and counted). Fails with [`RingError`] only when the record
    /// exceeds the capacity; the ring is then unchanged.
    ///
    /// `fill` may complete `meta` too (a copy's time, say) before the head is written.
    pub fn push_filled<E>(
        &mut self,
        mut meta: RecordMeta,
        len: u32,
        fill: impl FnOnce(&mut [u8], &mut RecordMeta) -> Result<(), E>,
        mut overwritten: impl FnMut(u32, u64),
    ) -> Result<Result<u64, E>, RingError> {
        let seq = self.next_seq;
        let size = match u64::from(len) > self.capacity as u64 {
            true => HEAD_LEN as u64 + u64::from(len),
            false => self.buf.slot_len(len as usize) as u64,
        };
        if size > self.capacity as u64 {
            return Err(RingError::RecordTooLarge {
                size,
                capacity: self.capacity,
            });
        }
        let size = size as usize;
        let (pos, before) = loop {
            let before = (self.head, self.wrap_end);
            if let Some(pos) = self.free_slot(size) {
                break (pos, before);
            }
            let (pid, bytes) = self.evict_oldest();
            self.ledger.note_overwritten(pid);
            overwritten(pid, bytes);
        };
        self.buf.claim(seq);
        let start = pos + self.buf.head_offset() + HEAD_LEN;
        if let Err(err) = fill(
            &mut self.buf.data_mut()[start..start + len as usize],
            &mut meta,
        ) {
            // `free_slot` may have started wrapping for this record: undo that, the slot stays free.
            if self.count > 0 {
                (self.head, self.wrap_end) = before;
            }
            // Nothing was left half-written: the claim goes back.
            self.buf.claim(seq.wrapping_sub(1));
            return Ok(Err(err));
        }
        self.commit_record(pos, seq, len, &meta);
        self.ledger.note_stored(meta.client_pid, &meta.origin);
        self.next_seq += 1;
        Ok(Ok(seq))
    }

    /// The ring's memory, for registering it with a device driver: its address never changes while the ring
    /// lives, and its length is whole pages (drivers register page-aligned ranges), the capacity rounded up.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn memory(&mut self) -> (*mut u8, usize) {
        self.buf.pages()
    }

    /// Offset of the oldest record in the buffer (0 when empty): with the records, it fixes the layout.
    pub(crate) fn oldest_offset(&self) -> usize {
        self.tail
    }

    /// Starts restoring a saved ring: the first restored record goes at `oldest_offset`.
    pub(crate) fn restore_start(&mut self, oldest_offset: usize) {
        self.tail = oldest_offset;
        self.head = oldest_offset;
    }

    /// Appends a saved record where the original ring had it: after the previous one, or at offset 0 when it
    /// did not fit before the end. Fails when it would overlap the oldest record or pass the end.
    pub(crate) fn restore_record(
        &mut self,
        seq: u64,
        meta: &RecordMeta,
        payload: &[u8],
    ) -> Result<(), RingError> {
        let (size, len) = self.record_size(payload)?;
        let too_large = RingError::RecordTooLarge {
            size: size as u64,
            capacity: self.capacity,
        };
        let mut pos = self.head;
        if self.wrap_end.is_none() && pos + size > self.capacity {
            if self.count == 0 {
                return Err(too_large);
            }
            self.wrap_end = Some(pos);
            pos = 0;
        }
        let limit = if self.wrap_end.is_some() {
            self.tail
        } else {
            self.capacity
        };
        if pos + size > limit {
            return Err(too_large);
        }
        self.write_record(pos, seq, len, meta, payload);
        Ok(())
    }

    /// Sets the sequence number of the next record (after loading records with their own numbers).
    pub(crate) fn set_next_seq(&mut self, next_seq: u64) {
        self.next_seq = next_seq;
    }

    /// Where a record of `size` bytes can go without overwriting, if anywhere; may start wrapping.
    fn free_slot(&mut self, size: usize) -> Option<usize> {
        if self.count == 0 {
            self.tail = 0;
            self.head = 0;
            self.wrap_end = None;
            self.buf.emptied(self.next_seq);
            return Some(0);
        }
        match self.wrap_end {
            None if self.capacity - self.head >= size => Some(self.head),
            None if self.tail >= size => {
                self.wrap_end = Some(self.head);
                self.buf.wrapped_at(self.head, self.capacity);
                Some(0)
            }
            None => None,
            Some(_) if self.tail - self.head >= size => Some(self.head),
            Some(_) => None,
        }
    }

    /// Drops the oldest record; returns its client's process id and its size.
    fn evict_oldest(&mut self) -> (u32, u64) {
        let evicted = self.tail;
        let size = self.record_size_at(self.tail);
        let mut pid = [0; 4];
        let at = self.tail + self.buf.head_offset() + 54;
        pid.copy_from_slice(&self.buf.data()[at..at + 4]);
        self.tail += size;
        self.count -= 1;
        self.bytes_used -= size as u64;
        self.first_seq += 1;
        self.overwritten += 1;
        if self.wrap_end == Some(self.tail) {
            self.tail = 0;
            self.wrap_end = None;
        }
        if self.count == 0 {
            self.tail = 0;
            self.head = 0;
            self.wrap_end = None;
        }
        self.buf
            .evicted(evicted, self.tail, self.first_seq, self.overwritten);
        (u32::from_le_bytes(pid), size as u64)
    }

    /// Size of the record stored at `pos` (head plus payload).
    fn record_size_at(&self, pos: usize) -> usize {
        let mut len = [0; 4];
        let at = pos + self.buf.head_offset() + 8;
        len.copy_from_slice(&self.buf.data()[at..at + 4]);
        self.buf.slot_len(u32::from_le_bytes(len) as usize)
    }

    /// The number of records of client process `pid` the ring holds now.
    pub fn held_by(&self, pid: u32) -> usize {
        self.iter().filter(|r| r.client_pid() == pid).count()
    }

    /// All records, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            ring: self,
            pos: self.tail,
            left: self.count,
        }
    }

    /// The record with sequence number `seq`, if still held.
    pub fn get(&self, seq: u64) -> Option<Record<'_>> {
        if seq < self.first_seq || seq >= self.next_seq {
            return None;
        }
        self.iter().nth((seq - self.first_seq) as usize)
    }

    /// The records a reader has not seen yet, given the sequence number it expects next, and how many it missed
    /// because they were overwritten first.
    pub fn since(&self, next_expected: u64) -> Since<'_> {
        let missed = self.first_seq.saturating_sub(next_expected);
        let skip = next_expected.saturating_sub(self.first_seq).min(self.count);
        let mut records = self.iter();
        records.advance(skip);
        Since { missed, records }
    }

    /// The records whose timestamp lies in `[start_ns, end_ns)`, oldest first. Timestamps come from many
    /// clients, so they are filtered, not assumed sorted.
    pub fn window(&self, start_ns: u64, end_ns: u64) -> impl Iterator<Item = Record<'_>> + '_ {
        self.iter()
            .filter(move |r| r.timestamp_ns() >= start_ns && r.timestamp_ns() < end_ns)
    }
}

/// Iterator over a ring's records, oldest first.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    /// The ring.
    ring: &'a TraceRing,
    /// Offset of the next record.
    pos: usize,
    /// Records left.
    left: u64,
}

impl Iter<'_> {
    /// Skips `n` records.
    fn advance(&mut self, n: u64) {
        for _ in 0..n {
            if self.left == 0 {
                return;
            }
            self.step_wrap();
            self.pos += self.ring.record_size_at(self.pos);
            self.left -= 1;
        }
    }

    /// Moves to offset 0 when the records at the top of the buffer are done.
    fn step_wrap(&mut self) {
        if self.ring.wrap_end == Some(self.pos) {
            self.pos = 0;
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        if self.left == 0 {
            return None;
        }
        self.step_wrap();
        let buf = self.ring.buf.data();
        // The ring stores only heads it encoded itself, so decoding cannot fail; stop if it ever did.
        let at = self.pos + self.ring.buf.head_offset();
        let head = RecordHead::decode(buf.get(at..)?).ok()?;
        let start = at + HEAD_LEN;
        let payload = buf.get(start..start + head.len as usize)?;
        self.pos += self.ring.buf.slot_len(payload.len());
        self.left -= 1;
        Some(Record { head, payload })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}

/// What [`TraceRing::since`] returns.
#[derive(Debug, Clone)]
pub struct Since<'a> {
    /// Records the reader expected that were overwritten before it read them: the gap it must report.
    pub missed: u64,
    /// The records from the expected sequence number (or the oldest held, if that is later) on.
    pub records: Iter<'a>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(i: u64) -> RecordMeta {
        RecordMeta {
            client_seq: i,
            timestamp_ns: i * 10,
            ..RecordMeta::new("m", "f.rs", 1).unwrap()
        }
    }

    #[test]
    fn capacity_below_one_head_is_rejected() {
        assert_eq!(
            TraceRing::new(99).unwrap_err(),
            RingError::CapacityTooSmall {
                capacity: 99,
                min: 100
            }
        );
        let mut ring = TraceRing::new(100).unwrap();
        assert_eq!(ring.push(&meta(0), b"").unwrap(), 0);
        assert_eq!(ring.push(&meta(1), b"").unwrap(), 1);
        assert_eq!(ring.len(), 1);
        assert_eq!(
            ring.push(&meta(2), b"x"),
            Err(RingError::RecordTooLarge {
                size: 101,
                capacity: 100
            })
        );
        assert_eq!(ring.directory().next_seq, 2);
    }

    #[test]
    fn oversized_push_leaves_the_ring_unchanged() {
        let mut ring = TraceRing::new(200).unwrap();
        ring.push(&meta(0), &[1; 50]).unwrap();
        let before = ring.directory();
        assert!(ring.push(&meta(1), &[0; 135]).is_err());
        assert_eq!(ring.directory(), before);
        assert_eq!(ring.iter().next().unwrap().payload(), &[1; 50]);
    }

    #[test]
    fn unseen_records_and_missed_count() {
        let mut ring = TraceRing::new(3 * (HEAD_LEN + 4)).unwrap();
        for i in 0..5u64 {
            ring.push(&meta(i), &(i as u32).to_le_bytes()).unwrap();
        }
        // Holds 2, 3, 4.
        let since = ring.since(1);
        assert_eq!(since.missed, 1);
        assert_eq!(
            since.records.map(|r| r.seq()).collect::<Vec<_>>(),
            [2, 3, 4]
        );
        let since = ring.since(4);
        assert_eq!(since.missed, 0);
        assert_eq!(since.records.map(|r| r.seq()).collect::<Vec<_>>(), [4]);
        assert_eq!(ring.since(9).records.count(), 0);
        assert_eq!(ring.get(3).unwrap().payload(), &3u32.to_le_bytes());
        assert!(ring.get(1).is_none());
        assert!(ring.get(5).is_none());
    }

    #[test]
    fn a_failed_fill_stores_nothing_and_leaves_the_ring_consistent() {
        let mut ring = TraceRing::new(4 * (HEAD_LEN + 10)).unwrap();
        for i in 0..3u64 {
            ring.push(&meta(i), &[i as u8; 10]).unwrap();
        }
        // A record that must wrap to offset 0, evicting the oldest, whose fill then fails.
        let failed = ring
            .push_filled(meta(9), 20, |_, _| Err("device gone"), |_, _| {})
            .unwrap();
        assert_eq!(failed, Err("device gone"));
        assert_eq!(ring.directory().next_seq, 3);
        let seqs: Vec<u64> = ring.iter().map(|r| r.seq()).collect();
        assert_eq!(seqs, [2]);
        assert_eq!(ring.directory().records_overwritten, 2);
        // The ring goes on as if the failed record had never been asked for.
        let seq = ring
            .push_filled(
                meta(3),
                10,
                |dst, meta| {
                    dst.fill(7);
                    meta.stored_ns = 5;
                    Ok::<(), ()>(())
                },
                |_, _| {},
            )
            .unwrap()
            .unwrap();
        assert_eq!(seq, 3);
        let records: Vec<_> = ring
            .iter()
            .map(|r| (r.seq(), r.payload().to_vec()))
            .collect();
        assert_eq!(records, [(2, vec![2; 10]), (3, vec![7; 10])]);
        assert_eq!(ring.get(3).unwrap().head().meta.stored_ns, 5);
        assert!(ring
            .push_filled(
                meta(4),
                4 * (HEAD_LEN as u32 + 10),
                |_, _| Ok::<(), ()>(()),
                |_, _| {}
            )
            .is_err());
    }

    #[test]
    fn window_is_half_open() {
        let mut ring = TraceRing::new(4096).unwrap();
        for i in 0..10u64 {
            ring.push(&meta(i), b"").unwrap();
        }
        let seqs: Vec<u64> = ring.window(20, 50).map(|r| r.seq()).collect();
        assert_eq!(seqs, [2, 3, 4]);
    }
}
