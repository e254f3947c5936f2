//! Fuzzes the `stp-decode` CoreSight frame demultiplexer and the whole-buffer dump with arbitrary bytes (the
//! first byte picks the trace ID, the framing and the split): no panic, the same frames however the input
//! is split, at most 15 data bytes per frame and never ID 0x00 or 0x7F, a dump that always ends, the same
//! records from the streaming dumper fed in chunks, and an elements-only dump that is the full dump's
//! element records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stp_decode::deformat::{decode_frame, Deformatter, FrameMode, FRAME_LEN};
use stp_decode::dump::{dump, DumpOptions, Dumper, Framing, Item, Record};

fuzz_target!(|data: &[u8]| {
    let Some((&control, buffer)) = data.split_first() else {
        return;
    };
    let mode = if control & 0x80 != 0 {
        FrameMode::Tpiu
    } else {
        FrameMode::Memory
    };

    let mut whole = Deformatter::new(mode);
    let reference: Vec<_> = whole.feed(buffer).collect();
    for frame in reference.iter().flatten() {
        assert!(frame.bytes.as_slice().len() < FRAME_LEN);
        assert!(frame
            .bytes
            .iter()
            .all(|b| b.id != 0 && b.id != 0x7F && b.index < 15));
    }

    let step = usize::from(control & 0x0F) + 1;
    let mut split = Deformatter::new(mode);
    let mut frames = Vec::new();
    for chunk in buffer.chunks(step) {
        frames.extend(split.feed(chunk));
    }
    assert_eq!(frames, reference);

    if mode == FrameMode::Memory {
        let mut id = None;
        let direct: Vec<_> = buffer
            .chunks_exact(FRAME_LEN)
            .map(|c| decode_frame(c.try_into().unwrap(), &mut id))
            .collect();
        assert_eq!(direct.len(), reference.len());
        for (d, r) in direct.iter().zip(&reference) {
            assert_eq!(d.as_ref().ok(), r.as_ref().ok().map(|f| &f.bytes));
        }
    }

    let trace_id = control & 0x7F;
    let mut options = DumpOptions::formatted(trace_id);
    options.framing = if control & 0x40 != 0 {
        Framing::Raw
    } else {
        Framing::Formatted(mode)
    };
    let mut ended = false;
    let records: Vec<Record> = dump(buffer, options).collect();
    for record in &records {
        assert!(!ended, "nothing after the end of trace");
        ended = matches!(record.item, Item::EndOfTrace);
        let _ = record.to_string();
    }
    assert!(ended);

    // The streaming dumper, fed in chunks of `step` bytes, gives the same records.
    let mut dumper = Dumper::new(options);
    let mut chunked = Vec::new();
    for chunk in buffer.chunks(step) {
        chunked.extend(dumper.feed(chunk));
    }
    chunked.extend(dumper.finish());
    assert_eq!(chunked, records);

    // Elements only: exactly the element records of the full dump.
    let elements: Vec<Record> = dump(buffer, options.elements()).collect();
    let want: Vec<Record> = records
        .into_iter()
        .filter(|r| matches!(r.item, Item::Element(_)))
        .collect();
    assert_eq!(elements, want);
});
