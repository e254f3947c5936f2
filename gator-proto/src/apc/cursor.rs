//! A bounds-checked reader over a frame body: the one place where APC field bytes are consumed.

use super::error::FrameError;
use crate::sleb128;

/// Reads SLEB128 integers, length-prefixed strings, NUL-terminated text and raw runs from a borrowed frame body.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    #[inline]
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { rest: bytes }
    }

    /// The bytes not yet read.
    #[inline]
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// Reads a `packInt64`.
    #[inline]
    pub(crate) fn i64(&mut self, field: &'static str) -> Result<i64, FrameError> {
        let (value, len) =
            sleb128::decode_i64(self.rest).map_err(|source| FrameError::Int { field, source })?;
        self.rest = &self.rest[len..];
        Ok(value)
    }

    /// Reads a `packInt`.
    #[inline]
    pub(crate) fn i32(&mut self, field: &'static str) -> Result<i32, FrameError> {
        let (value, len) =
            sleb128::decode_i32(self.rest).map_err(|source| FrameError::Int { field, source })?;
        self.rest = &self.rest[len..];
        Ok(value)
    }

    /// Reads exactly `len` raw bytes.
    pub(crate) fn bytes(&mut self, len: u64, field: &'static str) -> Result<&'a [u8], FrameError> {
        let available = self.rest.len();
        match usize::try_from(len) {
            Ok(n) if n <= available => {
                let (head, tail) = self.rest.split_at(n);
                self.rest = tail;
                Ok(head)
            }
            _ => Err(FrameError::Truncated {
                field,
                needed: len,
                available,
            }),
        }
    }

    /// Reads a gatord string: `packInt length` then that many bytes.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<&'a [u8], FrameError> {
        let length = self.i32(field)?;
        let len = u64::try_from(length).map_err(|_| FrameError::NegativeLength {
            field,
            length: length.into(),
        })?;
        self.bytes(len, field)
    }

    /// Reads text ending in one NUL byte; returns it without the NUL.
    pub(crate) fn c_string(&mut self, field: &'static str) -> Result<&'a [u8], FrameError> {
        let end = self
            .rest
            .iter()
            .position(|&b| b == 0)
            .ok_or(FrameError::MissingTerminator { field })?;
        let text = &self.rest[..end];
        self.rest = &self.rest[end + 1..];
        Ok(text)
    }

    /// Reads a little-endian `u32`.
    pub(crate) fn u32_le(&mut self, field: &'static str) -> Result<u32, FrameError> {
        let raw = self.bytes(4, field)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    /// Takes every remaining byte.
    pub(crate) fn take_rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.rest)
    }

    /// Fails when bytes remain after the last field of a fixed layout.
    pub(crate) fn finish(&self, after: &'static str) -> Result<(), FrameError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(FrameError::TrailingBytes {
                after,
                count: self.rest.len(),
            })
        }
    }
}

/// Appends a gatord string (`packInt length` + bytes).
///
/// # Panics
/// Never for strings up to `i32::MAX` bytes; longer ones cannot be framed by gatord either and are clamped by the
/// callers, which check lengths first.
pub(crate) fn put_string(bytes: &[u8], out: &mut Vec<u8>) {
    let len = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
    sleb128::encode_i32(len, out);
    out.extend_from_slice(&bytes[..len as usize]);
}

/// Appends text followed by one NUL byte.
pub(crate) fn put_c_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(bytes);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_with_negative_length_is_an_error() {
        let mut cursor = Cursor::new(&[0x7f, b'a']);
        assert_eq!(
            cursor.string("name"),
            Err(FrameError::NegativeLength {
                field: "name",
                length: -1
            })
        );
    }

    #[test]
    fn string_longer_than_the_frame_is_truncated() {
        let mut cursor = Cursor::new(&[0x05, b'a', b'b']);
        assert_eq!(
            cursor.string("name"),
            Err(FrameError::Truncated {
                field: "name",
                needed: 5,
                available: 2
            })
        );
    }

    #[test]
    fn c_string_without_nul_is_an_error() {
        let mut cursor = Cursor::new(b"abc");
        assert_eq!(
            cursor.c_string("text"),
            Err(FrameError::MissingTerminator { field: "text" })
        );
    }

    #[test]
    fn short_u32_is_truncated() {
        let mut cursor = Cursor::new(&[1, 2]);
        assert!(matches!(
            cursor.u32_le("len"),
            Err(FrameError::Truncated { needed: 4, .. })
        ));
    }

    #[test]
    fn trailing_bytes_are_reported() {
        let cursor = Cursor::new(&[1]);
        assert_eq!(
            cursor.finish("value"),
            Err(FrameError::TrailingBytes {
                after: "value",
                count: 1
            })
        );
    }

    #[test]
    fn strings_round_trip() {
        let mut out = Vec::new();
        put_string(b"uname", &mut out);
        put_c_string(b"comm", &mut out);
        assert_eq!(&out[..6], &[0x05, b'u', b'n', b'a', b'm', b'e']);
        let mut cursor = Cursor::new(&out);
        assert_eq!(cursor.string("a").unwrap(), b"uname");
        assert_eq!(cursor.c_string("b").unwrap(), b"comm");
        assert!(cursor.rest().is_empty());
    }
}
