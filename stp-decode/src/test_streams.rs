//! STP streams written with the encoder, shared by the unit tests.

use alloc::vec::Vec;

use crate::encoder::StpEncoder;
use crate::stmlib::{message_words, Protocol};
use crate::{DataWidth, IdWidth, PacketKind, Timestamp};

/// A putMsg `text` from master 2 on channel 5, as a bare STP stream of whole 32-bit words (NULL packets,
/// nibble 0, pad the last word).
pub(crate) fn put_msg(text: &[u8]) -> Vec<u8> {
    let mut e = StpEncoder::new();
    e.async_packet();
    e.packet(&PacketKind::Version { version: 3 }).unwrap();
    e.packet(&PacketKind::Master {
        width: IdWidth::W8,
        master: 2,
    })
    .unwrap();
    e.packet(&PacketKind::Channel {
        width: IdWidth::W8,
        channel: 5,
    })
    .unwrap();
    let words = message_words(Protocol::PutMsg, text);
    for (i, &w) in words.iter().enumerate() {
        let last = i + 1 == words.len();
        let ts = last.then_some(Timestamp {
            nibbles: 4,
            update: 0x1234,
            absolute: None,
        });
        e.packet(&PacketKind::Data {
            width: DataWidth::W32,
            value: w.into(),
            marker: last,
            ts,
        })
        .unwrap();
    }
    let mut bytes = e.finish().into_bytes();
    bytes.resize(bytes.len().div_ceil(4) * 4, 0);
    bytes
}
