//! The server's acknowledgement of a record (version 1, little-endian, 24 bytes): one `SOCK_SEQPACKET`
//! datagram from the server back to the client, for each message whose head asked for one
//! ([`crate::message::MessageHead::ack`]).
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 1 | version, [`ACK_VERSION`] |
//! | 1 | 1 | status: 0 stored, otherwise why the record was refused ([`Refusal`]) |
//! | 2 | 1 | reason, for a refusal that has one (why device memory is unavailable) |
//! | 3 | 1 | reserved, 0 |
//! | 4 | 4 | code: the `CUresult` of a failed driver call, or the index of a missing driver function |
//! | 8 | 8 | the client sequence number of the record |
//! | 16 | 8 | the ring's sequence number of the stored record; 0 for a refusal |
//!
//! A client that asked for an acknowledgement learns that its bytes are in the ring, or exactly why not. A
//! server never waits for a client to read one: an acknowledgement that does not fit the client's socket queue
//! is dropped and counted ([`crate::ServerStats::acks_dropped`]).

use std::fmt;

use crate::device_support::Unavailable;
use crate::error::AckError;

/// Version byte of the acknowledgement format.
pub const ACK_VERSION: u8 = 1;

/// Bytes of an acknowledgement.
pub const ACK_LEN: usize = 24;

/// Why the server refused a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The message did not decode.
    Malformed,
    /// The message or its claimed payload exceeds the server's limits.
    Oversized,
    /// Descriptors were missing, extra or truncated.
    BadFds,
    /// The payload memfd was not a sealed memfd of the claimed size.
    BadMemfd,
    /// The record is larger than the whole ring.
    TooLargeForRing,
    /// The client already held its share of the ring.
    OverShare,
    /// The server cannot read device memory at all.
    DeviceUnavailable(Unavailable),
    /// The server has no GPU of the record's UUID (or the UUID was left open and it has several).
    UnknownDevice,
    /// The IPC handle could not be opened: the allocation was freed, the handle is not valid, or it was made
    /// by the server's own process.
    OpenFailed {
        /// The `CUresult` of `cuIpcOpenMemHandle`.
        code: u32,
    },
    /// Offset and length reach past the end of the allocation the handle names.
    OutsideAllocation,
    /// The copy from the device failed.
    CopyFailed {
        /// The `CUresult` of the copy.
        code: u32,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Malformed => f.write_str("malformed message"),
            Refusal::Oversized => f.write_str("message or payload over the server's limit"),
            Refusal::BadFds => f.write_str("missing, extra or truncated descriptors"),
            Refusal::BadMemfd => f.write_str("payload memfd not sealed or smaller than claimed"),
            Refusal::TooLargeForRing => f.write_str("record larger than the server's ring"),
            Refusal::OverShare => f.write_str("client already holds its share of the ring"),
            Refusal::DeviceUnavailable(reason) => {
                write!(f, "the server cannot read device memory: {reason}")
            }
            Refusal::UnknownDevice => f.write_str("the server has no GPU of that UUID"),
            Refusal::OpenFailed { code } => write!(
                f,
                "the server could not open the IPC handle (CUresult {code}: freed, invalid, or from its own process)"
            ),
            Refusal::OutsideAllocation => {
                f.write_str("offset and length reach past the end of the allocation")
            }
            Refusal::CopyFailed { code } => {
                write!(f, "the copy from the device failed (CUresult {code})")
            }
        }
    }
}

impl Refusal {
    /// Status, reason and code bytes.
    fn to_wire(self) -> (u8, u8, u32) {
        match self {
            Refusal::Malformed => (1, 0, 0),
            Refusal::Oversized => (2, 0, 0),
            Refusal::BadFds => (3, 0, 0),
            Refusal::BadMemfd => (4, 0, 0),
            Refusal::TooLargeForRing => (5, 0, 0),
            Refusal::OverShare => (6, 0, 0),
            Refusal::DeviceUnavailable(reason) => {
                let (reason, code) = reason.to_wire();
                (16, reason, code)
            }
            Refusal::UnknownDevice => (17, 0, 0),
            Refusal::OpenFailed { code } => (18, 0, code),
            Refusal::OutsideAllocation => (19, 0, 0),
            Refusal::CopyFailed { code } => (20, 0, code),
        }
    }

    /// The refusal of status, reason and code bytes.
    fn from_wire(status: u8, reason: u8, code: u32) -> Option<Refusal> {
        Some(match status {
            1 => Refusal::Malformed,
            2 => Refusal::Oversized,
            3 => Refusal::BadFds,
            4 => Refusal::BadMemfd,
            5 => Refusal::TooLargeForRing,
            6 => Refusal::OverShare,
            16 => Refusal::DeviceUnavailable(Unavailable::from_wire(reason, code)?),
            17 => Refusal::UnknownDevice,
            18 => Refusal::OpenFailed { code },
            19 => Refusal::OutsideAllocation,
            20 => Refusal::CopyFailed { code },
            _ => return None,
        })
    }
}

/// What the server did with one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Stored under this ring sequence number.
    Stored {
        /// The ring's sequence number.
        seq: u64,
    },
    /// Refused.
    Refused(Refusal),
}

/// A decoded acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// The client sequence number of the record it answers.
    pub client_seq: u64,
    /// What happened to the record.
    pub outcome: Outcome,
}

impl Ack {
    /// Writes the 24 bytes.
    pub fn encode(&self) -> [u8; ACK_LEN] {
        let mut out = [0; ACK_LEN];
        out[0] = ACK_VERSION;
        let seq = match self.outcome {
            Outcome::Stored { seq } => seq,
            Outcome::Refused(refusal) => {
                let (status, reason, code) = refusal.to_wire();
                out[1] = status;
                out[2] = reason;
                out[4..8].copy_from_slice(&code.to_le_bytes());
                0
            }
        };
        out[8..16].copy_from_slice(&self.client_seq.to_le_bytes());
        out[16..24].copy_from_slice(&seq.to_le_bytes());
        out
    }

    /// Decodes one datagram.
    pub fn decode(bytes: &[u8]) -> Result<Ack, AckError> {
        let bytes: &[u8; ACK_LEN] = bytes.try_into().map_err(|_| AckError::Length {
            len: bytes.len(),
            expected: ACK_LEN,
        })?;
        if bytes[0] != ACK_VERSION {
            return Err(AckError::UnsupportedVersion(bytes[0]));
        }
        if bytes[3] != 0 {
            return Err(AckError::ReservedNotZero(bytes[3]));
        }
        let u64_at = |at: usize| {
            let mut v = [0; 8];
            v.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(v)
        };
        let code = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        let outcome = match bytes[1] {
            0 => Outcome::Stored { seq: u64_at(16) },
            status => Outcome::Refused(Refusal::from_wire(status, bytes[2], code).ok_or(
                AckError::UnknownStatus {
                    status,
                    reason: bytes[2],
                },
            )?),
        };
        Ok(Ack {
            client_seq: u64_at(8),
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn every_refusal() -> Vec<Refusal> {
        vec![
            Refusal::Malformed,
            Refusal::Oversized,
            Refusal::BadFds,
            Refusal::BadMemfd,
            Refusal::TooLargeForRing,
            Refusal::OverShare,
            Refusal::DeviceUnavailable(Unavailable::LibraryMissing),
            Refusal::DeviceUnavailable(Unavailable::FeatureOff),
            Refusal::DeviceUnavailable(Unavailable::InitFailed { code: 100 }),
            Refusal::DeviceUnavailable(Unavailable::SymbolMissing { name: "cuInit" }),
            Refusal::DeviceUnavailable(Unavailable::NoDevice),
            Refusal::UnknownDevice,
            Refusal::OpenFailed { code: 201 },
            Refusal::OutsideAllocation,
            Refusal::CopyFailed { code: 700 },
        ]
    }

    #[test]
    fn layout_and_round_trip() {
        let ack = Ack {
            client_seq: 0x0102_0304_0506_0708,
            outcome: Outcome::Stored { seq: 42 },
        };
        let bytes = ack.encode();
        assert_eq!(&bytes[0..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[8..16], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&bytes[16..24], &[42, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Ack::decode(&bytes), Ok(ack));
        for refusal in every_refusal() {
            let ack = Ack {
                client_seq: 9,
                outcome: Outcome::Refused(refusal),
            };
            assert_eq!(Ack::decode(&ack.encode()), Ok(ack), "{refusal}");
        }
        let open = Ack {
            client_seq: 1,
            outcome: Outcome::Refused(Refusal::OpenFailed { code: 0x0102 }),
        }
        .encode();
        assert_eq!(&open[1..8], &[18, 0, 0, 2, 1, 0, 0]);
    }

    #[test]
    fn bad_acks_are_typed_errors() {
        let good = Ack {
            client_seq: 1,
            outcome: Outcome::Stored { seq: 1 },
        }
        .encode();
        assert_eq!(
            Ack::decode(&good[..23]),
            Err(AckError::Length {
                len: 23,
                expected: 24
            })
        );
        let mut b = good;
        b[0] = 2;
        assert_eq!(Ack::decode(&b), Err(AckError::UnsupportedVersion(2)));
        let mut b = good;
        b[3] = 1;
        assert_eq!(Ack::decode(&b), Err(AckError::ReservedNotZero(1)));
        let mut b = good;
        b[1] = 99;
        assert_eq!(
            Ack::decode(&b),
            Err(AckError::UnknownStatus {
                status: 99,
                reason: 0
            })
        );
        let mut b = good;
        b[1] = 16;
        b[2] = 77;
        assert_eq!(
            Ack::decode(&b),
            Err(AckError::UnknownStatus {
                status: 16,
                reason: 77
            })
        );
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            if let Ok(ack) = Ack::decode(&bytes) {
                // What decodes re-encodes to a datagram that decodes the same.
                prop_assert_eq!(Ack::decode(&ack.encode()), Ok(ack));
            }
        }
    }
}
