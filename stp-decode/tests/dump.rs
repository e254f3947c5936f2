//! The whole-buffer entry point (`stp_decode::dump`) on the real Arm Juno ETB buffer from OpenCSD's
//! `stm_only-juno` snapshot (`../shared/data/opencsd-stm/`, BSD-3-Clause): memory-aligned frames, the same
//! frames re-wrapped as a TPIU capture (FSYNC/HSYNC added here), the STM stream extracted raw, and a
//! buffer built here that interleaves two trace IDs.

use stp_decode::deformat::{Deformatter, FrameMode, FRAME_LEN};
use stp_decode::dump::{dump, DumpOptions, Dumper, Field, Framing, Item, Record};
use stp_decode::{FrameError, PacketKind};

/// Whether OpenCSD's snapshots are there (a printed skip when they are not).
fn present() -> bool {
    test_data::path("opencsd-stm").is_some()
}

fn opencsd_stm() -> std::path::PathBuf {
    test_data::root().join("opencsd-stm")
}

fn juno() -> Vec<u8> {
    std::fs::read(opencsd_stm().join("stm_only-juno/cstraceitm.bin")).unwrap()
}

/// Packet and element items up to the first frame error, without offsets.
fn items(records: impl Iterator<Item = Record>) -> Vec<Item> {
    records
        .map(|r| r.item)
        .take_while(|i| !matches!(i, Item::FrameError(_)))
        .filter(|i| matches!(i, Item::Packet(_) | Item::Element(_)))
        .collect()
}

#[test]
fn juno_frame_error_is_reported_and_decoding_goes_on() {
    if !present() {
        return;
    }
    let buffer = juno();
    let records: Vec<Record> = dump(&buffer, DumpOptions::formatted(0x20)).collect();
    let (at, err) = records
        .iter()
        .enumerate()
        .find_map(|(i, r)| match r.item {
            Item::FrameError(e) => Some((i, e)),
            _ => None,
        })
        .expect("stale ETB memory holds a frame with ID 0x7F");
    assert_eq!(err.offset, 0x2b0);
    assert_eq!(err.error, FrameError::ReservedId { index: 2 });
    assert_eq!(records[at].offset, Some(0x2b0));
    assert!(matches!(records.last().unwrap().item, Item::EndOfTrace));
    let data = records[..at]
        .iter()
        .filter(|r| matches!(r.item, Item::Element(_)))
        .count();
    assert_eq!(data, 41, "41 D32M messages before the stale memory");
}

#[test]
fn offsets_point_at_the_byte_holding_the_first_nibble() {
    if !present() {
        return;
    }
    let buffer = juno();
    let records: Vec<Record> = dump(&buffer, DumpOptions::formatted(0x20))
        .take(6)
        .collect();
    // ASYNC at 1 (frame byte 0 is the ID), VERSION at 12, M8 at 14, the first D32M starts in the high
    // nibble of byte 16 (OpenCSD lists it at 17), the C8 after it in the high nibble of byte 21.
    let offsets: Vec<Option<u64>> = records.iter().map(|r| r.offset).collect();
    assert_eq!(
        offsets,
        [Some(1), Some(12), Some(14), Some(16), Some(16), Some(21)]
    );
    assert!(
        matches!(records[3].item, Item::Packet(p) if matches!(p.kind, PacketKind::Data { value: 0x1000_0000, .. }))
    );
}

#[test]
fn tpiu_capture_decodes_like_the_etb_buffer() {
    if !present() {
        return;
    }
    let buffer = juno();
    let mut tpiu = Vec::new();
    for (i, frame) in buffer.chunks(FRAME_LEN).enumerate() {
        if i % 4 == 0 {
            tpiu.extend([0xFF, 0xFF, 0xFF, 0x7F]);
        }
        tpiu.extend(&frame[..6]);
        if i % 3 == 0 {
            tpiu.extend([0xFF, 0x7F]); // HSYNC at frame position 6
        }
        tpiu.extend(&frame[6..]);
    }
    tpiu.splice(0..0, [0x00, 0x12, 0xFF]); // capture starts unaligned
    let mut options = DumpOptions::formatted(0x20);
    options.framing = Framing::Formatted(FrameMode::Tpiu);
    let want = items(dump(&buffer, DumpOptions::formatted(0x20)));
    let got = items(dump(&tpiu, options));
    assert!(want.len() > 150);
    assert_eq!(got, want);
}

#[test]
fn raw_stream_decodes_like_the_formatted_buffer() {
    if !present() {
        return;
    }
    let buffer = juno();
    let mut raw = Vec::new();
    let mut d = Deformatter::new(FrameMode::Memory);
    for frame in d.feed(&buffer) {
        let Ok(frame) = frame else { break };
        raw.extend(frame.bytes.iter().filter(|b| b.id == 0x20).map(|b| b.byte));
    }
    let want = items(dump(&buffer, DumpOptions::formatted(0x20)));
    let got = items(dump(&raw, DumpOptions::raw()));
    assert_eq!(got, want);
    let first = dump(&raw, DumpOptions::raw()).next().unwrap();
    assert_eq!(first.offset, Some(0), "raw offsets are stream offsets");
}

/// Builds memory-aligned frames: each frame switches to `id` and carries up to 14 bytes of it.
fn frames_for(chunks: &[(u8, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(id, bytes) in chunks {
        for part in bytes.chunks(14) {
            let mut frame = [0u8; 16];
            frame[0] = (id << 1) | 1;
            let mut aux = 0u8;
            for (i, &b) in part.iter().enumerate() {
                let pos = i + 1;
                if pos % 2 == 0 {
                    frame[pos] = b & !1;
                    aux |= (b & 1) << (pos / 2);
                } else {
                    frame[pos] = b;
                }
            }
            // Pad a short part with ID 0 (null source) data.
            if part.len() < 14 {
                let pos = part.len() + 1;
                if pos % 2 == 0 {
                    frame[pos] = 0x01;
                } else {
                    frame[pos] = 0;
                    frame[pos + 1] = 0x01;
                }
            }
            frame[15] = aux;
            out.extend(frame);
        }
    }
    out
}

#[test]
fn interleaved_trace_ids_are_separated() {
    // Two STMs: ID 0x10 sends M8 0x41 D8 0x5A, ID 0x11 sends M8 0x07 D8 0xC3 (both after ASYNC, VERSION 3).
    let sync: Vec<u8> = [0xFF; 10].into_iter().chain([0x0F, 0x0F, 0x30]).collect();
    let a: &[u8] = &[0x41, 0x41, 0xA5];
    let b: &[u8] = &[0x01, 0x47, 0x3C];
    let buffer = frames_for(&[(0x10, &sync), (0x11, &sync), (0x10, a), (0x11, b)]);
    for (id, master, value) in [(0x10u8, 0x41u16, 0x5Au64), (0x11, 0x07, 0xC3)] {
        let elements: Vec<_> = dump(&buffer, DumpOptions::formatted(id))
            .filter_map(|r| match r.item {
                Item::Element(e) => Some(e),
                Item::DecodeError(e) => panic!("ID {id:#x}: {e}"),
                _ => None,
            })
            .collect();
        assert_eq!(elements.len(), 1, "ID {id:#x}");
        assert_eq!(elements[0].master, Some(master));
        assert!(
            matches!(elements[0].kind, stp_decode::ElementKind::Data { value: v, .. } if v == value)
        );
    }
}

#[test]
fn every_record_kind_prints_and_lists_fields() {
    if !present() {
        return;
    }
    let issue27 = opencsd_stm().join("stm-issue-27/stuck_trace.bin");
    let mut kinds = std::collections::BTreeSet::new();
    let runs = [(juno(), 0x20), (std::fs::read(issue27).unwrap(), 0x10)];
    for record in runs
        .iter()
        .flat_map(|(b, id)| dump(b, DumpOptions::formatted(*id)))
    {
        let line = record.to_string();
        assert!(!line.is_empty());
        let mut fields = Vec::new();
        record.visit_fields(&mut |name, value| fields.push((name, value)));
        assert_eq!(fields[0], ("record", Field::Str(record.kind())));
        kinds.insert(record.kind());
        if let Item::Element(e) = record.item {
            assert_eq!(
                e.master.is_some(),
                fields.iter().any(|(n, _)| *n == "master")
            );
        }
    }
    for kind in [
        "packet",
        "element",
        "frame_error",
        "unsynced",
        "decode_error",
        "end_of_trace",
    ] {
        assert!(kinds.contains(kind), "{kind} missing from {kinds:?}");
    }
}

/// The records of `buffer` fed to a [`Dumper`] in chunks cut at `cuts` (any sizes).
fn chunked(buffer: &[u8], options: DumpOptions, cuts: &[usize]) -> Vec<Record> {
    let mut dumper = Dumper::new(options);
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        let end = (at + cut).min(buffer.len());
        let mut records = dumper.feed(&buffer[at..end]);
        out.extend(records.by_ref());
        assert_eq!(records.consumed(), end - at, "a chunk is consumed whole");
        at = end;
    }
    out.extend(dumper.feed(&buffer[at..]));
    out.extend(dumper.finish());
    out
}

#[test]
fn chunked_feeding_gives_the_records_of_the_whole_buffer() {
    if !present() {
        return;
    }
    // Every OpenCSD snapshot shared with the tests (`../shared/data/opencsd-stm/`, BSD-3-Clause), cut
    // into chunks of 1, 7, 16, 1000 and 4096 bytes.
    let dir = opencsd_stm();
    for (snapshot, id) in [
        ("stm_only-juno/cstraceitm.bin", 0x20),
        ("stm_only/cstraceitm.bin", 0x20),
        ("stm-issue-27/stuck_trace.bin", 0x10),
    ] {
        let buffer = std::fs::read(dir.join(snapshot)).unwrap();
        let whole: Vec<Record> = dump(&buffer, DumpOptions::formatted(id)).collect();
        assert!(whole.len() > 100, "{snapshot}");
        for size in [1, 7, 16, 1000, 4096] {
            let cuts = vec![size; buffer.len() / size + 1];
            assert_eq!(
                chunked(&buffer, DumpOptions::formatted(id), &cuts),
                whole,
                "{snapshot} in chunks of {size}"
            );
        }
        let raw: Vec<Record> = dump(&buffer, DumpOptions::raw()).collect();
        assert_eq!(chunked(&buffer, DumpOptions::raw(), &[5; 20]), raw);

        // Elements only: the element records of the full dump, nothing else, chunked or not.
        let elements: Vec<Record> = whole
            .iter()
            .filter(|r| matches!(r.item, Item::Element(_)))
            .copied()
            .collect();
        let options = DumpOptions::formatted(id).elements();
        assert_eq!(dump(&buffer, options).collect::<Vec<_>>(), elements);
        assert_eq!(chunked(&buffer, options, &[7; 100]), elements);
    }
}

proptest::proptest! {
    #[test]
    fn any_split_of_any_buffer_gives_the_same_records(
        buffer in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
        cuts in proptest::collection::vec(0usize..40, 0..30),
        raw in proptest::prelude::any::<bool>(),
    ) {
        let options = if raw { DumpOptions::raw() } else { DumpOptions::formatted(0x20) };
        let whole: Vec<Record> = dump(&buffer, options).collect();
        proptest::prop_assert_eq!(chunked(&buffer, options, &cuts), whole);
    }
}
