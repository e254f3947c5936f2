//! STM inputs from OpenCSD's `stm_only` snapshot (`shared/data/opencsd-stm/stm_only/cstraceitm.bin`, a
//! 32 KiB CoreSight ETB buffer with the STM on trace ID 0x20).
//!
//! - [`clean_stream`]: the snapshot's STP stream from its first ASYNC up to its last ASYNC, replicated
//!   nibble for nibble until it reaches the wanted size. Every copy ends where an ASYNC begins, so the
//!   replicated stream decodes without a single error or skipped nibble ([`check_clean`]).
//! - [`clean_buffer`]: that stream formatted back into 16-byte frames on ID 0x20, for the full pipeline.
//! - [`resync_buffer`]: the snapshot copied whole, back to back. Each copy boundary cuts a packet and
//!   starts unsynchronised data, so this input measures error reporting and ASYNC hunting.

use stp_decode::deformat::{Deformatter, FrameMode};
use stp_decode::encoder::NibbleWriter;
use stp_decode::formatter::format_frames;
use stp_decode::{Event, PacketKind, StpDecoder};

/// Trace ID of the STM in the snapshot (`STMTCSR` 0x00A00007).
pub const TRACE_ID: u8 = 0x20;

/// The snapshot's formatted bytes.
pub fn snapshot() -> Vec<u8> {
    std::fs::read(crate::data_dir().join("opencsd-stm/stm_only/cstraceitm.bin"))
        .expect("stm_only snapshot in ../shared/data")
}

/// The trace ID's bytes of a formatted buffer.
pub fn deformat(buffer: &[u8], id: u8) -> Vec<u8> {
    let mut stream = Vec::new();
    for frame in Deformatter::new(FrameMode::Memory).feed(buffer).flatten() {
        stream.extend(frame.bytes.iter().filter(|b| b.id == id).map(|b| b.byte));
    }
    stream
}

fn nibbles(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().flat_map(|&b| [b & 0xF, b >> 4]).collect()
}

/// The snapshot's STP stream replicated from ASYNC to ASYNC to at least `min_bytes` bytes.
pub fn clean_stream(min_bytes: usize) -> Vec<u8> {
    let stream = deformat(&snapshot(), TRACE_ID);
    let mut decoder = StpDecoder::new();
    let asyncs: Vec<u64> = decoder
        .feed(&stream)
        .filter_map(|e| match e {
            Event::Packet(p) if p.kind == PacketKind::Async => Some(p.offset),
            _ => None,
        })
        .collect();
    let (first, last) = match asyncs.as_slice() {
        [first, .., last] => (*first as usize, *last as usize),
        _ => panic!("stm_only has several ASYNCs"),
    };
    let all = nibbles(&stream);
    let segment = &all[first..last];
    let mut writer = NibbleWriter::new();
    // Whole copies, an even number of nibbles in all, so that no padding nibble is added.
    while writer.nibble_len() < 2 * min_bytes as u64 || writer.nibble_len() % 2 == 1 {
        segment.iter().for_each(|&n| writer.push(n));
    }
    // The last copy is followed by the ASYNC that ended the segment, closing its last packet.
    writer
        .into_bytes()
        .into_iter()
        .chain(stream_async())
        .collect()
}

/// A byte-aligned ASYNC (21 `F` nibbles and a `0`) and a `0` (NULL) to fill its byte.
fn stream_async() -> [u8; 11] {
    let mut bytes = [0xFF; 11];
    bytes[10] = 0x0F;
    bytes
}

/// [`clean_stream`] formatted on [`TRACE_ID`].
pub fn clean_buffer(min_bytes: usize) -> Vec<u8> {
    let mut buffer = Vec::new();
    format_frames(TRACE_ID, &clean_stream(min_bytes), &mut buffer).expect("valid trace ID");
    buffer
}

/// The snapshot repeated `copies` times.
pub fn resync_buffer(copies: usize) -> Vec<u8> {
    snapshot().repeat(copies)
}

/// Panics unless `stream` decodes without errors or skipped nibbles after its first ASYNC; returns the
/// number of packets.
pub fn check_clean(stream: &[u8]) -> usize {
    let mut decoder = StpDecoder::new();
    let mut events: Vec<Event> = decoder.feed(stream).collect();
    events.extend(decoder.finish());
    for event in &events {
        assert!(
            matches!(event, Event::Packet(_)),
            "replicated stream is not clean: {event:?}"
        );
    }
    events.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replicated_stream_and_buffer_decode_cleanly() {
        if !crate::data_dir().join("opencsd-stm").is_dir() {
            eprintln!("skipped: no ../shared/data/opencsd-stm");
            return;
        }
        let stream = clean_stream(64 << 10);
        assert!(stream.len() >= 64 << 10);
        let packets = check_clean(&stream);
        assert!(packets > 10_000, "{packets} packets");
        assert_eq!(deformat(&clean_buffer(64 << 10), TRACE_ID), stream);
    }

    #[test]
    #[should_panic(expected = "not clean")]
    fn the_whole_snapshot_repeated_is_not_clean() {
        if !crate::data_dir().join("opencsd-stm").is_dir() {
            panic!("not clean (skipped: no ../shared/data/opencsd-stm)");
        }
        check_clean(&deformat(&resync_buffer(2), TRACE_ID));
    }
}
