//! A recorded daemon-to-client byte stream (what gatord sent on one connection, captured whole): the
//! handshake line `GATOR <n>\n`, then `[u8 type][u32 LE length][payload]` responses to the end.
//!
//! [`RecordedResponses`] walks such a recording without a client session: for tools and tests that read
//! the responses or the APC frames of a recording directly. A live connection goes through
//! [`client::Session`](crate::client::Session) instead, which also checks that each reply answers a command.

use thiserror::Error;

use crate::handshake::{decode_gator_line, HandshakeError};
use crate::response::{decode_response, Response, ResponseError, ResponseType};
use crate::status::Decoded;
use crate::version::ProtocolVersion;

/// Largest payload accepted by [`RecordedResponses::new`]: the 3 MB events document fits many times over.
pub const DEFAULT_MAX_PAYLOAD: u32 = 64 * 1024 * 1024;

/// Why a recorded response stream could not be read further.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RecordingError {
    /// The stream does not start with a valid `GATOR <n>` line.
    #[error("the recording does not start with a gatord handshake line")]
    Handshake(#[source] HandshakeError),
    /// The stream ends inside the handshake line.
    #[error("the recording ends inside the handshake line")]
    TruncatedHandshake,
    /// A response header is not a valid response (unknown type, length over the limit).
    #[error("bad response at offset {offset}")]
    Response {
        /// Byte offset of the response in the recording.
        offset: usize,
        /// What is wrong with it.
        #[source]
        source: ResponseError,
    },
    /// The recording ends inside a response.
    #[error("the recording ends inside the response at offset {offset}")]
    Truncated {
        /// Byte offset of the response in the recording.
        offset: usize,
    },
}

/// Iterator over the responses of a recorded daemon-to-client stream, borrowing each payload.
///
/// Each item is a response or, once, the error that stops iteration.
#[derive(Debug, Clone)]
pub struct RecordedResponses<'a> {
    stream: &'a [u8],
    offset: usize,
    version: ProtocolVersion,
    max_payload: u32,
    failed: bool,
}

impl<'a> RecordedResponses<'a> {
    /// Reads the handshake line of `stream` and returns the iterator over the responses after it, with
    /// [`DEFAULT_MAX_PAYLOAD`].
    pub fn new(stream: &'a [u8]) -> Result<RecordedResponses<'a>, RecordingError> {
        match decode_gator_line(stream).map_err(RecordingError::Handshake)? {
            Decoded::Complete { value, consumed } => Ok(RecordedResponses {
                stream,
                offset: consumed,
                version: value,
                max_payload: DEFAULT_MAX_PAYLOAD,
                failed: false,
            }),
            Decoded::Partial => Err(RecordingError::TruncatedHandshake),
        }
    }

    /// Sets the largest payload accepted.
    pub fn with_max_payload(mut self, max: u32) -> Self {
        self.max_payload = max;
        self
    }

    /// The protocol version of the handshake line.
    pub fn version(&self) -> ProtocolVersion {
        self.version
    }

    /// The byte offset of the next response.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The payloads of the responses of type `kind` in the rest of the stream, in order. Each item is a
    /// payload or, once, the error that stops iteration.
    pub fn payloads(
        self,
        kind: ResponseType,
    ) -> impl Iterator<Item = Result<&'a [u8], RecordingError>> {
        self.filter_map(move |response| match response {
            Ok(response) if response.kind == kind => Some(Ok(response.payload)),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
    }

    /// The APC frames of the rest of the stream: the payloads of the non-empty APC_DATA responses (the
    /// zero-length one is the end-of-capture marker), in order. Each item is a frame or, once, the error
    /// that stops iteration.
    pub fn apc_frames(self) -> impl Iterator<Item = Result<&'a [u8], RecordingError>> {
        self.payloads(ResponseType::ApcData)
            .filter(|frame| frame.as_ref().map_or(true, |f| !f.is_empty()))
    }
}

impl<'a> Iterator for RecordedResponses<'a> {
    type Item = Result<Response<'a>, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.offset == self.stream.len() {
            return None;
        }
        let offset = self.offset;
        let result = match decode_response(&self.stream[offset..], self.max_payload) {
            Ok(Decoded::Complete { value, consumed }) => {
                self.offset += consumed;
                Ok(value)
            }
            Ok(Decoded::Partial) => Err(RecordingError::Truncated { offset }),
            Err(source) => Err(RecordingError::Response { offset, source }),
        };
        self.failed = result.is_err();
        Some(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::encode_gator_line;
    use crate::header::HEADER_LEN;
    use crate::response::encode_response;
    use proptest::prelude::*;

    fn recording(responses: &[(ResponseType, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_gator_line(ProtocolVersion::V950, &mut out);
        for (kind, payload) in responses {
            encode_response(*kind, payload, &mut out).unwrap();
        }
        out
    }

    /// The simple path: the header fields read by hand.
    fn by_hand(stream: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut at = stream.iter().position(|&b| b == b'\n').unwrap() + 1;
        let mut out = Vec::new();
        while at < stream.len() {
            let length = u32::from_le_bytes(stream[at + 1..at + 5].try_into().unwrap()) as usize;
            out.push((stream[at], stream[at + 5..at + 5 + length].to_vec()));
            at += 5 + length;
        }
        out
    }

    #[test]
    fn responses_and_frames_of_a_recording() {
        let stream = recording(&[
            (ResponseType::Ack, vec![]),
            (ResponseType::Xml, b"<captured/>".to_vec()),
            (ResponseType::ApcData, vec![5, 0, 0, 1]),
            (ResponseType::ApcData, vec![]),
        ]);
        let responses = RecordedResponses::new(&stream).unwrap();
        assert_eq!(responses.version(), ProtocolVersion::V950);
        assert_eq!(responses.clone().count(), 4);
        let xml: Vec<_> = responses.clone().payloads(ResponseType::Xml).collect();
        assert_eq!(xml, [Ok(&b"<captured/>"[..])]);
        let frames: Vec<_> = responses.apc_frames().collect();
        assert_eq!(frames, [Ok(&[5u8, 0, 0, 1][..])]);
    }

    #[test]
    fn bad_recordings_are_typed_errors() {
        assert!(matches!(
            RecordedResponses::new(b"HELLO\n"),
            Err(RecordingError::Handshake(_))
        ));
        assert_eq!(
            RecordedResponses::new(b"GATOR 95").err(),
            Some(RecordingError::TruncatedHandshake)
        );
        let mut stream = recording(&[(ResponseType::Xml, b"<a/>".to_vec())]);
        let end = stream.len();
        stream.extend_from_slice(&[0x02, 0, 0, 0, 0]);
        let mut responses = RecordedResponses::new(&stream).unwrap();
        assert!(responses.next().unwrap().is_ok());
        assert_eq!(
            responses.next(),
            Some(Err(RecordingError::Response {
                offset: end,
                source: ResponseError::UnknownType(2)
            }))
        );
        assert_eq!(responses.next(), None);
        let big = recording(&[(ResponseType::Xml, vec![b'x'; 64])]);
        let mut limited = RecordedResponses::new(&big).unwrap().with_max_payload(8);
        assert!(matches!(
            limited.next(),
            Some(Err(RecordingError::Response {
                source: ResponseError::TooLarge {
                    length: 64,
                    max: 8,
                    ..
                },
                ..
            }))
        ));
    }

    #[test]
    fn every_cut_inside_a_response_is_truncated() {
        let stream = recording(&[(ResponseType::ApcData, vec![5, 0, 0, 1])]);
        let start = stream.len() - HEADER_LEN - 4;
        for cut in start + 1..stream.len() {
            let mut responses = RecordedResponses::new(&stream[..cut]).unwrap();
            assert_eq!(
                responses.next(),
                Some(Err(RecordingError::Truncated { offset: start }))
            );
        }
    }

    fn kind() -> impl Strategy<Value = ResponseType> {
        prop_oneof![
            Just(ResponseType::Xml),
            Just(ResponseType::ApcData),
            Just(ResponseType::Ack),
            Just(ResponseType::Nak),
            Just(ResponseType::GatorLog),
            Just(ResponseType::Error),
        ]
    }

    proptest! {
        #[test]
        fn matches_the_walk_by_hand(
            responses in proptest::collection::vec((kind(), proptest::collection::vec(any::<u8>(), 0..40)), 0..12)
        ) {
            let stream = recording(&responses);
            let got: Vec<_> = RecordedResponses::new(&stream)
                .unwrap()
                .map(|r| r.map(|r| (r.kind.byte(), r.payload.to_vec())))
                .collect::<Result<_, _>>()
                .unwrap();
            prop_assert_eq!(got, by_hand(&stream));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut stream = b"GATOR 950\n".to_vec();
            stream.extend_from_slice(&bytes);
            let responses = RecordedResponses::new(&stream).unwrap();
            let mut errors = 0;
            for item in responses {
                errors += usize::from(item.is_err());
            }
            prop_assert!(errors <= 1);
        }
    }
}
