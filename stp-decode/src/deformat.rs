//! CoreSight trace formatter demultiplexing: 16-byte frames in, `(trace ID, byte)` pairs out.
//!
//! A frame (CoreSight Architecture, TPIU/ETB/ETF/ETR formatter; MIPI TWP uses the same layout) is 16
//! bytes. Byte 15 is the auxiliary byte. Each even byte `2k` (k = 0–7) is either
//! - an **ID change** when its bit 0 is 1: the new trace ID is bits 7:1. For k < 7 the odd byte after it
//!   is data; auxiliary bit k set means that data byte still belongs to the *previous* ID;
//! - or a **data byte** when its bit 0 is 0: its real bit 0 is auxiliary bit k.
//!
//! Odd bytes 1–13 are always data. ID 0x00 is padding and its bytes are dropped; ID 0x7F is reserved
//! and an error. Data before the first ID change of a trace belongs to an unknown ID and is dropped.
//!
//! In TPIU mode (a continuous port capture) frames are aligned by FSYNC `FF FF FF 7F` between frames,
//! and `FF 7F` halfwords (HSYNC) may sit at even positions inside a frame; both are removed. Buffers
//! read from an ETB/ETF/ETR are [`FrameMode::Memory`]: frames are back to back from offset 0.

use crate::error::{FrameError, FrameErrorAt};

/// Bytes in a formatter frame.
pub const FRAME_LEN: usize = 16;
/// Trace ID of padding data.
pub const NULL_ID: u8 = 0x00;
/// Reserved trace ID (appears only in sync patterns).
pub const RESERVED_ID: u8 = 0x7F;

/// Bit 0 of each even byte of a frame read as a little-endian `u128`.
const EVEN_BIT0: u128 = 0x0001_0001_0001_0001_0001_0001_0001_0001;

/// Four auxiliary bits moved to bit 0 of the even bytes of a little-endian `u64` (bit `k` to bit `16k`).
const AUX_SPREAD: [u64; 16] = {
    let mut table = [0u64; 16];
    let mut nibble = 0;
    while nibble < 16 {
        let mut k = 0;
        while k < 4 {
            if nibble & (1 << k) != 0 {
                table[nibble] |= 1 << (16 * k);
            }
            k += 1;
        }
        nibble += 1;
    }
    table
};

/// One data byte out of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceByte {
    /// The trace ID it belongs to (1–0x6F in practice; 0x00 and 0x7F never appear).
    pub id: u8,
    /// The data byte.
    pub byte: u8,
    /// Position of the byte inside the 16-byte frame (0–14).
    pub index: u8,
}

/// The data bytes of one frame, in stream order (at most 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameBytes {
    entries: [TraceByte; FRAME_LEN - 1],
    len: u8,
}

impl FrameBytes {
    const EMPTY: FrameBytes = FrameBytes {
        entries: [TraceByte {
            id: 0,
            byte: 0,
            index: 0,
        }; FRAME_LEN - 1],
        len: 0,
    };

    fn push(&mut self, id: Option<u8>, byte: u8, index: usize) {
        if let Some(id) = id.filter(|&id| id != NULL_ID) {
            self.entries[usize::from(self.len)] = TraceByte {
                id,
                byte,
                index: index as u8,
            };
            self.len += 1;
        }
    }

    /// The data bytes.
    pub fn as_slice(&self) -> &[TraceByte] {
        &self.entries[..usize::from(self.len)]
    }

    /// Iterates over the data bytes.
    pub fn iter(&self) -> core::slice::Iter<'_, TraceByte> {
        self.as_slice().iter()
    }
}

/// Demultiplexes one frame. `current` is the trace ID in force before the frame (`None` = unknown) and is
/// updated to the one in force after it.
///
/// On error the frame's data is dropped and `current` becomes `None`.
///
/// ```
/// use stp_decode::deformat::decode_frame;
/// // ID change to 0x20 (0x41), then 14 data bytes; aux byte 0x00.
/// let mut frame = [0u8; 16];
/// frame[0] = 0x41;
/// frame[1] = 0xAB;
/// let mut id = None;
/// let bytes = decode_frame(&frame, &mut id).unwrap();
/// assert_eq!(id, Some(0x20));
/// assert_eq!(bytes.as_slice()[0].byte, 0xAB);
/// assert_eq!(bytes.as_slice().len(), 14);
/// ```
pub fn decode_frame(
    frame: &[u8; FRAME_LEN],
    current: &mut Option<u8>,
) -> Result<FrameBytes, FrameError> {
    let aux = frame[FRAME_LEN - 1];
    let mut out = FrameBytes::EMPTY;
    let id = *current;
    let even_or = frame.iter().step_by(2).take(8).fold(0, |acc, b| acc | b);
    if even_or & 1 == 0 {
        // No ID change: all 15 data bytes belong to the ID in force (none if it is unknown or padding).
        if let Some(id) = id.filter(|&id| id != NULL_ID) {
            for (k, &byte) in frame[..FRAME_LEN - 1].iter().enumerate() {
                let byte = if k % 2 == 0 {
                    byte | ((aux >> (k / 2)) & 1)
                } else {
                    byte
                };
                out.entries[k] = TraceByte {
                    id,
                    byte,
                    index: k as u8,
                };
            }
            out.len = (FRAME_LEN - 1) as u8;
        }
        return Ok(out);
    }
    decode_frame_bytewise(frame, current)
}

/// [`decode_frame`] one byte pair at a time: any frame, ID changes included.
fn decode_frame_bytewise(
    frame: &[u8; FRAME_LEN],
    current: &mut Option<u8>,
) -> Result<FrameBytes, FrameError> {
    let aux = frame[FRAME_LEN - 1];
    let mut out = FrameBytes::EMPTY;
    let mut id = *current;
    for k in 0..8 {
        let even = frame[2 * k];
        let aux_bit = (aux >> k) & 1;
        let odd = (k < 7).then(|| frame[2 * k + 1]);
        if even & 1 == 1 {
            let new_id = even >> 1;
            if new_id == RESERVED_ID {
                *current = None;
                return Err(FrameError::ReservedId {
                    index: (2 * k) as u8,
                });
            }
            if let Some(byte) = odd {
                if aux_bit == 1 {
                    out.push(id, byte, 2 * k + 1);
                    id = Some(new_id);
                } else {
                    id = Some(new_id);
                    out.push(id, byte, 2 * k + 1);
                }
            } else {
                id = Some(new_id);
            }
        } else {
            out.push(id, even | aux_bit, 2 * k);
            if let Some(byte) = odd {
                out.push(id, byte, 2 * k + 1);
            }
        }
    }
    *current = id;
    Ok(out)
}

/// How frames are laid out in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FrameMode {
    /// Frames back to back from the first byte (ETB/ETF/ETR buffers, OpenCSD's "memory aligned").
    #[default]
    Memory,
    /// A TPIU port capture: align on FSYNC, drop FSYNCs between frames and HSYNCs inside frames.
    Tpiu,
}

/// The 15 data bytes of a frame without ID changes, all of one trace ID (see [`Deformatter::next_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Byte offset of the frame's first byte in the formatted input (counted over all calls).
    pub offset: u64,
    /// The trace ID in force (never 0x00 or 0x7F).
    pub id: u8,
    /// The data bytes in stream order; byte `k` sits at offset `offset + k`.
    pub bytes: [u8; FRAME_LEN - 1],
}

/// A demultiplexed frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// Byte offset of the frame's first byte in the formatted input (counted over all calls).
    pub offset: u64,
    /// Its data bytes. In TPIU mode, indexes count frame bytes only (not removed HSYNCs).
    pub bytes: FrameBytes,
}

/// Streaming frame demultiplexer: bytes in (any split), frames out.
///
/// ```
/// use stp_decode::deformat::{Deformatter, FrameMode};
/// let mut frame = [0u8; 16];
/// frame[0] = 0x21; // ID 0x10
/// let mut d = Deformatter::new(FrameMode::Memory);
/// assert_eq!(d.feed(&frame[..7]).count(), 0); // partial frame: nothing yet
/// let frames: Vec<_> = d.feed(&frame[7..]).collect();
/// assert_eq!(frames.len(), 1);
/// assert!(frames[0].as_ref().unwrap().bytes.iter().all(|b| b.id == 0x10));
/// ```
#[derive(Debug, Clone)]
pub struct Deformatter {
    mode: FrameMode,
    current: Option<u8>,
    buf: [u8; FRAME_LEN],
    len: usize,
    frame_start: u64,
    offset: u64,
    aligned: bool,
    ff_run: u8,
}

impl Deformatter {
    /// A deformatter at the start of a trace (current ID unknown; TPIU mode hunting for an FSYNC).
    pub const fn new(mode: FrameMode) -> Self {
        Deformatter {
            mode,
            current: None,
            buf: [0; FRAME_LEN],
            len: 0,
            frame_start: 0,
            offset: 0,
            aligned: matches!(mode, FrameMode::Memory),
            ff_run: 0,
        }
    }

    /// The trace ID in force (`None` before the first ID change or after an error).
    pub const fn current_id(&self) -> Option<u8> {
        self.current
    }

    /// True when frame alignment is known (always in memory mode; after an FSYNC in TPIU mode).
    pub const fn is_aligned(&self) -> bool {
        self.aligned
    }

    /// Bytes of an incomplete frame held back for the next call.
    pub const fn pending(&self) -> usize {
        self.len
    }

    /// Memory mode fast path: when no partial frame is held, the trace ID in force is known and the first
    /// 16 bytes of `input` are a frame without ID changes, consumes them and returns their 15 data bytes
    /// as one run. Otherwise consumes nothing and returns `None`: use [`Deformatter::feed`].
    ///
    /// ```
    /// use stp_decode::deformat::{Deformatter, FrameMode};
    /// let mut d = Deformatter::new(FrameMode::Memory);
    /// let mut frames = [0u8; 32];
    /// frames[0] = 0x41; // ID 0x20: the first frame changes ID, the second does not
    /// frames[17] = 0xAB;
    /// assert!(d.next_run(&frames).is_none());
    /// assert_eq!(d.feed(&frames[..16]).count(), 1);
    /// let run = d.next_run(&frames[16..]).unwrap();
    /// assert_eq!((run.offset, run.id, run.bytes[1]), (16, 0x20, 0xAB));
    /// ```
    pub fn next_run(&mut self, input: &[u8]) -> Option<Run> {
        if self.mode != FrameMode::Memory || self.len != 0 {
            return None;
        }
        let id = self.current.filter(|&id| id != NULL_ID)?;
        let frame = u128::from_le_bytes(*input.first_chunk::<FRAME_LEN>()?);
        // Bit 0 of each even byte: an ID change when set.
        if frame & EVEN_BIT0 != 0 {
            return None;
        }
        // Auxiliary bit k is bit 0 of data byte 2k; the auxiliary byte itself is dropped.
        let aux = (frame >> 120) as u8;
        let lo = frame as u64 | AUX_SPREAD[usize::from(aux & 0xF)];
        let hi = (frame >> 64) as u64 | AUX_SPREAD[usize::from(aux >> 4)];
        let word = (u128::from(hi) << 64) | u128::from(lo);
        let mut bytes = [0u8; FRAME_LEN - 1];
        bytes.copy_from_slice(&word.to_le_bytes()[..FRAME_LEN - 1]);
        let offset = self.offset;
        self.offset += FRAME_LEN as u64;
        Some(Run { offset, id, bytes })
    }

    /// Feeds formatted bytes; drive the iterator to its end to consume them all.
    pub fn feed<'d, 'i>(&'d mut self, input: &'i [u8]) -> Frames<'d, 'i> {
        Frames {
            deformatter: self,
            input,
            index: 0,
        }
    }

    /// Takes one byte; returns a finished frame or an error.
    fn push(&mut self, byte: u8) -> Option<Result<Frame, FrameErrorAt>> {
        let pos = self.offset;
        self.offset += 1;
        if !self.aligned {
            // TPIU hunting: FSYNC is FF FF FF 7F.
            if byte == 0xFF {
                self.ff_run = self.ff_run.saturating_add(1);
            } else {
                if byte == 0x7F && self.ff_run >= 3 {
                    self.aligned = true;
                    self.len = 0;
                }
                self.ff_run = 0;
            }
            return None;
        }
        if self.len == 0 {
            self.frame_start = pos;
        }
        self.buf[self.len] = byte;
        self.len += 1;
        if self.mode == FrameMode::Tpiu {
            if let Some(err) = self.strip_syncs() {
                return Some(Err(err));
            }
        }
        if self.len < FRAME_LEN {
            return None;
        }
        self.len = 0;
        Some(match decode_frame(&self.buf, &mut self.current) {
            Ok(bytes) => Ok(Frame {
                offset: self.frame_start,
                bytes,
            }),
            Err(error) => Err(FrameErrorAt {
                offset: self.frame_start,
                error,
            }),
        })
    }

    /// TPIU mode: drops an FSYNC at a frame start and HSYNCs at even positions.
    fn strip_syncs(&mut self) -> Option<FrameErrorAt> {
        let b = &self.buf;
        match self.len {
            2 if b[0] == 0xFF && b[1] == 0xFF => {}
            4 if b[0] == 0xFF && b[1] == 0xFF => {
                if b[2] == 0xFF && b[3] == 0x7F {
                    self.len = 0;
                } else {
                    return Some(self.lose_alignment(b[2]));
                }
            }
            n if n % 2 == 0 && b[n - 2] == 0xFF => {
                if b[n - 1] == 0x7F {
                    self.len -= 2;
                } else if n == 2 {
                    return Some(self.lose_alignment(b[1]));
                }
            }
            _ => {}
        }
        None
    }

    fn lose_alignment(&mut self, next: u8) -> FrameErrorAt {
        self.aligned = false;
        self.ff_run = 0;
        self.len = 0;
        self.current = None;
        FrameErrorAt {
            offset: self.frame_start,
            error: FrameError::LostAlignment { next },
        }
    }
}

/// Frames completed by one [`Deformatter::feed`] call.
#[derive(Debug)]
pub struct Frames<'d, 'i> {
    deformatter: &'d mut Deformatter,
    input: &'i [u8],
    index: usize,
}

impl Frames<'_, '_> {
    /// Input bytes consumed so far.
    pub fn consumed(&self) -> usize {
        self.index
    }
}

impl Iterator for Frames<'_, '_> {
    type Item = Result<Frame, FrameErrorAt>;

    fn next(&mut self) -> Option<Self::Item> {
        let d = &mut *self.deformatter;
        if d.mode == FrameMode::Memory && d.len == 0 {
            // A whole frame in the input: demultiplexed in place, without the byte-at-a-time copy.
            if let Some(frame) = self.input[self.index..].first_chunk::<FRAME_LEN>() {
                self.index += FRAME_LEN;
                let offset = d.offset;
                d.offset += FRAME_LEN as u64;
                return Some(match decode_frame(frame, &mut d.current) {
                    Ok(bytes) => Ok(Frame { offset, bytes }),
                    Err(error) => Err(FrameErrorAt { offset, error }),
                });
            }
        }
        while let Some(&byte) = self.input.get(self.index) {
            self.index += 1;
            if let Some(result) = self.deformatter.push(byte) {
                return Some(result);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids_and_bytes(f: &FrameBytes) -> ([(u8, u8); 15], usize) {
        let mut out = [(0, 0); 15];
        for (i, b) in f.iter().enumerate() {
            out[i] = (b.id, b.byte);
        }
        (out, f.as_slice().len())
    }

    #[test]
    fn juno_first_frame() {
        // stm_only-juno/cstraceitm.bin bytes 0..16: ID 0x20, ASYNC bytes, VERSION, start of M8.
        let frame = [
            0x41, 0xff, 0xfe, 0xff, 0xfe, 0xff, 0xfe, 0xff, 0xfe, 0xff, 0xfe, 0x0f, 0x0e, 0x30,
            0x40, 0xfe,
        ];
        let mut id = None;
        let bytes = decode_frame(&frame, &mut id).unwrap();
        let (pairs, n) = ids_and_bytes(&bytes);
        assert_eq!(id, Some(0x20));
        let data: [u8; 15] = core::array::from_fn(|i| pairs[i].1);
        assert_eq!(n, 14);
        assert_eq!(
            &data[..n],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0f, 0x30, 0x41]
        );
    }

    #[test]
    fn aux_bit_keeps_old_id_for_following_byte() {
        let mut frame = [0u8; 16];
        frame[0] = 0x21; // ID 0x10, aux bit 0 = 0: byte 1 is ID 0x10
        frame[1] = 0x11;
        frame[2] = 0x41; // ID 0x20, aux bit 1 = 1: byte 3 still ID 0x10
        frame[3] = 0x22;
        frame[4] = 0x02; // data, aux bit 2 = 1 -> 0x03, ID 0x20
        frame[15] = 0b0000_0110;
        let mut id = None;
        let bytes = decode_frame(&frame, &mut id).unwrap();
        let (pairs, _) = ids_and_bytes(&bytes);
        assert_eq!(pairs[0], (0x10, 0x11));
        assert_eq!(pairs[1], (0x10, 0x22));
        assert_eq!(pairs[2], (0x20, 0x03));
        assert_eq!(id, Some(0x20));
    }

    #[test]
    fn unknown_and_null_ids_are_dropped() {
        let mut frame = [0u8; 16];
        frame[8] = 0x01; // ID 0x00 from byte 8 on
        let mut id = None;
        let bytes = decode_frame(&frame, &mut id).unwrap();
        assert!(bytes.as_slice().is_empty());
        assert_eq!(id, Some(0));
    }

    #[test]
    fn id_in_byte_14_has_no_data_byte() {
        let mut frame = [0u8; 16];
        frame[0] = 0x21;
        frame[14] = 0x41;
        let mut id = None;
        let bytes = decode_frame(&frame, &mut id).unwrap();
        assert_eq!(bytes.as_slice().len(), 13);
        assert!(bytes.iter().all(|b| b.id == 0x10));
        assert_eq!(id, Some(0x20));
    }

    #[test]
    fn reserved_id_is_an_error() {
        let mut frame = [0u8; 16];
        frame[0] = 0x21;
        frame[6] = 0xFF;
        let mut id = Some(3);
        assert_eq!(
            decode_frame(&frame, &mut id),
            Err(FrameError::ReservedId { index: 6 })
        );
        assert_eq!(id, None);
    }

    fn tpiu_frames(input: &[u8]) -> ([Option<Result<Frame, FrameErrorAt>>; 4], usize) {
        let mut d = Deformatter::new(FrameMode::Tpiu);
        let mut out = [None; 4];
        let mut n = 0;
        for f in d.feed(input) {
            out[n] = Some(f);
            n += 1;
        }
        (out, n)
    }

    #[test]
    fn tpiu_fsync_hsync_are_removed() {
        let mut frame = [0u8; 16];
        frame[0] = 0x21;
        frame[1] = 0xAA;
        let mut input = [0u8; 4 + 4 + 2 + 16 + 4];
        input[..4].copy_from_slice(&[0x12, 0xFF, 0xFF, 0xFF]); // garbage before sync
        input[4..8].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0x7F]);
        input[8..10].copy_from_slice(&frame[..2]);
        input[10..12].copy_from_slice(&[0xFF, 0x7F]); // HSYNC at frame position 2
        input[12..26].copy_from_slice(&frame[2..]);
        input[26..30].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0x7F]);
        let (frames, n) = tpiu_frames(&input);
        assert_eq!(n, 1);
        let f = frames[0].unwrap().unwrap();
        assert_eq!(f.offset, 8);
        assert_eq!(f.bytes.as_slice()[0].byte, 0xAA);
        assert!(f.bytes.iter().all(|b| b.id == 0x10));
    }

    #[test]
    fn tpiu_lost_alignment_is_reported() {
        let input = [0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x12];
        let (frames, n) = tpiu_frames(&input);
        assert_eq!(n, 1);
        assert_eq!(
            frames[0].unwrap(),
            Err(FrameErrorAt {
                offset: 4,
                error: FrameError::LostAlignment { next: 0x12 }
            })
        );
        let input = [0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0x00, 0x00];
        let (frames, _) = tpiu_frames(&input);
        assert_eq!(
            frames[0].unwrap().unwrap_err().error,
            FrameError::LostAlignment { next: 0x00 }
        );
    }

    proptest::proptest! {
        #[test]
        fn frames_without_id_changes_decode_as_byte_by_byte(
            mut frame in proptest::array::uniform16(proptest::prelude::any::<u8>()),
            current in proptest::option::of(0u8..0x80),
            changes in proptest::prelude::any::<bool>(),
        ) {
            if !changes {
                for k in 0..8 {
                    frame[2 * k] &= 0xFE;
                }
            }
            let (mut fast_id, mut slow_id) = (current, current);
            let fast = decode_frame(&frame, &mut fast_id);
            let slow = decode_frame_bytewise(&frame, &mut slow_id);
            proptest::prop_assert_eq!(fast, slow);
            proptest::prop_assert_eq!(fast_id, slow_id);
        }

        #[test]
        fn runs_are_the_frames_feed_gives(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            clear_id_bits in proptest::prelude::any::<bool>(),
        ) {
            let mut data = data;
            if clear_id_bits {
                // Mostly frames without ID changes, after a first frame that sets ID 0x20.
                for (i, b) in data.iter_mut().enumerate() {
                    if i % 2 == 0 && i % 16 != 15 {
                        *b &= 0xFE;
                    }
                }
                if let Some(b) = data.first_mut() {
                    *b = 0x41;
                }
            }
            let mut by_feed = Deformatter::new(FrameMode::Memory);
            let want: std::vec::Vec<_> = by_feed.feed(&data).collect();
            let mut by_runs = Deformatter::new(FrameMode::Memory);
            let mut got = std::vec::Vec::new();
            let mut at = 0;
            while at < data.len() {
                if let Some(run) = by_runs.next_run(&data[at..]) {
                    let mut bytes = FrameBytes::EMPTY;
                    for (k, &b) in run.bytes.iter().enumerate() {
                        bytes.push(Some(run.id), b, k);
                    }
                    got.push(Ok(Frame { offset: run.offset, bytes }));
                    at += FRAME_LEN;
                } else {
                    let end = (at + FRAME_LEN).min(data.len());
                    got.extend(by_runs.feed(&data[at..end]));
                    at = end;
                }
            }
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(by_runs.current_id(), by_feed.current_id());
        }

        #[test]
        fn whole_frames_decode_as_bytes_fed_one_by_one(
            data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
        ) {
            let mut whole = Deformatter::new(FrameMode::Memory);
            let fast: std::vec::Vec<_> = whole.feed(&data).collect();
            let mut one_by_one = Deformatter::new(FrameMode::Memory);
            let mut slow = std::vec::Vec::new();
            for byte in &data {
                slow.extend(one_by_one.feed(core::slice::from_ref(byte)));
            }
            proptest::prop_assert_eq!(fast, slow);
        }
    }

    #[test]
    fn memory_mode_split_anywhere() {
        let Some(data) = test_data::bytes("opencsd-stm/stm_only-juno/cstraceitm.bin") else {
            return;
        };
        let mut whole = Deformatter::new(FrameMode::Memory);
        let reference: [u8; 64] = {
            let mut out = [0u8; 64];
            let mut n = 0;
            for f in whole.feed(&data[..64]) {
                for b in f.unwrap().bytes.iter() {
                    out[n] = b.byte;
                    n += 1;
                }
            }
            out
        };
        for split in 0..64 {
            let mut d = Deformatter::new(FrameMode::Memory);
            let mut out = [0u8; 64];
            let mut n = 0;
            for part in [&data[..split], &data[split..64]] {
                for f in d.feed(part) {
                    for b in f.unwrap().bytes.iter() {
                        out[n] = b.byte;
                        n += 1;
                    }
                }
            }
            assert_eq!(out, reference, "split at {split}");
        }
    }
}
