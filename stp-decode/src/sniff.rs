//! Which layout a trace buffer has, and which trace IDs it carries: read from its first bytes, so that a
//! tool can decode a file without being told, or say what to pass.
//!
//! A CoreSight formatted buffer (ETB/ETF/ETR memory, or TI's TWP frames) is a run of 16-byte frames whose
//! even bytes with bit 0 set change the trace ID in force. Read as frames, a real one changes between a few
//! IDs and never names the reserved ID 0x7F. A bare STP stream read as frames does not: its ASYNC
//! (`FF FF … F0`) names ID 0x7F in the first frame, and its other bytes name many IDs at random.
//!
//! ```
//! use stp_decode::sniff::{Census, Layout};
//! // One frame: an ID change to 0x20 (0x41), then 14 data bytes of that source.
//! let mut frame = [0u8; 16];
//! frame[0] = 0x41;
//! let census = Census::of(&frame);
//! assert_eq!(census.layout(), Layout::Frames);
//! assert_eq!(census.ids().collect::<Vec<_>>(), [(0x20, 14)]);
//! // An ASYNC read as a frame names the reserved ID 0x7F: a bare stream.
//! assert_eq!(Census::of(&[0xFF; 16]).layout(), Layout::Bare);
//! ```

use crate::deformat::{decode_frame, FRAME_LEN};

/// How many leading bytes of a file a census reads.
pub const SNIFF_LEN: usize = 64 << 10;

/// The most trace IDs a buffer read as frames may carry and still be taken for frames: a system has a
/// few trace sources (an STM, a processor trace per core); random bytes name dozens.
const MOST_IDS: usize = 16;

/// How a trace buffer carries its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// CoreSight formatted frames (TWP frames on KeyStone II): decode one trace ID.
    Frames,
    /// A bare STP byte stream, or nothing that reads as frames.
    Bare,
}

/// The trace IDs a buffer's first bytes carry when read as CoreSight frames, up to the first frame that
/// cannot be one (a reserved ID): a real buffer's stale tail after its last write is not counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Census {
    frames: u64,
    clean: u64,
    bytes: [u64; 128],
}

/// The highest trace ID a source may have (0x70 to 0x7F are reserved).
const HIGHEST_ID: u8 = 0x6F;

/// Frames read without error that a buffer needs to be taken for frames (fewer when it is shorter): one
/// clean frame of random bytes is likely, eight are not.
const CLEAN_FRAMES: u64 = 8;

impl Census {
    /// Reads `bytes` (at most [`SNIFF_LEN`] of them) as frames from its first byte.
    pub fn of(bytes: &[u8]) -> Census {
        let mut census = Census {
            frames: 0,
            clean: 0,
            bytes: [0; 128],
        };
        let mut current = None;
        let mut clean = true;
        let bytes = &bytes[..bytes.len().min(SNIFF_LEN)];
        for frame in bytes.chunks_exact(FRAME_LEN) {
            let Ok(frame) = <&[u8; FRAME_LEN]>::try_from(frame) else {
                continue;
            };
            census.frames += 1;
            if !clean {
                continue;
            }
            match decode_frame(frame, &mut current) {
                Ok(data) if data.iter().all(|b| b.id <= HIGHEST_ID) => {
                    census.clean += 1;
                    for byte in data.iter() {
                        census.bytes[usize::from(byte.id)] += 1;
                    }
                }
                _ => clean = false,
            }
        }
        census
    }

    /// Whole frames in the bytes read.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Frames read as frames before the first that cannot be one.
    pub fn clean_frames(&self) -> u64 {
        self.clean
    }

    /// Each trace ID that carried data in the clean frames, with its number of bytes, by ascending ID.
    pub fn ids(&self) -> impl Iterator<Item = (u8, u64)> + '_ {
        (1..=HIGHEST_ID)
            .map(|id| (id, self.bytes[usize::from(id)]))
            .filter(|&(_, n)| n > 0)
    }

    /// The bytes trace ID `id` carried in the clean frames.
    pub fn bytes_of(&self, id: u8) -> u64 {
        self.bytes[usize::from(id & 0x7F)]
    }

    /// Frames when the first frames (eight, or all of a shorter buffer) read as frames carrying between
    /// one and a few IDs; otherwise bare.
    pub fn layout(&self) -> Layout {
        let ids = self.ids().count();
        let enough = self.clean >= CLEAN_FRAMES.min(self.frames) && self.clean > 0;
        match enough && (1..=MOST_IDS).contains(&ids) {
            true => Layout::Frames,
            false => Layout::Bare,
        }
    }

    /// The one trace ID the frames carry, when there is exactly one.
    pub fn only_id(&self) -> Option<u8> {
        let mut ids = self.ids();
        match (ids.next(), ids.next()) {
            (Some((id, _)), None) => Some(id),
            _ => None,
        }
    }
}

/// The IDs of a census as people read them: `0x20 (1024 bytes), 0x40 (15 bytes)`, or `none`.
impl core::fmt::Display for Census {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut any = false;
        for (id, bytes) in self.ids() {
            if any {
                f.write_str(", ")?;
            }
            write!(f, "{id:#04x} ({bytes} bytes)")?;
            any = true;
        }
        if !any {
            f.write_str("none")?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::encoder::StpEncoder;
    use crate::formatter::format_frames;
    use crate::{DataWidth, IdWidth, PacketKind};
    use std::format;
    use std::string::ToString;
    use std::vec::Vec;

    fn stp_stream() -> Vec<u8> {
        let mut e = StpEncoder::new();
        e.async_packet();
        e.packet(&PacketKind::Version { version: 3 }).unwrap();
        for k in 0..200u64 {
            e.packet(&PacketKind::Master {
                width: IdWidth::W8,
                master: 1,
            })
            .unwrap();
            let channel = (k % 8) as u16;
            e.packet(&PacketKind::Channel {
                width: IdWidth::W8,
                channel,
            })
            .unwrap();
            let data = PacketKind::Data {
                width: DataWidth::W32,
                value: k,
                marker: false,
                ts: None,
            };
            e.packet(&data).unwrap();
        }
        e.finish().into_bytes()
    }

    #[test]
    fn a_bare_stream_is_bare_and_its_frames_are_frames() {
        let stream = stp_stream();
        assert_eq!(Census::of(&stream).layout(), Layout::Bare);
        let mut framed = Vec::new();
        format_frames(0x40, &stream, &mut framed).unwrap();
        let census = Census::of(&framed);
        assert_eq!(census.layout(), Layout::Frames);
        assert_eq!(census.only_id(), Some(0x40));
        assert_eq!(census.bytes_of(0x40), stream.len() as u64);
        assert_eq!(census.to_string(), format!("0x40 ({} bytes)", stream.len()));
    }

    #[test]
    fn zeros_and_random_bytes_are_not_frames() {
        assert_eq!(Census::of(&[0u8; 4096]).layout(), Layout::Bare);
        assert_eq!(Census::of(&[0u8; 4096]).to_string(), "none");
        // A fixed pseudo-random sequence (xorshift): many IDs, reserved ones among them.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let random: Vec<u8> = (0..8192)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(Census::of(&random).layout(), Layout::Bare);
    }

    #[test]
    fn two_sources_are_frames_with_two_ids() {
        let mut framed = Vec::new();
        format_frames(0x10, &[1; 100], &mut framed).unwrap();
        format_frames(0x20, &[2; 60], &mut framed).unwrap();
        let census = Census::of(&framed);
        assert_eq!(census.layout(), Layout::Frames);
        assert_eq!(census.only_id(), None);
        assert_eq!(census.ids().collect::<Vec<_>>(), [(0x10, 100), (0x20, 60)]);
    }
}
