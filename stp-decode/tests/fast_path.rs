//! The decoder's whole-packet fast path (taken for byte input, `StpDecoder::feed`) against the plain
//! nibble state machine (`StpDecoder::feed_nibbles`, which never takes it): on synchronised streams of
//! arbitrary nibbles, of encoded packets with runs of `F` and `0` nibbles thrown in (ASYNCs inside packets,
//! `F`s at packet ends), and of encoded packets with nibbles changed, in every timestamp format and split
//! at any byte, both give the same events.
//! Needs the `alloc` feature (default).
#![cfg(feature = "alloc")]

use proptest::prelude::*;
use stp_decode::encoder::StpEncoder;
use stp_decode::{DataWidth, Event, IdWidth, PacketKind, StpDecoder, Timestamp};

/// ASYNC then VERSION `version` (1 legacy, 3 natural, 4 Gray, 2 natural delta; others are errors).
fn sync(version: u8) -> Vec<u8> {
    let mut n = vec![0xF; 21];
    n.extend([0x0, 0xF, 0x0, 0x0, version & 0xF]);
    n
}

/// Decodes nibbles packed into bytes (`feed`, split at `cut`), and nibble by nibble (`feed_nibbles`).
fn both_ways(nibbles: &[u8], cut: usize) -> (Vec<Event>, Vec<Event>) {
    let mut nibbles = nibbles.to_vec();
    if nibbles.len() % 2 == 1 {
        nibbles.push(0);
    }
    let bytes: Vec<u8> = nibbles.chunks(2).map(|p| p[0] | (p[1] << 4)).collect();
    let cut = cut.min(bytes.len());
    let mut fast = StpDecoder::new();
    let mut by_bytes: Vec<Event> = fast.feed(&bytes[..cut]).collect();
    by_bytes.extend(fast.feed(&bytes[cut..]));
    by_bytes.extend(fast.finish());
    let mut slow = StpDecoder::new();
    let mut by_nibbles: Vec<Event> = slow.feed_nibbles(&nibbles).collect();
    by_nibbles.extend(slow.finish());
    (by_bytes, by_nibbles)
}

fn data_packet() -> impl Strategy<Value = PacketKind> {
    (
        prop::sample::select(DataWidth::ALL.to_vec()),
        any::<u64>(),
        any::<bool>(),
        prop::option::of((prop_oneof![0u8..=12, Just(14u8), Just(16u8)], any::<u64>())),
        any::<bool>(),
    )
        .prop_map(|(width, v, marker, ts, all_f)| PacketKind::Data {
            width,
            value: if all_f {
                width.mask()
            } else {
                v & width.mask()
            },
            marker,
            ts: ts.map(|(nibbles, v)| Timestamp {
                nibbles,
                update: v & stp_decode::timestamp::low_mask(nibbles),
                absolute: None,
            }),
        })
}

/// A piece of a stream: a packet, or a run of `F`s and possibly a `0` (an ASYNC when 21 or more `F`s).
#[derive(Debug, Clone)]
enum Piece {
    Packet(PacketKind),
    Run { fs: usize, zero: bool },
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => data_packet().prop_map(Piece::Packet),
        1 => (any::<u16>(), any::<bool>()).prop_map(|(v, m)| Piece::Packet(if m {
            PacketKind::Master { width: IdWidth::W16, master: v }
        } else {
            PacketKind::Channel { width: IdWidth::W8, channel: v & 0xFF }
        })),
        1 => Just(Piece::Packet(PacketKind::Flag { ts: None })),
        1 => (any::<u64>(), any::<bool>()).prop_map(|(hz, wide)| Piece::Packet(PacketKind::Frequency {
            wide,
            hz: if wide { hz & 0xFF_FFFF_FFFF } else { hz & 0xFFFF_FFFF },
            ts: None,
        })),
        1 => (0usize..30, any::<bool>()).prop_map(|(fs, zero)| Piece::Run { fs, zero }),
    ]
}

/// Encodes `pieces` after ASYNC and VERSION `version`; timestamps are dropped where the format is legacy.
fn stream(version: u8, pieces: &[Piece]) -> Vec<u8> {
    let mut e = StpEncoder::new();
    e.async_packet();
    e.packet(&PacketKind::Version { version }).unwrap();
    let mut nibbles = e.writer().nibbles();
    for piece in pieces {
        match piece {
            Piece::Packet(kind) => {
                let mut one = StpEncoder::new();
                one.packet(&PacketKind::Version { version }).unwrap();
                let skip = one.writer().nibble_len() as usize;
                let mut kind = *kind;
                if version == 1 {
                    if let PacketKind::Data { ts: Some(ts), .. } = &mut kind {
                        ts.nibbles = 2;
                        ts.update &= 0xFF;
                    }
                }
                one.packet(&kind).unwrap();
                nibbles.extend(&one.writer().nibbles()[skip..]);
            }
            Piece::Run { fs, zero } => {
                nibbles.extend(std::iter::repeat_n(0xF, *fs));
                if *zero {
                    nibbles.push(0);
                }
            }
        }
    }
    nibbles
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_nibbles_after_sync(
        version in prop::sample::select(vec![1u8, 2, 3, 4, 7]),
        body in prop::collection::vec(0u8..16, 0..300),
        cut in 0usize..200,
    ) {
        let mut nibbles = sync(version);
        nibbles.extend(body);
        let (fast, slow) = both_ways(&nibbles, cut);
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn packets_with_f_runs_and_asyncs(
        version in prop::sample::select(vec![1u8, 2, 3, 4]),
        pieces in prop::collection::vec(piece(), 0..40),
        cut in 0usize..400,
    ) {
        let (fast, slow) = both_ways(&stream(version, &pieces), cut);
        prop_assert_eq!(fast, slow);
    }

    #[test]
    fn packets_with_changed_nibbles(
        version in prop::sample::select(vec![1u8, 3, 4]),
        pieces in prop::collection::vec(piece(), 0..40),
        changes in prop::collection::vec((any::<prop::sample::Index>(), 0u8..16), 1..6),
        cut in 0usize..400,
    ) {
        let mut nibbles = stream(version, &pieces);
        for (at, value) in changes {
            let i = at.index(nibbles.len());
            nibbles[i] = value;
        }
        let (fast, slow) = both_ways(&nibbles, cut);
        prop_assert_eq!(fast, slow);
    }
}

#[test]
fn byte_and_nibble_feeding_agree_on_real_data() {
    // OpenCSD's stm_only snapshot (`../shared/data/opencsd-stm/`, BSD-3-Clause) through the deformatter:
    // byte and nibble feeding agree on its 6,300 packets, whatever the split.
    let Some(buffer) = test_data::bytes("opencsd-stm/stm_only/cstraceitm.bin") else {
        return;
    };
    let mut stream = Vec::new();
    for frame in stp_decode::deformat::Deformatter::new(stp_decode::deformat::FrameMode::Memory)
        .feed(&buffer)
        .flatten()
    {
        stream.extend(frame.bytes.iter().filter(|b| b.id == 0x20).map(|b| b.byte));
    }
    let nibbles: Vec<u8> = stream.iter().flat_map(|b| [b & 0xF, b >> 4]).collect();
    for cut in [0, 1, 4095, stream.len()] {
        let (fast, slow) = both_ways(&nibbles, cut);
        assert!(fast.len() > 6_000, "{} events", fast.len());
        assert_eq!(fast, slow, "cut at {cut}");
    }
}
