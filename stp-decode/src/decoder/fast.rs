//! The whole-packet fast path: a packet that starts on a packet boundary of a synchronised stream and lies
//! wholly in the input is decoded from a 32-nibble window in a few table look-ups and shifts, instead of
//! nibble by nibble.
//!
//! It only takes packets whose nibble-by-nibble decoding is certain to give the same result, and leaves
//! everything else to the nibble state machine: a packet longer than the window (or than the input left),
//! a reserved opcode, an ASYNC, a variable-length USER or TIME packet, a timestamp before VERSION or with a
//! bad length, and any packet in which the ASYNC detector could act (`F` nibbles at its end not yet
//! followed by a nibble that releases them). `complete` then builds the packet
//! exactly as the state machine does. Property tests and the `stp_stream` fuzz target compare both paths.

use super::Fields;
use crate::opcode::{OP1, OP2, OP3, OP4};
use crate::packet::PacketType;
use crate::timestamp::{length_from_nibble, TsFormat};

/// Nibbles in the window.
const WINDOW: u32 = 32;

/// Up to [`WINDOW`] nibbles of input in wire order: nibble `k` in bits `4k..4k+4` of `lo` (k < 16) or
/// `4(k-16)..` of `hi`.
#[derive(Clone, Copy)]
pub(super) struct Window {
    lo: u64,
    hi: u64,
    /// Number of real nibbles.
    len: u32,
}

impl Window {
    /// The nibbles after a carried high nibble (if any) and then `input`, low nibble of each byte first.
    #[inline]
    pub(super) fn new(carry: Option<u8>, input: &[u8]) -> Window {
        let (lo, hi, bytes) = match input.first_chunk::<16>() {
            Some(chunk) => {
                let (a, b) = chunk.split_at(8);
                let lo = u64::from_le_bytes(a.try_into().unwrap_or_default());
                let hi = u64::from_le_bytes(b.try_into().unwrap_or_default());
                (lo, hi, 16)
            }
            None => {
                let mut chunk = [0u8; 16];
                chunk[..input.len()].copy_from_slice(input);
                let (a, b) = chunk.split_at(8);
                let lo = u64::from_le_bytes(a.try_into().unwrap_or_default());
                let hi = u64::from_le_bytes(b.try_into().unwrap_or_default());
                (lo, hi, input.len() as u32)
            }
        };
        match carry {
            Some(high) => Window {
                lo: (lo << 4) | u64::from(high & 0xF),
                hi: (hi << 4) | (lo >> 60),
                len: (2 * bytes + 1).min(WINDOW),
            },
            None => Window {
                lo,
                hi,
                len: 2 * bytes,
            },
        }
    }

    #[inline]
    fn nibble(self, k: u32) -> u8 {
        let word = if k < 16 { self.lo } else { self.hi };
        ((word >> (4 * (k % 16))) & 0xF) as u8
    }

    /// The `n` (≤ 16) nibbles from `k` as a number, the first one most significant.
    #[inline]
    fn value(self, k: u32, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let wire = match k {
            0 => self.lo,
            1..=15 => (self.lo >> (4 * k)) | (self.hi << (64 - 4 * k)),
            _ => self.hi >> (4 * (k - 16)),
        };
        // Reverse the 16 nibbles (bytes, then the nibbles in each byte), keep the `n` wanted.
        let swapped = wire.swap_bytes();
        let reversed =
            ((swapped & 0x0F0F_0F0F_0F0F_0F0F) << 4) | ((swapped >> 4) & 0x0F0F_0F0F_0F0F_0F0F);
        reversed >> (4 * (16 - n))
    }

    /// Bit `4k` set for each `F` nibble among the first `n`.
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn f_nibbles(self, n: u32) -> u128 {
        let b = (u128::from(self.hi) << 64) | u128::from(self.lo);
        let f = b & (b >> 1) & (b >> 2) & (b >> 3) & 0x1111_1111_1111_1111_1111_1111_1111_1111;
        if n >= WINDOW {
            f
        } else {
            f & ((1u128 << (4 * n)) - 1)
        }
    }
}

/// Whether the ASYNC detector stays out of a packet of `len` nibbles at the start of `w`: `F` nibbles at
/// its end must be followed by a nibble that is not `F` in the window, which releases them.
///
/// A run of 21 `F`s cannot occur inside a packet the fast path takes: the longest is 16 payload nibbles
/// and 2 legacy timestamp nibbles (an STPv2 timestamp's length nibble is never `F`, and no opcode nor
/// payload next to it is longer). Debug builds check it.
fn async_detector_idle(w: Window, len: u32) -> bool {
    debug_assert!(!has_run_of_21_f(w.f_nibbles(len)));
    w.nibble(len - 1) != 0xF || (len < w.len && w.nibble(len) != 0xF)
}

#[cfg_attr(not(debug_assertions), allow(dead_code))]
/// Whether bits `4k` of `f` (one per `F` nibble) hold 21 in a row.
fn has_run_of_21_f(f: u128) -> bool {
    let run2 = f & (f >> 4);
    let run4 = run2 & (run2 >> 8);
    let run8 = run4 & (run4 >> 16);
    let run16 = run8 & (run8 >> 32);
    run16 & (run4 >> 64) & (f >> 80) != 0
}

/// Payload nibbles of a packet type with a fixed payload; `None` for USER and TIME, whose length is sent.
pub(super) const fn fixed_payload(ty: PacketType) -> Option<u8> {
    Some(match ty {
        PacketType::Data { width, .. } => width.nibbles(),
        PacketType::M8
        | PacketType::Merr
        | PacketType::Gerr
        | PacketType::C8
        | PacketType::Trig
        | PacketType::TrigTs
        | PacketType::Xsync
        | PacketType::XsyncTs => 2,
        PacketType::M16 | PacketType::C16 => 4,
        PacketType::Freq | PacketType::FreqTs => 8,
        PacketType::Freq40 | PacketType::Freq40Ts => 10,
        PacketType::Version => 1,
        PacketType::User | PacketType::UserTs | PacketType::Time | PacketType::TimeTs => {
            return None
        }
        PacketType::Null
        | PacketType::NullTs
        | PacketType::Flag
        | PacketType::FlagTs
        | PacketType::Async => 0,
    })
}

/// What the fast path needs of an opcode with a fixed payload.
#[derive(Clone, Copy)]
struct ShortOp {
    ty: PacketType,
    /// Opcode nibbles (1 or 2).
    nibbles: u8,
    /// Payload nibbles.
    payload: u8,
    /// Whether a timestamp follows the payload.
    timestamp: bool,
}

/// The 1- and 2-nibble opcodes with a fixed payload, by the window's first byte (first nibble in bits
/// 3:0, second in 7:4); `None` for reserved ones, the prefixes `F0` and `FF`, and USER and TIME.
const SHORT_OPS: [Option<ShortOp>; 256] = {
    let mut table = [None; 256];
    let mut byte = 0;
    while byte < 256 {
        let (n0, n1) = (byte & 0xF, byte >> 4);
        let entry = if n0 != 0xF {
            Some((OP1[n0], 1))
        } else if n1 != 0 && n1 != 0xF {
            Some((OP2[n1], 2))
        } else {
            None
        };
        if let Some((Some(ty), nibbles)) = entry {
            if let Some(payload) = fixed_payload(ty) {
                table[byte] = Some(ShortOp {
                    ty,
                    nibbles,
                    payload,
                    timestamp: ty.has_timestamp(),
                });
            }
        }
        byte += 1;
    }
    table
};

/// The opcode at the start of `w` and its length in nibbles, for what [`SHORT_OPS`] leaves out.
#[inline]
fn long_opcode(w: Window) -> Option<(PacketType, u8)> {
    let n0 = w.nibble(0);
    if n0 != 0xF {
        return Some((OP1[usize::from(n0)]?, 1));
    }
    Some(match w.nibble(1) {
        0xF => return None,
        0 => match w.nibble(2) {
            0xF => (OP4[usize::from(w.nibble(3))]?, 4),
            n2 => (OP3[usize::from(n2)]?, 3),
        },
        n1 => (OP2[usize::from(n1)]?, 2),
    })
}

/// The packet at the start of `w`, complete, as the state machine would have assembled it (with `start`
/// as its offset); `None` when the state machine has to decode it.
#[inline]
pub(super) fn packet(
    w: Window,
    start: u64,
    ts_format: Option<TsFormat>,
) -> Option<(PacketType, Fields)> {
    let (ty, opcode_nibbles, payload, has_ts) = match SHORT_OPS[(w.lo & 0xFF) as usize] {
        Some(op) => (op.ty, op.nibbles, op.payload, op.timestamp),
        None => {
            let (ty, nibbles) = long_opcode(w)?;
            (ty, nibbles, fixed_payload(ty)?, ty.has_timestamp())
        }
    };
    let (opcode_nibbles, payload) = (u32::from(opcode_nibbles), u32::from(payload));
    let mut len = opcode_nibbles + payload;
    let (ts_nibbles, ts) = if has_ts {
        let n = match ts_format? {
            TsFormat::Legacy => 2,
            _ => {
                let n = u32::from(length_from_nibble(w.nibble(len))?);
                len += 1;
                n
            }
        };
        let at = len;
        len += n;
        if len > w.len {
            return None;
        }
        (n as u8, w.value(at, n))
    } else {
        (0, 0)
    };
    if len > w.len || !async_detector_idle(w, len) {
        return None;
    }
    let fields = Fields {
        start,
        read: len as u8,
        payload: w.value(opcode_nibbles, payload),
        payload_nibbles: payload as u8,
        ts_nibbles,
        ts,
        ..Fields::EMPTY
    };
    Some((ty, fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_f_are_found_at_21_and_not_at_20() {
        let ones = |n: u32, at: u32| -> u128 { (0..n).map(|k| 1u128 << (4 * (k + at))).sum() };
        assert!(!has_run_of_21_f(ones(20, 0)));
        assert!(!has_run_of_21_f(ones(20, 11)));
        assert!(has_run_of_21_f(ones(21, 0)));
        assert!(has_run_of_21_f(ones(21, 11)));
        assert!(!has_run_of_21_f(ones(10, 0) | ones(10, 11)));
    }

    #[test]
    fn short_opcode_table_is_the_opcode_tables() {
        for byte in 0..=0xFFu8 {
            let long = long_opcode(Window::new(None, &[byte, 0]))
                .filter(|&(ty, nibbles)| nibbles <= 2 && fixed_payload(ty).is_some());
            let short = SHORT_OPS[usize::from(byte)].map(|op| {
                assert_eq!(op.payload, fixed_payload(op.ty).unwrap_or(0xFF));
                assert_eq!(op.timestamp, op.ty.has_timestamp());
                (op.ty, op.nibbles)
            });
            assert_eq!(short, long, "first byte {byte:#04x}");
        }
    }

    #[test]
    fn window_values_read_most_significant_first() {
        // Bytes 0x21 0x43 0x65: nibbles 1 2 3 4 5 6 on the wire.
        let w = Window::new(None, &[0x21, 0x43, 0x65]);
        assert_eq!(w.len, 6);
        assert_eq!(w.value(0, 4), 0x1234);
        assert_eq!(w.value(2, 3), 0x345);
        let carried = Window::new(Some(0xA), &[0x21]);
        assert_eq!((carried.len, carried.value(0, 3)), (3, 0xA12));
    }
}
