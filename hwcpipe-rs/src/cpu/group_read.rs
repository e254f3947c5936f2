//! Decoding of one `read()` of a perf group leader opened with
//! `PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID`.
//!
//! The kernel writes native-endian u64 words: `nr`, `time_enabled`, `time_running`, then `nr`
//! pairs of `value`, `id` (leader first, then the members in the order they joined).

/// Bytes of the fixed header: `nr`, `time_enabled`, `time_running`.
pub const HEADER_BYTES: usize = 24;
/// Bytes of one `value`, `id` entry.
pub const ENTRY_BYTES: usize = 16;

/// The size of a group read for `members` events.
pub const fn record_len(members: usize) -> usize {
    HEADER_BYTES + members * ENTRY_BYTES
}

/// Why a group read record could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GroupReadError {
    /// Fewer bytes than the header and the entries announced by `nr`.
    #[error("group read record truncated: {got} bytes, {needed} needed")]
    Truncated {
        /// Bytes available.
        got: usize,
        /// Bytes the header announces (at least the header itself).
        needed: usize,
    },
    /// `nr` is not the number of events in the group.
    #[error("group read record holds {found} events, the group has {expected}")]
    MemberCount {
        /// Events in the group.
        expected: usize,
        /// `nr` in the record.
        found: u64,
    },
    /// More bytes than the header announces.
    #[error("group read record has {extra} bytes after its last entry")]
    TrailingBytes {
        /// Bytes after the last entry.
        extra: usize,
    },
}

/// A decoded group read record, borrowing the bytes it was read into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupRecord<'b> {
    /// Nanoseconds the group has been enabled.
    pub time_enabled: u64,
    /// Nanoseconds the group has been on the PMU (less than `time_enabled` when multiplexed).
    pub time_running: u64,
    entries: &'b [u8],
}

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_ne_bytes(w)
}

impl<'b> GroupRecord<'b> {
    /// Decodes `bytes`, which must be exactly one record of `expected` events.
    pub fn parse(bytes: &'b [u8], expected: usize) -> Result<Self, GroupReadError> {
        if bytes.len() < HEADER_BYTES {
            return Err(GroupReadError::Truncated {
                got: bytes.len(),
                needed: HEADER_BYTES,
            });
        }
        let nr = word(bytes, 0);
        if nr != expected as u64 {
            return Err(GroupReadError::MemberCount {
                expected,
                found: nr,
            });
        }
        let needed = record_len(expected);
        if bytes.len() < needed {
            return Err(GroupReadError::Truncated {
                got: bytes.len(),
                needed,
            });
        }
        if bytes.len() > needed {
            return Err(GroupReadError::TrailingBytes {
                extra: bytes.len() - needed,
            });
        }
        Ok(GroupRecord {
            time_enabled: word(bytes, 8),
            time_running: word(bytes, 16),
            entries: &bytes[HEADER_BYTES..],
        })
    }

    /// Number of events in the record.
    pub fn len(&self) -> usize {
        self.entries.len() / ENTRY_BYTES
    }

    /// Whether the record holds no event.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(value, id)` of every event, leader first.
    pub fn entries(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + 'b {
        self.entries
            .chunks_exact(ENTRY_BYTES)
            .map(|e| (word(e, 0), word(e, 8)))
    }
}

/// Writes one record in the kernel's layout (for simulated kernels and tests).
pub fn encode(time_enabled: u64, time_running: u64, entries: &[(u64, u64)], out: &mut Vec<u8>) {
    out.extend_from_slice(&(entries.len() as u64).to_ne_bytes());
    out.extend_from_slice(&time_enabled.to_ne_bytes());
    out.extend_from_slice(&time_running.to_ne_bytes());
    for (value, id) in entries {
        out.extend_from_slice(&value.to_ne_bytes());
        out.extend_from_slice(&id.to_ne_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decodes_a_two_event_record() {
        let mut bytes = Vec::new();
        encode(1000, 500, &[(7, 41), (9, 42)], &mut bytes);
        let rec = GroupRecord::parse(&bytes, 2).unwrap();
        assert_eq!((rec.time_enabled, rec.time_running), (1000, 500));
        assert_eq!(rec.entries().collect::<Vec<_>>(), [(7, 41), (9, 42)]);
    }

    #[test]
    fn every_prefix_is_truncated() {
        let mut bytes = Vec::new();
        encode(1, 1, &[(1, 2), (3, 4)], &mut bytes);
        for cut in 0..bytes.len() {
            let err = GroupRecord::parse(&bytes[..cut], 2).unwrap_err();
            assert!(
                matches!(err, GroupReadError::Truncated { got, .. } if got == cut),
                "{cut}: {err}"
            );
        }
    }

    #[test]
    fn wrong_member_count_and_trailing_bytes_are_errors() {
        let mut bytes = Vec::new();
        encode(1, 1, &[(1, 2)], &mut bytes);
        assert_eq!(
            GroupRecord::parse(&bytes, 2),
            Err(GroupReadError::MemberCount {
                expected: 2,
                found: 1
            })
        );
        bytes.push(0);
        assert_eq!(
            GroupRecord::parse(&bytes, 1),
            Err(GroupReadError::TrailingBytes { extra: 1 })
        );
    }

    proptest! {
        #[test]
        fn encode_then_parse_round_trips(
            enabled in any::<u64>(),
            running in any::<u64>(),
            entries in proptest::collection::vec(any::<(u64, u64)>(), 0..20),
        ) {
            let mut bytes = Vec::new();
            encode(enabled, running, &entries, &mut bytes);
            prop_assert_eq!(bytes.len(), record_len(entries.len()));
            let rec = GroupRecord::parse(&bytes, entries.len()).unwrap();
            prop_assert_eq!(rec.time_enabled, enabled);
            prop_assert_eq!(rec.time_running, running);
            prop_assert_eq!(rec.entries().collect::<Vec<_>>(), entries);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), n in 0usize..10) {
            if let Ok(rec) = GroupRecord::parse(&bytes, n) {
                prop_assert_eq!(rec.len(), n);
                prop_assert_eq!(bytes.len(), record_len(n));
            }
        }
    }
}
