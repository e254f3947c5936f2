//! The client-to-server message (version 2, little-endian): one `SOCK_SEQPACKET` datagram per record.
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 1 | version: [`MESSAGE_VERSION`]; version 1 messages (no flags, no device memory) are still accepted |
//! | 1 | 1 | payload kind: 1 inline (the payload follows the head), 2 memfd (one sealed memfd attached), 3 GPU device memory (a [`DeviceRegion`] follows the head; version 2) |
//! | 2 | 1 | flags (version 2; 0 in version 1): bit 0, the client waits for the server's acknowledgement ([`crate::ack`]); other bits 0 |
//! | 3 | 1 | reserved, 0 |
//! | 4 | 4 | payload length |
//! | 8 | 8 | timestamp, `CLOCK_MONOTONIC_RAW` ns |
//! | 16 | 8 | client sequence number |
//! | 24 | 4 | source line |
//! | 28 | 10 | module tag, UTF-8, zero-padded |
//! | 38 | 20 | source file name, UTF-8, zero-padded |
//! | 58 | len | inline payload (kind 1 only) |
//! | 58 | 88 or 96 | device region (kind 3 only): the allocation's CUDA IPC handle (64), the payload's offset inside the allocation (8), the GPU's UUID (16), then, in a 96-byte region, the allocation's size (8), which the server checks the record against besides the memory block the handle maps |
//!
//! A datagram arrives whole or not at all, so there is no "partial" state: a short datagram is malformed. The
//! sender's process id is not in the message; the server takes it from the socket (`SO_PEERCRED`).
//! Decoding is sans-IO: [`Message::decode`] takes the received bytes and borrows the inline payload from them.

use crate::device::{DeviceRegion, DeviceUuid, IpcHandle, IPC_HANDLE_LEN};
use crate::error::MessageError;
use crate::tag::{FileTag, ModuleTag};

/// Version byte of the message format this crate writes.
pub const MESSAGE_VERSION: u8 = 2;

/// Bytes of the message head.
pub const MESSAGE_HEAD_LEN: usize = 58;

/// Bytes of the device region that follows the head of a device-memory message, without the allocation's
/// size.
pub const DEVICE_REGION_LEN: usize = IPC_HANDLE_LEN + 8 + 16;

/// Bytes of a device region that carries the allocation's size.
pub const DEVICE_REGION_SIZED_LEN: usize = DEVICE_REGION_LEN + 8;

/// The largest inline payload a server accepts; larger payloads travel in a memfd.
pub const MAX_INLINE_PAYLOAD: usize = 64 * 1024;

/// Flag bit: the client waits for the server's acknowledgement of this record.
pub(crate) const FLAG_ACK: u8 = 1;

/// How a record's payload travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadKind {
    /// The payload bytes follow the head in the same datagram.
    Inline = 1,
    /// The payload is in a sealed memfd attached to the datagram with `SCM_RIGHTS`.
    Memfd = 2,
    /// The payload is GPU device memory that the server copies through a CUDA IPC handle.
    Device = 3,
}

/// A decoded message head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHead {
    /// How the payload travels.
    pub kind: PayloadKind,
    /// Whether the client waits for the server's acknowledgement ([`crate::ack`]).
    pub ack: bool,
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

/// What follows a message head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload<'a> {
    /// The inline payload, borrowed from the datagram.
    Inline(&'a [u8]),
    /// Nothing: the payload is in the attached memfd.
    Memfd,
    /// The device memory to copy; its `len` is the head's payload length.
    Device(DeviceRegion),
}

/// A decoded message: its head and what follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The head.
    pub head: MessageHead,
    /// The payload or where to find it.
    pub payload: Payload<'a>,
}

impl MessageHead {
    /// Writes the 58-byte head (version [`MESSAGE_VERSION`]).
    pub fn encode(&self) -> [u8; MESSAGE_HEAD_LEN] {
        let mut out = [0; MESSAGE_HEAD_LEN];
        out[0] = MESSAGE_VERSION;
        out[1] = self.kind as u8;
        out[2] = if self.ack { FLAG_ACK } else { 0 };
        out[4..8].copy_from_slice(&self.payload_len.to_le_bytes());
        out[8..16].copy_from_slice(&self.timestamp_ns.to_le_bytes());
        out[16..24].copy_from_slice(&self.client_seq.to_le_bytes());
        out[24..28].copy_from_slice(&self.line.to_le_bytes());
        out[28..38].copy_from_slice(self.module.field());
        out[38..58].copy_from_slice(self.file.field());
        out
    }
}

/// Appends the device region that follows the head of a [`PayloadKind::Device`] message (its length travels
/// in the head): [`DEVICE_REGION_SIZED_LEN`] bytes when it carries the allocation's size, else
/// [`DEVICE_REGION_LEN`].
pub fn write_region(region: &DeviceRegion, out: &mut Vec<u8>) {
    out.extend_from_slice(&region.handle.0);
    out.extend_from_slice(&region.offset.to_le_bytes());
    out.extend_from_slice(&region.device.0);
    if let Some(size) = region.allocation_len {
        out.extend_from_slice(&size.to_le_bytes());
    }
}

/// The bytes [`write_region`] appends.
pub fn encode_region(region: &DeviceRegion) -> Vec<u8> {
    let mut out = Vec::with_capacity(DEVICE_REGION_SIZED_LEN);
    write_region(region, &mut out);
    out
}

/// Copies `N` bytes at `at` out of a slice known to be long enough.
fn array_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    let mut out = [0; N];
    out.copy_from_slice(&bytes[at..at + N]);
    out
}

impl<'a> Message<'a> {
    /// Decodes one datagram. `max_payload` bounds the claimed payload length of every kind.
    pub fn decode(datagram: &'a [u8], max_payload: u32) -> Result<Message<'a>, MessageError> {
        if datagram.len() < MESSAGE_HEAD_LEN {
            return Err(MessageError::TooShort {
                len: datagram.len(),
                needed: MESSAGE_HEAD_LEN,
            });
        }
        let version = datagram[0];
        if version != 1 && version != MESSAGE_VERSION {
            return Err(MessageError::UnsupportedVersion(version));
        }
        let kind = match datagram[1] {
            1 => PayloadKind::Inline,
            2 => PayloadKind::Memfd,
            3 if version >= 2 => PayloadKind::Device,
            other => return Err(MessageError::UnknownKind(other)),
        };
        let flags = if version >= 2 { datagram[2] } else { 0 };
        let reserved = if version >= 2 {
            u16::from(datagram[3]) << 8 | u16::from(flags & !FLAG_ACK)
        } else {
            u16::from_le_bytes(array_at(datagram, 2))
        };
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
            ack: flags & FLAG_ACK != 0,
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
            PayloadKind::Device if rest.len() > DEVICE_REGION_LEN => DEVICE_REGION_SIZED_LEN,
            PayloadKind::Device => DEVICE_REGION_LEN,
        };
        if rest.len() != carried {
            return Err(MessageError::LengthMismatch {
                claimed: carried as u32,
                actual: rest.len(),
            });
        }
        let payload = match kind {
            PayloadKind::Inline => Payload::Inline(rest),
            PayloadKind::Memfd => Payload::Memfd,
            PayloadKind::Device => Payload::Device(DeviceRegion {
                handle: IpcHandle(array_at(rest, 0)),
                offset: u64::from_le_bytes(array_at(rest, IPC_HANDLE_LEN)),
                len: payload_len,
                device: DeviceUuid(array_at(rest, IPC_HANDLE_LEN + 8)),
                allocation_len: (rest.len() == DEVICE_REGION_SIZED_LEN)
                    .then(|| u64::from_le_bytes(array_at(rest, DEVICE_REGION_LEN))),
            }),
        };
        Ok(Message { head, payload })
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
            ack: false,
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
        assert_eq!(msg.payload, Payload::Inline(b"hello"));
    }

    fn region() -> DeviceRegion {
        let mut handle = [0; IPC_HANDLE_LEN];
        for (i, b) in handle.iter_mut().enumerate() {
            *b = i as u8;
        }
        DeviceRegion {
            handle: IpcHandle(handle),
            offset: 0x0102_0304_0506_0708,
            len: 4096,
            device: DeviceUuid([0xee; 16]),
            allocation_len: None,
        }
    }

    fn device(ack: bool) -> Vec<u8> {
        let mut h = head(PayloadKind::Device, 4096);
        h.ack = ack;
        let mut out = h.encode().to_vec();
        out.extend_from_slice(&encode_region(&region()));
        out
    }

    #[test]
    fn device_round_trip_at_documented_offsets() {
        let bytes = device(true);
        assert_eq!(bytes.len(), MESSAGE_HEAD_LEN + DEVICE_REGION_LEN);
        assert_eq!(&bytes[0..4], &[2, 3, 1, 0]);
        assert_eq!(bytes[58], 0);
        assert_eq!(bytes[58 + 63], 63);
        assert_eq!(&bytes[122..130], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&bytes[130..146], &[0xee; 16]);
        let msg = Message::decode(&bytes, 1 << 20).unwrap();
        assert!(msg.head.ack);
        assert_eq!(msg.head.kind, PayloadKind::Device);
        assert_eq!(msg.payload, Payload::Device(region()));
        // The device length is the head's and is bounded like any other payload.
        assert_eq!(
            Message::decode(&bytes, 4095),
            Err(MessageError::PayloadTooLarge {
                len: 4096,
                max: 4095
            })
        );
        // A region one byte short or long is malformed.
        assert_eq!(
            Message::decode(&bytes[..bytes.len() - 1], 1 << 20),
            Err(MessageError::LengthMismatch {
                claimed: DEVICE_REGION_LEN as u32,
                actual: DEVICE_REGION_LEN - 1
            })
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            Message::decode(&longer, 1 << 20),
            Err(MessageError::LengthMismatch { .. })
        ));
    }

    #[test]
    fn a_region_may_carry_the_allocations_size() {
        let sized = DeviceRegion {
            allocation_len: Some(0x0a0b_0c0d),
            ..region()
        };
        let mut bytes = head(PayloadKind::Device, 4096).encode().to_vec();
        write_region(&sized, &mut bytes);
        assert_eq!(bytes.len(), MESSAGE_HEAD_LEN + DEVICE_REGION_SIZED_LEN);
        assert_eq!(&bytes[146..154], &[0x0d, 0x0c, 0x0b, 0x0a, 0, 0, 0, 0]);
        let msg = Message::decode(&bytes, 1 << 20).unwrap();
        assert_eq!(msg.payload, Payload::Device(sized));
        // A size cut short, or more after it, is malformed.
        for len in [bytes.len() - 1, bytes.len() - 7, bytes.len() + 1] {
            let mut b = bytes.clone();
            b.resize(len, 0);
            assert!(matches!(
                Message::decode(&b, 1 << 20),
                Err(MessageError::LengthMismatch { .. })
            ));
        }
    }

    #[test]
    fn version_1_messages_still_decode_but_know_no_device_or_flags() {
        let mut bytes = inline(b"old");
        bytes[0] = 1;
        let msg = Message::decode(&bytes, 100).unwrap();
        assert_eq!(msg.payload, Payload::Inline(b"old"));
        assert!(!msg.head.ack);
        let mut b = bytes.clone();
        b[2] = 1;
        assert_eq!(
            Message::decode(&b, 100),
            Err(MessageError::ReservedNotZero(1))
        );
        let mut b = device(false);
        b[0] = 1;
        assert_eq!(
            Message::decode(&b, 1 << 20),
            Err(MessageError::UnknownKind(3))
        );
    }

    #[test]
    fn unknown_flags_are_rejected() {
        let mut b = device(true);
        b[2] = 0x81;
        assert_eq!(
            Message::decode(&b, 1 << 20),
            Err(MessageError::ReservedNotZero(0x80))
        );
        let mut b = device(false);
        b[3] = 1;
        assert_eq!(
            Message::decode(&b, 1 << 20),
            Err(MessageError::ReservedNotZero(0x100))
        );
    }

    #[test]
    fn memfd_head_has_no_body() {
        let bytes = head(PayloadKind::Memfd, 1 << 20).encode();
        let msg = Message::decode(&bytes, 1 << 21).unwrap();
        assert_eq!(msg.head.kind, PayloadKind::Memfd);
        assert_eq!(msg.payload, Payload::Memfd);
        let mut longer = bytes.to_vec();
        longer.push(0);
        assert_eq!(
            Message::decode(&longer, 1 << 21),
            Err(MessageError::LengthMismatch {
                claimed: 0,
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
        b[0] = 3;
        assert_eq!(
            Message::decode(&b, 100),
            Err(MessageError::UnsupportedVersion(3))
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
        let mut b = good.clone();
        b[1] = 3;
        assert!(matches!(
            Message::decode(&b, 100),
            Err(MessageError::LengthMismatch { .. })
        ));
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
            prop_assert_eq!(msg.payload, Payload::Inline(&payload[..]));
        }

        #[test]
        fn round_trip_any_device_region(handle in proptest::collection::vec(any::<u8>(), 64),
                                        offset: u64, len: u32, uuid: [u8; 16], ack: bool, seq: u64,
                                        allocation_len: Option<u64>) {
            let region = DeviceRegion {
                handle: IpcHandle(handle.try_into().unwrap()),
                offset,
                len,
                device: DeviceUuid(uuid),
                allocation_len,
            };
            let mut h = head(PayloadKind::Device, len);
            h.ack = ack;
            h.client_seq = seq;
            let mut bytes = h.encode().to_vec();
            write_region(&region, &mut bytes);
            let msg = Message::decode(&bytes, u32::MAX).unwrap();
            prop_assert_eq!(msg.head, h);
            prop_assert_eq!(msg.payload, Payload::Device(region));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), max: u32) {
            let _ = Message::decode(&bytes, max);
        }
    }
}
