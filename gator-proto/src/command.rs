//! Commands, client to daemon: `[u8 type][u32 LE length][payload]`.

use thiserror::Error;

use crate::header::{encode_message, EncodeError, Header, HEADER_LEN};
use crate::status::Decoded;

/// A command type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CommandType {
    /// 0: ask for an XML document (`<request type="…"/>`).
    RequestXml = 0,
    /// 1: deliver a `<session>` or `<configurations>` document.
    DeliverXml = 1,
    /// 2: start the capture (no reply; APC_DATA follows).
    ApcStart = 2,
    /// 3: stop the capture (remaining frames, then the end marker).
    ApcStop = 3,
    /// 4: end the connection (no reply).
    Disconnect = 4,
    /// 5: ACK requested.
    Ping = 5,
    /// 6: make gatord exit (protocol ≥ 750).
    Exit = 6,
    /// 7: ask for `<current_config>` (protocol ≥ 750).
    RequestCurrentConfig = 7,
}

impl CommandType {
    /// The type for a byte, if it is one of the eight commands.
    pub fn from_byte(byte: u8) -> Option<CommandType> {
        Some(match byte {
            0 => CommandType::RequestXml,
            1 => CommandType::DeliverXml,
            2 => CommandType::ApcStart,
            3 => CommandType::ApcStop,
            4 => CommandType::Disconnect,
            5 => CommandType::Ping,
            6 => CommandType::Exit,
            7 => CommandType::RequestCurrentConfig,
            _ => return None,
        })
    }

    /// The wire byte.
    pub fn byte(self) -> u8 {
        self as u8
    }
}

/// A decoded command borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command<'a> {
    /// The type.
    pub kind: CommandType,
    /// The payload (XML for REQUEST_XML and DELIVER_XML, normally empty otherwise).
    pub payload: &'a [u8],
}

/// Why a command could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    /// The type byte is not a command.
    #[error("unknown command type {0}")]
    UnknownType(u8),
    /// The payload length is over the limit; nothing was allocated for it.
    #[error("command payload of {length} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The announced length.
        length: u32,
        /// The limit.
        max: u32,
    },
}

/// Appends a command; fails if the payload is longer than `max_payload`.
pub fn encode_command(
    kind: CommandType,
    payload: &[u8],
    max_payload: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_message(kind.byte(), payload, max_payload, out)
}

/// Decodes one command from the start of `buf`. The length is checked against `max_payload` as soon as the
/// header is complete, before waiting for (or allocating) the payload.
pub fn decode_command(buf: &[u8], max_payload: u32) -> Result<Decoded<Command<'_>>, CommandError> {
    let Some(kind_byte) = buf.first() else {
        return Ok(Decoded::Partial);
    };
    let kind = CommandType::from_byte(*kind_byte).ok_or(CommandError::UnknownType(*kind_byte))?;
    let Some(header) = Header::read(buf) else {
        return Ok(Decoded::Partial);
    };
    if header.length > max_payload {
        return Err(CommandError::TooLarge {
            length: header.length,
            max: max_payload,
        });
    }
    let end = HEADER_LEN + header.length as usize;
    match buf.get(HEADER_LEN..end) {
        Some(payload) => Ok(Decoded::Complete {
            value: Command { kind, payload },
            consumed: end,
        }),
        None => Ok(Decoded::Partial),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_ping_and_request() {
        assert_eq!(
            decode_command(&[5, 0, 0, 0, 0], 100),
            Ok(Decoded::Complete {
                value: Command {
                    kind: CommandType::Ping,
                    payload: &[]
                },
                consumed: 5
            })
        );
        let mut out = Vec::new();
        encode_command(CommandType::RequestXml, b"<x/>", 100, &mut out).unwrap();
        assert_eq!(out, [0, 4, 0, 0, 0, b'<', b'x', b'/', b'>']);
        for cut in 0..out.len() {
            assert_eq!(decode_command(&out[..cut], 100), Ok(Decoded::Partial));
        }
    }

    #[test]
    fn unknown_type_and_oversize_are_errors() {
        assert_eq!(decode_command(&[9], 100), Err(CommandError::UnknownType(9)));
        assert_eq!(
            decode_command(&[1, 0, 0, 0, 1], 100),
            Err(CommandError::TooLarge {
                length: 1 << 24,
                max: 100
            })
        );
    }
}
