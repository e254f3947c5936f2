//! Responses, daemon to client: `[u8 type][u32 LE length][payload]`.

use thiserror::Error;

use crate::header::{encode_message, EncodeError, Header, HEADER_LEN};
use crate::status::Decoded;

/// A response type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ResponseType {
    /// 1: an XML document.
    Xml = 1,
    /// 3: one APC frame; length 0 is the end-of-capture marker.
    ApcData = 3,
    /// 4: acknowledgement (PING, DELIVER_XML).
    Ack = 4,
    /// 5: refusal, empty or with ASCII text.
    Nak = 5,
    /// 6: `<current_config>` XML (protocol ≥ 750).
    CurrentConfig = 6,
    /// 7: a chunk of the capture log; length 0 ends the log (protocol ≥ 870).
    GatorLog = 7,
    /// 8: the profiled application was started (protocol ≥ 890).
    ActivityStarted = 8,
    /// 0xFF: the daemon's last error text; always followed by the end-of-capture marker.
    Error = 0xff,
}

impl ResponseType {
    /// The type for a byte, if it is one of the eight responses.
    pub fn from_byte(byte: u8) -> Option<ResponseType> {
        Some(match byte {
            1 => ResponseType::Xml,
            3 => ResponseType::ApcData,
            4 => ResponseType::Ack,
            5 => ResponseType::Nak,
            6 => ResponseType::CurrentConfig,
            7 => ResponseType::GatorLog,
            8 => ResponseType::ActivityStarted,
            0xff => ResponseType::Error,
            _ => return None,
        })
    }

    /// The wire byte.
    pub fn byte(self) -> u8 {
        self as u8
    }
}

/// A decoded response borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response<'a> {
    /// The type.
    pub kind: ResponseType,
    /// The payload.
    pub payload: &'a [u8],
}

/// Why a response could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResponseError {
    /// The type byte is not a response.
    #[error("unknown response type {0:#04x}")]
    UnknownType(u8),
    /// The payload length is over the limit; nothing was allocated for it.
    #[error("response payload of {length} bytes exceeds the limit of {max} bytes")]
    TooLarge {
        /// The announced length.
        length: u32,
        /// The limit.
        max: u32,
    },
}

/// Appends a response; fails if the payload does not fit the 32-bit length.
pub fn encode_response(
    kind: ResponseType,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    encode_message(kind.byte(), payload, u32::MAX, out)
}

/// Decodes one response from the start of `buf`. The length is checked against `max_payload` as soon as the
/// header is complete, before waiting for (or allocating) the payload.
#[inline]
pub fn decode_response(
    buf: &[u8],
    max_payload: u32,
) -> Result<Decoded<Response<'_>>, ResponseError> {
    let Some(kind_byte) = buf.first() else {
        return Ok(Decoded::Partial);
    };
    let kind = ResponseType::from_byte(*kind_byte).ok_or(ResponseError::UnknownType(*kind_byte))?;
    let Some(header) = Header::read(buf) else {
        return Ok(Decoded::Partial);
    };
    if header.length > max_payload {
        return Err(ResponseError::TooLarge {
            length: header.length,
            max: max_payload,
        });
    }
    let end = HEADER_LEN + header.length as usize;
    match buf.get(HEADER_LEN..end) {
        Some(payload) => Ok(Decoded::Complete {
            value: Response { kind, payload },
            consumed: end,
        }),
        None => Ok(Decoded::Partial),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observed_nak_decodes() {
        let mut bytes = vec![0x05, 0x0f, 0, 0, 0];
        bytes.extend_from_slice(b"Unknown request");
        let (response, used) = decode_response(&bytes, 1024).unwrap().complete().unwrap();
        assert_eq!(
            response,
            Response {
                kind: ResponseType::Nak,
                payload: b"Unknown request"
            }
        );
        assert_eq!(used, bytes.len());
    }

    #[test]
    fn every_prefix_is_partial() {
        let mut out = Vec::new();
        encode_response(ResponseType::Xml, b"<captured/>", &mut out).unwrap();
        for cut in 0..out.len() {
            assert_eq!(decode_response(&out[..cut], 1024), Ok(Decoded::Partial));
        }
    }

    #[test]
    fn unknown_type_and_oversize_are_errors() {
        assert_eq!(
            decode_response(&[2], 10),
            Err(ResponseError::UnknownType(2))
        );
        assert_eq!(
            decode_response(&[0], 10),
            Err(ResponseError::UnknownType(0))
        );
        assert_eq!(
            decode_response(&[1, 0xc4, 0x22, 0x2f, 0x00], 1000),
            Err(ResponseError::TooLarge {
                length: 3_089_092,
                max: 1000
            })
        );
    }

    #[test]
    fn type_bytes_round_trip() {
        for byte in 0..=255u8 {
            if let Some(kind) = ResponseType::from_byte(byte) {
                assert_eq!(kind.byte(), byte);
            }
        }
    }
}
