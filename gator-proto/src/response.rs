//! Responses, daemon to client: `[u8 type][u32 LE length][payload]`, the [`crate::message`] framing
//! with [`ResponseType`] bytes.

use crate::header::EncodeError;
use crate::message::{self, message_types, Message, MessageError};
use crate::status::Decoded;

message_types! {
    /// A response type byte.
    pub enum ResponseType: "response" {
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
}

/// A decoded response borrowing its payload.
pub type Response<'a> = Message<'a, ResponseType>;

/// Why a response could not be decoded.
pub type ResponseError = MessageError<ResponseType>;

/// Appends a response; fails if the payload does not fit the 32-bit length.
pub fn encode_response(
    kind: ResponseType,
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    message::encode(kind, payload, u32::MAX, out)
}

/// Decodes one response from the start of `buf`. The length is checked against `max_payload` (a client
/// normally passes
/// [`DEFAULT_MAX_RESPONSE_PAYLOAD`](crate::header::DEFAULT_MAX_RESPONSE_PAYLOAD)) as soon as the header is complete, before waiting for
/// (or allocating) the payload.
#[inline]
pub fn decode_response(
    buf: &[u8],
    max_payload: u32,
) -> Result<Decoded<Response<'_>>, ResponseError> {
    message::decode(buf, max_payload)
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
                kind: ResponseType::Xml,
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
        for kind in ResponseType::ALL {
            assert_eq!(ResponseType::from_byte(kind.byte()), Some(*kind));
        }
        assert_eq!(
            ResponseError::UnknownType(2).to_string(),
            "unknown response type 0x02"
        );
    }
}
