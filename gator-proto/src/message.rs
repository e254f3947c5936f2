//! The framed message both directions share: `[u8 type][u32 LE length][payload]`, generic over the type byte.
//!
//! Commands ([`crate::command`]) and responses ([`crate::response`]) differ only in their set of type bytes,
//! which each side describes with a [`MessageType`]; decoding, encoding and the errors are written once here.

use core::fmt;
use core::hash::Hash;

use crate::header::{encode_message, EncodeError, Header, HEADER_LEN};
use crate::status::Decoded;

/// The type byte of one direction's messages: [`crate::command::CommandType`] or
/// [`crate::response::ResponseType`].
pub trait MessageType: Copy + Eq + Hash + fmt::Debug {
    /// The direction's name in error messages: `"command"` or `"response"`.
    const DIRECTION: &'static str;

    /// The type for a byte, if the direction has one.
    fn from_byte(byte: u8) -> Option<Self>;

    /// The wire byte.
    fn byte(self) -> u8;
}

/// A decoded message borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a, K> {
    /// The type.
    pub kind: K,
    /// The payload.
    pub payload: &'a [u8],
}

/// Why a message could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MessageError<K> {
    /// The type byte is not one of this direction's types.
    UnknownType(u8),
    /// The payload length is over the limit; nothing was allocated for it.
    TooLarge {
        /// The message type.
        kind: K,
        /// The announced length.
        length: u32,
        /// The limit.
        max: u32,
    },
}

impl<K: MessageType> fmt::Display for MessageError<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MessageError::UnknownType(byte) => {
                write!(f, "unknown {} type {byte:#04x}", K::DIRECTION)
            }
            MessageError::TooLarge { kind, length, max } => write!(
                f,
                "{kind:?} {} payload of {length} bytes exceeds the limit of {max} bytes",
                K::DIRECTION
            ),
        }
    }
}

impl<K: MessageType> std::error::Error for MessageError<K> {}

/// Appends a message; fails without writing if the payload is longer than `max_payload`.
pub fn encode<K: MessageType>(
    kind: K,
    payload: &[u8],
    max_payload: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_message(kind.byte(), payload, max_payload, out)
}

/// Decodes one message from the start of `buf`. The type byte is checked first, and the length against
/// `max_payload` as soon as the header is complete, before waiting for (or allocating) the payload.
#[inline]
pub fn decode<K: MessageType>(
    buf: &[u8],
    max_payload: u32,
) -> Result<Decoded<Message<'_, K>>, MessageError<K>> {
    let Some(&kind_byte) = buf.first() else {
        return Ok(Decoded::Partial);
    };
    let kind = K::from_byte(kind_byte).ok_or(MessageError::UnknownType(kind_byte))?;
    let Some(header) = Header::read(buf) else {
        return Ok(Decoded::Partial);
    };
    if header.length > max_payload {
        return Err(MessageError::TooLarge {
            kind,
            length: header.length,
            max: max_payload,
        });
    }
    let end = HEADER_LEN + header.length as usize;
    match buf.get(HEADER_LEN..end) {
        Some(payload) => Ok(Decoded::Complete {
            value: Message { kind, payload },
            consumed: end,
        }),
        None => Ok(Decoded::Partial),
    }
}

/// Defines a direction's type-byte enum: the enum with its documented variants, `from_byte`, `byte` and the
/// [`MessageType`] implementation, from one list of `Variant = byte` lines.
macro_rules! message_types {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $direction:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $byte:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        #[repr(u8)]
        pub enum $name {
            $( $(#[$vmeta])* $variant = $byte, )+
        }

        impl $name {
            /// Every type of this direction, in wire-byte order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The type for a byte, if it is one of this direction's.
            pub fn from_byte(byte: u8) -> Option<$name> {
                match byte {
                    $( $byte => Some($name::$variant), )+
                    _ => None,
                }
            }

            /// The wire byte.
            pub fn byte(self) -> u8 {
                self as u8
            }
        }

        impl $crate::message::MessageType for $name {
            const DIRECTION: &'static str = $direction;

            fn from_byte(byte: u8) -> Option<Self> {
                $name::from_byte(byte)
            }

            fn byte(self) -> u8 {
                $name::byte(self)
            }
        }
    };
}

pub(crate) use message_types;

#[cfg(test)]
mod tests {
    use super::*;

    /// A direction with two types, to test the shared code apart from the real ones.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    enum Toy {
        A,
        B,
    }

    impl MessageType for Toy {
        const DIRECTION: &'static str = "toy";

        fn from_byte(byte: u8) -> Option<Self> {
            match byte {
                1 => Some(Toy::A),
                2 => Some(Toy::B),
                _ => None,
            }
        }

        fn byte(self) -> u8 {
            match self {
                Toy::A => 1,
                Toy::B => 2,
            }
        }
    }

    #[test]
    fn round_trip_and_every_prefix_is_partial() {
        let mut out = Vec::new();
        encode(Toy::B, b"xyz", 10, &mut out).unwrap();
        assert_eq!(out, [2, 3, 0, 0, 0, b'x', b'y', b'z']);
        for cut in 0..out.len() {
            assert_eq!(decode::<Toy>(&out[..cut], 10), Ok(Decoded::Partial));
        }
        out.push(0xee);
        assert_eq!(
            decode::<Toy>(&out, 10),
            Ok(Decoded::Complete {
                value: Message {
                    kind: Toy::B,
                    payload: b"xyz"
                },
                consumed: 8
            })
        );
    }

    #[test]
    fn errors_name_the_direction_and_type() {
        assert_eq!(decode::<Toy>(&[7], 10), Err(MessageError::UnknownType(7)));
        assert_eq!(
            MessageError::<Toy>::UnknownType(7).to_string(),
            "unknown toy type 0x07"
        );
        let err = decode::<Toy>(&[1, 11, 0, 0, 0], 10).unwrap_err();
        assert_eq!(
            err,
            MessageError::TooLarge {
                kind: Toy::A,
                length: 11,
                max: 10
            }
        );
        assert_eq!(
            err.to_string(),
            "A toy payload of 11 bytes exceeds the limit of 10 bytes"
        );
        let mut out = Vec::new();
        assert!(encode(Toy::A, &[0; 11], 10, &mut out).is_err());
        assert!(out.is_empty());
    }
}
