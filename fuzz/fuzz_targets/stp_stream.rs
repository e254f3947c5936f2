//! Fuzzes the `stp-decode` STP nibble decoder with arbitrary bytes (the first byte picks how the rest is split
//! into calls): it must never panic, must give the same events however the input is split, must keep every
//! packet inside the input, and every packet it reports must re-encode to exactly the nibbles it came from.
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
    let Some((&step, stream)) = data.split_first() else {
        return;
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
