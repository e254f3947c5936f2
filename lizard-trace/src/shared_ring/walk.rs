//! The one walk over a shared ring's records, oldest first, trusting each only when its commit word is the
//! one its head gives: the next server's recovery and every reader go through it.

use std::sync::atomic::Ordering;

use super::layout::{commit_word, slot_len, HEADER_LEN, MAX_SEQ, MIN_SLOT, NO_COMMIT, WRAP};
use crate::error::HeadError;
use crate::head::{RecordHead, HEAD_LEN};
use crate::mapped_file::MappedFile;

/// Where a walk reads: a mapping, or plain bytes (tests and fuzzing). Offsets are from the file's start.
pub(crate) trait Words {
    /// The little-endian word at `offset` (8-aligned), loaded with `order`; 0 outside or unaligned.
    fn word(&self, offset: usize, order: Ordering) -> u64;
    /// Copies `out.len()` bytes from `offset`; bytes outside read as 0.
    fn copy(&self, offset: usize, out: &mut [u8]);
}

impl Words for MappedFile {
    fn word(&self, offset: usize, order: Ordering) -> u64 {
        self.load(offset, order)
    }

    fn copy(&self, offset: usize, out: &mut [u8]) {
        self.copy_words(offset, out);
    }
}

impl Words for [u8] {
    fn word(&self, offset: usize, _: Ordering) -> u64 {
        if !offset.is_multiple_of(8) {
            return 0;
        }
        self.get(offset..offset.saturating_add(8))
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    }

    fn copy(&self, offset: usize, out: &mut [u8]) {
        out.fill(0);
        if let Some(src) = self.get(offset..) {
            let n = src.len().min(out.len());
            out[..n].copy_from_slice(&src[..n]);
        }
    }
}

/// A whole record found by a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Offset of its slot in the data (its commit word).
    pub offset: usize,
    /// Its commit word.
    pub commit: u64,
    /// Its head.
    pub head: RecordHead,
}

impl Slot {
    /// Bytes its slot takes.
    pub fn len(&self) -> usize {
        slot_len(self.head.len as usize)
    }

    /// Offset of its payload in the file.
    pub fn payload_offset(&self) -> usize {
        HEADER_LEN + self.offset + 8 + HEAD_LEN
    }
}

/// Why a walk stopped trusting what it found: a record whose commit word names the sequence number it
/// expected but which does not hold together. Records after it are not trusted either.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Torn {
    /// Its head does not decode.
    #[error("its head does not decode")]
    Head(#[source] HeadError),
    /// Its head names another sequence number.
    #[error("its head names sequence {found}")]
    Sequence {
        /// The head's sequence number.
        found: u64,
    },
    /// Its commit word is not the one its head gives (the head changed after the commit).
    #[error("its commit word does not match its head")]
    Check,
    /// Its slot runs past the end of the data.
    #[error("its slot of {len} bytes runs past the end of the data")]
    PastEnd {
        /// Bytes of its slot.
        len: usize,
    },
    /// Its slot runs into the oldest record.
    #[error("its slot runs into the oldest record")]
    Overlap,
    /// The records run to the end of the data a second time.
    #[error("the records run to the end of the data a second time")]
    SecondWrap,
}

/// Where a walk ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct End {
    /// Offset one past the last record.
    pub head: usize,
    /// Where the records at the top end, when the walk wrapped to offset 0.
    pub wrap_end: Option<usize>,
    /// The sequence number after the last record.
    pub next_seq: u64,
    /// Records found.
    pub count: u64,
    /// Bytes their slots take.
    pub bytes: u64,
    /// What stopped the walk at `head`, if it was not the end of the committed records.
    pub torn: Option<(usize, Torn)>,
}

/// The sequence number a walk expects of its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum First {
    /// This one.
    Seq(u64),
    /// One whose low 32 bits are these (the header's start word); the record's head gives the rest.
    Low(u32),
}

/// Walks the records of `words` (a data area of `capacity` bytes after the header) from the record at
/// `tail`, the first with the sequence number `first` says, handing each whole one to `visit`, which returns
/// whether to go on. With [`First::Low`] and no record found, `next_seq` is 0.
pub(crate) fn walk<W: Words + ?Sized>(
    words: &W,
    capacity: usize,
    tail: usize,
    first: First,
    mut visit: impl FnMut(&Slot) -> bool,
) -> End {
    let (mut exact, low) = match first {
        First::Seq(seq) => (true, seq),
        First::Low(low) => (false, u64::from(low)),
    };
    let mut end = End {
        head: tail,
        wrap_end: None,
        next_seq: low,
        count: 0,
        bytes: 0,
        torn: None,
    };
    if !tail.is_multiple_of(8) || tail >= capacity {
        return end;
    }
    let limit = capacity / MIN_SLOT + 1;
    let mut pos = tail;
    while (end.count as usize) < limit {
        if pos == capacity {
            // The data ends exactly at a slot: the next record starts at 0, with no marker.
            if end.wrap_end.is_some() {
                end.torn = Some((pos, Torn::SecondWrap));
                break;
            }
            end.wrap_end = Some(pos);
            pos = 0;
            if pos == tail {
                break;
            }
            continue;
        }
        let commit = words.word(HEADER_LEN + pos, Ordering::Acquire);
        if commit == WRAP {
            // Below the oldest record a marker is a stale one, where a record is being written: the end.
            if end.wrap_end.is_some() || pos < tail {
                break;
            }
            end.wrap_end = Some(pos);
            pos = 0;
            if pos == tail {
                break;
            }
            continue;
        }
        if commit == NO_COMMIT || commit & 0xffff_ffff != end.next_seq & 0xffff_ffff {
            break;
        }
        let mut bytes = [0u8; HEAD_LEN];
        words.copy(HEADER_LEN + pos + 8, &mut bytes);
        let head = match RecordHead::decode(&bytes) {
            Ok(head) => head,
            Err(e) => {
                end.torn = Some((pos, Torn::Head(e)));
                break;
            }
        };
        if !exact && head.seq & 0xffff_ffff == end.next_seq {
            // The first record of a walk from the start word: its head gives the whole number.
            end.next_seq = head.seq;
            exact = true;
        }
        let torn = if head.seq != end.next_seq || head.seq >= MAX_SEQ {
            Some(Torn::Sequence { found: head.seq })
        } else if commit_word(head.seq, &bytes) != commit {
            Some(Torn::Check)
        } else {
            let len = slot_len(head.len as usize);
            let stop = match end.wrap_end {
                Some(_) => tail,
                None => capacity,
            };
            if pos.checked_add(len).is_none_or(|e| e > capacity) {
                Some(Torn::PastEnd { len })
            } else if end.wrap_end.is_some() && pos + len > stop {
                Some(Torn::Overlap)
            } else {
                None
            }
        };
        if let Some(torn) = torn {
            end.torn = Some((pos, torn));
            break;
        }
        let slot = Slot {
            offset: pos,
            commit,
            head,
        };
        if !visit(&slot) {
            break;
        }
        pos += slot.len();
        end.head = pos;
        end.next_seq += 1;
        end.count += 1;
        end.bytes += slot.len() as u64;
        if end.wrap_end.is_some() && pos == tail {
            break;
        }
    }
    end.head = pos;
    if !exact {
        end.next_seq = 0;
    }
    end
}
