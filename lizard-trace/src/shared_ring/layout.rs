//! The shared ring file's layout: its header, the slot a record takes, and the commit word that makes a
//! record whole.
//!
//! ```text
//! offset  size  field (little-endian)
//! 0       8     magic "LZTSHRNG"
//! 8       4     format version (1)
//! 12      4     header length: the data start at this offset (4096)
//! 16      8     capacity: bytes of records, a multiple of 8
//! 24      4     record head length (100)
//! 28      4     slot alignment (8)
//! 32      8     when the file was created (CLOCK_REALTIME, ns)
//! 40      8     the process id of the last server that wrote it
//! 64      8     start: the oldest record's offset / 8 in    ┐
//!               the high half, its sequence number's low    │
//!               32 bits in the low half (one word, so that  │
//!               both change at once)                        │
//! 72      8     first_seq: its whole sequence number        │ written by the server
//! 80      8     next_seq: one past the last committed       │ with atomic stores,
//! 88      8     claimed_seq: one past the last being written│ read by anyone with
//! 96      8     records overwritten to make room            │ atomic loads
//! 104     8     records lost in servers' crashes            │
//! 112     8     times a server picked the ring up           ┘
//! 4096    …     the records, capacity bytes
//! ```
//!
//! A record takes a slot of [`slot_len`] bytes: its 8-byte commit word, its 100-byte head
//! ([`crate::head`]), its payload, and padding to a multiple of 8. The server writes the payload, then the
//! head, then the commit word with a release store, then `next_seq`; a reader (or the next server) trusts a
//! record only when its commit word is the one its head and sequence number give ([`commit_word`]). A record
//! that does not fit before the end of the data starts again at offset 0, and a [`WRAP`] word marks the end
//! of the records at the top.

use crate::head::HEAD_LEN;

/// The first 8 bytes of a shared ring file.
pub const MAGIC: [u8; 8] = *b"LZTSHRNG";
/// The format version this crate writes and reads.
pub const VERSION: u32 = 1;
/// Bytes before the records: one page.
pub const HEADER_LEN: usize = 4096;
/// Records start at multiples of this.
pub const SLOT_ALIGN: usize = 8;
/// Bytes of a record's commit word.
pub const COMMIT_LEN: usize = 8;
/// The commit word of an empty place or of a record being overwritten: never a record's.
pub const NO_COMMIT: u64 = 0;
/// The word at the end of the records at the top of the data, when the next record starts at offset 0.
pub const WRAP: u64 = u64::MAX;

/// Offsets of the header's fields.
pub(crate) mod field {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 8;
    pub const HEADER_LEN: usize = 12;
    pub const CAPACITY: usize = 16;
    pub const HEAD_LEN: usize = 24;
    pub const SLOT_ALIGN: usize = 28;
    pub const CREATED_NS: usize = 32;
    pub const WRITER_PID: usize = 40;
    pub const START: usize = 64;
    pub const FIRST_SEQ: usize = 72;
    pub const NEXT_SEQ: usize = 80;
    pub const CLAIMED_SEQ: usize = 88;
    pub const OVERWRITTEN: usize = 96;
    pub const LOST: usize = 104;
    pub const RESTARTS: usize = 112;
}

/// Sequence numbers from here on are taken for damage: a ring stores far fewer records in its life, and every
/// count stays far from overflowing.
pub const MAX_SEQ: u64 = 1 << 62;

/// The largest capacity: the start word holds the oldest record's offset in 32 bits of 8-byte units.
pub const MAX_CAPACITY: u64 = 8 << 32;

/// The start word of a ring whose oldest record is at `tail` with sequence number `first_seq`.
pub(crate) fn start_word(tail: usize, first_seq: u64) -> u64 {
    ((tail as u64 / SLOT_ALIGN as u64) << 32) | (first_seq & 0xffff_ffff)
}

/// The oldest record's offset and the low 32 bits of its sequence number, from the start word.
pub(crate) fn start_of(word: u64) -> (usize, u32) {
    (
        usize::try_from((word >> 32) * SLOT_ALIGN as u64).unwrap_or(usize::MAX),
        word as u32,
    )
}

/// Bytes a record with `payload_len` bytes of payload takes: commit word, head, payload, padding.
pub const fn slot_len(payload_len: usize) -> usize {
    (COMMIT_LEN + HEAD_LEN + payload_len).next_multiple_of(SLOT_ALIGN)
}

/// The smallest slot: a record without payload.
pub const MIN_SLOT: usize = slot_len(0);

/// The commit word of the record `seq` whose encoded head is `head`: the low 32 bits of `seq`, and above
/// them a 32-bit check of `seq` and every byte of the head, so that neither a torn head nor a stale word
/// reads as whole. It is never [`NO_COMMIT`] nor [`WRAP`].
///
/// The check mixes the head eight bytes at a time in two independent lanes (multiply, rotate), a few
/// nanoseconds a record, and folds them with a final avalanche: any change of one bit of the head or the
/// sequence number changes it but for a chance of one in 2³².
pub fn commit_word(seq: u64, head: &[u8; HEAD_LEN]) -> u64 {
    const K0: u64 = 0x9e37_79b9_7f4a_7c15;
    const K1: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let mut lanes = [seq ^ K0, (HEAD_LEN as u64) ^ K1];
    let mut words = head.chunks(8).map(|c| {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(w)
    });
    while let Some(a) = words.next() {
        lanes[0] = (lanes[0] ^ a).wrapping_mul(K1).rotate_left(31);
        let Some(b) = words.next() else { break };
        lanes[1] = (lanes[1] ^ b).wrapping_mul(K0).rotate_left(29);
    }
    let mut h = lanes[0] ^ lanes[1].rotate_left(17);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    let hash = (h >> 32) as u32;
    let check = match hash {
        0 => 1,
        u32::MAX => u32::MAX - 1,
        h => h,
    };
    (u64::from(check) << 32) | (seq & 0xffff_ffff)
}

/// The static part of a header: what a ring file is and its geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Bytes of records.
    pub capacity: u64,
}

/// The 64 static bytes of a new header for `geometry`, made by process `pid` at `created_ns`.
pub(crate) fn header_bytes(geometry: Geometry, created_ns: u64, pid: u32) -> [u8; 64] {
    let mut out = [0u8; 64];
    out[field::MAGIC..field::MAGIC + 8].copy_from_slice(&MAGIC);
    out[field::VERSION..field::VERSION + 4].copy_from_slice(&VERSION.to_le_bytes());
    out[field::HEADER_LEN..field::HEADER_LEN + 4]
        .copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
    out[field::CAPACITY..field::CAPACITY + 8].copy_from_slice(&geometry.capacity.to_le_bytes());
    out[field::HEAD_LEN..field::HEAD_LEN + 4].copy_from_slice(&(HEAD_LEN as u32).to_le_bytes());
    out[field::SLOT_ALIGN..field::SLOT_ALIGN + 4]
        .copy_from_slice(&(SLOT_ALIGN as u32).to_le_bytes());
    out[field::CREATED_NS..field::CREATED_NS + 8].copy_from_slice(&created_ns.to_le_bytes());
    out[field::WRITER_PID..field::WRITER_PID + 8].copy_from_slice(&u64::from(pid).to_le_bytes());
    out
}

/// Reads the static header of a ring file from its first 64 bytes and the file's size, refusing anything
/// that is not a ring file of this version and a geometry that does not hold together.
pub(crate) fn read_geometry(
    bytes: &[u8; 64],
    file_len: u64,
) -> Result<Geometry, super::RingFormatError> {
    use super::RingFormatError as E;
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    if bytes[..8] != MAGIC {
        return Err(E::NotARing);
    }
    let version = u32_at(field::VERSION);
    if version != VERSION {
        return Err(E::Version { found: version });
    }
    let fixed = [
        (
            "header length",
            u64::from(u32_at(field::HEADER_LEN)),
            HEADER_LEN as u64,
        ),
        (
            "record head length",
            u64::from(u32_at(field::HEAD_LEN)),
            HEAD_LEN as u64,
        ),
        (
            "slot alignment",
            u64::from(u32_at(field::SLOT_ALIGN)),
            SLOT_ALIGN as u64,
        ),
    ];
    for (what, found, expected) in fixed {
        if found != expected {
            return Err(E::Geometry {
                what,
                found,
                expected,
            });
        }
    }
    let capacity = u64_at(field::CAPACITY);
    if capacity < MIN_SLOT as u64
        || !capacity.is_multiple_of(SLOT_ALIGN as u64)
        || capacity > MAX_CAPACITY
    {
        return Err(E::Geometry {
            what: "capacity",
            found: capacity,
            expected: capacity
                .clamp(MIN_SLOT as u64, MAX_CAPACITY)
                .next_multiple_of(SLOT_ALIGN as u64),
        });
    }
    let expected_len = HEADER_LEN as u64 + capacity;
    if file_len != expected_len {
        return Err(E::Geometry {
            what: "file size",
            found: file_len,
            expected: expected_len,
        });
    }
    Ok(Geometry { capacity })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_commit_head_and_payload_aligned() {
        assert_eq!(slot_len(0), 112);
        assert_eq!(slot_len(4), 112);
        assert_eq!(slot_len(5), 120);
        assert_eq!(MIN_SLOT, 112);
    }

    #[test]
    fn a_commit_word_names_its_record_and_nothing_else() {
        let head = [7u8; HEAD_LEN];
        let word = commit_word(42, &head);
        assert_eq!(word & 0xffff_ffff, 42);
        assert_ne!(word, NO_COMMIT);
        assert_ne!(word, WRAP);
        let mut other = head;
        other[50] ^= 1;
        assert_ne!(
            commit_word(42, &other),
            word,
            "a changed head changes the word"
        );
        assert_ne!(commit_word(43, &head), word);
    }

    #[test]
    fn a_header_reads_back_and_every_field_is_checked() {
        let bytes = header_bytes(Geometry { capacity: 8192 }, 5, 7);
        let len = (HEADER_LEN + 8192) as u64;
        assert_eq!(
            read_geometry(&bytes, len).unwrap(),
            Geometry { capacity: 8192 }
        );
        assert!(read_geometry(&bytes, len + 1).is_err(), "file size");
        for at in 0..32 {
            for flip in [1u8, 0x80] {
                let mut bad = bytes;
                bad[at] ^= flip;
                assert!(read_geometry(&bad, len).is_err(), "byte {at} ^ {flip:#x}");
            }
        }
        // The creation time and the writer's pid are facts, not geometry.
        let mut fine = bytes;
        fine[32] ^= 1;
        fine[40] ^= 1;
        assert!(read_geometry(&fine, len).is_ok());
    }
}
