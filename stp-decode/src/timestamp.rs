//! Timestamp fields: the length nibble, the formats chosen by VERSION, and resolving updates into absolute time.

use core::fmt;

/// How timestamp fields are coded and applied, selected by the VERSION packet (`docs/stm.md` §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TsFormat {
    /// VERSION 0 or 1 (STPv1): a fixed 2-nibble field with no length nibble. MIPI calls it the export
    /// buffer depth; it is not a clock value, so no absolute time is resolved.
    Legacy,
    /// VERSION 2 (STPv2 NATDELTA): the value is added to the running time. Vendor granularity factors
    /// (TI's `F02` on OMAP5) are policy for the caller; this crate adds the raw value.
    NaturalDelta,
    /// VERSION 3 (STPv2 natural binary): the value replaces the low `4·L` bits of the running time.
    Natural,
    /// VERSION 4 (STPv2 Gray code): the low `4·L` bits of the Gray-coded running time are replaced.
    Gray,
}

impl TsFormat {
    /// The format a VERSION value selects, or `None` for 5–15 (unsupported).
    pub const fn from_version(version: u8) -> Option<TsFormat> {
        match version {
            0 | 1 => Some(Self::Legacy),
            2 => Some(Self::NaturalDelta),
            3 => Some(Self::Natural),
            4 => Some(Self::Gray),
            _ => None,
        }
    }

    /// The VERSION nibble that selects this format (1 for [`TsFormat::Legacy`]).
    pub const fn version(self) -> u8 {
        match self {
            Self::Legacy => 1,
            Self::NaturalDelta => 2,
            Self::Natural => 3,
            Self::Gray => 4,
        }
    }

    /// Applies an update of `nibbles` value nibbles to the running time; `None` when the format has no time.
    pub fn apply(self, running: u64, nibbles: u8, value: u64) -> Option<u64> {
        let mask = low_mask(nibbles);
        match self {
            Self::Legacy => None,
            Self::NaturalDelta => Some(running.wrapping_add(value)),
            Self::Natural => Some((running & !mask) | (value & mask)),
            Self::Gray => {
                let gray = binary_to_gray(running);
                Some(gray_to_binary((gray & !mask) | (value & mask)))
            }
        }
    }
}

/// Mask of the low `4·nibbles` bits (all ones for 16 nibbles or more).
pub const fn low_mask(nibbles: u8) -> u64 {
    if nibbles >= 16 {
        u64::MAX
    } else {
        (1u64 << (4 * nibbles as u32)) - 1
    }
}

/// Converts a binary value to its reflected Gray code.
pub const fn binary_to_gray(value: u64) -> u64 {
    value ^ (value >> 1)
}

/// Converts a reflected Gray code back to binary.
pub const fn gray_to_binary(mut gray: u64) -> u64 {
    let mut shift = 1;
    while shift < 64 {
        gray ^= gray >> shift;
        shift <<= 1;
    }
    gray
}

/// Value nibbles announced by a timestamp length nibble: `0`–`C` as is, `D` = 14, `E` = 16, `F` = invalid.
pub const fn length_from_nibble(nibble: u8) -> Option<u8> {
    match nibble {
        0..=0xC => Some(nibble),
        0xD => Some(14),
        0xE => Some(16),
        _ => None,
    }
}

/// The length nibble announcing `nibbles` value nibbles; `None` for 13, 15 and more than 16 (not codable).
pub const fn nibble_from_length(nibbles: u8) -> Option<u8> {
    match nibbles {
        0..=12 => Some(nibbles),
        14 => Some(0xD),
        16 => Some(0xE),
        _ => None,
    }
}

/// A timestamp field as sent, with the absolute time it resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timestamp {
    /// Number of value nibbles sent (0–16; 2 for the STPv1 legacy field).
    pub nibbles: u8,
    /// The value as sent (the update), right-aligned.
    pub update: u64,
    /// The running time after applying the update; `None` in the STPv1 legacy format.
    ///
    /// With natural-binary and Gray formats the high bits are only meaningful once a full-width
    /// (16-nibble) update has been seen; Arm STMs send one after every ASYNC.
    pub absolute: Option<u64>,
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.absolute {
            Some(abs) => write!(f, "ts=0x{abs:016x}")?,
            None => f.write_str("ts=?")?,
        }
        write!(f, " ~[0x{:x}; {} nibbles]", self.update, self.nibbles)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_partial_updates_replace_low_bits() {
        // stm-issue-27: full value 0x3AEB284C9, then a 2-nibble update 0xD6.
        let f = TsFormat::Natural;
        let t = f.apply(0, 16, 0x3_AEB2_84C9).unwrap();
        assert_eq!(t, 0x3_AEB2_84C9);
        assert_eq!(f.apply(t, 2, 0xD6), Some(0x3_AEB2_84D6));
        assert_eq!(f.apply(t, 0, 0), Some(t));
    }

    #[test]
    fn gray_round_trip_and_update() {
        for v in [0u64, 1, 2, 3, 0x1234_5678_9abc_def0, u64::MAX] {
            assert_eq!(gray_to_binary(binary_to_gray(v)), v);
        }
        // Running time 5 (gray 0b111); sending gray low nibble 0b0100 gives gray 0b0100 = binary 7.
        assert_eq!(TsFormat::Gray.apply(5, 1, 0b0100), Some(7));
        assert_eq!(
            TsFormat::Gray.apply(99, 16, binary_to_gray(1234)),
            Some(1234)
        );
    }

    #[test]
    fn delta_adds_and_legacy_has_no_time() {
        assert_eq!(TsFormat::NaturalDelta.apply(100, 2, 5), Some(105));
        assert_eq!(
            TsFormat::NaturalDelta.apply(u64::MAX, 1, 2),
            Some(1),
            "wraps, never panics"
        );
        assert_eq!(TsFormat::Legacy.apply(100, 2, 5), None);
    }

    #[test]
    fn length_nibbles() {
        assert_eq!(length_from_nibble(0xC), Some(12));
        assert_eq!(length_from_nibble(0xD), Some(14));
        assert_eq!(length_from_nibble(0xE), Some(16));
        assert_eq!(length_from_nibble(0xF), None);
        for n in 0..=16u8 {
            if let Some(code) = nibble_from_length(n) {
                assert_eq!(length_from_nibble(code), Some(n));
            } else {
                assert!(n == 13 || n == 15);
            }
        }
    }

    #[test]
    fn versions() {
        assert_eq!(TsFormat::from_version(3), Some(TsFormat::Natural));
        assert_eq!(TsFormat::from_version(4), Some(TsFormat::Gray));
        assert_eq!(TsFormat::from_version(5), None);
        for f in [TsFormat::NaturalDelta, TsFormat::Natural, TsFormat::Gray] {
            assert_eq!(TsFormat::from_version(f.version()), Some(f));
        }
    }
}
