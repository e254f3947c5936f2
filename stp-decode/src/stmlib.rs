//! TI STMLib's message conventions (KeyStone II, `docs/stm.md` §11): how software writes a message to STM
//! channels, and the 32-bit header a message starts with. TI-specific; nothing here is part of MIPI STP.
//!
//! - A channel's stimulus port is at [`CHANNEL_BASE`] + channel × [`CHANNEL_RESOLUTION`]. A write to the
//!   upper half of a channel's window (the *timing* port, + [`TIMING_PORT`]) becomes a timestamped data
//!   packet (`D*MTS`); STMLib writes a message's last word there, so a timestamped packet ends a message.
//! - The first word of a message is the header: bits 31:24 version (1), 23:16 entity (1), 15:8
//!   [`Protocol`], 7:0 byte count. A byte count of `0xFF` means the next word holds the length.
//! - This crate reads the byte count as the number of payload bytes after the header (and after the
//!   length word); the last word may carry up to three bytes of padding.
//!
//! ```
//! use stp_decode::stmlib::{Header, Protocol};
//! let header = Header::from_word(0x0101_8008);
//! assert_eq!(header.protocol, Protocol::Printf);
//! assert_eq!(header.byte_count, Some(8));
//! assert!(header.is_stmlib());
//! assert_eq!(Header::from_word(0x0101_82FF).byte_count, None); // the length is in the next word
//! ```

use core::fmt;

/// K2 STM channel 0's stimulus port address.
pub const CHANNEL_BASE: u32 = 0x2000_0000;
/// Bytes between two channels' ports on K2.
pub const CHANNEL_RESOLUTION: u32 = 0x1000;
/// Offset of the timing port inside a channel's window (half the resolution): writes there are timestamped.
pub const TIMING_PORT: u32 = CHANNEL_RESOLUTION / 2;
/// The STM's control registers on K2.
pub const CONTROL_REGISTERS: u32 = 0x0301_8000;
/// The header version STMLib writes.
pub const VERSION: u8 = 1;
/// The header entity STMLib writes.
pub const ENTITY: u8 = 1;
/// The byte count that says "the length is in the next word".
pub const LONG_LENGTH: u8 = 0xFF;

/// The address a core writes to send on `channel`; `timed` for the timing port (the last word of a message).
///
/// ```
/// use stp_decode::stmlib::port_address;
/// assert_eq!(port_address(3, false), 0x2000_3000);
/// assert_eq!(port_address(3, true), 0x2000_3800);
/// ```
pub const fn port_address(channel: u16, timed: bool) -> u32 {
    CHANNEL_BASE + channel as u32 * CHANNEL_RESOLUTION + if timed { TIMING_PORT } else { 0 }
}

/// What a message carries (the header's bits 15:8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Protocol {
    /// `0x80`: the address of a format string in the target's memory, then one word per argument
    /// (64-bit arguments take two, most significant first).
    Printf,
    /// `0x81`: a text message.
    PutMsg,
    /// `0x82`: a buffer of bytes.
    PutBuf,
    /// `0x83`: a message of STMLib itself.
    Internal,
    /// `0x84`: printf whose string arguments are sent as bytes.
    PrintfStrings,
    /// Any other value.
    Other(u8),
}

impl Protocol {
    /// The protocol of a header's protocol byte.
    pub const fn from_byte(byte: u8) -> Protocol {
        match byte {
            0x80 => Protocol::Printf,
            0x81 => Protocol::PutMsg,
            0x82 => Protocol::PutBuf,
            0x83 => Protocol::Internal,
            0x84 => Protocol::PrintfStrings,
            other => Protocol::Other(other),
        }
    }

    /// The header's protocol byte.
    pub const fn byte(self) -> u8 {
        match self {
            Protocol::Printf => 0x80,
            Protocol::PutMsg => 0x81,
            Protocol::PutBuf => 0x82,
            Protocol::Internal => 0x83,
            Protocol::PrintfStrings => 0x84,
            Protocol::Other(other) => other,
        }
    }

    /// A short name: `printf`, `putMsg`, `putBuf`, `internal`, `printf+strings`, `protocol 0x..`.
    pub const fn name(self) -> &'static str {
        match self {
            Protocol::Printf => "printf",
            Protocol::PutMsg => "putMsg",
            Protocol::PutBuf => "putBuf",
            Protocol::Internal => "internal",
            Protocol::PrintfStrings => "printf+strings",
            Protocol::Other(_) => "unknown",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Protocol::Other(byte) => write!(f, "protocol 0x{byte:02x}"),
            known => f.write_str(known.name()),
        }
    }
}

/// A message header, the first word of an STMLib message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Bits 31:24 (1 for STMLib).
    pub version: u8,
    /// Bits 23:16 (1 for STMLib).
    pub entity: u8,
    /// Bits 15:8.
    pub protocol: Protocol,
    /// Bits 7:0, the payload's length in bytes; `None` for `0xFF` (the length is in the next word).
    pub byte_count: Option<u8>,
}

impl Header {
    /// Splits a header word into its fields.
    pub const fn from_word(word: u32) -> Header {
        let count = word as u8;
        Header {
            version: (word >> 24) as u8,
            entity: (word >> 16) as u8,
            protocol: Protocol::from_byte((word >> 8) as u8),
            byte_count: if count == LONG_LENGTH {
                None
            } else {
                Some(count)
            },
        }
    }

    /// The header word (`byte_count: None` writes `0xFF`).
    pub const fn to_word(self) -> u32 {
        let count = match self.byte_count {
            Some(count) => count,
            None => LONG_LENGTH,
        };
        (self.version as u32) << 24
            | (self.entity as u32) << 16
            | (self.protocol.byte() as u32) << 8
            | count as u32
    }

    /// A header as STMLib writes it: version 1, entity 1, the protocol, and the byte count (`0xFF` when
    /// `payload_len` does not fit below it; the length word then follows).
    pub const fn stmlib(protocol: Protocol, payload_len: usize) -> Header {
        Header {
            version: VERSION,
            entity: ENTITY,
            protocol,
            byte_count: if payload_len < LONG_LENGTH as usize {
                Some(payload_len as u8)
            } else {
                None
            },
        }
    }

    /// True for the version and entity STMLib writes (1 and 1): the word starts an STMLib message.
    pub const fn is_stmlib(&self) -> bool {
        self.version == VERSION && self.entity == ENTITY
    }
}

/// The words of an STMLib message with `payload` as its payload, as a core writes them (the header, the
/// length word when the payload is 255 bytes or longer, then the payload in little-endian words, the last
/// one padded with zeros). The last word is the one written to the timing port.
///
/// ```
/// use stp_decode::stmlib::{message_words, Protocol};
/// assert_eq!(message_words(Protocol::PutMsg, b"hello"), [0x0101_8105, 0x6c6c_6568, 0x0000_006f]);
/// let long = message_words(Protocol::PutBuf, &[7; 300]);
/// assert_eq!(&long[..2], &[0x0101_82FF, 300]);
/// ```
#[cfg(feature = "alloc")]
pub fn message_words(protocol: Protocol, payload: &[u8]) -> alloc::vec::Vec<u32> {
    let header = Header::stmlib(protocol, payload.len());
    let mut words = alloc::vec::Vec::with_capacity(2 + payload.len().div_ceil(4));
    words.push(header.to_word());
    if header.byte_count.is_none() {
        words.push(payload.len() as u32);
    }
    for chunk in payload.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        words.push(u32::from_le_bytes(word));
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn header_fields_round_trip() {
        for word in [0x0101_8008, 0x0101_84FF, 0x0201_8300, 0xFFFF_FFFF, 0] {
            assert_eq!(Header::from_word(word).to_word(), word);
        }
        let h = Header::from_word(0x0101_8520);
        assert_eq!(h.protocol, Protocol::Other(0x85));
        assert_eq!(h.protocol.to_string(), "protocol 0x85");
        assert!(!Header::from_word(0x0201_8008).is_stmlib());
        assert!(!Header::from_word(0x0102_8008).is_stmlib());
    }

    #[test]
    fn every_protocol_byte_maps_back() {
        for byte in 0..=0xFF {
            assert_eq!(Protocol::from_byte(byte).byte(), byte);
        }
    }

    #[test]
    #[cfg(feature = "alloc")] // the encoder / message_words
    fn long_payloads_use_the_length_word() {
        assert_eq!(Header::stmlib(Protocol::PutBuf, 254).byte_count, Some(254));
        assert_eq!(Header::stmlib(Protocol::PutBuf, 255).byte_count, None);
        let words = message_words(Protocol::PutBuf, &[1; 255]);
        assert_eq!(words.len(), 2 + 64);
        assert_eq!(words[1], 255);
    }
}
