//! The report (`stp_decode::report`) over streams built with the project's STP encoder as a KeyStone II STM
//! fed by STMLib writes them (`tests/common/stm_model.rs`, following `docs/stm.md` §11): every protocol,
//! multi-word and 0xFF-length headers, 64-bit arguments, messages interleaved across masters and channels,
//! spans, a dictionary, CP Tracer words with a layout, undecodable messages; a property test through
//! encode → frame → a buffer wrapped at a random write pointer → dump (raw with its write pointer, and in
//! order as TI's tools save it with a `.dcm`) → report; and the real OpenCSD STM snapshots, whose counts
//! must equal OpenCSD's packet listing's.
//! Needs the `alloc` feature (default).
#![cfg(feature = "alloc")]

mod common;

use common::stm_model::{self, frames, interleave, wrap, Model, Msg, HZ, STM_ID};
use proptest::prelude::*;
use stp_decode::cptracer::Layout;
use stp_decode::dcm::Dcm;
use stp_decode::deformat::FrameMode;
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::keystone::{Device, Masters};
use stp_decode::message::{FormatStrings, MessageKind, NoImages, StringTable, Undecodable};
use stp_decode::report::{Discard, Report, ReportConfig, ReportEvent};
use stp_decode::stats::Stats;
use stp_decode::stmlib::{message_words, Header, Protocol};
use stp_decode::tbr::{frame_phase, ordered, Wrap};

/// What the tests compare of a message.
#[derive(Debug, Clone, PartialEq)]
struct Seen {
    master: u16,
    channel: u16,
    text: String,
    kind: MessageKind,
    time: u64,
}

/// Every event of a report, as owned values.
#[derive(Debug, Default)]
struct Events {
    messages: Vec<Seen>,
    spans: Vec<(String, u16, u64, u64)>,
    torn: Vec<stp_decode::message::Torn>,
    cptracer: Vec<(u16, u32)>,
    windows: Vec<(u64, u64, u64)>,
    losses: usize,
}

fn run(
    config: ReportConfig,
    strings: &dyn FormatStrings,
    dict: &Dictionary,
    parts: &[&[u8]],
    chunk: usize,
) -> (Events, Stats) {
    let mut events = Events::default();
    let mut sink = |event: &ReportEvent<'_>| -> Result<(), ()> {
        match *event {
            ReportEvent::Message { time, message } => events.messages.push(Seen {
                master: message.master,
                channel: message.channel,
                text: message.text.to_owned(),
                kind: message.kind,
                time,
            }),
            ReportEvent::Span {
                name,
                master,
                begin,
                end,
                ..
            } => events.spans.push((name.to_owned(), master, begin, end)),
            ReportEvent::Torn { torn, .. } => events.torn.push(torn),
            ReportEvent::CpTracer { master, word, .. } => events.cptracer.push((master, word)),
            ReportEvent::Window { begin, end, bytes } => events.windows.push((begin, end, bytes)),
            ReportEvent::Loss { .. } => events.losses += 1,
            _ => {}
        }
        Ok(())
    };
    let mut report = Report::new(config, strings, dict);
    for part in parts {
        for piece in part.chunks(chunk.max(1)) {
            report.feed(piece, &mut sink).unwrap();
        }
    }
    let stats = report.finish(&mut sink).unwrap();
    (events, stats)
}

/// A printf message: the header, the format's address, the argument words.
fn printf(address: u32, args: &[u32]) -> Vec<u32> {
    let mut payload = vec![address];
    payload.extend_from_slice(args);
    let bytes: Vec<u8> = payload.iter().flat_map(|w| w.to_le_bytes()).collect();
    message_words(Protocol::Printf, &bytes)
}

fn strings() -> StringTable {
    let mut t = StringTable::default();
    t.insert(0x8000_1000, "frame %u start");
    t.insert(0x8000_1100, "frame %u end");
    t.insert(0x8000_1200, "x=%llx y=%lld z=%.2f");
    t.insert(0x8000_1300, "%s says %d");
    t.insert(0x8000_1400, "core");
    t
}

fn msg(master: u16, channel: u16, words: Vec<u32>, ts: u64) -> Msg {
    Msg {
        master,
        channel,
        words,
        ts,
    }
}

fn raw_config() -> ReportConfig {
    let mut c = ReportConfig::new(Framing::Raw, 0);
    c.masters = Masters::for_device(Device::K2h);
    c
}

#[test]
fn every_protocol_and_header_form_interleaved_across_masters_and_channels() {
    let long: Vec<u8> = (0..300u32).map(|i| (i % 200 + 30) as u8).collect();
    let d = 2.5f64.to_bits();
    let messages = vec![
        msg(0, 1, printf(0x8000_1000, &[7]), 1_000),
        msg(3, 1, printf(0x8000_1000, &[8]), 1_100),
        msg(
            8,
            2,
            message_words(Protocol::PutMsg, b"hello from Arm0"),
            1_200,
        ),
        msg(3, 4, message_words(Protocol::PutBuf, &long), 1_300),
        msg(
            0,
            1,
            printf(
                0x8000_1200,
                &[
                    0x1234_5678,
                    0x9abc_def0,
                    0xFFFF_FFFF,
                    0xFFFF_FFFE,
                    (d >> 32) as u32,
                    d as u32,
                ],
            ),
            1_400,
        ),
        msg(
            3,
            1,
            {
                let mut payload = 0x8000_1300u32.to_le_bytes().to_vec();
                payload.extend(b"dsp3\0\0\0\0");
                payload.extend(42u32.to_le_bytes());
                message_words(Protocol::PrintfStrings, &payload)
            },
            1_500,
        ),
        msg(3, 1, printf(0x8000_1100, &[8]), 1_600),
        msg(
            11,
            0x1ff,
            message_words(Protocol::Internal, &[1, 2, 3]),
            1_700,
        ),
        msg(0, 1, printf(0x8000_1100, &[7]), 1_800),
    ];
    // Words of different channels interleaved, one channel's messages in turn.
    let picks: Vec<usize> = (0..400).map(|i| (i * 7 + i / 3) % 5).collect();
    let order = interleave(&messages, &picks);
    let mut model = Model::new(300);
    model.send(&messages, &order);
    let stream = model.bytes();
    let mut config = raw_config();
    config.spans = vec![
        "frame=start..end".parse().unwrap(),
        "never=nothing like this..nor this".parse().unwrap(),
    ];
    let (events, stats) = run(config, &strings(), &Dictionary::new(), &[&stream], 37);
    let mut texts: Vec<(u16, u16, String)> = events
        .messages
        .iter()
        .map(|m| (m.master, m.channel, m.text.clone()))
        .collect();
    texts.sort();
    let long_hex: Vec<String> = long.iter().take(64).map(|b| format!("{b:02x}")).collect();
    let mut want = vec![
        (0, 1, "frame 7 start".to_owned()),
        (0, 1, "x=123456789abcdef0 y=-2 z=2.50".to_owned()),
        (0, 1, "frame 7 end".to_owned()),
        (3, 1, "frame 8 start".to_owned()),
        (3, 1, "dsp3 says 42".to_owned()),
        (3, 1, "frame 8 end".to_owned()),
        (3, 4, format!("{} … (300 bytes)", long_hex.join(" "))),
        (8, 2, "hello from Arm0".to_owned()),
        (11, 0x1ff, "01 02 03".to_owned()),
    ];
    want.sort();
    assert_eq!(texts, want);
    // Messages come out in the order their last words were written.
    let times: Vec<u64> = events.messages.iter().map(|m| m.time).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // 1,000 ticks at 250 MHz are 4,000 ns: the FREQ packet gives the clock.
    assert_eq!(stats.clock.hz, Some(HZ));
    assert_eq!(
        events.messages[0].time, 0,
        "times count from the first timestamp"
    );
    // Spans per master: DSP0 and DSP3 each one frame, from its start message to its end message.
    let time_of = |text: &str| {
        events
            .messages
            .iter()
            .find(|m| m.text == text)
            .unwrap()
            .time
    };
    let mut durations = vec![
        time_of("frame 7 end") - time_of("frame 7 start"),
        time_of("frame 8 end") - time_of("frame 8 start"),
    ];
    durations.sort();
    assert!(durations[0] > 0);
    let mut spans: Vec<u64> = events.spans.iter().map(|s| s.3 - s.2).collect();
    spans.sort();
    assert_eq!(spans, durations);
    assert_eq!(stats.spans[0].count, 2);
    assert_eq!(stats.spans[0].min, Some(durations[0]));
    assert_eq!(stats.spans[0].max, Some(durations[1]));
    assert_eq!(stats.spans[1].count, 0);
    assert_eq!(stats.duration, events.messages.last().unwrap().time);
    // The statistics agree with the messages.
    assert_eq!(stats.stream.messages, 9);
    assert_eq!(stats.stream.undecodable, 0);
    assert_eq!(stats.stream.torn.messages, 0);
    let words: usize = messages.iter().map(|m| m.words.len()).sum();
    assert_eq!(stats.stream.data_packets, words as u64);
    let dsp3 = stats.masters.iter().find(|m| m.master == 3).unwrap();
    assert_eq!((dsp3.name.as_str(), dsp3.messages), ("DSP3", 4));
    assert_eq!(dsp3.channels.iter().map(|c| c.messages).sum::<u64>(), 4);
    let bytes: u64 = messages
        .iter()
        .filter(|m| m.master == 3)
        .map(|m| 4 * m.words.len() as u64)
        .sum();
    assert_eq!(dsp3.bytes, bytes);
    let arm3 = stats.masters.iter().find(|m| m.master == 11).unwrap();
    assert_eq!(
        (arm3.name.as_str(), arm3.channels[0].channel),
        ("Arm3", 0x1ff)
    );
    assert!(dsp3.messages_per_s.unwrap() > 0.0);
    // The same stream in frames gives the same messages.
    let (formatted, _) = frames(&stream);
    let mut framed = raw_config();
    framed.framing = Framing::Formatted(FrameMode::Memory);
    framed.trace_id = STM_ID;
    let (again, _) = run(framed, &strings(), &Dictionary::new(), &[&formatted], 1000);
    assert_eq!(again.messages, events.messages);
}

#[test]
fn headerless_values_are_named_by_the_dictionary_and_spans_match_them() {
    // ULM-style state messages (a D8 sequence, a D32 task, a D32MTS value) are plain values here; the
    // model writes D32 words only, so three words per message.
    let dict = Dictionary::parse(
        "value 5 0x10 FRAME_START\nvalue 5 0x11 FRAME_END\nvalue DSP1:5 0x11 DSP1_END\nchannel 5 frames\n",
        &Masters::for_device(Device::K2h),
    )
    .unwrap();
    let messages: Vec<Msg> = (0..6u64)
        .map(|i| {
            let master = (i % 2) as u16;
            let state = if (2..4).contains(&i) { 0x11 } else { 0x10 };
            msg(master, 5, vec![i as u32, 0x77, state], 100 + 50 * i)
        })
        .collect();
    let order: Vec<usize> = (0..6).flat_map(|i| [i, i, i]).collect();
    let mut model = Model::new(10_000);
    model.send(&messages, &order);
    let mut config = raw_config();
    config.spans = vec!["frame=FRAME_START..0x11".parse().unwrap()];
    let (events, stats) = run(config, &NoImages, &dict, &[&model.bytes()], 5);
    let texts: Vec<&str> = events.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "0x00000000 0x00000077 FRAME_START",
            "0x00000001 0x00000077 FRAME_START",
            "0x00000002 0x00000077 FRAME_END",
            "0x00000003 0x00000077 DSP1_END",
            "0x00000004 0x00000077 FRAME_START",
            "0x00000005 0x00000077 FRAME_START",
        ]
    );
    assert!(events
        .messages
        .iter()
        .all(|m| m.kind == MessageKind::Values));
    // DSP0: start at 100, end at 200; DSP1: start at 150, end at 250; both restart at the end, unfinished.
    let s = &stats.spans[0];
    assert_eq!(
        (s.count, s.unfinished, s.restarts, s.unmatched_ends),
        (2, 2, 0, 0)
    );
    assert_eq!(s.min, Some(400)); // 100 ticks at 250 MHz
    assert_eq!(stats.masters[0].channels[0].name.as_deref(), Some("frames"));
}

#[test]
fn undecodable_messages_are_kept_raw_with_their_reason() {
    let messages = vec![
        msg(0, 1, printf(0x8000_1000, &[]), 10), // too few arguments
        msg(0, 1, printf(0x8000_1000, &[1, 2]), 20), // too many
        msg(0, 1, printf(0x9000_0000, &[1]), 30), // address outside the image
        msg(0, 1, vec![0x0101_8110, 0x6c6c_6568], 40), // 16 bytes declared, 4 sent
        msg(0, 1, vec![0x0101_9904, 0], 50),     // protocol 0x99
        msg(0, 2, printf(0x8000_1000, &[1]), 60), // no image for master 0 below
    ];
    let order: Vec<usize> = messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| std::iter::repeat_n(i, m.words.len()))
        .collect();
    let mut model = Model::new(10_000);
    model.send(&messages, &order);
    let bytes = model.bytes();
    let (events, stats) = run(raw_config(), &strings(), &Dictionary::new(), &[&bytes], 64);
    let reasons: Vec<Option<Undecodable>> = events
        .messages
        .iter()
        .map(|m| match m.kind {
            MessageKind::Undecodable { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            Some(Undecodable::ArgumentCount {
                expected: 1,
                received: 0
            }),
            Some(Undecodable::ArgumentCount {
                expected: 1,
                received: 2
            }),
            Some(Undecodable::AddressOutside {
                address: 0x9000_0000
            }),
            Some(Undecodable::Truncated {
                declared: 16,
                received: 4
            }),
            Some(Undecodable::UnknownProtocol { protocol: 0x99 }),
            None,
        ]
    );
    // Raw: the bytes in hexadecimal.
    assert_eq!(events.messages[4].text, "04 99 01 01 00 00 00 00");
    assert_eq!(stats.stream.undecodable, 5);
    assert_eq!(stats.masters[0].undecodable_by_reason["argument_count"], 2);
    let (events, _) = run(raw_config(), &NoImages, &Dictionary::new(), &[&bytes], 64);
    assert_eq!(
        events.messages[5].kind,
        MessageKind::Undecodable {
            protocol: Protocol::Printf,
            reason: Undecodable::NoImage
        }
    );
}

#[test]
fn cptracer_words_are_counted_per_hardware_master_and_read_with_a_layout() {
    let layout = Layout::parse("mstid 23:16 master\nbytes 15:0 bytes\n").unwrap();
    // Two hardware masters, words every 1,000 ticks (4 µs): 64 bytes each from master ids 0x8c and 0x10.
    let mut model = Model::new(100_000);
    for i in 0..40u64 {
        let id = if i % 4 == 0 { 0x10 } else { 0x8c };
        model.write(&stm_model::Write {
            master: 0x80 + (i % 2) as u16,
            channel: 0,
            word: (id << 16) | 64,
            end: Some(1_000 * i),
        });
    }
    model.write(&stm_model::Write {
        master: 2,
        channel: 0,
        word: 0x0101_8100,
        end: Some(40_000),
    });
    let mut config = raw_config();
    config.cptracer_layout = Some(layout);
    config.window = Some(20_000); // 20 µs: five words a window
    let (events, stats) = run(
        config,
        &NoImages,
        &Dictionary::new(),
        &[&model.bytes()],
        100,
    );
    assert_eq!(events.cptracer.len(), 40);
    let cpt = &stats.cptracer;
    assert_eq!(
        cpt.masters.iter().map(|m| m.words).collect::<Vec<_>>(),
        [20, 20]
    );
    let l = cpt.layout.as_ref().unwrap();
    assert_eq!((l.transactions, l.bytes), (40, 40 * 64));
    assert_eq!(l.per_master_id.len(), 2);
    assert_eq!(
        (l.per_master_id[0].id, l.per_master_id[0].transactions),
        (0x10, 10)
    );
    assert_eq!(l.windows, 8);
    assert_eq!(events.windows.len(), 8);
    // 5 × 64 bytes in 20 µs: 16 MB/s.
    assert_eq!(l.window_mb_per_s_median, Some(16.0));
    assert!(events.windows.iter().all(|w| w.2 == 320));
    // The software message on master 2 is a message, not a CP Tracer word.
    assert_eq!(events.messages.len(), 1);
    assert_eq!(
        stats
            .masters
            .iter()
            .find(|m| m.master == 0x80)
            .unwrap()
            .name,
        "CPT 0x80"
    );
}

/// A random STMLib message whose payload holds no byte 0x01 (so no tail of one can pass for a header).
fn message_strategy() -> impl Strategy<Value = (u16, u16, Vec<u32>, String)> {
    let text = prop::collection::vec(0x20u8..0x7f, 0..40);
    let buf = prop::collection::vec(2u8..=255, 0..320);
    (
        0u16..4,
        0u16..3,
        prop_oneof![
            text.prop_map(|t| {
                let s = String::from_utf8(t.clone()).unwrap();
                (message_words(Protocol::PutMsg, &t), s)
            }),
            buf.prop_map(|b| {
                let mut hex: Vec<String> = b.iter().take(64).map(|x| format!("{x:02x}")).collect();
                if b.len() > 64 {
                    hex.push(format!("… ({} bytes)", b.len()));
                }
                (message_words(Protocol::PutBuf, &b), hex.join(" "))
            }),
            (2u32..0x00FF_FFFF)
                .prop_map(|v| (printf(0x8000_1000, &[v]), format!("frame {v} start"))),
        ],
    )
        .prop_map(|(m, c, (words, text))| (m, c, words, text))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// messages → encode → frame → a buffer wrapped at a random write pointer → dump (the raw buffer with
    /// its write pointer; the same put in order as TI's tools save it, with a .dcm) → report: the same
    /// messages, in order, less exactly those the wrap (or the end of the buffer) tore, which are counted.
    #[test]
    fn wrapped_buffers_give_the_messages_that_fit_whole(
        list in prop::collection::vec(message_strategy(), 20..70),
        picks in prop::collection::vec(0usize..12, 0..3000),
        keep_words in 300usize..1200,
        cut_words in 0usize..4,
    ) {
        let messages: Vec<Msg> = list
            .iter()
            .enumerate()
            .map(|(i, (m, c, words, _))| msg(*m, *c, words.clone(), 1_000 + 100 * i as u64))
            .collect();
        let order = interleave(&messages, &picks);
        let mut model = Model::new(600);
        let placed = model.send(&messages, &order);
        let asyncs = model.asyncs.clone();
        let stream = model.bytes();
        let (mut formatted, before) = frames(&stream);
        // The capture may stop inside a frame: its last words are not a whole frame.
        formatted.truncate(formatted.len() - 4 * cut_words);
        let words = keep_words.min(formatted.len() / 4 - 8) & !3;
        prop_assume!(words >= 64);
        let (memory, write_pointer) = wrap(&formatted, words);

        // What can come out whole: from the first frame with an ID change at or after the oldest whole
        // frame, and its first ASYNC, to the end of the last whole frame.
        let oldest = formatted.len() - 4 * words;
        let first_frame = oldest.div_ceil(16);
        let id_frame = first_frame.div_ceil(8) * 8;
        let start_nibble = 2 * before[id_frame.min(before.len() - 1)] as u64;
        let last_frame = formatted.len() / 16;
        let end_nibble = 2 * before[last_frame] as u64;
        let sync = asyncs.iter().copied().find(|&a| a >= start_nibble);
        let mut expected: Vec<(u64, usize)> = placed
            .iter()
            .enumerate()
            .filter(|(_, p)| sync.is_some_and(|s| p.first >= s) && p.end <= end_nibble)
            .map(|(i, p)| (p.end, i))
            .collect();
        expected.sort();
        let expected: Vec<(u16, u16, String)> = expected
            .iter()
            .map(|&(_, i)| (list[i].0, list[i].1, list[i].3.clone()))
            .collect();

        let mut config = raw_config();
        config.framing = Framing::Formatted(FrameMode::Memory);
        config.trace_id = STM_ID;
        config.starts_mid_stream = true;
        let raw = ordered(&memory, Wrap::Wrapped { write_pointer }).unwrap();
        let mut raw_config = config.clone();
        raw_config.partial_frame_bytes = raw.partial_frame;
        let (events, stats) = run(raw_config, &strings(), &Dictionary::new(), &raw.parts, 333);
        let got: Vec<(u16, u16, String)> =
            events.messages.iter().map(|m| (m.master, m.channel, m.text.clone())).collect();
        prop_assert_eq!(&got, &expected);
        // Nothing lost silently: every data packet is in a message or in a torn piece.
        let message_packets: u64 = expected
            .iter()
            .map(|(m, c, t)| {
                list.iter().find(|x| x.0 == *m && x.1 == *c && &x.3 == t).map_or(0, |x| x.2.len() as u64)
            })
            .sum();
        prop_assert_eq!(
            stats.stream.data_packets - stats.stream.unattributed_packets,
            message_packets + stats.stream.torn.packets
        );
        // A message cut by the wrap or the end is torn, and counted, unless none of it was decoded.
        let straddling = placed
            .iter()
            .filter(|p| sync.is_some_and(|s| p.first < s && p.end > s && p.end <= end_nibble))
            .count() as u64;
        prop_assert!(stats.stream.torn.messages >= straddling.min(1));
        prop_assert_eq!(stats.stream.partial_frame_bytes, raw.partial_frame as u64);

        // The same buffer put in order and saved with its sidecar, as TI's tools do: the frame boundary is
        // found without the write pointer, and the report is the same.
        let saved: Vec<u8> = raw.parts.concat();
        let dcm = Dcm::parse(&Dcm::stpv2(true).to_string()).unwrap();
        prop_assert!(dcm.layout().unwrap().twp_frames);
        let mut in_order = config.clone();
        in_order.partial_frame_bytes = frame_phase(&saved, STM_ID);
        prop_assert_eq!(in_order.partial_frame_bytes, raw.partial_frame);
        let (again, again_stats) = run(in_order, &strings(), &Dictionary::new(), &[&saved], 4096);
        prop_assert_eq!(again.messages, events.messages);
        prop_assert_eq!(again_stats, stats);
    }
}

#[test]
fn a_header_word_is_what_stmlib_writes() {
    let h = Header::from_word(message_words(Protocol::PutBuf, &[0; 255])[0]);
    assert_eq!((h.byte_count, h.protocol), (None, Protocol::PutBuf));
}

/// The packets of an OpenCSD listing (`*.ppl`), counted by type: `(type, count)`.
fn listing_counts(ppl: &str) -> std::collections::BTreeMap<String, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for line in ppl.lines() {
        let Some(rest) = line.split("];\t").nth(1) else {
            continue;
        };
        let ty = rest.split(':').next().unwrap_or("").trim().to_owned();
        *counts.entry(ty).or_insert(0) += 1;
    }
    counts
}

#[test]
fn opencsd_snapshots_get_statistics_whose_counts_are_the_listings() {
    // The real STM snapshots of OpenCSD (../shared/data/opencsd-stm/, BSD-3-Clause) and OpenCSD 1.8.0's
    // packet listings of them: data packets (every D* type), flags and errors must be the same counts.
    for (snapshot, file, id) in [
        ("stm_only", "cstraceitm.bin", 0x20),
        ("stm_only-juno", "cstraceitm.bin", 0x20),
        ("stm-issue-27", "stuck_trace.bin", 0x10),
    ] {
        let Some(buffer) = test_data::bytes(&format!("opencsd-stm/{snapshot}/{file}")) else {
            return;
        };
        let Some(ppl) = test_data::text(&format!("opencsd-stm/{snapshot}.ppl")) else {
            return;
        };
        let counts = listing_counts(&ppl);
        let data: u64 = counts
            .iter()
            .filter(|(ty, _)| {
                ty.starts_with('D') && ty.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
            })
            .map(|(_, n)| n)
            .sum();
        let flags: u64 = counts
            .iter()
            .filter(|(ty, _)| ty.starts_with("FLAG"))
            .map(|(_, n)| n)
            .sum();
        let mut config = ReportConfig::new(Framing::Formatted(FrameMode::Memory), id);
        config.spans = vec!["any=0x10000000..0x10000001".parse().unwrap()];
        let (events, stats) = run(config, &NoImages, &Dictionary::new(), &[&buffer], 4096);
        assert!(
            data > 0 && stats.stream.data_packets == data,
            "{snapshot}: {data} D* packets in the listing, {} here",
            stats.stream.data_packets
        );
        assert_eq!(stats.stream.flags, flags, "{snapshot}: flags");
        assert_eq!(
            stats.stream.asyncs,
            counts.get("ASYNC").copied().unwrap_or(0),
            "{snapshot}"
        );
        // Every data packet is in a message or a torn piece; the messages are the events.
        let torn: u64 = events.torn.iter().map(|t| u64::from(t.packets)).sum();
        assert_eq!(torn, stats.stream.torn.packets);
        let per_master: u64 = stats.masters.iter().map(|m| m.data_packets).sum();
        assert_eq!(
            per_master + stats.stream.unattributed_packets,
            data,
            "{snapshot}"
        );
        assert_eq!(stats.stream.messages, events.messages.len() as u64);
        let per_channel: u64 = stats
            .masters
            .iter()
            .flat_map(|m| &m.channels)
            .map(|c| c.messages)
            .sum();
        assert_eq!(per_channel, stats.stream.messages);
    }
    // Arm Juno: 41 D32M packets on master 0x41, channels 1–15 cycling, each its own message.
    let Some(juno) = test_data::bytes("opencsd-stm/stm_only-juno/cstraceitm.bin") else {
        return;
    };
    let (events, stats) = run(
        ReportConfig::new(Framing::Formatted(FrameMode::Memory), 0x20),
        &NoImages,
        &Dictionary::new(),
        &[&juno],
        999,
    );
    assert_eq!(events.messages.len(), 41);
    assert_eq!(events.messages[0].text, "0x10000000");
    assert_eq!(stats.masters[0].name, "master 0x41");
    assert!(
        stats.stream.frame_errors >= 1,
        "the stale ETB memory's frames with ID 0x7F"
    );
}

#[test]
fn statistics_print_as_tables() {
    let mut model = Model::new(1_000);
    model.send(
        &[msg(1, 1, message_words(Protocol::PutMsg, b"hi"), 5)],
        &[0, 0],
    );
    let mut config = raw_config();
    config.spans = vec!["s=hi..bye".parse().unwrap()];
    let (_, stats) = run(config, &NoImages, &Dictionary::new(), &[&model.bytes()], 10);
    let text = stats.to_string();
    assert!(text.contains("clock: 250000000 Hz"), "{text}");
    assert!(text.contains("DSP1"), "{text}");
    assert!(text.contains("span s: 0"), "{text}");
    let (_, quiet) = run(
        raw_config(),
        &NoImages,
        &Dictionary::new(),
        &[&[0x12; 40]],
        7,
    );
    assert_eq!(quiet.stream.nibbles_before_first_sync, 80);
    assert!(quiet.to_string().contains("clock: unknown"));
    let mut sink = Discard;
    let dict = Dictionary::new();
    let mut report = Report::new(raw_config(), &NoImages, &dict);
    report.feed(&[0xFF; 11], &mut sink).unwrap();
    assert_eq!(report.stats().stream.input_bytes, 11);
}
