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

/// KeyStone II's STM trace ID in TWP frames.
pub const KEYSTONE_ID: u8 = 0x40;
/// The timestamp clock of [`keystone_dump`]'s FREQ packets.
pub const KEYSTONE_HZ: u64 = 250_000_000;

/// The format strings [`keystone_dump`]'s printf messages point at, as the target's ELF would hold them.
pub fn keystone_strings() -> stp_decode::message::StringTable {
    let mut t = stp_decode::message::StringTable::default();
    t.insert(0x0080_1000, "frame %u start");
    t.insert(0x0080_1020, "frame %u end, %d us late");
    t.insert(0x0080_1040, "dma %x: %llu bytes");
    t
}

/// A generated KeyStone II dump of at least `min_bytes`: DSP0–7 sending STMLib printf messages (one to
/// three arguments, one of them 64-bit) and Arm0–3 putMsg lines, on four channels each, each message's last
/// word a D32MTS with a 4-nibble timestamp update; ASYNC, VERSION and FREQ every 256 messages (master and
/// channel sent again after them); the STP stream in TWP frames on ID 0x40 with an ID change every 8
/// frames, as a TBR holds it. One segment of 4,096 messages is built and repeated.
pub fn keystone_dump(min_bytes: usize) -> Vec<u8> {
    use stp_decode::encoder::StpEncoder;
    use stp_decode::stmlib::{message_words, Protocol};
    use stp_decode::{DataWidth, IdWidth, Timestamp};
    let mut e = StpEncoder::new();
    let mut ts = 0u64;
    let (mut master, mut channel) = (None, None);
    for i in 0..4096u32 {
        if i % 256 == 0 {
            e.async_packet();
            e.packet(&PacketKind::Version { version: 3 })
                .expect("valid");
            e.packet(&PacketKind::Frequency {
                wide: false,
                hz: KEYSTONE_HZ,
                ts: None,
            })
            .expect("valid");
            (master, channel) = (None, None);
        }
        let m = (i % 12) as u16;
        let c = ((i / 12) % 4) as u16;
        let words = if m < 8 {
            let (address, args): (u32, Vec<u32>) = match (i / 12) % 3 {
                0 => (0x0080_1000, vec![i]),
                1 => (0x0080_1020, vec![i, i % 7]),
                _ => (0x0080_1040, vec![0x1000 + i, 0, 4096 * i]),
            };
            let mut payload = address.to_le_bytes().to_vec();
            payload.extend(args.iter().flat_map(|a| a.to_le_bytes()));
            message_words(Protocol::Printf, &payload)
        } else {
            message_words(
                Protocol::PutMsg,
                format!("arm {} tick {i}", m - 8).as_bytes(),
            )
        };
        if master != Some(m) {
            e.packet(&PacketKind::Master {
                width: IdWidth::W8,
                master: m,
            })
            .expect("valid");
            (master, channel) = (Some(m), None);
        }
        if channel != Some(c) {
            e.packet(&PacketKind::Channel {
                width: IdWidth::W8,
                channel: c,
            })
            .expect("valid");
            channel = Some(c);
        }
        for (k, &w) in words.iter().enumerate() {
            let last = k + 1 == words.len();
            ts += 40;
            e.packet(&PacketKind::Data {
                width: DataWidth::W32,
                value: w.into(),
                marker: last,
                ts: last.then_some(Timestamp {
                    nibbles: 4,
                    update: ts & 0xFFFF,
                    absolute: None,
                }),
            })
            .expect("valid");
        }
    }
    let segment = e.finish().nibbles();
    let mut writer = NibbleWriter::new();
    while writer.nibble_len() < 2 * min_bytes as u64 || writer.nibble_len() % 2 == 1 {
        segment.iter().for_each(|&n| writer.push(n));
    }
    let stream: Vec<u8> = writer
        .into_bytes()
        .into_iter()
        .chain(stream_async())
        .collect();
    let mut buffer = Vec::with_capacity(stream.len() * 16 / 15 + 16);
    for piece in stream.chunks(119) {
        format_frames(KEYSTONE_ID, piece, &mut buffer).expect("valid trace ID");
    }
    buffer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replicated_stream_and_buffer_decode_cleanly() {
        if test_data::path("opencsd-stm").is_none() {
            return;
        }
        let stream = clean_stream(64 << 10);
        assert!(stream.len() >= 64 << 10);
        let packets = check_clean(&stream);
        assert!(packets > 10_000, "{packets} packets");
        assert_eq!(deformat(&clean_buffer(64 << 10), TRACE_ID), stream);
    }

    #[test]
    fn the_whole_snapshot_repeated_is_not_clean() {
        // Not `should_panic`: a skip must not pass as the expected panic.
        if test_data::path("opencsd-stm").is_none() {
            return;
        }
        let panic =
            std::panic::catch_unwind(|| check_clean(&deformat(&resync_buffer(2), TRACE_ID)))
                .expect_err("the whole snapshot repeated decoded cleanly");
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        assert!(message.contains("not clean"), "{message}");
    }
}
