//! Messages, not packets: data packets assembled per (master, channel) into the messages software wrote,
//! then decoded as TI STMLib messages (`docs/stm.md` §11) or kept as plain values.
//!
//! Two steps, each usable alone:
//!
//! 1. [`Assembler`] takes data elements and loss events and hands out [`RawMessage`]s: the bytes of
//!    consecutive data packets of one master and channel, up to and including the packet that ends the
//!    message (a timestamped one, which STMLib writes last through the channel's timing port; by default
//!    also a marked one, as Arm STMs' users end messages; a FLAG ends a message in progress). Data that
//!    cannot be a whole message is handed out as [`Torn`]: a message in progress when trace was lost
//!    (an unsynchronised range, a decode error, a frame error, an overflow reported by MERR/GERR, the end
//!    of the trace), and the first data of each channel after a point where trace may have been lost,
//!    unless it is a whole STMLib message by its header and byte count.
//! 2. [`MessageDecoder`] turns a raw message into a [`Message`]: STMLib's header and protocols (printf
//!    formatted with its format string read from the target's image through [`FormatStrings`], putMsg as
//!    text, putBuf and internal messages as bytes), or, without an STMLib header, the packets' values,
//!    named by a [`Dictionary`](crate::dict::Dictionary). A message that cannot be decoded still comes
//!    out, raw, with the reason ([`Undecodable`]).
//!
//! Packet values become bytes in little-endian order (a D32 packet gives its word's four bytes, least
//! significant first, as the little-endian cores of KeyStone II store them), so a payload of bytes written
//! as words reads back in memory order.

mod assembler;
mod decode;
pub(crate) mod printf;

pub use assembler::{
    Assembled, Assembler, AssemblerConfig, MessageEnd, RawMessage, TearCause, Torn,
};
pub use decode::{
    FormatStrings, Message, MessageDecoder, MessageKind, NoImages, StringError, StringTable,
};

use crate::stmlib::Protocol;

/// Why a message could not be decoded. The message is still reported, with its raw bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum Undecodable {
    /// A printf message (or a `%s` argument of one) needs the target's image, and none was given for its
    /// master.
    #[error("no ELF image for this master to read the format string from")]
    NoImage,
    /// A format string or string argument address lies outside every section of the image.
    #[error("address 0x{address:08x} is outside the ELF image")]
    AddressOutside {
        /// The address the message carried.
        address: u32,
    },
    /// The string at the address has no terminating NUL inside its section.
    #[error("the string at 0x{address:08x} has no terminating NUL")]
    StringUnterminated {
        /// The string's address.
        address: u32,
    },
    /// A string argument sent as bytes (protocol 0x84) has no terminating NUL in the message.
    #[error("a string argument sent as bytes has no terminating NUL")]
    InlineStringUnterminated,
    /// The format string takes another number of argument words than the message carries.
    #[error("the format string takes {expected} argument words, the message carries {received}")]
    ArgumentCount {
        /// Words the format string needs (at least this many, when it stopped at a missing one).
        expected: usize,
        /// Argument words in the message.
        received: usize,
    },
    /// A conversion this decoder does not format (`%n`, `%a`, or a `%` at the end).
    #[error("unsupported conversion %{conversion}")]
    UnsupportedConversion {
        /// The conversion character.
        conversion: char,
    },
    /// The message holds fewer payload bytes than its header's byte count (or length word) says.
    #[error("truncated: the header says {declared} payload bytes, the message has {received}")]
    Truncated {
        /// Payload bytes the header declares.
        declared: u32,
        /// Payload bytes received.
        received: usize,
    },
    /// The message holds more payload bytes than its header says, beyond the padding of its last word.
    #[error("the header says {declared} payload bytes, the message has {received}")]
    Overlong {
        /// Payload bytes the header declares.
        declared: u32,
        /// Payload bytes received.
        received: usize,
    },
    /// The header says the length is in the next word (byte count 0xFF), and the message ends before it.
    #[error("byte count 0xff without its length word")]
    MissingLength,
    /// A printf message whose payload is not whole 32-bit words.
    #[error("a printf payload of {bytes} bytes is not whole words")]
    NotWords {
        /// Payload bytes.
        bytes: usize,
    },
    /// An STMLib header with a protocol this decoder does not know.
    #[error("unknown protocol 0x{protocol:02x}")]
    UnknownProtocol {
        /// The header's protocol byte.
        protocol: u8,
    },
    /// The message grew past the assembler's limit; the bytes beyond it were counted and dropped.
    #[error("longer than {limit} bytes ({dropped} more dropped)")]
    TooLong {
        /// The assembler's limit.
        limit: usize,
        /// Bytes dropped.
        dropped: u64,
    },
}

impl Undecodable {
    /// A short name for statistics and JSON: `no_image`, `address_outside`, `string_unterminated`,
    /// `inline_string_unterminated`, `argument_count`, `unsupported_conversion`, `truncated`, `overlong`,
    /// `missing_length`, `not_words`, `unknown_protocol`, `too_long`.
    pub const fn name(&self) -> &'static str {
        match self {
            Undecodable::NoImage => "no_image",
            Undecodable::AddressOutside { .. } => "address_outside",
            Undecodable::StringUnterminated { .. } => "string_unterminated",
            Undecodable::InlineStringUnterminated => "inline_string_unterminated",
            Undecodable::ArgumentCount { .. } => "argument_count",
            Undecodable::UnsupportedConversion { .. } => "unsupported_conversion",
            Undecodable::Truncated { .. } => "truncated",
            Undecodable::Overlong { .. } => "overlong",
            Undecodable::MissingLength => "missing_length",
            Undecodable::NotWords { .. } => "not_words",
            Undecodable::UnknownProtocol { .. } => "unknown_protocol",
            Undecodable::TooLong { .. } => "too_long",
        }
    }
}

/// Where `%s` arguments come from: the target's memory (printf) or the message (printf with strings).
pub(crate) trait StringArgs {
    /// The next string argument's bytes (without the NUL); takes the words it uses from `args`.
    fn next_string(&mut self, args: &mut printf::Args<'_>) -> Result<&[u8], Undecodable>;
}

/// No strings at all (tests of the formatter).
#[cfg(test)]
pub(crate) struct NoStrings;

#[cfg(test)]
impl StringArgs for NoStrings {
    fn next_string(&mut self, _: &mut printf::Args<'_>) -> Result<&[u8], Undecodable> {
        Err(Undecodable::NoImage)
    }
}

/// Whether `bytes` is a whole STMLib message by itself: an STMLib header whose byte count (or length word)
/// matches the payload, allowing for the padding of the last word, and a known protocol.
pub fn is_whole_stmlib(bytes: &[u8]) -> bool {
    let Some(header) = word_at(bytes, 0) else {
        return false;
    };
    let header = crate::stmlib::Header::from_word(header);
    if !header.is_stmlib() || matches!(header.protocol, Protocol::Other(_)) {
        return false;
    }
    match payload(bytes, header.byte_count) {
        Ok((declared, payload)) => fits(declared, payload.len()).is_ok(),
        Err(_) => false,
    }
}

/// The little-endian word at byte `index`.
fn word_at(bytes: &[u8], index: usize) -> Option<u32> {
    let chunk = bytes.get(index..index.checked_add(4)?)?;
    Some(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]))
}

/// The declared payload length and the payload bytes after the header (and the length word).
fn payload(bytes: &[u8], byte_count: Option<u8>) -> Result<(u32, &[u8]), Undecodable> {
    match byte_count {
        Some(count) => Ok((u32::from(count), &bytes[4.min(bytes.len())..])),
        None => {
            let length = word_at(bytes, 4).ok_or(Undecodable::MissingLength)?;
            Ok((length, &bytes[8..]))
        }
    }
}

/// Checks a payload of `received` bytes against the `declared` count: equal, or up to 3 bytes more when
/// they pad the last word.
fn fits(declared: u32, received: usize) -> Result<(), Undecodable> {
    let declared_len = declared as usize;
    if received < declared_len {
        return Err(Undecodable::Truncated { declared, received });
    }
    let padded = declared_len.div_ceil(4) * 4;
    if received > declared_len && received > padded {
        return Err(Undecodable::Overlong { declared, received });
    }
    Ok(())
}
