//! COUNTER frames (type 4, produced by gatord up to 9.1): one timestamped counter value.
//!
//! Layout: `packInt64 timestamp, packInt core, packInt key, packInt64 value` (no legacy core field first).

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};

/// A COUNTER frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    /// ns since capture start.
    pub timestamp: i64,
    /// The core the value belongs to.
    pub core: i32,
    /// The counter key.
    pub key: i32,
    /// The raw value.
    pub value: i64,
}

impl Counter {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &[u8]) -> Result<Counter, FrameError> {
        let mut cursor = Cursor::new(body);
        let counter = Counter {
            timestamp: cursor.i64("timestamp")?,
            core: cursor.i32("core")?,
            key: cursor.i32("key")?,
            value: cursor.i64("value")?,
        };
        cursor.finish("value")?;
        Ok(counter)
    }

    /// Appends the whole frame (frame type included).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::Counter.code(), out);
        encode_i64(self.timestamp, out);
        encode_i32(self.core, out);
        encode_i32(self.key, out);
        encode_i64(self.value, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let counter = Counter {
            timestamp: 123_456_789,
            core: 3,
            key: 0x5e,
            value: -42,
        };
        let mut out = Vec::new();
        counter.encode(&mut out);
        assert_eq!(out[0], 4);
        assert_eq!(Counter::parse(&out[1..]), Ok(counter));
    }

    #[test]
    fn truncated_and_trailing_bytes_are_errors() {
        assert!(matches!(
            Counter::parse(&[0x01, 0x00, 0x04]),
            Err(FrameError::Int { field: "value", .. })
        ));
        assert!(matches!(
            Counter::parse(&[1, 0, 4, 5, 9]),
            Err(FrameError::TrailingBytes { count: 1, .. })
        ));
    }
}
