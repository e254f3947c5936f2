//! Signed LEB128, the integer encoding gatord calls `packInt` (32-bit) and `packInt64` (64-bit).
//!
//! Each byte carries 7 value bits, least significant group first; bit 7 says another byte follows and bit 6 of
//! the last byte is the sign. gatord emits the shortest form: at most 5 bytes for an `i32` and 10 for an `i64`.
//! Unsigned values are cast to signed before encoding, so a `u32 ≥ 2^31` arrives as a negative `i32`.
//!
//! The decoders here are total: a missing continuation byte is [`Sleb128Error::Truncated`], more bytes than the
//! width allows is [`Sleb128Error::Overlong`], and a final group whose bits do not fit the width is
//! [`Sleb128Error::Overflow`].

use thiserror::Error;

/// The longest encoding of a 64-bit value.
pub const MAX_LEN_I64: usize = 10;
/// The longest encoding of a 32-bit value.
pub const MAX_LEN_I32: usize = 5;

/// Why a SLEB128 integer could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Sleb128Error {
    /// The input ended while the last byte read still had its continuation bit set (or was empty).
    #[error("SLEB128 integer truncated after {read} byte(s)")]
    Truncated {
        /// How many bytes were available.
        read: usize,
    },
    /// More continuation bytes than the width allows (more than 10 for 64 bits, 5 for 32 bits).
    #[error("SLEB128 integer longer than {max} bytes")]
    Overlong {
        /// The maximum length for this width.
        max: usize,
    },
    /// The final byte carries bits that do not fit the width (not a plain sign extension).
    #[error("SLEB128 integer does not fit in {bits} bits")]
    Overflow {
        /// The width being decoded, 32 or 64.
        bits: u32,
    },
}

/// Appends the SLEB128 encoding of `value` (gatord `packInt64`) to `out`.
#[inline]
pub fn encode_i64(mut value: i64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        let done = (value == 0 && byte & 0x40 == 0) || (value == -1 && byte & 0x40 != 0);
        if done {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// Appends the SLEB128 encoding of `value` (gatord `packInt`) to `out`.
#[inline]
pub fn encode_i32(value: i32, out: &mut Vec<u8>) {
    encode_i64(i64::from(value), out);
}

/// How many bytes [`encode_i64`] writes for `value`.
pub fn encoded_len(value: i64) -> usize {
    let significant = if value < 0 {
        64 - value.leading_ones()
    } else {
        64 - value.leading_zeros()
    };
    // One sign bit plus the significant bits, 7 per byte.
    (significant as usize + 1).div_ceil(7).max(1)
}

/// Decodes one 64-bit SLEB128 integer from the start of `input`; returns the value and the bytes consumed.
#[inline]
pub fn decode_i64(input: &[u8]) -> Result<(i64, usize), Sleb128Error> {
    if let Some(word) = input.first_chunk::<8>() {
        if let Some(decoded) = decode_word(u64::from_le_bytes(*word)) {
            return Ok(decoded);
        }
    }
    if let [first, ..] = *input {
        // Near the end of the input: one byte holds -64..=63.
        if first < 0x80 {
            return Ok((i64::from(((first << 1) as i8) >> 1), 1));
        }
    }
    decode_slow(input, 64, MAX_LEN_I64)
}

/// A key of 1 or 2 bytes then a value of at most 8 — the pairs of a BLOCK_COUNTER frame — from the first 16
/// bytes of `input`, always inlined: one length check for both, each integer read from one word at a constant
/// offset. Returns the key, the value and the bytes consumed; `None` with fewer than 16 bytes or any longer
/// form, which [`decode_i32`] and [`decode_i64`] then decode or reject.
#[inline(always)]
pub fn decode_short_pair(input: &[u8]) -> Option<(i32, i64, usize)> {
    let head = input.first_chunk::<16>()?;
    let word_at = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(head.get(at..at + 8)?.try_into().ok()?))
    };
    let key_word = word_at(0)?;
    macro_rules! pair_with_key_of {
        ($len:literal) => {{
            // 7 or 14 bits, sign-extended: always within 32 bits.
            let key = decode_known_len(key_word, $len) as i32;
            let (value, value_len) = decode_word(word_at($len)?)?;
            Some((key, value, $len + value_len))
        }};
    }
    if key_word & 0x80 == 0 {
        pair_with_key_of!(1)
    } else if key_word & 0x8000 == 0 {
        pair_with_key_of!(2)
    } else {
        None
    }
}

/// Decodes an integer of at most 8 bytes from the first 8 input bytes, read as one little-endian word; `None`
/// when all 8 have their continuation bit set (a 9- or 10-byte form, left to [`decode_slow`] and its overflow
/// checks).
///
/// The length is found by one branch per byte rather than computed from the bits: a stream repeats its
/// lengths, so the branches are predicted and the next integer's position is known before this one is
/// decoded. Each branch then decodes a constant length.
#[inline(always)]
fn decode_word(word: u64) -> Option<(i64, usize)> {
    macro_rules! ends_at {
        ($($len:literal),+) => {
            $(
                if word & (0x80 << (8 * ($len - 1))) == 0 {
                    return Some((decode_known_len(word, $len), $len));
                }
            )+
        };
    }
    ends_at!(1, 2, 3, 4, 5, 6, 7, 8);
    None
}

/// The continuation bit of each byte of a little-endian word.
const CONTINUATION: u64 = 0x8080_8080_8080_8080;

/// Decodes the integer held by the first `len` bytes (1 to 8) of a little-endian word, whose last byte is known
/// to end it: the bytes above are ignored, and no byte is tested.
#[inline(always)]
pub(crate) fn decode_known_len(word: u64, len: usize) -> i64 {
    debug_assert!((1..=8).contains(&len));
    // Keep the integer's bytes and their 7-bit groups only.
    let mut x = word & (u64::MAX >> (64 - 8 * len)) & !CONTINUATION;
    // Close the gaps between the groups: 8 groups of 7 bits → 56 contiguous bits. For byte pairs, moving the
    // upper byte's group down one bit is subtracting half of it (hi·2^8 − hi·2^7 = hi·2^7).
    x -= (x & 0x7f00_7f00_7f00_7f00) >> 1;
    x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    // Sign-extend from bit 7 × len − 1, the sign bit of the last group.
    let unused = 64 - 7 * len as u32;
    ((x << unused) as i64) >> unused
}

/// Decodes one 32-bit SLEB128 integer from the start of `input`; returns the value and the bytes consumed.
#[inline]
pub fn decode_i32(input: &[u8]) -> Result<(i32, usize), Sleb128Error> {
    if let Some(&first) = input.first() {
        if first < 0x80 {
            return Ok((i32::from(((first << 1) as i8) >> 1), 1));
        }
    }
    // Two bytes (counter keys such as 0x5e): always within 32 bits.
    if let [first, second, ..] = *input {
        if second < 0x80 {
            let mut value = i32::from(first & 0x7f) | i32::from(second) << 7;
            if second & 0x40 != 0 {
                value |= -1 << 14;
            }
            return Ok((value, 2));
        }
    }
    let (value, len) = decode_slow(input, 32, MAX_LEN_I32)?;
    // decode_slow has already checked that the value fits in 32 bits.
    let narrow = i32::try_from(value).map_err(|_| Sleb128Error::Overflow { bits: 32 })?;
    Ok((narrow, len))
}

/// The general decoder for a `bits`-wide integer of at most `max` bytes.
fn decode_slow(input: &[u8], bits: u32, max: usize) -> Result<(i64, usize), Sleb128Error> {
    let mut result: i64 = 0;
    let mut shift: u32 = 0;
    for (index, &byte) in input.iter().enumerate() {
        if index == max {
            return Err(Sleb128Error::Overlong { max });
        }
        let group = i64::from(byte & 0x7f);
        if index + 1 == max {
            // The last allowed byte: only the bits that fit the width, plus a pure sign extension, are legal.
            let room = bits - shift; // 1 for i64 (63), 4 for i32 (28)
            let sign_mask = 0x7fu8 >> room << room; // the bits above the room
            let high = byte & sign_mask;
            let negative = byte & (1 << (room - 1)) != 0;
            if byte & 0x80 != 0 {
                return Err(Sleb128Error::Overlong { max });
            }
            if high != 0 && high != sign_mask {
                return Err(Sleb128Error::Overflow { bits });
            }
            if (high != 0) != negative {
                return Err(Sleb128Error::Overflow { bits });
            }
        }
        result |= group.wrapping_shl(shift);
        shift += 7;
        if byte & 0x80 == 0 {
            if shift < 64 && byte & 0x40 != 0 {
                result |= -1i64 << shift;
            }
            if bits == 32 && i32::try_from(result).is_err() {
                return Err(Sleb128Error::Overflow { bits });
            }
            return Ok((result, index + 1));
        }
    }
    Err(Sleb128Error::Truncated { read: input.len() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_decodes_at_its_edges_with_or_without_trailing_bytes() {
        for len in 1..=MAX_LEN_I64 as u32 {
            // The extreme values of each encoded length: ±2^(7·len − 1), minus one for the maximum.
            let bits = (7 * len).min(64);
            let (min, max) = if bits == 64 {
                (i64::MIN, i64::MAX)
            } else {
                (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
            };
            for value in [min, max, 0x55 << (bits.saturating_sub(8) % 64)] {
                let mut bytes = Vec::new();
                encode_i64(value, &mut bytes);
                let expected = (value, bytes.len());
                assert_eq!(decode_i64(&bytes), Ok(expected), "{value} alone");
                bytes.extend_from_slice(&[0xff; 12]);
                assert_eq!(decode_i64(&bytes), Ok(expected), "{value} with more bytes");
            }
            assert_eq!(encoded_len(min), len.max(1) as usize);
        }
    }

    fn enc(value: i64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_i64(value, &mut out);
        out
    }

    #[test]
    fn table_from_gatord_matches() {
        let table: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (3, &[0x03]),
            (5, &[0x05]),
            (63, &[0x3f]),
            (64, &[0xc0, 0x00]),
            (127, &[0xff, 0x00]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (-1, &[0x7f]),
            (-64, &[0x40]),
            (-65, &[0xbf, 0x7f]),
            (1 << 31, &[0x80, 0x80, 0x80, 0x80, 0x08]),
            (407_871, &[0xbf, 0xf2, 0x18]),
            (24_318_210_048, &[0x80, 0xe0, 0xe9, 0xcb, 0xda, 0x00]),
        ];
        for &(value, bytes) in table {
            assert_eq!(enc(value), bytes, "encoding {value}");
            assert_eq!(
                decode_i64(bytes),
                Ok((value, bytes.len())),
                "decoding {value}"
            );
            assert_eq!(encoded_len(value), bytes.len(), "length of {value}");
        }
    }

    #[test]
    fn extremes_round_trip() {
        for value in [
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
            i64::MAX - 1,
            i32::MIN as i64,
            i32::MAX as i64,
        ] {
            let bytes = enc(value);
            assert!(bytes.len() <= MAX_LEN_I64);
            assert_eq!(decode_i64(&bytes), Ok((value, bytes.len())));
        }
        for value in [i32::MIN, i32::MAX, 0, -1] {
            let mut bytes = Vec::new();
            encode_i32(value, &mut bytes);
            assert!(bytes.len() <= MAX_LEN_I32);
            assert_eq!(decode_i32(&bytes), Ok((value, bytes.len())));
        }
    }

    #[test]
    fn window_path_matches_the_general_decoder() {
        for value in [
            0i64,
            1,
            -1,
            63,
            64,
            -65,
            300,
            1 << 20,
            -(1 << 40),
            1 << 55,
            -(1 << 55),
            i64::MAX,
            i64::MIN,
        ] {
            let mut bytes = enc(value);
            let len = bytes.len();
            bytes.resize(len + 12, 0x55);
            assert_eq!(decode_i64(&bytes), Ok((value, len)), "{value}");
            assert_eq!(
                decode_slow(&bytes, 64, MAX_LEN_I64),
                Ok((value, len)),
                "{value}"
            );
        }
    }

    #[test]
    fn empty_and_truncated_inputs_are_errors() {
        assert_eq!(decode_i64(&[]), Err(Sleb128Error::Truncated { read: 0 }));
        assert_eq!(
            decode_i64(&[0x80, 0x80]),
            Err(Sleb128Error::Truncated { read: 2 })
        );
        assert_eq!(
            decode_i32(&[0xff]),
            Err(Sleb128Error::Truncated { read: 1 })
        );
    }

    #[test]
    fn overlong_inputs_are_errors() {
        assert_eq!(
            decode_i64(&[0x80; 11]),
            Err(Sleb128Error::Overlong { max: 10 })
        );
        assert_eq!(
            decode_i64(&[0x80; 10]),
            Err(Sleb128Error::Overlong { max: 10 })
        );
        assert_eq!(
            decode_i32(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]),
            Err(Sleb128Error::Overlong { max: 5 })
        );
    }

    #[test]
    fn values_too_wide_are_overflow_errors() {
        // 10th byte with more than the sign bit.
        let mut bytes = vec![0x80; 9];
        bytes.push(0x02);
        assert_eq!(decode_i64(&bytes), Err(Sleb128Error::Overflow { bits: 64 }));
        // i32: 2^32 does not fit.
        assert_eq!(
            decode_i32(&[0x80, 0x80, 0x80, 0x80, 0x10]),
            Err(Sleb128Error::Overflow { bits: 32 })
        );
        // i32: the 5-byte form of 2^31 (a u32 sent through packInt64) is not an i32.
        assert_eq!(
            decode_i32(&[0x80, 0x80, 0x80, 0x80, 0x08]),
            Err(Sleb128Error::Overflow { bits: 32 })
        );
    }

    #[test]
    fn a_u32_cast_to_i32_comes_back_negative() {
        let mut bytes = Vec::new();
        encode_i32(0xdead_beef_u32 as i32, &mut bytes);
        assert_eq!(bytes.len(), 5);
        let (value, _) = decode_i32(&bytes).unwrap();
        assert_eq!(value as u32, 0xdead_beef);
    }

    proptest::proptest! {
        /// The word decoder (one load, a predicted branch per byte) agrees with the byte-by-byte one on any bytes,
        /// malformed ones included, with or without bytes after the integer.
        #[test]
        fn fast_paths_agree_with_the_byte_loop(input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..14)) {
            proptest::prop_assert_eq!(decode_i64(&input), decode_slow(&input, 64, MAX_LEN_I64));
            let narrow = decode_slow(&input, 32, MAX_LEN_I32).map(|(value, len)| (value as i32, len));
            proptest::prop_assert_eq!(decode_i32(&input), narrow);
        }

        /// The BLOCK_COUNTER pair path reads what the two decoders read, whenever it reads anything, and reads
        /// every short key followed by a value of up to 8 bytes when 16 bytes are there.
        #[test]
        fn short_pairs_agree_with_the_two_decoders(input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..24)) {
            let both = decode_i32(&input).ok().and_then(|(key, key_len)| {
                let (value, value_len) = decode_i64(&input[key_len..]).ok()?;
                Some((key, value, key_len + value_len, key_len, value_len))
            });
            match decode_short_pair(&input) {
                Some(pair) => {
                    let (key, value, len, ..) = both.expect("the decoders read the pair too");
                    proptest::prop_assert_eq!(pair, (key, value, len));
                }
                None => proptest::prop_assert!(
                    input.len() < 16 || both.is_none_or(|(.., key_len, value_len)| key_len > 2 || value_len > 8)
                ),
            }
        }

        /// Every encoded value decodes through the word path, whatever follows it.
        #[test]
        fn encoded_values_decode_before_any_tail(
            value in proptest::prelude::any::<i64>(),
            shift in 0u32..64,
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..10),
        ) {
            let value = value >> shift;
            let mut bytes = Vec::new();
            encode_i64(value, &mut bytes);
            let len = bytes.len();
            bytes.extend_from_slice(&tail);
            proptest::prop_assert_eq!(decode_i64(&bytes), Ok((value, len)));
            proptest::prop_assert_eq!(decode_i64(&bytes), decode_slow(&bytes, 64, MAX_LEN_I64));
        }
    }
}
