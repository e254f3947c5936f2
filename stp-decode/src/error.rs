//! Error values: one enum per concern (STP decoding, CoreSight deformatting, encoding).

use crate::packet::PacketType;

/// Why an STP packet could not be decoded. The decoder reports it as a value
/// ([`crate::Event::Error`]) and then hunts for the next ASYNC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum StpError {
    /// The opcode nibbles name no packet (`F0C`–`F0E`, `F0F2`–`F0FF`). `opcode` holds the nibbles read,
    /// first nibble most significant.
    #[error("reserved opcode 0x{opcode:x} ({nibbles} nibbles)")]
    ReservedOpcode {
        /// The opcode nibbles, first on the wire in the most significant position.
        opcode: u16,
        /// How many opcode nibbles were read (1–4).
        nibbles: u8,
    },
    /// `F F` at an opcode position that did not turn out to be an ASYNC (21 × `F` then `0`).
    #[error("invalid ASYNC: F F at an opcode position")]
    InvalidAsync,
    /// A timestamp length nibble of `F`, which codes no length.
    #[error("invalid timestamp length nibble 0xf in {packet}")]
    BadTimestampLength {
        /// The packet that carried it.
        packet: PacketType,
    },
    /// A timestamped packet before any VERSION packet: the timestamp format, hence its length, is unknown.
    #[error("{packet} carries a timestamp before any VERSION packet")]
    TimestampBeforeVersion {
        /// The timestamped packet.
        packet: PacketType,
    },
    /// A VERSION packet with a value this decoder does not know (5–15).
    #[error("unsupported STP version {version}")]
    UnsupportedVersion {
        /// The version nibble.
        version: u8,
    },
    /// A packet was cut short, by an ASYNC or by the end of the trace.
    #[error("{} cut short by {cause} after {nibbles} nibbles", packet_name(*.packet))]
    Truncated {
        /// The packet type, when the opcode had been read completely.
        packet: Option<PacketType>,
        /// Nibbles of the packet that had been read.
        nibbles: u8,
        /// What cut it short.
        cause: Truncation,
    },
}

fn packet_name(packet: Option<PacketType>) -> &'static str {
    packet.map_or("opcode", PacketType::name)
}

/// What cut a packet short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Truncation {
    /// An ASYNC started inside the packet.
    Async,
    /// The trace ended ([`crate::StpDecoder::finish`]).
    EndOfTrace,
}

impl core::fmt::Display for Truncation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Async => "ASYNC",
            Self::EndOfTrace => "end of trace",
        })
    }
}

/// An [`StpError`] and where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("at nibble {offset}: {error}")]
pub struct DecodeError {
    /// Nibble offset of the start of the offending packet.
    pub offset: u64,
    /// What went wrong.
    #[source]
    pub error: StpError,
}

/// Why a CoreSight formatter frame could not be demultiplexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// An ID byte named trace ID 0x7F, which is reserved (it only appears inside FSYNC/HSYNC patterns).
    /// The frame is dropped and the current ID becomes unknown until the next ID change.
    #[error("reserved trace ID 0x7f at byte {index} of the frame")]
    ReservedId {
        /// Position of the ID byte inside the 16-byte frame.
        index: u8,
    },
    /// In TPIU mode, a frame started with `FF` but was neither an FSYNC nor an HSYNC; frame alignment is
    /// lost and the deformatter hunts for the next FSYNC.
    #[error("lost frame alignment: 0xff 0x{next:02x} at a frame start")]
    LostAlignment {
        /// The byte after the `FF`.
        next: u8,
    },
}

/// A [`FrameError`] and where it happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("at byte {offset}: {error}")]
pub struct FrameErrorAt {
    /// Byte offset, in the formatted input, of the first byte of the offending frame.
    pub offset: u64,
    /// What went wrong.
    #[source]
    pub error: FrameError,
}

/// Why a packet could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A value does not fit the field it is written to (for example a 9-bit value in an 8-bit field).
    #[error("value 0x{value:x} does not fit in {nibbles} nibbles of {field}")]
    ValueTooWide {
        /// Name of the field.
        field: &'static str,
        /// The value.
        value: u64,
        /// The field width in nibbles.
        nibbles: u8,
    },
    /// A length that the wire format cannot code (a timestamp or time of 13, 15 or more than 16 nibbles,
    /// a USER payload of 0 or more than 16 nibbles, a legacy timestamp other than 2 nibbles).
    #[error("{field} cannot be {nibbles} nibbles long")]
    BadLength {
        /// Name of the field.
        field: &'static str,
        /// The requested length.
        nibbles: u8,
    },
    /// A trace ID that cannot carry data in a formatter frame (0x00 is padding, 0x7F reserved, IDs are 7 bits).
    #[error("trace ID 0x{id:02x} cannot carry data")]
    BadTraceId {
        /// The ID.
        id: u8,
    },
}
