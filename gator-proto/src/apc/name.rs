//! NAME frames (type 3, produced by gatord up to 9.1): cookie names and thread names.
//!
//! Layout: `packInt core`, `packInt message_type`, then for 1 (cookie) `packInt cookie, string name` and for
//! 2 (thread) `packInt64 timestamp, packInt tid, string name`.

use super::cursor::{put_string, Cursor};
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};

/// Message type of [`NameMessage::Cookie`].
pub const MESSAGE_COOKIE: i32 = 1;
/// Message type of [`NameMessage::Thread`].
pub const MESSAGE_THREAD: i32 = 2;

/// A NAME frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<'a> {
    /// The legacy core field.
    pub core: i32,
    /// What is being named.
    pub message: NameMessage<'a>,
}

/// The content of a [`Name`] frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameMessage<'a> {
    /// Message type 1: an image cookie and its path.
    Cookie {
        /// The cookie.
        cookie: i32,
        /// The image name.
        name: &'a [u8],
    },
    /// Message type 2: a thread's name at a time.
    Thread {
        /// ns since capture start.
        timestamp: i64,
        /// The thread id.
        tid: i32,
        /// The thread name.
        name: &'a [u8],
    },
    /// Any other message type, kept opaque.
    Other {
        /// The message type.
        message_type: i32,
        /// The bytes after it.
        body: &'a [u8],
    },
}

impl<'a> Name<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8]) -> Result<Name<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let core = cursor.i32("core")?;
        let message = match cursor.i32("message_type")? {
            MESSAGE_COOKIE => {
                let cookie = cursor.i32("cookie")?;
                let name = cursor.string("name")?;
                cursor.finish("name")?;
                NameMessage::Cookie { cookie, name }
            }
            MESSAGE_THREAD => {
                let timestamp = cursor.i64("timestamp")?;
                let tid = cursor.i32("tid")?;
                let name = cursor.string("name")?;
                cursor.finish("name")?;
                NameMessage::Thread {
                    timestamp,
                    tid,
                    name,
                }
            }
            message_type => NameMessage::Other {
                message_type,
                body: cursor.take_rest(),
            },
        };
        Ok(Name { core, message })
    }

    /// Appends the whole frame (frame type included).
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::Name.code(), out);
        encode_i32(self.core, out);
        match self.message {
            NameMessage::Cookie { cookie, name } => {
                encode_i32(MESSAGE_COOKIE, out);
                encode_i32(cookie, out);
                put_string(name, out);
            }
            NameMessage::Thread {
                timestamp,
                tid,
                name,
            } => {
                encode_i32(MESSAGE_THREAD, out);
                encode_i64(timestamp, out);
                encode_i32(tid, out);
                put_string(name, out);
            }
            NameMessage::Other { message_type, body } => {
                encode_i32(message_type, out);
                out.extend_from_slice(body);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_messages_round_trip() {
        for message in [
            NameMessage::Cookie {
                cookie: 7,
                name: b"/system/bin/app",
            },
            NameMessage::Thread {
                timestamp: 99,
                tid: 1234,
                name: b"RenderThread",
            },
            NameMessage::Other {
                message_type: 5,
                body: &[1, 2, 3],
            },
        ] {
            let name = Name { core: 1, message };
            let mut out = Vec::new();
            name.encode(&mut out);
            assert_eq!(out[0], 3);
            assert_eq!(Name::parse(&out[1..]), Ok(name));
        }
    }

    #[test]
    fn name_longer_than_frame_is_an_error() {
        assert!(matches!(
            Name::parse(&[0, 1, 7, 9, b'a']),
            Err(FrameError::Truncated { field: "name", .. })
        ));
    }
}
