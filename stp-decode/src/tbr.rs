//! The trace buffer as the hardware leaves it: KeyStone II's Trace Buffer Router (TBR, an ETB) read
//! straight from its memory, oldest word first (`docs/stm.md` §11, from TI's `dsptop`). TI-specific
//! register offsets; the ordering rule is that of any circular trace buffer.
//!
//! - RDP (`0x004`) gives the depth: (1 << (RDP − 1)) << 10 words ([`depth_words`]).
//! - STS (`0x00C`): bit 0 full (the buffer wrapped), bit 2 acquisition complete ([`Status`]).
//! - RWP (`0x018`): the write pointer, in 32-bit words.
//! - A wrapped buffer's oldest word is at RWP: read from RWP to the end, then from 0 to RWP. A buffer that
//!   did not wrap holds words 0 … RWP − 1.
//!
//! The TBR stores 16-byte TWP (CoreSight formatter) frames at 16-byte boundaries of its memory, so in a
//! wrapped buffer read from a write pointer that is not on a frame boundary the first bytes are the end
//! of a frame whose start was overwritten: [`Ordered::partial_frame`] counts them, and they are not decoded.
//!
//! ```
//! use stp_decode::tbr::{ordered, Wrap};
//! let buffer: Vec<u8> = (0u8..32).collect(); // 8 words
//! let o = ordered(&buffer, Wrap::Wrapped { write_pointer: 3 }).unwrap();
//! assert_eq!(o.parts[0][0], 12); // the oldest word is word 3
//! assert_eq!(o.parts[1], &buffer[..12]);
//! assert_eq!(o.partial_frame, 4); // bytes 12..16 end a frame whose start was overwritten
//! let o = ordered(&buffer, Wrap::NotWrapped { write_pointer: 5 }).unwrap();
//! assert_eq!((o.parts[0].len(), o.parts[1].len(), o.partial_frame), (20, 0, 0));
//! ```

/// Offset of the RDP register (depth).
pub const RDP: u32 = 0x004;
/// Offset of the STS register (status).
pub const STS: u32 = 0x00C;
/// Offset of the RWP register (write pointer, in words).
pub const RWP: u32 = 0x018;
/// Bytes of a TWP / CoreSight formatter frame.
pub const FRAME_BYTES: usize = 16;

/// The buffer's depth in 32-bit words for an RDP register value: (1 << (RDP − 1)) << 10; `None` for 0
/// or a depth beyond 32 bits.
pub const fn depth_words(rdp: u32) -> Option<u32> {
    if rdp == 0 || rdp > 22 {
        return None;
    }
    Some((1 << (rdp - 1)) << 10)
}

/// The STS register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status(pub u32);

impl Status {
    /// Bit 0: the buffer is full, it wrapped.
    pub const fn wrapped(self) -> bool {
        self.0 & 1 != 0
    }

    /// Bit 2: acquisition complete.
    pub const fn acquisition_complete(self) -> bool {
        self.0 & 4 != 0
    }
}

/// Where the buffer's data is, by its write pointer (RWP, in 32-bit words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// STS.full: every word is valid and the oldest is at the write pointer.
    Wrapped {
        /// RWP.
        write_pointer: u32,
    },
    /// Words 0 … RWP − 1 are the data.
    NotWrapped {
        /// RWP.
        write_pointer: u32,
    },
}

impl Wrap {
    /// The wrap state the registers give: STS and RWP.
    pub const fn from_registers(status: Status, write_pointer: u32) -> Wrap {
        if status.wrapped() {
            Wrap::Wrapped { write_pointer }
        } else {
            Wrap::NotWrapped { write_pointer }
        }
    }
}

/// Why a buffer cannot be put in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum TbrError {
    /// The buffer is not whole 32-bit words.
    #[error("the buffer's {bytes} bytes are not whole 32-bit words")]
    NotWords {
        /// Its length.
        bytes: usize,
    },
    /// The write pointer is past the buffer (for a wrapped buffer, at its end or past it).
    #[error("write pointer {write_pointer} is outside the buffer of {words} words")]
    PointerOutside {
        /// The write pointer, in words.
        write_pointer: u32,
        /// The buffer's length in words.
        words: usize,
    },
}

/// A buffer in order, oldest byte first: `parts[0]` then `parts[1]`, borrowed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ordered<'a> {
    /// The two parts, in order.
    pub parts: [&'a [u8]; 2],
    /// Bytes at the start that end a frame whose start was overwritten (0 unless wrapped).
    pub partial_frame: usize,
}

impl Ordered<'_> {
    /// Bytes in all.
    pub fn len(&self) -> usize {
        self.parts[0].len() + self.parts[1].len()
    }

    /// True when it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Puts `buffer` (the TBR's memory, from address 0) in order by its write pointer.
pub fn ordered(buffer: &[u8], wrap: Wrap) -> Result<Ordered<'_>, TbrError> {
    if !buffer.len().is_multiple_of(4) {
        return Err(TbrError::NotWords {
            bytes: buffer.len(),
        });
    }
    let words = buffer.len() / 4;
    let outside = |write_pointer| TbrError::PointerOutside {
        write_pointer,
        words,
    };
    match wrap {
        Wrap::Wrapped { write_pointer } => {
            let at = write_pointer as usize;
            if at >= words {
                return Err(outside(write_pointer));
            }
            let split = 4 * at;
            Ok(Ordered {
                parts: [&buffer[split..], &buffer[..split]],
                partial_frame: (FRAME_BYTES - split % FRAME_BYTES) % FRAME_BYTES,
            })
        }
        Wrap::NotWrapped { write_pointer } => {
            let at = write_pointer as usize;
            if at > words {
                return Err(outside(write_pointer));
            }
            Ok(Ordered {
                parts: [&buffer[..4 * at], &[]],
                partial_frame: 0,
            })
        }
    }
}

/// The frame boundary of a dump put in order from a write pointer that is not known (a dump TI's tools
/// saved, whose first word is the oldest, usually inside a frame): the first of 0, 4, 8 or 12 bytes at
/// which `prefix` (the dump's first bytes; 64 KiB are plenty) reads as frames whose trace-`trace_id`
/// bytes decode with the fewest STP errors, then the most packets. The bytes before it end a
/// frame whose start was overwritten.
///
/// Frames sit at 16-byte boundaries of the buffer and write pointers count 32-bit words, so only these four
/// offsets are possible. Read at a wrong one, every frame mixes two and moves its flag byte into the data:
/// the STP stream decodes into errors.
///
/// ```
/// use stp_decode::encoder::StpEncoder;
/// use stp_decode::formatter::format_frames;
/// use stp_decode::tbr::frame_phase;
/// use stp_decode::{DataWidth, IdWidth, PacketKind};
/// let mut e = StpEncoder::new();
/// for i in 0..400u64 {
///     if i % 40 == 0 {
///         e.async_packet(); // now and then, as STMs send them
///         e.packet(&PacketKind::Version { version: 3 })?;
///     }
///     e.packet(&PacketKind::Master { width: IdWidth::W8, master: 3 })?;
///     e.packet(&PacketKind::Channel { width: IdWidth::W8, channel: (i % 5) as u16 })?;
///     e.packet(&PacketKind::Data { width: DataWidth::W32, value: i * 77, marker: true, ts: None })?;
/// }
/// let mut frames = Vec::new();
/// for piece in e.finish().into_bytes().chunks(119) {
///     format_frames(0x40, piece, &mut frames)?; // an ID change every 8 frames
/// }
/// assert_eq!(frame_phase(&frames, 0x40), 0);
/// assert_eq!(frame_phase(&frames[12..], 0x40), 4);
/// assert_eq!(frame_phase(&frames[24..], 0x40), 8);
/// # Ok::<(), stp_decode::EncodeError>(())
/// ```
#[cfg(feature = "alloc")]
pub fn frame_phase(prefix: &[u8], trace_id: u8) -> usize {
    use crate::decoder::{Event, StpDecoder};
    use crate::deformat::{Deformatter, FrameMode};
    let score = |phase: usize| {
        let mut stream = alloc::vec::Vec::new();
        let mut frame_errors = 0u64;
        for frame in Deformatter::new(FrameMode::Memory).feed(prefix.get(phase..).unwrap_or(&[])) {
            match frame {
                Ok(f) => stream.extend(f.bytes.iter().filter(|b| b.id == trace_id).map(|b| b.byte)),
                Err(_) => frame_errors += 1,
            }
        }
        let (mut errors, mut packets) = (frame_errors, 0u64);
        for event in StpDecoder::new().feed(&stream) {
            match event {
                Event::Error(_) => errors += 1,
                Event::Packet(_) => packets += 1,
                Event::Unsynced(_) => {}
            }
        }
        (errors, core::cmp::Reverse(packets))
    };
    (0..FRAME_BYTES)
        .step_by(4)
        .min_by_key(|&phase| (score(phase), phase))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers() {
        assert_eq!(depth_words(1), Some(1024));
        assert_eq!(depth_words(4), Some(8192)); // 32 KiB, K2's STM TBR
        assert_eq!(depth_words(0), None);
        assert_eq!(depth_words(23), None);
        assert!(Status(0b101).wrapped() && Status(0b101).acquisition_complete());
        assert_eq!(
            Wrap::from_registers(Status(1), 7),
            Wrap::Wrapped { write_pointer: 7 }
        );
        assert_eq!(
            Wrap::from_registers(Status(4), 7),
            Wrap::NotWrapped { write_pointer: 7 }
        );
    }

    #[test]
    fn bad_buffers_and_pointers() {
        let buffer = [0u8; 64];
        assert_eq!(
            ordered(&buffer[..63], Wrap::Wrapped { write_pointer: 0 }),
            Err(TbrError::NotWords { bytes: 63 })
        );
        assert_eq!(
            ordered(&buffer, Wrap::Wrapped { write_pointer: 16 }),
            Err(TbrError::PointerOutside {
                write_pointer: 16,
                words: 16
            })
        );
        assert_eq!(
            ordered(&buffer, Wrap::NotWrapped { write_pointer: 17 }),
            Err(TbrError::PointerOutside {
                write_pointer: 17,
                words: 16
            })
        );
        assert_eq!(
            ordered(&buffer, Wrap::NotWrapped { write_pointer: 16 })
                .unwrap()
                .len(),
            64
        );
        let at_frame = ordered(&buffer, Wrap::Wrapped { write_pointer: 8 }).unwrap();
        assert_eq!((at_frame.partial_frame, at_frame.len()), (0, 64));
        let mid = ordered(&buffer, Wrap::Wrapped { write_pointer: 9 }).unwrap();
        assert_eq!(mid.partial_frame, 12);
    }
}
