//! [`inspect`]: a shared ring file's bytes read as the next server reads them, without a file or a mapping:
//! for checking a copy of a ring (and for fuzzing the reading of one).

use std::sync::atomic::Ordering;

use super::layout::{self, field, SLOT_ALIGN};
use super::walk::{walk, First, Torn};
use super::RingFormatError;
use crate::head::RecordHead;

/// What [`inspect`] found in a ring file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// Bytes of records.
    pub capacity: u64,
    /// The whole records, oldest first: each head and the offset of its payload in the bytes.
    pub records: Vec<(RecordHead, usize)>,
    /// Where the walk stopped trusting the records, and why.
    pub torn: Option<(usize, Torn)>,
    /// The records the header counts beyond the last whole one (begun, or damaged).
    pub lost: u64,
}

/// Reads `bytes` as a whole shared ring file: its header checked as [`TraceRing::open_shared`] checks it,
/// then every whole record from the oldest. Never changes anything and never trusts a record whose commit
/// word is not the one its head gives.
///
/// [`TraceRing::open_shared`]: crate::TraceRing::open_shared
pub fn inspect(bytes: &[u8]) -> Result<Inspection, RingFormatError> {
    let header: &[u8; 64] = bytes
        .get(..64)
        .and_then(|h| h.try_into().ok())
        .ok_or(RingFormatError::NotARing)?;
    let geometry = layout::read_geometry(header, bytes.len() as u64)?;
    let capacity = usize::try_from(geometry.capacity).map_err(|_| RingFormatError::Geometry {
        what: "capacity",
        found: geometry.capacity,
        expected: layout::MAX_CAPACITY,
    })?;
    let word = |at| <[u8] as super::walk::Words>::word(bytes, at, Ordering::Relaxed);
    let (tail, low) = layout::start_of(word(field::START));
    let tail = Some(tail)
        .filter(|&t| t < capacity && t.is_multiple_of(SLOT_ALIGN))
        .unwrap_or(capacity);
    let mut records = Vec::new();
    let end = walk(bytes, capacity, tail, First::Low(low), |slot| {
        records.push((slot.head, slot.payload_offset()));
        true
    });
    let sane = |n: u64| if n < layout::MAX_SEQ { n } else { 0 };
    let next = match records.last() {
        Some((head, _)) => head.seq + 1,
        None => sane(word(field::NEXT_SEQ)),
    };
    let lost = sane(word(field::NEXT_SEQ))
        .max(sane(word(field::CLAIMED_SEQ)))
        .saturating_sub(next);
    Ok(Inspection {
        capacity: geometry.capacity,
        records,
        torn: end.torn,
        lost,
    })
}
