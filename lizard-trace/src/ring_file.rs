//! Saving a [`TraceRing`] to a file and loading it back (format version 3, little-endian).
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 8 | magic `LZTRRING` |
//! | 8 | 4 | format version, [`RING_FILE_VERSION`] |
//! | 12 | 4 | record head size, 100 |
//! | 16 | 8 | capacity |
//! | 24 | 8 | first sequence number |
//! | 32 | 8 | next sequence number |
//! | 40 | 8 | record count |
//! | 48 | 8 | bytes used |
//! | 56 | 8 | records overwritten |
//! | 64 | 8 | offset of the oldest record in the ring buffer, so a loaded ring overwrites exactly as the saved one |
//! | 72 | … | the records, oldest first, each a head ([`crate::head`]) and its payload, nothing between them |
//! | … | 4 | number of client accounts (version 2 on), at most [`ClientLedger::MAX_ACCOUNTS`] |
//! | … | 52 each | the accounts by ascending pid: pid (4), records stored (8), overwritten (8), messages refused (8), connections refused (8), device records stored with the client waiting for the copy (8) and without (8) |
//!
//! Older files still load. Version 2 files hold 66-byte record heads (version 1 of [`crate::head`], without
//! the origin of the payload) and 36-byte accounts (without the device counts); version 1 files end after the
//! records. Their records load with [`crate::head::Origin::Unknown`], laid out from offset 0 in a ring whose
//! capacity is grown by the 34 bytes each record's head gained, so that every record of the file is kept.
//!
//! Loading checks everything before trusting it: the directory against itself, each head, each sequence number
//! against its position, every length against the capacity (nothing is allocated from a length in the file
//! beyond the capacity, itself bounded by the caller), and that nothing follows the last record.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use crate::error::RingFileError;
use crate::head::{RecordHead, HEAD_LEN, HEAD_LEN_V1};
use crate::ledger::{ClientAccount, ClientLedger};
use crate::ring::TraceRing;

/// The ring file format version written; versions 1 and 2 are still read.
pub const RING_FILE_VERSION: u32 = 3;

/// Bytes of one saved client account.
const ACCOUNT_LEN: usize = 52;

/// Bytes of one client account in a version 2 file.
const ACCOUNT_LEN_V2: usize = 36;

/// First bytes of a ring file.
pub const RING_FILE_MAGIC: [u8; 8] = *b"LZTRRING";

/// Bytes before the first record.
pub const RING_FILE_HEADER_LEN: usize = 72;

/// The largest capacity [`TraceRing::load`] accepts (1 GiB); use [`TraceRing::read_from`] for another limit.
pub const DEFAULT_LOAD_LIMIT: u64 = 1 << 30;

/// Reads exactly `buf.len()` bytes, reporting a short file as [`RingFileError::Truncated`].
fn read_exact_or<R: Read>(
    reader: &mut R,
    buf: &mut [u8],
    what: &'static str,
) -> Result<(), RingFileError> {
    reader.read_exact(buf).map_err(|err| {
        if err.kind() == io::ErrorKind::UnexpectedEof {
            RingFileError::Truncated { what }
        } else {
            RingFileError::Io(err)
        }
    })
}

/// Little-endian u64 at `at`.
fn u64_at(bytes: &[u8; RING_FILE_HEADER_LEN], at: usize) -> u64 {
    let mut v = [0; 8];
    v.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(v)
}

/// Little-endian u32 at `at`.
fn u32_at(bytes: &[u8; RING_FILE_HEADER_LEN], at: usize) -> u32 {
    let mut v = [0; 4];
    v.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(v)
}

/// Reads the ledger section: a count, then that many accounts by ascending pid, of `account_len` bytes each
/// (52, or 36 in a version 2 file, whose accounts have no device counts).
fn read_ledger<R: Read>(
    input: &mut R,
    ledger: &mut ClientLedger,
    account_len: usize,
) -> Result<(), RingFileError> {
    let mut count = [0u8; 4];
    read_exact_or(input, &mut count, "the client ledger")?;
    let count = u32::from_le_bytes(count);
    if count as usize > ClientLedger::MAX_ACCOUNTS {
        return Err(RingFileError::Ledger {
            index: u64::from(count),
        });
    }
    for index in 0..count {
        let mut bytes = [0u8; ACCOUNT_LEN];
        read_exact_or(input, &mut bytes[..account_len], "a client account")?;
        let u64_at = |at: usize| {
            let mut v = [0; 8];
            v.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(v)
        };
        let account = ClientAccount {
            pid: u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
            stored: u64_at(4),
            overwritten: u64_at(12),
            refused: u64_at(20),
            connections_refused: u64_at(28),
            device_sync: u64_at(36),
            device_async: u64_at(44),
        };
        let device = account.device_sync.checked_add(account.device_async);
        if account.overwritten > account.stored
            || device.is_none_or(|device| device > account.stored)
            || !ledger.restore(account)
        {
            return Err(RingFileError::Ledger {
                index: u64::from(index),
            });
        }
    }
    Ok(())
}

impl TraceRing {
    /// Writes the ring to `path` (created or replaced).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), RingFileError> {
        let mut out = BufWriter::new(File::create(path)?);
        self.write_to(&mut out)?;
        out.flush()?;
        Ok(())
    }

    /// Writes the ring in the ring file format.
    pub fn write_to<W: Write>(&self, out: &mut W) -> Result<(), RingFileError> {
        let dir = self.directory();
        let mut header = [0u8; RING_FILE_HEADER_LEN];
        header[0..8].copy_from_slice(&RING_FILE_MAGIC);
        header[8..12].copy_from_slice(&RING_FILE_VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&(HEAD_LEN as u32).to_le_bytes());
        header[16..24].copy_from_slice(&dir.capacity.to_le_bytes());
        header[24..32].copy_from_slice(&dir.first_seq.to_le_bytes());
        header[32..40].copy_from_slice(&dir.next_seq.to_le_bytes());
        header[40..48].copy_from_slice(&dir.record_count.to_le_bytes());
        header[48..56].copy_from_slice(&dir.bytes_used.to_le_bytes());
        header[56..64].copy_from_slice(&dir.records_overwritten.to_le_bytes());
        header[64..72].copy_from_slice(&(self.oldest_offset() as u64).to_le_bytes());
        out.write_all(&header)?;
        for record in self.iter() {
            out.write_all(&record.head().encode())?;
            out.write_all(record.payload())?;
        }
        let ledger = self.ledger();
        out.write_all(&(ledger.len() as u32).to_le_bytes())?;
        for account in ledger.accounts() {
            let mut bytes = [0u8; ACCOUNT_LEN];
            bytes[0..4].copy_from_slice(&account.pid.to_le_bytes());
            bytes[4..12].copy_from_slice(&account.stored.to_le_bytes());
            bytes[12..20].copy_from_slice(&account.overwritten.to_le_bytes());
            bytes[20..28].copy_from_slice(&account.refused.to_le_bytes());
            bytes[28..36].copy_from_slice(&account.connections_refused.to_le_bytes());
            bytes[36..44].copy_from_slice(&account.device_sync.to_le_bytes());
            bytes[44..52].copy_from_slice(&account.device_async.to_le_bytes());
            out.write_all(&bytes)?;
        }
        Ok(())
    }

    /// Loads a ring saved by [`TraceRing::save`]; refuses capacities above [`DEFAULT_LOAD_LIMIT`].
    pub fn load(path: impl AsRef<Path>) -> Result<TraceRing, RingFileError> {
        let mut input = BufReader::new(File::open(path)?);
        Self::read_from(&mut input, DEFAULT_LOAD_LIMIT)
    }

    /// Reads a ring in the ring file format, refusing capacities above `max_capacity`.
    pub fn read_from<R: Read>(
        input: &mut R,
        max_capacity: u64,
    ) -> Result<TraceRing, RingFileError> {
        let mut header = [0u8; RING_FILE_HEADER_LEN];
        read_exact_or(input, &mut header, "the file header")?;
        if header[0..8] != RING_FILE_MAGIC {
            return Err(RingFileError::BadMagic);
        }
        let version = u32_at(&header, 8);
        let file_head_len = match version {
            1 | 2 => HEAD_LEN_V1,
            RING_FILE_VERSION => HEAD_LEN,
            _ => return Err(RingFileError::UnsupportedVersion(version)),
        };
        let head_len = u32_at(&header, 12);
        if head_len as usize != file_head_len {
            return Err(RingFileError::HeadSize {
                found: head_len,
                expected: file_head_len as u32,
            });
        }
        let capacity = u64_at(&header, 16);
        let first_seq = u64_at(&header, 24);
        let next_seq = u64_at(&header, 32);
        let count = u64_at(&header, 40);
        let bytes_used = u64_at(&header, 48);
        let overwritten = u64_at(&header, 56);
        let oldest_offset = u64_at(&header, 64);
        if capacity > max_capacity {
            return Err(RingFileError::CapacityTooLarge {
                capacity,
                max: max_capacity,
            });
        }
        let expected_next = first_seq
            .checked_add(count)
            .ok_or(RingFileError::Directory {
                field: "record count",
                found: count,
                expected: u64::MAX - first_seq,
            })?;
        if next_seq != expected_next {
            return Err(RingFileError::Directory {
                field: "next sequence",
                found: next_seq,
                expected: expected_next,
            });
        }
        if overwritten > first_seq {
            return Err(RingFileError::Directory {
                field: "records overwritten",
                found: overwritten,
                expected: first_seq,
            });
        }
        if bytes_used > capacity || count > capacity / file_head_len as u64 {
            return Err(RingFileError::Overfull { capacity });
        }
        // Heads of older files grow to today's size: the ring grows with them, so every record is kept.
        let growth = (HEAD_LEN - file_head_len) as u64 * count;
        let loaded_capacity = capacity + growth;
        let capacity_usize =
            usize::try_from(loaded_capacity).map_err(|_| RingFileError::CapacityTooLarge {
                capacity: loaded_capacity,
                max: usize::MAX as u64,
            })?;
        if oldest_offset >= capacity.max(1) || (count == 0 && oldest_offset != 0) {
            return Err(RingFileError::Directory {
                field: "oldest record offset",
                found: oldest_offset,
                expected: 0,
            });
        }
        let mut ring = TraceRing::with_start(capacity_usize, first_seq, overwritten)
            .map_err(RingFileError::Ring)?;
        ring.restore_start(if growth == 0 {
            oldest_offset as usize
        } else {
            0
        });
        let mut used = 0u64;
        let mut payload = Vec::new();
        for index in 0..count {
            let mut head_bytes = [0u8; HEAD_LEN];
            read_exact_or(input, &mut head_bytes[..file_head_len], "a record head")?;
            let head = if file_head_len == HEAD_LEN {
                RecordHead::decode(&head_bytes)
            } else {
                RecordHead::decode_v1(&head_bytes)
            }
            .map_err(|source| RingFileError::Head { index, source })?;
            let expected = first_seq + index;
            if head.seq != expected {
                return Err(RingFileError::Sequence {
                    index,
                    expected,
                    found: head.seq,
                });
            }
            used += file_head_len as u64 + u64::from(head.len);
            if used > capacity {
                return Err(RingFileError::Overfull { capacity });
            }
            payload.clear();
            payload.resize(head.len as usize, 0);
            read_exact_or(input, &mut payload, "a record payload")?;
            ring.restore_record(head.seq, &head.meta, &payload)
                .map_err(|_| RingFileError::Overfull {
                    capacity: loaded_capacity,
                })?;
        }
        ring.set_next_seq(next_seq);
        if used != bytes_used {
            return Err(RingFileError::Directory {
                field: "bytes used",
                found: bytes_used,
                expected: used,
            });
        }
        match version {
            1 => {}
            2 => read_ledger(input, ring.ledger_mut(), ACCOUNT_LEN_V2)?,
            _ => read_ledger(input, ring.ledger_mut(), ACCOUNT_LEN)?,
        }
        let mut probe = [0u8; 1];
        match input.read(&mut probe) {
            Ok(0) => Ok(ring),
            Ok(_) => Err(RingFileError::TrailingBytes),
            Err(err) => Err(RingFileError::Io(err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::head::RecordMeta;

    fn ring_with(n: u64, capacity: usize) -> TraceRing {
        let mut ring = TraceRing::new(capacity).unwrap();
        for i in 0..n {
            let meta = RecordMeta {
                client_seq: i,
                ..RecordMeta::new("mod", "file.rs", i as u32).unwrap()
            };
            ring.push(&meta, &vec![i as u8; (i % 7) as usize * 10])
                .unwrap();
        }
        ring
    }

    fn bytes_of(ring: &TraceRing) -> Vec<u8> {
        let mut out = Vec::new();
        ring.write_to(&mut out).unwrap();
        out
    }

    /// What a writer of format version 1 or 2 made of `ring` (which must not wrap): 66-byte heads, and for
    /// version 2 a ledger of 36-byte accounts.
    fn old_bytes(ring: &TraceRing, version: u32) -> Vec<u8> {
        let dir = ring.directory();
        let mut out = Vec::new();
        out.extend_from_slice(b"LZTRRING");
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&66u32.to_le_bytes());
        let used: u64 = ring.iter().map(|r| 66 + r.payload().len() as u64).sum();
        for value in [
            dir.capacity,
            dir.first_seq,
            dir.next_seq,
            dir.record_count,
            used,
            dir.records_overwritten,
            0,
        ] {
            out.extend_from_slice(&value.to_le_bytes());
        }
        for record in ring.iter() {
            out.extend_from_slice(&record.head().encode()[..66]);
            out.extend_from_slice(record.payload());
        }
        if version == 2 {
            let accounts = ring.ledger();
            out.extend_from_slice(&(accounts.len() as u32).to_le_bytes());
            for a in accounts.accounts() {
                out.extend_from_slice(&a.pid.to_le_bytes());
                for v in [a.stored, a.overwritten, a.refused, a.connections_refused] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        out
    }

    #[test]
    fn header_layout() {
        let ring = ring_with(3, 1000);
        let bytes = bytes_of(&ring);
        assert_eq!(&bytes[0..8], b"LZTRRING");
        assert_eq!(&bytes[8..16], &[3, 0, 0, 0, 100, 0, 0, 0]);
        assert_eq!(&bytes[16..24], &1000u64.to_le_bytes());
        assert_eq!(&bytes[32..40], &3u64.to_le_bytes());
        assert_eq!(&bytes[64..72], &[0; 8]);
        // The records, then one account (pid 0, three records stored).
        let ledger = 72 + 3 * 100 + 10 + 20;
        assert_eq!(&bytes[ledger..ledger + 8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[ledger + 8..ledger + 16], &3u64.to_le_bytes());
        assert_eq!(bytes.len(), ledger + 4 + 52);
    }

    #[test]
    fn version_2_and_1_files_load_every_record_in_a_grown_ring() {
        let ring = ring_with(5, 1000);
        assert_eq!(ring.len(), 5);
        let v2 = old_bytes(&ring, 2);
        let old = TraceRing::read_from(&mut &v2[..], 1 << 20).unwrap();
        assert!(old.iter().eq(ring.iter()));
        assert!(old
            .iter()
            .all(|r| r.head().meta.origin == crate::head::Origin::Unknown));
        assert_eq!(old.ledger(), ring.ledger());
        assert_eq!(old.capacity(), 1000 + 5 * 34);
        assert_eq!(old.directory().next_seq, 5);
        let v1 = old_bytes(&ring, 1);
        let older = TraceRing::read_from(&mut &v1[..], 1 << 20).unwrap();
        assert!(older.iter().eq(ring.iter()));
        assert!(older.ledger().is_empty());
        // A loaded ring goes on storing, and saves as version 3.
        let mut older = older;
        older
            .push(&RecordMeta::new("new", "f.rs", 1).unwrap(), b"after")
            .unwrap();
        let again = TraceRing::read_from(&mut &bytes_of(&older)[..], 1 << 20).unwrap();
        assert_eq!(again.iter().last().unwrap().payload(), b"after");
        // A version 2 file that claims today's head size is refused.
        let mut bad = v2.clone();
        bad[12] = 100;
        assert!(matches!(
            TraceRing::read_from(&mut &bad[..], 1 << 20).unwrap_err(),
            RingFileError::HeadSize {
                found: 100,
                expected: 66
            }
        ));
        // Every prefix of an old file is truncated, never a wrong ring.
        for len in 0..v2.len() {
            assert!(matches!(
                TraceRing::read_from(&mut &v2[..len], 1 << 20).unwrap_err(),
                RingFileError::Truncated { .. }
            ));
        }
    }

    #[test]
    fn device_counts_round_trip_and_must_not_exceed_the_stored() {
        use crate::device::{CopyMode, DeviceUuid};
        use crate::head::Origin;
        let mut ring = TraceRing::new(2000).unwrap();
        for (i, mode) in [CopyMode::Sync, CopyMode::Async, CopyMode::Sync]
            .into_iter()
            .enumerate()
        {
            let meta = RecordMeta {
                client_pid: 7,
                origin: Origin::Device {
                    mode,
                    device: DeviceUuid([3; 16]),
                    offset: i as u64 * 64,
                },
                stored_ns: 99,
                ..RecordMeta::new("gpu", "k.cu", 1).unwrap()
            };
            ring.push(&meta, &[i as u8; 64]).unwrap();
        }
        let account = *ring.ledger().get(7).unwrap();
        assert_eq!(
            (account.stored, account.device_sync, account.device_async),
            (3, 2, 1)
        );
        let bytes = bytes_of(&ring);
        let back = TraceRing::read_from(&mut &bytes[..], 1 << 20).unwrap();
        assert!(back.iter().eq(ring.iter()));
        assert_eq!(back.ledger(), ring.ledger());
        // An account claiming more device records than stored records is corrupt.
        let at = bytes.len() - 52;
        let mut b = bytes;
        b[at + 44..at + 52].copy_from_slice(&5u64.to_le_bytes());
        assert!(matches!(
            TraceRing::read_from(&mut &b[..], 1 << 20).unwrap_err(),
            RingFileError::Ledger { index: 0 }
        ));
    }

    #[test]
    fn the_ledger_round_trips() {
        let mut ring = TraceRing::new(500).unwrap();
        for pid in [30, 10, 20, 10] {
            let meta = RecordMeta {
                client_pid: pid,
                ..RecordMeta::new("m", "f", 1).unwrap()
            };
            ring.push(&meta, &[0; 60]).unwrap();
        }
        ring.note_refused(20);
        let bytes = bytes_of(&ring);
        let back = TraceRing::read_from(&mut &bytes[..], 1 << 20).unwrap();
        assert_eq!(back.ledger(), ring.ledger());
        // Three records fit; the fourth overwrote the first, pid 30's.
        let ten = back.ledger().get(10).unwrap();
        assert_eq!((ten.stored, ten.overwritten, ten.refused), (2, 0, 0));
        let thirty = back.ledger().get(30).unwrap();
        assert_eq!((thirty.stored, thirty.overwritten), (1, 1));
        assert_eq!(back.ledger().get(20).unwrap().refused, 1);
        // Version 3 without the ledger section, called version 1, is refused: its heads are not version 1's.
        let mut v1 = bytes[..bytes.len() - 4 - 3 * 52].to_vec();
        v1[8] = 1;
        assert!(matches!(
            TraceRing::read_from(&mut &v1[..], 1 << 20).unwrap_err(),
            RingFileError::HeadSize {
                found: 100,
                expected: 66
            }
        ));
    }

    #[test]
    fn ledger_errors() {
        let mut ring = TraceRing::new(400).unwrap();
        for pid in [1, 2] {
            ring.note_refused(pid);
        }
        let good = bytes_of(&ring);
        let at = good.len() - 4 - 2 * 52;
        let load = |b: &[u8]| TraceRing::read_from(&mut &b[..], 1 << 20).unwrap_err();
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&5000u32.to_le_bytes());
        assert!(matches!(load(&b), RingFileError::Ledger { index: 5000 }));
        let mut b = good.clone();
        b[at + 4 + 52] = 1; // the second account's pid equals the first's
        assert!(matches!(load(&b), RingFileError::Ledger { index: 1 }));
        let mut b = good.clone();
        b[at + 4 + 12] = 1; // overwritten 1 of 0 stored
        assert!(matches!(load(&b), RingFileError::Ledger { index: 0 }));
        let mut b = good.clone();
        b[at] = 3;
        assert!(matches!(load(&b), RingFileError::Truncated { .. }));
    }

    #[test]
    fn round_trip_after_wrap() {
        let ring = ring_with(50, 1000);
        let back = TraceRing::read_from(&mut &bytes_of(&ring)[..], 1 << 20).unwrap();
        assert_eq!(back.directory(), ring.directory());
        assert!(back.iter().eq(ring.iter()));
    }

    #[test]
    fn every_prefix_is_truncated() {
        let bytes = bytes_of(&ring_with(4, 1000));
        for len in 0..bytes.len() {
            let err = TraceRing::read_from(&mut &bytes[..len], 1 << 20).unwrap_err();
            assert!(
                matches!(err, RingFileError::Truncated { .. }),
                "{len}: {err:?}"
            );
        }
    }

    #[test]
    fn header_errors() {
        let good = bytes_of(&ring_with(2, 1000));
        let load = |b: &[u8]| TraceRing::read_from(&mut &b[..], 1 << 20).unwrap_err();
        let mut b = good.clone();
        b[0] = b'X';
        assert!(matches!(load(&b), RingFileError::BadMagic));
        let mut b = good.clone();
        b[8] = 4;
        assert!(matches!(load(&b), RingFileError::UnsupportedVersion(4)));
        let mut b = good.clone();
        b[12] = 65;
        assert!(matches!(
            load(&b),
            RingFileError::HeadSize {
                found: 65,
                expected: 100
            }
        ));
        assert!(matches!(
            TraceRing::read_from(&mut &good[..], 999).unwrap_err(),
            RingFileError::CapacityTooLarge {
                capacity: 1000,
                max: 999
            }
        ));
        let mut b = good.clone();
        b[16..24].copy_from_slice(&10u64.to_le_bytes());
        assert!(matches!(load(&b), RingFileError::Overfull { capacity: 10 }));
        let mut b = good.clone();
        b[32] = 9;
        assert!(matches!(
            load(&b),
            RingFileError::Directory {
                field: "next sequence",
                ..
            }
        ));
        let mut b = good.clone();
        b[56] = 1;
        assert!(matches!(
            load(&b),
            RingFileError::Directory {
                field: "records overwritten",
                ..
            }
        ));
        let mut b = good.clone();
        b[48] = b[48].wrapping_add(1);
        assert!(matches!(
            load(&b),
            RingFileError::Directory {
                field: "bytes used",
                ..
            }
        ));
        let mut b = good.clone();
        b[64..72].copy_from_slice(&999u64.to_le_bytes());
        assert!(matches!(
            load(&b),
            RingFileError::Overfull { capacity: 1000 }
        ));
        let mut b = good.clone();
        b[64..72].copy_from_slice(&1000u64.to_le_bytes());
        assert!(matches!(
            load(&b),
            RingFileError::Directory {
                field: "oldest record offset",
                ..
            }
        ));
        let mut b = good.clone();
        b.push(0);
        assert!(matches!(load(&b), RingFileError::TrailingBytes));
    }

    #[test]
    fn record_errors() {
        let good = bytes_of(&ring_with(2, 1000));
        let load = |b: &[u8]| TraceRing::read_from(&mut &b[..], 1 << 20).unwrap_err();
        // Second record starts after the first head (100 bytes) and its empty payload.
        let second = 72 + 100;
        let mut b = good.clone();
        b[second] = 5;
        assert!(matches!(
            load(&b),
            RingFileError::Sequence {
                index: 1,
                expected: 1,
                found: 5
            }
        ));
        let mut b = good.clone();
        b[72 + 12] = 0xFF;
        assert!(matches!(load(&b), RingFileError::Head { index: 0, .. }));
        // A lying payload length: far beyond the capacity, rejected before any read or allocation.
        let mut b = good;
        b[second + 8..second + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            load(&b),
            RingFileError::Overfull { capacity: 1000 }
        ));
    }

    #[test]
    fn huge_record_count_is_rejected_before_reading() {
        let mut b = bytes_of(&ring_with(0, 1000));
        b[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        b[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(TraceRing::read_from(&mut &b[..], 1 << 20).is_err());
    }
}
