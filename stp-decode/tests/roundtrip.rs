//! Encode → decode properties over synthetic STP streams written by this crate's encoder: every packet type
//! round-trips in every timestamp format, random packet sequences decode identically however the input is
//! split (at any nibble), and every prefix of a valid stream decodes as "partial": a prefix of the full
//! event list, never an error.
//! Needs the `alloc` feature (default).
#![cfg(feature = "alloc")]

use proptest::prelude::*;
use stp_decode::encoder::StpEncoder;
use stp_decode::timestamp::low_mask;
use stp_decode::{
    DataWidth, Event, IdWidth, Packet, PacketKind, PacketType, StpDecoder, Timestamp, TsFormat,
};

fn ts_strategy(legacy: bool) -> BoxedStrategy<Timestamp> {
    if legacy {
        (0u64..256)
            .prop_map(|update| Timestamp {
                nibbles: 2,
                update,
                absolute: None,
            })
            .boxed()
    } else {
        (prop_oneof![0u8..=12, Just(14u8), Just(16u8)], any::<u64>())
            .prop_map(|(nibbles, v)| Timestamp {
                nibbles,
                update: v & low_mask(nibbles),
                absolute: None,
            })
            .boxed()
    }
}

fn width_strategy() -> impl Strategy<Value = DataWidth> {
    prop::sample::select(DataWidth::ALL.to_vec())
}

fn id_width(wide: bool) -> IdWidth {
    if wide {
        IdWidth::W16
    } else {
        IdWidth::W8
    }
}

fn kind_strategy(legacy: bool) -> BoxedStrategy<PacketKind> {
    let ts = move || prop::option::of(ts_strategy(legacy));
    prop_oneof![
        ts().prop_map(|ts| PacketKind::Null { ts }),
        (any::<bool>(), any::<u16>()).prop_map(|(w, m)| PacketKind::Master {
            width: id_width(w),
            master: if w { m } else { m & 0xFF },
        }),
        (any::<bool>(), any::<u16>()).prop_map(|(w, c)| PacketKind::Channel {
            width: id_width(w),
            channel: if w { c } else { c & 0xFF },
        }),
        any::<u8>().prop_map(|value| PacketKind::MasterError { value }),
        any::<u8>().prop_map(|value| PacketKind::GlobalError { value }),
        (width_strategy(), any::<u64>(), any::<bool>(), ts()).prop_map(|(width, v, marker, ts)| {
            PacketKind::Data {
                width,
                value: v & width.mask(),
                marker,
                ts,
            }
        }),
        ts().prop_map(|ts| PacketKind::Flag { ts }),
        (1u8..=16, any::<u64>(), ts()).prop_map(|(nibbles, v, ts)| PacketKind::User {
            nibbles,
            value: v & low_mask(nibbles),
            ts,
        }),
        (
            0u8..16,
            0u8..16,
            prop_oneof![0u8..=12, Just(14u8), Just(16u8)],
            any::<u64>(),
            ts()
        )
            .prop_map(|(clock, version, nibbles, t, ts)| PacketKind::Time {
                clock,
                version,
                nibbles,
                time: t & low_mask(nibbles),
                ts,
            }),
        (any::<u8>(), ts()).prop_map(|(value, ts)| PacketKind::Trigger { value, ts }),
        (any::<bool>(), any::<u64>(), ts()).prop_map(|(wide, hz, ts)| PacketKind::Frequency {
            wide,
            hz: hz & low_mask(if wide { 10 } else { 8 }),
            ts,
        }),
        (any::<u8>(), ts()).prop_map(|(id, ts)| PacketKind::Xsync { id, ts }),
        Just(PacketKind::Async),
    ]
    .boxed()
}

fn ts_mut(kind: &mut PacketKind) -> Option<&mut Option<Timestamp>> {
    match kind {
        PacketKind::Null { ts }
        | PacketKind::Data { ts, .. }
        | PacketKind::Flag { ts }
        | PacketKind::User { ts, .. }
        | PacketKind::Time { ts, .. }
        | PacketKind::Trigger { ts, .. }
        | PacketKind::Frequency { ts, .. }
        | PacketKind::Xsync { ts, .. } => Some(ts),
        _ => None,
    }
}

/// Encodes ASYNC, VERSION `version`, then `kinds`; returns the nibbles and the packets a decoder must
/// report (with offsets, lengths and resolved absolute timestamps).
fn encode(version: u8, kinds: &[PacketKind]) -> (Vec<u8>, Vec<Packet>) {
    let format = TsFormat::from_version(version).unwrap();
    let mut e = StpEncoder::new();
    let mut expected = Vec::new();
    let mut running = 0u64;
    let all = [PacketKind::Async, PacketKind::Version { version }]
        .into_iter()
        .chain(kinds.iter().copied());
    for mut kind in all {
        let offset = e.writer().nibble_len();
        e.packet(&kind).expect("strategy values are encodable");
        if let Some(Some(ts)) = ts_mut(&mut kind) {
            ts.absolute = format.apply(running, ts.nibbles, ts.update);
            if let Some(abs) = ts.absolute {
                running = abs;
            }
        }
        let nibbles = (e.writer().nibble_len() - offset) as u8;
        expected.push(Packet {
            offset,
            nibbles,
            kind,
        });
    }
    (e.finish().nibbles(), expected)
}

fn decode_chunks(nibbles: &[u8], cuts: &[usize]) -> Vec<Event> {
    let mut d = StpDecoder::new();
    let mut out = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&nibbles.len())) {
        let cut = cut.clamp(start, nibbles.len());
        out.extend(d.feed_nibbles(&nibbles[start..cut]));
        start = cut;
    }
    out.extend(d.finish());
    out
}

fn sample(ty: PacketType, ts: Option<Timestamp>) -> PacketKind {
    match ty {
        PacketType::Null | PacketType::NullTs => PacketKind::Null { ts },
        PacketType::M8 | PacketType::M16 => PacketKind::Master {
            width: id_width(ty == PacketType::M16),
            master: 0xAB,
        },
        PacketType::C8 | PacketType::C16 => PacketKind::Channel {
            width: id_width(ty == PacketType::C16),
            channel: 0xCD,
        },
        PacketType::Merr => PacketKind::MasterError { value: 0x12 },
        PacketType::Gerr => PacketKind::GlobalError { value: 0x34 },
        PacketType::Data { width, marker, .. } => PacketKind::Data {
            width,
            value: 0x0123_4567_89AB_CDEF & width.mask(),
            marker,
            ts,
        },
        PacketType::Flag | PacketType::FlagTs => PacketKind::Flag { ts },
        PacketType::User | PacketType::UserTs => PacketKind::User {
            nibbles: 5,
            value: 0xABCDE,
            ts,
        },
        PacketType::Time | PacketType::TimeTs => PacketKind::Time {
            clock: 1,
            version: 2,
            nibbles: 14,
            time: 0x0012_3456_789A_BCDE,
            ts,
        },
        PacketType::Trig | PacketType::TrigTs => PacketKind::Trigger { value: 0x77, ts },
        PacketType::Freq | PacketType::FreqTs => PacketKind::Frequency {
            wide: false,
            hz: 19_200_000,
            ts,
        },
        PacketType::Freq40 | PacketType::Freq40Ts => PacketKind::Frequency {
            wide: true,
            hz: 0xFF_FFFF_FFFF,
            ts,
        },
        PacketType::Xsync | PacketType::XsyncTs => PacketKind::Xsync { id: 0x5A, ts },
        PacketType::Version => PacketKind::Version { version: 3 },
        PacketType::Async => PacketKind::Async,
    }
}

#[test]
fn every_packet_type_round_trips_in_every_format() {
    for version in 1..=4u8 {
        for ty in PacketType::all() {
            let ts = ty.has_timestamp().then_some(Timestamp {
                nibbles: 2,
                update: 0x5A,
                absolute: None,
            });
            let kind = sample(ty, ts);
            assert_eq!(kind.packet_type(), ty);
            let (nibbles, expected) = encode(version, &[kind]);
            let got: Vec<Event> = decode_chunks(&nibbles, &[]);
            let want: Vec<Event> = expected.into_iter().map(Event::Packet).collect();
            assert_eq!(got, want, "{ty} in version {version}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_sequences_round_trip_split_anywhere(
        version in 1u8..=4,
        seed in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        kinds in prop::collection::vec(kind_strategy(false), 0..40),
        legacy_kinds in prop::collection::vec(kind_strategy(true), 0..40),
    ) {
        let kinds = if version == 1 { legacy_kinds } else { kinds };
        let (nibbles, expected) = encode(version, &kinds);
        let want: Vec<Event> = expected.into_iter().map(Event::Packet).collect();
        let mut cuts: Vec<usize> = seed.iter().map(|i| i.index(nibbles.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(decode_chunks(&nibbles, &[]), want.clone());
        prop_assert_eq!(decode_chunks(&nibbles, &cuts), want);
    }

    #[test]
    fn every_prefix_is_partial(
        version in 2u8..=4,
        kinds in prop::collection::vec(kind_strategy(false), 0..10),
    ) {
        let (nibbles, expected) = encode(version, &kinds);
        let want: Vec<Event> = expected.into_iter().map(Event::Packet).collect();
        for len in 0..=nibbles.len() {
            let mut d = StpDecoder::new();
            let got: Vec<Event> = d.feed_nibbles(&nibbles[..len]).collect();
            prop_assert!(got.len() <= want.len());
            prop_assert_eq!(&got[..], &want[..got.len()], "prefix of {} nibbles", len);
        }
    }

    #[test]
    fn byte_feeding_matches_nibble_feeding(
        kinds in prop::collection::vec(kind_strategy(false), 0..30),
        split in any::<prop::sample::Index>(),
    ) {
        let mut e = StpEncoder::new();
        e.async_packet();
        e.packet(&PacketKind::Version { version: 3 }).unwrap();
        for k in &kinds {
            e.packet(k).unwrap();
        }
        let w = e.finish();
        let nibbles = w.nibbles();
        let bytes = w.into_bytes();
        let at = split.index(bytes.len() + 1);
        let mut d = StpDecoder::new();
        let mut by_bytes: Vec<Event> = d.feed(&bytes[..at]).collect();
        by_bytes.extend(d.feed(&bytes[at..]));
        by_bytes.extend(d.finish());
        let by_nibbles = decode_chunks(&nibbles, &[]);
        if nibbles.len() % 2 == 1 {
            // The packed form ends with a padding 0 nibble: a NULL packet.
            let pad = by_bytes.pop();
            let is_null = matches!(pad, Some(Event::Packet(p)) if p.kind == PacketKind::Null { ts: None });
            prop_assert!(is_null);
        }
        prop_assert_eq!(by_bytes, by_nibbles);
    }

    #[test]
    fn arbitrary_input_never_panics_and_offsets_grow(
        bytes in prop::collection::vec(any::<u8>(), 0..400),
        cut in any::<prop::sample::Index>(),
    ) {
        let at = cut.index(bytes.len() + 1);
        let mut d = StpDecoder::new();
        let mut events: Vec<Event> = d.feed(&bytes[..at]).collect();
        events.extend(d.feed(&bytes[at..]));
        events.extend(d.finish());
        let mut whole = StpDecoder::new();
        let mut reference: Vec<Event> = whole.feed(&bytes).collect();
        reference.extend(whole.finish());
        prop_assert_eq!(&events, &reference);
        let total = bytes.len() as u64 * 2;
        for e in &events {
            let end = match e {
                Event::Packet(p) => p.offset + u64::from(p.nibbles),
                Event::Error(err) => err.offset,
                Event::Unsynced(u) => u.offset + u.nibbles,
            };
            prop_assert!(end <= total);
        }
    }
}
