//! Fuzzes the SLEB128 decoders of `gator-proto` with arbitrary bytes: they must never panic, and any value they
//! return must survive an encode/decode round trip with the same length or shorter (canonical) encoding, and
//! equal what a plain byte-by-byte decoder reads from the same bytes.
#![no_main]

use gator_proto::sleb128;
use libfuzzer_sys::fuzz_target;

/// The textbook decoder: 7 bits per byte, least significant first, sign from bit 6 of the last byte.
fn reference(bytes: &[u8]) -> i64 {
    let mut value: i64 = 0;
    let mut shift = 0u32;
    for &byte in bytes {
        if shift < 64 {
            value |= i64::from(byte & 0x7f) << shift;
        }
        shift += 7;
    }
    if shift < 64 && bytes.last().is_some_and(|&last| last & 0x40 != 0) {
        value |= -1i64 << shift;
    }
    value
}

fuzz_target!(|data: &[u8]| {
    if let Ok((value, used)) = sleb128::decode_i64(data) {
        assert!(used >= 1 && used <= sleb128::MAX_LEN_I64 && used <= data.len());
        assert_eq!(value, reference(&data[..used]));
        let mut out = Vec::new();
        sleb128::encode_i64(value, &mut out);
        assert!(out.len() <= used);
        assert_eq!(sleb128::decode_i64(&out), Ok((value, out.len())));
    }
    if let Ok((value, used)) = sleb128::decode_i32(data) {
        assert!(used >= 1 && used <= sleb128::MAX_LEN_I32 && used <= data.len());
        let mut out = Vec::new();
        sleb128::encode_i32(value, &mut out);
        assert!(out.len() <= used);
        assert_eq!(sleb128::decode_i32(&out), Ok((value, out.len())));
        // Every i32 is also a valid i64 of the same value.
        assert_eq!(
            sleb128::decode_i64(&data[..used]).map(|(v, n)| (v, n)),
            Ok((i64::from(value), used))
        );
    }
});
