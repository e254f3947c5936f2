//! Fuzzes the `stp-decode` STP nibble decoder with arbitrary bytes (the first byte picks how the rest is split
//! into calls, and whether an ASYNC and a VERSION go first so that the rest is decoded in sync): it must
//! never panic, must give the same events fed as bytes (the whole-packet fast path) as fed nibble by nibble
//! in any split (the state machine alone), must keep every packet inside the input, and every packet it
//! reports must re-encode to exactly the nibbles it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stp_decode::encoder::StpEncoder;
use stp_decode::{ElementDecoder, Event, StpDecoder};

fn decode_whole(bytes: &[u8]) -> Vec<Event> {
    let mut d = StpDecoder::new();
    let mut out: Vec<Event> = d.feed(bytes).collect();
    out.extend(d.finish());
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, rest)) = data.split_first() else {
        return;
    };
    let mut synced = Vec::new();
    let stream = if step & 0x80 != 0 {
        // ASYNC (FF x10, 0F), VERSION: F0 0 and the version from the high bits of `step`.
        synced.extend([0xFF; 10]);
        synced.extend([0x0F, 0x0F, (step & 0x30) | 0x10]);
        synced.extend(rest);
        &synced[..]
    } else {
        rest
    };
    let whole = decode_whole(stream);

    // Split into calls of `step % 7 + 1` nibbles.
    let nibbles: Vec<u8> = stream.iter().flat_map(|b| [b & 0xF, b >> 4]).collect();
    let mut d = StpDecoder::new();
    let mut split = Vec::new();
    for chunk in nibbles.chunks(usize::from(step % 7) + 1) {
        split.extend(d.feed_nibbles(chunk));
    }
    split.extend(d.finish());
    assert_eq!(split, whole);

    let mut encoder = StpEncoder::new();
    let mut elements = ElementDecoder::new();
    for event in &whole {
        elements.on_event(event);
        match event {
            Event::Packet(p) => {
                let start = p.offset as usize;
                let end = start + usize::from(p.nibbles);
                assert!(end <= nibbles.len());
                assert!(p.nibbles <= 39);
                let before = encoder.writer().nibble_len() as usize;
                encoder
                    .packet(&p.kind)
                    .expect("decoded packets are encodable");
                let written = encoder.writer().nibbles();
                assert_eq!(&written[before..], &nibbles[start..end], "{p:?}");
            }
            Event::Error(e) => assert!((e.offset as usize) < nibbles.len()),
            Event::Unsynced(u) => assert!((u.offset + u.nibbles) as usize <= nibbles.len()),
        }
    }
});
