//! [`MessageDecoder`]: a raw message into text, by STMLib's protocols or as named values.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use super::printf::{self, Args};
use super::{fits, payload, RawMessage, StringArgs, Undecodable};
use crate::dict::Dictionary;
use crate::stmlib::{Header, Protocol};

/// Why a string could not be read from the target's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum StringError {
    /// No image was given for the master.
    #[error("no image for this master")]
    NoImage,
    /// The address is outside every section of the image.
    #[error("address outside the image")]
    Outside,
    /// No NUL ends the string inside its section.
    #[error("no terminating NUL")]
    Unterminated,
}

/// Strings in the target's memory, by master and address: where printf format strings (and `%s`
/// arguments) are read from. [`ElfImages`](crate::elf::ElfImages) reads them from ELF files.
pub trait FormatStrings {
    /// The bytes of the NUL-terminated string at `address` in `master`'s memory, without the NUL.
    fn string(&self, master: u16, address: u32) -> Result<&[u8], StringError>;
}

/// No image at all: every printf message is undecodable ([`Undecodable::NoImage`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoImages;

impl FormatStrings for NoImages {
    fn string(&self, _: u16, _: u32) -> Result<&[u8], StringError> {
        Err(StringError::NoImage)
    }
}

/// Strings at addresses, the same for every master: a stand-in for an image when the strings are known
/// some other way.
///
/// ```
/// use stp_decode::message::{FormatStrings, StringTable};
/// let mut table = StringTable::default();
/// table.insert(0x8000, "frame %d\n");
/// assert_eq!(table.string(0, 0x8000).unwrap(), b"frame %d\n");
/// assert_eq!(table.string(0, 0x8006).unwrap(), b"%d\n"); // inside a string
/// assert!(table.string(0, 0x9000).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringTable {
    strings: BTreeMap<u32, Vec<u8>>,
}

impl StringTable {
    /// Puts `text` at `address`.
    pub fn insert(&mut self, address: u32, text: &str) {
        self.strings.insert(address, text.as_bytes().to_vec());
    }
}

impl FormatStrings for StringTable {
    fn string(&self, _: u16, address: u32) -> Result<&[u8], StringError> {
        let (&start, bytes) = self
            .strings
            .range(..=address)
            .next_back()
            .ok_or(StringError::Outside)?;
        let at = (address - start) as usize;
        bytes.get(at..).ok_or(StringError::Outside)
    }
}

/// What a message turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MessageKind {
    /// An STMLib message, decoded: printf formatted, putMsg as text, putBuf and internal as bytes.
    Stmlib {
        /// Its protocol.
        protocol: Protocol,
    },
    /// No STMLib header: the packets' values, named by the dictionary where it has them.
    Values,
    /// An STMLib message that could not be decoded; its text is its bytes in hexadecimal.
    Undecodable {
        /// Its protocol.
        protocol: Protocol,
        /// Why.
        reason: Undecodable,
    },
}

impl MessageKind {
    /// The STMLib protocol, if the message had an STMLib header.
    pub const fn protocol(&self) -> Option<Protocol> {
        match *self {
            MessageKind::Stmlib { protocol } | MessageKind::Undecodable { protocol, .. } => {
                Some(protocol)
            }
            MessageKind::Values => None,
        }
    }
}

/// A decoded message, borrowing the decoder and the assembler until their next calls.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Message<'a> {
    /// The master that wrote it.
    pub master: u16,
    /// The channel.
    pub channel: u16,
    /// The absolute STM timestamp of its last packet, if it had one.
    pub timestamp: Option<u64>,
    /// Nibble offset of its first packet.
    pub offset: u64,
    /// Data packets.
    pub packets: u32,
    /// Its bytes, as assembled (header included).
    pub bytes: &'a [u8],
    /// What it is.
    pub kind: MessageKind,
    /// What it says: the formatted printf, the putMsg text, bytes in hexadecimal, or the values (names
    /// from the dictionary, else hexadecimal), separated by blanks.
    pub text: &'a str,
    /// For [`MessageKind::Values`]: each packet's value.
    pub values: &'a [u64],
}

impl Message<'_> {
    /// What kind of message it is, in a word: `stmlib`, `values` or `undecodable`.
    pub const fn kind_name(&self) -> &'static str {
        match self.kind {
            MessageKind::Stmlib { .. } => "stmlib",
            MessageKind::Values => "values",
            MessageKind::Undecodable { .. } => "undecodable",
        }
    }
}

/// A message as a map: `master`, `channel`, `timestamp`, `offset`, `packets`, `kind`
/// ([`Message::kind_name`]), `protocol` (its name, `null` for values), `reason` (why it is undecodable,
/// else `null`), `text`, `data` (its bytes in hexadecimal) and `values`.
#[cfg(feature = "serde")]
impl serde::Serialize for Message<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Display<T>(T);
        impl<T: core::fmt::Display> serde::Serialize for Display<T> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(&self.0)
            }
        }
        struct Hex<'b>(&'b [u8]);
        impl core::fmt::Display for Hex<'_> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
        }
        let reason = match self.kind {
            MessageKind::Undecodable { reason, .. } => Some(reason),
            _ => None,
        };
        let mut m = serializer.serialize_struct("Message", 11)?;
        m.serialize_field("master", &self.master)?;
        m.serialize_field("channel", &self.channel)?;
        m.serialize_field("timestamp", &self.timestamp)?;
        m.serialize_field("offset", &self.offset)?;
        m.serialize_field("packets", &self.packets)?;
        m.serialize_field("kind", self.kind_name())?;
        m.serialize_field("protocol", &self.kind.protocol().map(Display))?;
        m.serialize_field("reason", &reason.map(Display))?;
        m.serialize_field("text", self.text)?;
        m.serialize_field("data", &Display(Hex(self.bytes)))?;
        m.serialize_field("values", self.values)?;
        m.end()
    }
}

/// Bytes shown in hexadecimal at most; longer messages end with the number of bytes.
const HEX_BYTES: usize = 64;

/// Decodes raw messages; keeps one text buffer and one value buffer, reused for every message.
///
/// ```
/// use stp_decode::dict::Dictionary;
/// use stp_decode::message::{MessageDecoder, MessageKind, RawMessage, StringTable};
/// use stp_decode::stmlib::{message_words, Protocol};
/// let mut strings = StringTable::default();
/// strings.insert(0x1000, "frame %u took %d us");
/// let words = [0x0101_800C, 0x1000, 7, (-3i32) as u32];
/// let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
/// let raw = RawMessage { master: 2, channel: 9, bytes: &bytes, widths: &[4; 4], dropped: 0, packets: 4,
///     timestamp: Some(77), offset: 0 };
/// let mut decoder = MessageDecoder::new();
/// let message = decoder.decode(&raw, &strings, &Dictionary::new());
/// assert_eq!(message.text, "frame 7 took -3 us");
/// assert_eq!(message.kind, MessageKind::Stmlib { protocol: Protocol::Printf });
/// ```
#[derive(Debug, Clone, Default)]
pub struct MessageDecoder {
    text: String,
    values: Vec<u64>,
    words: Vec<u32>,
}

impl MessageDecoder {
    /// A decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `raw`; printf format strings come from `strings`, value names from `dict`.
    pub fn decode<'a>(
        &'a mut self,
        raw: &RawMessage<'a>,
        strings: &dyn FormatStrings,
        dict: &Dictionary,
    ) -> Message<'a> {
        self.text.clear();
        self.values.clear();
        let kind = self.kind(raw, strings, dict);
        if let MessageKind::Undecodable { .. } = kind {
            self.text.clear();
            hex(&mut self.text, raw.bytes);
        }
        Message {
            master: raw.master,
            channel: raw.channel,
            timestamp: raw.timestamp,
            offset: raw.offset,
            packets: raw.packets,
            bytes: raw.bytes,
            kind,
            text: &self.text,
            values: &self.values,
        }
    }

    fn kind(
        &mut self,
        raw: &RawMessage<'_>,
        strings: &dyn FormatStrings,
        dict: &Dictionary,
    ) -> MessageKind {
        let header = super::word_at(raw.bytes, 0).map(Header::from_word);
        let Some(header) = header.filter(Header::is_stmlib) else {
            self.decode_values(raw, dict);
            return MessageKind::Values;
        };
        let protocol = header.protocol;
        match self.decode_stmlib(raw, header, strings) {
            Ok(()) => MessageKind::Stmlib { protocol },
            Err(reason) => MessageKind::Undecodable { protocol, reason },
        }
    }

    fn decode_values(&mut self, raw: &RawMessage<'_>, dict: &Dictionary) {
        let mut at = 0;
        for &w in raw.widths {
            let w = usize::from(w);
            let Some(chunk) = raw.bytes.get(at..at + w) else {
                break;
            };
            at += w;
            let mut le = [0u8; 8];
            le[..w].copy_from_slice(chunk);
            let value = u64::from_le_bytes(le);
            self.values.push(value);
            if !self.text.is_empty() {
                self.text.push(' ');
            }
            match dict.value_name(raw.master, raw.channel, value) {
                Some(name) => self.text.push_str(name),
                None => {
                    let _ = write!(self.text, "0x{value:0width$x}", width = 2 * w);
                }
            }
        }
        if raw.dropped != 0 {
            let _ = write!(self.text, " … ({} bytes dropped)", raw.dropped);
        }
    }

    fn decode_stmlib(
        &mut self,
        raw: &RawMessage<'_>,
        header: Header,
        strings: &dyn FormatStrings,
    ) -> Result<(), Undecodable> {
        if raw.dropped != 0 {
            return Err(Undecodable::TooLong {
                limit: raw.bytes.len(),
                dropped: raw.dropped,
            });
        }
        let (declared, body) = payload(raw.bytes, header.byte_count)?;
        fits(declared, body.len())?;
        let body = &body[..declared as usize];
        match header.protocol {
            Protocol::Printf | Protocol::PrintfStrings => {
                if body.len() % 4 != 0 || body.is_empty() {
                    return Err(Undecodable::NotWords { bytes: body.len() });
                }
                self.words.clear();
                self.words.extend(
                    body.chunks_exact(4)
                        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
                );
                let address = self.words[0];
                let format = strings
                    .string(raw.master, address)
                    .map_err(|e| string_reason(e, address))?;
                let mut args = Args::new(&self.words[1..]);
                if header.protocol == Protocol::Printf {
                    let mut image = ImageStrings {
                        strings,
                        master: raw.master,
                    };
                    printf::format(format, &mut args, &mut image, &mut self.text)?;
                } else {
                    let mut inline = InlineStrings { bytes: &body[4..] };
                    printf::format(format, &mut args, &mut inline, &mut self.text)?;
                }
                let received = self.words.len() - 1;
                if args.used() != received {
                    return Err(Undecodable::ArgumentCount {
                        expected: args.used(),
                        received,
                    });
                }
                Ok(())
            }
            Protocol::PutMsg => {
                let text = match body.iter().position(|&b| b == 0) {
                    Some(nul) => &body[..nul],
                    None => body,
                };
                for &b in text {
                    match b {
                        b'\t' | b'\n' | 0x20..=0x7E => self.text.push(b as char),
                        0x80..=0xFF => self.text.push(char::from(b)),
                        _ => {
                            let _ = write!(self.text, "\\x{b:02x}");
                        }
                    }
                }
                Ok(())
            }
            Protocol::PutBuf | Protocol::Internal => {
                hex(&mut self.text, body);
                Ok(())
            }
            Protocol::Other(protocol) => Err(Undecodable::UnknownProtocol { protocol }),
        }
    }
}

fn string_reason(error: StringError, address: u32) -> Undecodable {
    match error {
        StringError::NoImage => Undecodable::NoImage,
        StringError::Outside => Undecodable::AddressOutside { address },
        StringError::Unterminated => Undecodable::StringUnterminated { address },
    }
}

/// `%s` of printf: the argument is an address in the target's memory.
struct ImageStrings<'s> {
    strings: &'s dyn FormatStrings,
    master: u16,
}

impl StringArgs for ImageStrings<'_> {
    fn next_string(&mut self, args: &mut Args<'_>) -> Result<&[u8], Undecodable> {
        let Some(&address) = args.words().first() else {
            return Err(Undecodable::ArgumentCount {
                expected: args.used() + 1,
                received: args.used(),
            });
        };
        args.advance(1);
        self.strings
            .string(self.master, address)
            .map_err(|e| string_reason(e, address))
    }
}

/// `%s` of printf with strings (0x84): the argument's bytes are in the message, NUL-terminated and padded
/// to a whole word (this decoder's reading of the protocol).
struct InlineStrings<'b> {
    /// The payload after the format address word.
    bytes: &'b [u8],
}

impl StringArgs for InlineStrings<'_> {
    fn next_string(&mut self, args: &mut Args<'_>) -> Result<&[u8], Undecodable> {
        let at = 4 * args.used();
        let rest = self.bytes.get(at..).unwrap_or(&[]);
        let Some(nul) = rest.iter().position(|&b| b == 0) else {
            return Err(Undecodable::InlineStringUnterminated);
        };
        args.advance((nul + 1).div_ceil(4));
        Ok(&rest[..nul])
    }
}

/// Appends `bytes` in hexadecimal, at most [`HEX_BYTES`] of them.
fn hex(out: &mut String, bytes: &[u8]) {
    for (i, b) in bytes.iter().take(HEX_BYTES).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02x}");
    }
    if bytes.len() > HEX_BYTES {
        let _ = write!(out, " … ({} bytes)", bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stmlib::message_words;

    fn raw_of(bytes: &[u8]) -> RawMessage<'_> {
        RawMessage {
            master: 1,
            channel: 2,
            bytes,
            widths: &[],
            dropped: 0,
            packets: 1,
            timestamp: None,
            offset: 0,
        }
    }

    fn decode(words: &[u32], strings: &dyn FormatStrings) -> (MessageKind, String) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut d = MessageDecoder::new();
        let m = d.decode(&raw_of(&bytes), strings, &Dictionary::new());
        (m.kind, String::from(m.text))
    }

    fn table() -> StringTable {
        let mut t = StringTable::default();
        t.insert(0x100, "%s=%d");
        t.insert(0x200, "name");
        t
    }

    #[test]
    fn printf_with_string_arguments_from_memory_and_inline() {
        let (kind, text) = decode(&[0x0101_800C, 0x100, 0x200, 5], &table());
        assert_eq!(
            kind,
            MessageKind::Stmlib {
                protocol: Protocol::Printf
            }
        );
        assert_eq!(text, "name=5");
        let inline = u32::from_le_bytes(*b"abc\0");
        let (kind, text) = decode(&[0x0101_840C, 0x100, inline, 6], &table());
        assert_eq!(
            kind,
            MessageKind::Stmlib {
                protocol: Protocol::PrintfStrings
            }
        );
        assert_eq!(text, "abc=6");
    }

    #[test]
    fn every_reason_for_a_raw_message() {
        let reason = |words: &[u32], strings: &dyn FormatStrings| match decode(words, strings).0 {
            MessageKind::Undecodable { reason, .. } => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            reason(&[0x0101_8004, 0x100], &NoImages),
            Undecodable::NoImage
        );
        assert_eq!(
            reason(&[0x0101_8004, 0x50], &table()),
            Undecodable::AddressOutside { address: 0x50 }
        );
        assert_eq!(
            reason(&[0x0101_8008, 0x100, 0x200], &table()),
            Undecodable::ArgumentCount {
                expected: 2,
                received: 1
            }
        );
        assert_eq!(
            reason(&[0x0101_8010, 0x100, 0x200, 1, 2], &table()),
            Undecodable::ArgumentCount {
                expected: 2,
                received: 3
            }
        );
        assert_eq!(
            reason(&[0x0101_8004, 0x100], &table()),
            Undecodable::ArgumentCount {
                expected: 1,
                received: 0
            }
        );
        assert_eq!(
            reason(&[0x0101_800C, 0x100, 0x999, 1], &table()),
            Undecodable::AddressOutside { address: 0x999 }
        );
        assert_eq!(
            reason(&[0x0101_840C, 0x100, 0x6161_6161, 0x6161_6161], &table()),
            Undecodable::InlineStringUnterminated
        );
        assert_eq!(
            reason(&[0x0101_8110, 1], &NoImages),
            Undecodable::Truncated {
                declared: 16,
                received: 4
            }
        );
        assert_eq!(
            reason(&[0x0101_8101, 1, 2], &NoImages),
            Undecodable::Overlong {
                declared: 1,
                received: 8
            }
        );
        assert_eq!(
            reason(&[0x0101_82FF], &NoImages),
            Undecodable::MissingLength
        );
        assert_eq!(
            reason(&[0x0101_8006, 0x100, 0], &table()),
            Undecodable::NotWords { bytes: 6 }
        );
        assert_eq!(
            reason(&[0x0101_9004, 0], &NoImages),
            Undecodable::UnknownProtocol { protocol: 0x90 }
        );
        let mut unterminated = StringTable::default();
        unterminated.strings.insert(0x300, b"%d".to_vec());
        struct Unterminated;
        impl FormatStrings for Unterminated {
            fn string(&self, _: u16, _: u32) -> Result<&[u8], StringError> {
                Err(StringError::Unterminated)
            }
        }
        assert_eq!(
            reason(&[0x0101_8004, 0x300], &Unterminated),
            Undecodable::StringUnterminated { address: 0x300 }
        );
        let bytes = [1u8; 8];
        let mut raw = raw_of(&bytes);
        raw.bytes = &[0x08, 0x81, 0x01, 0x01];
        raw.dropped = 12;
        let mut d = MessageDecoder::new();
        let m = d.decode(&raw, &NoImages, &Dictionary::new());
        assert_eq!(
            m.kind,
            MessageKind::Undecodable {
                protocol: Protocol::PutMsg,
                reason: Undecodable::TooLong {
                    limit: 4,
                    dropped: 12
                }
            }
        );
        assert_eq!(m.text, "08 81 01 01");
    }

    #[test]
    fn put_msg_put_buf_and_long_lengths() {
        let (kind, text) = decode(
            &message_words(Protocol::PutMsg, b"hi\tthere\x01"),
            &NoImages,
        );
        assert_eq!(
            kind,
            MessageKind::Stmlib {
                protocol: Protocol::PutMsg
            }
        );
        assert_eq!(text, "hi\tthere\\x01");
        let (_, text) = decode(&message_words(Protocol::PutBuf, &[1, 2, 0xff]), &NoImages);
        assert_eq!(text, "01 02 ff");
        let long: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let (kind, text) = decode(&message_words(Protocol::Internal, &long), &NoImages);
        assert_eq!(
            kind,
            MessageKind::Stmlib {
                protocol: Protocol::Internal
            }
        );
        assert!(text.ends_with("… (300 bytes)"), "{text}");
        assert!(super::super::is_whole_stmlib(
            &message_words(Protocol::PutBuf, &long)
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect::<Vec<_>>()
        ));
    }

    #[test]
    fn values_are_named_by_the_dictionary() {
        let mut dict = Dictionary::new();
        dict.insert_value(None, 2, 7, "SEVEN");
        let bytes = [7, 0x34, 0x12, 9, 0, 0, 0];
        let raw = RawMessage {
            widths: &[1, 2, 4],
            packets: 3,
            ..raw_of(&bytes)
        };
        let mut d = MessageDecoder::new();
        let m = d.decode(&raw, &NoImages, &dict);
        assert_eq!(m.kind, MessageKind::Values);
        assert_eq!(m.values, [7, 0x1234, 9]);
        assert_eq!(m.text, "SEVEN 0x1234 0x00000009");
    }
}
