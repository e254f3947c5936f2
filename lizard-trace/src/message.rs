//! The client-to-server message (version 1, little-endian): one `SOCK_SEQPACKET` datagram per record.
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 1 | version, [`MESSAGE_VERSION`] |
//! | 1 | 1 | payload kind: 1 inline (the payload follows the head), 2 memfd (one sealed memfd attached) |
//! | 2 | 2 | reserved, 0 |
//! | 4 | 4 | payload length |
//! | 8 | 8 | timestamp, `CLOCK_MONOTONIC_RAW` ns |
//! | 16 | 8 | client sequence number |
//! | 24 | 4 | source line |
//! | 28 | 10 | module tag, UTF-8, zero-padded |
//! | 38 | 20 | source file name, UTF-8, zero-padded |
//! | 58 | len | inline payload (kind 1 only) |
//!
//! A datagram arrives whole or not at all, so there is no "partial" state: a short datagram is malformed. The
//! sender's process id is not in the message; the server takes it from the socket (`SO_PEERCRED`).
//! Decoding is sans-IO: [`Message::decode`] takes the received bytes and borrows the inline payload from them.

use crate::error::MessageError;
use crate::tag::{FileTag, ModuleTag};

/// Version byte of the message format.
pub const MESSAGE_VERSION: u8 = 1;

/// Bytes of the message head.
pub const MESSAGE_HEAD_LEN: usize = 58;

/// The largest inline payload a server accepts; larger payloads travel in a memfd.
pub const MAX_INLINE_PAYLOAD: usize = 64 * 1024;

/// How a record's payload travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    /// The payload bytes follow the head in the same datagram.
    Inline = 1,
    /// The payload is in a sealed memfd attached to the datagram with `SCM_RIGHTS`.
    Memfd = 2,
}

/// A decoded message head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHead {
    /// How the payload travels.
    pub kind: PayloadKind,
    /// Payload length in bytes.
    pub payload_len: u32,
    /// `CLOCK_MONOTONIC_RAW` nanoseconds when the client recorded.
    pub timestamp_ns: u64,
    /// The client's record counter.
    pub client_seq: u64,
    /// Source line.
    pub line: u32,
    /// Module tag.
    pub module: ModuleTag,
    /// Source file name.
    pub file: FileTag,
}

/// A decoded message: its head and, for [`PayloadKind::Inline`], the payload borrowed from the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The head.
    pub head: MessageHead,
    /// The inline payload; empty for [`PayloadKind::Memfd`].
    pub inline: &'a [u8],
}

impl MessageHead {
    /// Writes the 58-byte head.
    pub fn encode(&self) -> [u8; MESSAGE_HEAD_LEN] {
        let mut out = [0; MESSAGE_HEAD_LEN];
        out[0] = MESSAGE_VERSION;
        out[1] = self.kind as u8;
        out[4..8].copy_from_slice(&self.payload_len.to_le_bytes());
        out[8..16].copy_from_slice(&self.timestamp_ns.to_le_bytes());
        out[16..24].copy_from_slice(&self.client_seq.to_le_bytes());
        out[24..28].copy_from_slice(&self.line.to_le_bytes());
        out[28..38].copy_from_slice(self.module.field());
        out[38..58].copy_from_slice(self.file.field());
        out
    }
}

/// Copies `N` bytes at `at` out of a slice known to be long enough.
fn array_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

impl<'a> Message<'a> {
    /// Decodes one datagram. `max_payload` bounds the claimed payload length of either kind.
    pub fn decode(datagram: &'a [u8], max_payload: u32) -> Result<Message<'a>, MessageError> {
        if datagram.len() < MESSAGE_HEAD_LEN {
            return Err(MessageError::TooShort {
                len: datagram.len(),
                needed: MESSAGE_HEAD_LEN,
            });
        }
        if datagram[0] != MESSAGE_VERSION {
            return Err(MessageError::UnsupportedVersion(datagram[0]));
        }
        let kind = match datagram[1] {
            1 => PayloadKind::Inline,
            2 => PayloadKind::Memfd,
            other => return Err(MessageError::UnknownKind(other)),
        };
        let reserved = u16::from_le_bytes(array_at(datagram, 2));
        if reserved != 0 {
            return Err(MessageError::ReservedNotZero(reserved));
        }
        let payload_len = u32::from_le_bytes(array_at(datagram, 4));
        if payload_len > max_payload {
            return Err(MessageError::PayloadTooLarge {
                len: payload_len,
                max: max_payload,
            });
        }
        let head = MessageHead {
            kind,
            payload_len,
            timestamp_ns: u64::from_le_bytes(array_at(datagram, 8)),
            client_seq: u64::from_le_bytes(array_at(datagram, 16)),
            line: u32::from_le_bytes(array_at(datagram, 24)),
            module: ModuleTag::decode(&array_at(datagram, 28)).map_err(MessageError::Module)?,
            file: FileTag::decode(&array_at(datagram, 38)).map_err(MessageError::File)?,
        };
        let rest = &datagram[MESSAGE_HEAD_LEN..];
        let carried = match kind {
            PayloadKind::Inline => payload_len as usize,
            PayloadKind::Memfd => 0,
        };
        if rest.len() != carried {
            return Err(MessageError::LengthMismatch {
                claimed: payload_len,
                actual: rest.len(),
            });
        }
        Ok(Message { head, inline: rest })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TagError;
    use proptest::prelude::*;

    fn head(kind: PayloadKind, len: u32) -> MessageHead {
        MessageHead {
            kind,
            payload_len: len,
            timestamp_ns: 1000,
            client_seq: 3,
            line: 17,
            module: ModuleTag::new("vk").unwrap(),
            file: FileTag::new("draw.rs").unwrap(),
        }
    }

    fn inline(payload: &[u8]) -> Vec<u8> {
        let mut out = head(PayloadKind::Inline, payload.len() as u32)
            .encode()
            .to_vec();
        out.extend_from_slice(payload);
        out
    }

    #[test]
    fn inline_round_trip() {
        let bytes = inline(b"hello");
        assert_eq!(bytes.len(), MESSAGE_HEAD_LEN + 5);
        let msg = Message::decode(&bytes, 100).unwrap();
        assert_eq!(msg.head, head(PayloadKind::Inline, 5));
        assert_eq!(msg.inline, b"hello");
    }

    #[test]
    fn memfd_head_has_no_body() {
        let bytes = head(PayloadKind::Memfd, 1 << 20).encode();
        let msg = Message::decode(&bytes, 1 << 21).unwrap();
        assert_eq!(msg.head.kind, PayloadKind::Memfd);
        assert!(msg.inline.is_empty());
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(
            Message::decode(&longer, 1 << 21),
            Err(MessageError::LengthMismatch {
                claimed: 1 << 20,
                actual: 1
            })
        );
    }

    #[test]
    fn every_short_prefix_is_too_short() {
        let bytes = inline(b"abc");
        for len in 0..MESSAGE_HEAD_LEN {
            assert_eq!(
                Message::decode(&bytes[..len], 100),
                Err(MessageError::TooShort {
                    len,
                    needed: MESSAGE_HEAD_LEN
                })
            );
        }
    }

    #[test]
    fn lying_lengths_are_rejected() {
        let mut bytes = inline(b"abcdef");
        bytes.truncate(MESSAGE_HEAD_LEN + 2);
        assert_eq!(
            Message::decode(&bytes, 100),
            Err(MessageError::LengthMismatch {
                claimed: 6,
                actual: 2
            })
        );
        let mut bytes = inline(b"ab");
        bytes.extend_from_slice(b"extra");
        assert_eq!(
            Message::decode(&bytes, 100),
            Err(MessageError::LengthMismatch {
                claimed: 2,
                actual: 7
            })
        );
    }

    #[test]
    fn header_field_errors() {
        let good = inline(b"x");
        let mut b = good.clone();
        b[0] = 2;
        assert_eq!(
            Message::decode(&b, 100),
            Err(MessageError::UnsupportedVersion(2))
        );
        let mut b = good.clone();
        b[1] = 9;
        assert_eq!(Message::decode(&b, 100), Err(MessageError::UnknownKind(9)));
        let mut b = good.clone();
        b[3] = 1;
        assert_eq!(
            Message::decode(&b, 100),
            Err(MessageError::ReservedNotZero(0x100))
        );
        assert_eq!(
            Message::decode(&good, 0),
            Err(MessageError::PayloadTooLarge { len: 1, max: 0 })
        );
        let mut b = good.clone();
        b[28] = 0xC3;
        assert!(matches!(
            Message::decode(&b, 100),
            Err(MessageError::Module(TagError::NotUtf8(_)))
        ));
        let mut b = good;
        b[57] = b'z';
        assert!(matches!(
            Message::decode(&b, 100),
            Err(MessageError::File(TagError::BadPadding { .. }))
        ));
    }

    proptest! {
        #[test]
        fn round_trip_any_payload(payload in proptest::collection::vec(any::<u8>(), 0..300),
                                  ts: u64, seq: u64, line: u32) {
            let mut h = head(PayloadKind::Inline, payload.len() as u32);
            h.timestamp_ns = ts;
            h.client_seq = seq;
            h.line = line;
            let mut bytes = h.encode().to_vec();
            bytes.extend_from_slice(&payload);
            let msg = Message::decode(&bytes, 1000).unwrap();
            prop_assert_eq!(msg.head, h);
            prop_assert_eq!(msg.inline, &payload[..]);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), max: u32) {
            let _ = Message::decode(&bytes, max);
        }
    }
}
