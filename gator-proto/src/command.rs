//! Commands, client to daemon: `[u8 type][u32 LE length][payload]`, the [`crate::message`] framing
//! with [`CommandType`] bytes.

use crate::header::EncodeError;
use crate::message::{self, message_types, Message, MessageError};
use crate::status::Decoded;

message_types! {
    /// A command type byte.
    pub enum CommandType: "command" {
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
}

/// A decoded command borrowing its payload (XML for REQUEST_XML and DELIVER_XML, normally empty otherwise).
pub type Command<'a> = Message<'a, CommandType>;

/// Why a command could not be decoded.
pub type CommandError = MessageError<CommandType>;

/// Appends a command; fails if the payload is longer than `max_payload`.
pub fn encode_command(
    kind: CommandType,
    payload: &[u8],
    max_payload: u32,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    message::encode(kind, payload, max_payload, out)
}

/// Decodes one command from the start of `buf`. The length is checked against `max_payload` as soon as the
/// header is complete, before waiting for (or allocating) the payload.
pub fn decode_command(buf: &[u8], max_payload: u32) -> Result<Decoded<Command<'_>>, CommandError> {
    message::decode(buf, max_payload)
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
            CommandError::UnknownType(9).to_string(),
            "unknown command type 0x09"
        );
        assert_eq!(
            decode_command(&[1, 0, 0, 0, 1], 100),
            Err(CommandError::TooLarge {
                kind: CommandType::DeliverXml,
                length: 1 << 24,
                max: 100
            })
        );
    }

    #[test]
    fn type_bytes_round_trip() {
        for (byte, kind) in CommandType::ALL.iter().enumerate() {
            assert_eq!(usize::from(kind.byte()), byte);
            assert_eq!(CommandType::from_byte(kind.byte()), Some(*kind));
        }
        assert_eq!(CommandType::from_byte(8), None);
    }
}
