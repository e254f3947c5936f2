//! PERF_AUX frames (type 14): perf AUX-area data such as SPE records.
//!
//! Layout: `packInt cpu, packInt64 tail, packInt64 size`, then the raw bytes.

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};

/// A PERF_AUX frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfAux<'a> {
    /// The CPU whose AUX buffer this came from.
    pub cpu: i32,
    /// The AUX tail position.
    pub tail: i64,
    /// The size announced by the daemon.
    pub size: i64,
    /// The raw AUX bytes.
    pub bytes: &'a [u8],
}

impl<'a> PerfAux<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8]) -> Result<PerfAux<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        Ok(PerfAux {
            cpu: cursor.i32("cpu")?,
            tail: cursor.i64("tail")?,
            size: cursor.i64("size")?,
            bytes: cursor.take_rest(),
        })
    }

    /// Appends the whole frame (frame type included).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::PerfAux.code(), out);
        encode_i32(self.cpu, out);
        encode_i64(self.tail, out);
        encode_i64(self.size, out);
        out.extend_from_slice(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let frame = PerfAux {
            cpu: 1,
            tail: 4096,
            size: 3,
            bytes: &[1, 2, 3],
        };
        let mut out = Vec::new();
        frame.encode(&mut out);
        assert_eq!(PerfAux::parse(&out[1..]), Ok(frame));
    }

    #[test]
    fn missing_size_is_an_error() {
        assert!(matches!(
            PerfAux::parse(&[1, 2]),
            Err(FrameError::Int { field: "size", .. })
        ));
    }
}
