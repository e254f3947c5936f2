//! EXTERNAL frames (type 10): bytes gatord read from an external source such as a Mali timeline pipe.
//!
//! Layout: `packInt fd` then the raw bytes; `packInt -1, packInt fd` marks that source's pipe as closed.

use super::cursor::Cursor;
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::encode_i32;

/// An EXTERNAL frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum External<'a> {
    /// Data from source `fd`.
    Data {
        /// The source's descriptor number in the daemon.
        fd: i32,
        /// The bytes read.
        bytes: &'a [u8],
    },
    /// The source `fd` was closed.
    Closed {
        /// The source's descriptor number in the daemon.
        fd: i32,
    },
}

impl<'a> External<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8]) -> Result<External<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let fd = cursor.i32("fd")?;
        if fd == -1 {
            let fd = cursor.i32("closed fd")?;
            cursor.finish("closed fd")?;
            return Ok(External::Closed { fd });
        }
        Ok(External::Data {
            fd,
            bytes: cursor.take_rest(),
        })
    }

    /// Appends the whole frame (frame type included).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::External.code(), out);
        match *self {
            External::Data { fd, bytes } => {
                encode_i32(fd, out);
                out.extend_from_slice(bytes);
            }
            External::Closed { fd } => {
                encode_i32(-1, out);
                encode_i32(fd, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_and_close_round_trip() {
        for frame in [
            External::Data {
                fd: 4,
                bytes: b"MALI_GRAPHICS 1\n",
            },
            External::Closed { fd: 4 },
        ] {
            let mut out = Vec::new();
            frame.encode(&mut out);
            assert_eq!(External::parse(&out[1..]), Ok(frame));
        }
    }

    #[test]
    fn close_without_fd_is_an_error() {
        assert!(matches!(
            External::parse(&[0x7f]),
            Err(FrameError::Int {
                field: "closed fd",
                ..
            })
        ));
    }
}
