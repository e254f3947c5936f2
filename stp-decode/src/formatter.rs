//! The CoreSight trace formatter: one source's bytes in, 16-byte frames out (the inverse of
//! [`crate::deformat`], for tests, benches and tools that write ETB-style buffers).
//!
//! The first frame opens with an ID change to the source's trace ID (byte 0 = `id << 1 | 1`, byte 1 data
//! of the new ID); every later frame carries 15 data bytes of the same ID: even bytes hold bits 7:1 with
//! bit 0 in the auxiliary byte 15, odd bytes are plain. A last partial frame ends with an ID change to
//! ID 0x00 (padding) and zero bytes, which a deformatter drops.

use alloc::vec::Vec;

use crate::deformat::{FRAME_LEN, NULL_ID, RESERVED_ID};
use crate::error::EncodeError;

/// Formats `bytes` from trace ID `trace_id` into memory-mode frames appended to `out`.
///
/// IDs 0x00 (padding) and 0x7F (reserved) and IDs above 0x7F cannot carry data:
/// [`EncodeError::BadTraceId`].
///
/// ```
/// use stp_decode::deformat::{Deformatter, FrameMode};
/// use stp_decode::formatter::format_frames;
/// let mut buffer = Vec::new();
/// format_frames(0x20, b"hello, trace formatter", &mut buffer).unwrap();
/// assert_eq!(buffer.len() % 16, 0);
/// let mut back = Vec::new();
/// for frame in Deformatter::new(FrameMode::Memory).feed(&buffer) {
///     back.extend(frame.unwrap().bytes.iter().filter(|b| b.id == 0x20).map(|b| b.byte));
/// }
/// assert_eq!(back, b"hello, trace formatter");
/// ```
pub fn format_frames(trace_id: u8, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if trace_id == NULL_ID || trace_id >= RESERVED_ID {
        return Err(EncodeError::BadTraceId { id: trace_id });
    }
    let mut rest = bytes;
    let mut first = true;
    while !rest.is_empty() {
        let mut frame = [0u8; FRAME_LEN];
        let mut aux = 0u8;
        let mut k = 0;
        if first {
            frame[0] = (trace_id << 1) | 1;
            k = 1;
            first = false;
        }
        while k < FRAME_LEN - 1 {
            let byte = match *rest {
                // Only reached at an even position: an odd byte always follows two or more bytes.
                [] => {
                    // Padding: an ID change to the padding ID; the zeros after it are dropped.
                    frame[k] = (NULL_ID << 1) | 1;
                    break;
                }
                // The last byte at an even position below 14: an ID change to the padding ID whose
                // auxiliary bit keeps the odd byte after it in the previous ID.
                [last] if k % 2 == 0 && k < FRAME_LEN - 2 => {
                    frame[k] = (NULL_ID << 1) | 1;
                    aux |= 1 << (k / 2);
                    frame[k + 1] = last;
                    rest = &[];
                    break;
                }
                [byte, ref tail @ ..] => {
                    rest = tail;
                    byte
                }
            };
            if k % 2 == 0 {
                frame[k] = byte & 0xFE;
                aux |= (byte & 1) << (k / 2);
            } else {
                frame[k] = byte;
            }
            k += 1;
        }
        frame[FRAME_LEN - 1] = aux;
        out.extend_from_slice(&frame);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deformat::{Deformatter, FrameMode};
    use proptest::prelude::*;
    use std::vec::Vec;

    fn deformat(buffer: &[u8], id: u8) -> Vec<u8> {
        let mut out = Vec::new();
        for frame in Deformatter::new(FrameMode::Memory).feed(buffer) {
            let frame = frame.expect("formatted frames are valid");
            out.extend(frame.bytes.iter().filter(|b| b.id == id).map(|b| b.byte));
        }
        out
    }

    #[test]
    fn padding_and_reserved_ids_are_refused() {
        let mut out = Vec::new();
        for id in [NULL_ID, RESERVED_ID, 0x80, 0xFF] {
            assert_eq!(
                format_frames(id, b"x", &mut out),
                Err(EncodeError::BadTraceId { id })
            );
        }
        assert!(out.is_empty());
    }

    #[test]
    fn frames_hold_fourteen_then_fifteen_bytes() {
        let mut out = Vec::new();
        format_frames(0x10, &[0xAB; 29], &mut out).unwrap();
        assert_eq!(out.len(), 2 * FRAME_LEN);
        let mut out = Vec::new();
        format_frames(0x10, &[0xAB; 30], &mut out).unwrap();
        assert_eq!(out.len(), 3 * FRAME_LEN);
    }

    proptest! {
        #[test]
        fn deformatting_gives_the_bytes_back(id in 1u8..0x7F, bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut out = Vec::new();
            format_frames(id, &bytes, &mut out).unwrap();
            prop_assert_eq!(out.len() % FRAME_LEN, 0);
            prop_assert_eq!(deformat(&out, id), bytes);
        }
    }
}
