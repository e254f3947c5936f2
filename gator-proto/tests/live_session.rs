//! Decodes the real gatord 9.7.2 live session (`shared/data/gatord-9.7.2/live-session/`, recorded byte for byte
//! from a TCP connection): `d2c.bin` with the client session driven by the commands in `c2s.bin`, and `c2s.bin`
//! with the daemon session, whole, split at every byte and split at random points.

use gator_proto::apc::{
    summary::NEWLINE_CANARY, BlockCounter, Frame, FrameError, PerfAttrsMessage, Record,
    SummaryFrame,
};
use gator_proto::{client, daemon, ProtocolVersion};

/// Whether the live session is there (a printed skip when it is not).
fn recorded() -> bool {
    test_data::gatord("live-session").is_some()
}

fn read(name: &str) -> Vec<u8> {
    let path = test_data::root()
        .join(test_data::GATORD)
        .join("live-session")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Decodes `c2s.bin` with the daemon session, feeding it in the given chunk sizes (cycled).
fn daemon_events(chunks: &[usize]) -> Vec<daemon::Event> {
    let bytes = read("c2s.bin");
    let mut session = daemon::Session::new(daemon::Config::default());
    let mut events = Vec::new();
    let mut pos = 0;
    for &size in chunks.iter().cycle() {
        if pos == bytes.len() {
            break;
        }
        let end = pos.saturating_add(size.max(1)).min(bytes.len());
        session.handle_input(&bytes[pos..end]).unwrap();
        pos = end;
        events.extend(std::iter::from_fn(|| session.poll_event()));
    }
    events
}

/// Replays the commands of `c2s.bin` on a client session.
fn issue(client: &mut client::Session, event: &daemon::Event) {
    match event {
        daemon::Event::Connected { .. } => {}
        daemon::Event::Ping => client.ping().unwrap(),
        daemon::Event::RequestXml { request_type, .. } => client
            .request_xml(request_type.as_deref().unwrap())
            .unwrap(),
        daemon::Event::DeliverXml(document) => client.deliver_xml(document).unwrap(),
        daemon::Event::RequestCurrentConfig => client.request_current_config().unwrap(),
        daemon::Event::ApcStart => client.start_capture().unwrap(),
        daemon::Event::ApcStop => client.stop_capture().unwrap(),
        other => panic!("c2s.bin holds no {other:?}"),
    }
}

/// A client that has issued every command of the recording, with its transmit buffer checked against `c2s.bin`.
fn recorded_client() -> client::Session {
    let mut client = client::Session::new(client::Config::default());
    for event in daemon_events(&[usize::MAX]) {
        issue(&mut client, &event);
    }
    let mut sent = Vec::new();
    let moved = client.poll_transmit(&mut sent);
    assert_eq!(moved, sent.len());
    assert_eq!(
        sent,
        read("c2s.bin"),
        "the client encodes the recorded commands byte for byte"
    );
    client
}

/// Feeds `d2c.bin` to a recorded client in chunks produced by `next_chunk`, and returns every event.
fn client_events(mut next_chunk: impl FnMut() -> usize) -> Vec<client::Event> {
    let bytes = read("d2c.bin");
    let mut client = recorded_client();
    let mut events = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let end = pos.saturating_add(next_chunk().max(1)).min(bytes.len());
        client.handle_input(&bytes[pos..end]).unwrap();
        pos = end;
        events.extend(std::iter::from_fn(|| client.poll_event()));
    }
    client.handle_eof().unwrap();
    events.extend(std::iter::from_fn(|| client.poll_event()));
    assert_eq!(client.state(), client::State::Closed);
    events
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    summary: usize,
    block_counter: usize,
    perf_attrs: usize,
    perf_data: usize,
    other: usize,
    block_records: usize,
}

/// Decodes every frame completely (records and words included) and counts them by type.
fn count_frames(events: &[client::Event]) -> Counts {
    let mut counts = Counts::default();
    for event in events {
        let client::Event::ApcFrame(bytes) = event else {
            continue;
        };
        match Frame::parse(bytes, ProtocolVersion::V950).unwrap() {
            Frame::Summary(_) => counts.summary += 1,
            Frame::BlockCounter(block) => {
                counts.block_counter += 1;
                let records: Result<Vec<Record>, FrameError> = block.records().collect();
                counts.block_records += records.unwrap().len();
            }
            Frame::PerfAttrs(_) => counts.perf_attrs += 1,
            Frame::PerfData(data) => {
                counts.perf_data += 1;
                let words = data.words().collect::<Result<Vec<u64>, _>>().unwrap();
                assert!(!words.is_empty());
                assert_eq!(data.raw_words.len(), data.packed_length as usize);
            }
            _ => counts.other += 1,
        }
        // Every frame re-encodes to the bytes it came from.
        let mut again = Vec::new();
        Frame::parse(bytes, ProtocolVersion::V950)
            .unwrap()
            .encode(&mut again);
        assert_eq!(again, bytes.as_bytes());
    }
    counts
}

#[test]
fn c2s_decodes_with_the_daemon_session() {
    if !recorded() {
        return;
    }
    let events = daemon_events(&[usize::MAX]);
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            daemon::Event::RequestXml { request_type, .. } => {
                format!("xml:{}", request_type.as_deref().unwrap())
            }
            daemon::Event::DeliverXml(doc) => {
                assert!(doc.starts_with(
                    b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<session version=\"1\""
                ));
                "deliver".to_owned()
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "Connected { ignored_lines: [] }",
            "Ping",
            "xml:events",
            "xml:counters",
            "xml:configuration",
            "xml:defaults",
            "xml:captured",
            "xml:bogus",
            "RequestCurrentConfig",
            "deliver",
            "xml:captured",
            "ApcStart",
            "ApcStop",
        ]
    );
}

#[test]
fn c2s_split_at_every_byte_boundary_gives_the_same_commands() {
    if !recorded() {
        return;
    }
    let whole = daemon_events(&[usize::MAX]);
    let len = read("c2s.bin").len();
    for cut in 1..len {
        assert_eq!(daemon_events(&[cut, usize::MAX]), whole, "split at {cut}");
    }
    assert_eq!(daemon_events(&[1]), whole, "one byte at a time");
}

#[test]
fn d2c_decodes_exactly() {
    if !recorded() {
        return;
    }
    let events = client_events(|| usize::MAX);
    assert_eq!(
        events[0],
        client::Event::Connected {
            version: ProtocolVersion::V950
        }
    );
    assert_eq!(events[1], client::Event::Pong);

    let replies: Vec<(&str, usize)> = events
        .iter()
        .filter_map(|e| match e {
            client::Event::Xml { request, document } => Some((request.as_str(), document.len())),
            _ => None,
        })
        .collect();
    assert_eq!(
        replies,
        [
            ("events", 3_089_092),
            ("counters", 2798),
            ("configuration", 229),
            ("defaults", 41_667),
            ("captured", 1003),
            ("captured", 1001),
        ]
    );
    let xml = |request: &str, nth: usize| {
        events
            .iter()
            .filter_map(|e| match e {
                client::Event::Xml {
                    request: r,
                    document,
                } if r == request => Some(document.clone()),
                _ => None,
            })
            .nth(nth)
            .unwrap()
    };
    assert_eq!(xml("counters", 0), read("resp-counters.xml"));
    assert_eq!(xml("configuration", 0), read("resp-configuration.xml"));
    assert_eq!(xml("defaults", 0), read("resp-defaults.xml"));
    assert_eq!(xml("captured", 1), read("resp-captured-after-session.xml"));
    assert!(events.contains(&client::Event::XmlRejected {
        request: "bogus".into(),
        message: b"Unknown request".to_vec()
    }));
    assert!(events.iter().any(
        |e| matches!(e, client::Event::CurrentConfig(doc) if doc.starts_with(b"\n<current_config"))
    ));
    assert!(events.contains(&client::Event::Delivered));
    assert_eq!(events[events.len() - 2], client::Event::EndOfCapture);
    assert_eq!(events[events.len() - 1], client::Event::Closed);

    let counts = count_frames(&events);
    assert_eq!(
        counts,
        Counts {
            summary: 1,
            block_counter: 31,
            perf_attrs: 188,
            perf_data: 58,
            other: 0,
            block_records: 31 * 4
        }
    );
}

#[test]
fn first_block_counter_frame_matches_the_recording_notes() {
    if !recorded() {
        return;
    }
    let events = client_events(|| usize::MAX);
    let first = events
        .iter()
        .find_map(|e| match e {
            client::Event::ApcFrame(bytes) if bytes[0] == 5 => Some(bytes.clone()),
            _ => None,
        })
        .unwrap();
    let Frame::BlockCounter(block) = Frame::parse(&first, ProtocolVersion::V950).unwrap() else {
        panic!("not a block counter")
    };
    assert_eq!(block.core, 0);
    let records: Vec<Record> = block.records().map(Result::unwrap).collect();
    assert_eq!(
        records,
        [
            Record::Timestamp(407_871),
            Record::Value {
                key: 0x5e,
                value: 24_318_210_048
            },
            Record::Value {
                key: 0x5c,
                value: 958_304_256
            },
            Record::Value {
                key: 0x66,
                value: 0
            },
        ]
    );
    let mut again = Vec::new();
    BlockCounter::encode(0, records, &mut again);
    assert_eq!(again, first.as_bytes());
}

#[test]
fn summary_and_perf_attrs_decode_to_known_content() {
    if !recorded() {
        return;
    }
    let events = client_events(|| usize::MAX);
    let mut kernel_build_id = 0;
    let mut pea = 0;
    let mut online = 0;
    let mut empty = 0;
    for event in &events {
        let client::Event::ApcFrame(bytes) = event else {
            continue;
        };
        match Frame::parse(bytes, ProtocolVersion::V950).unwrap() {
            Frame::Summary(SummaryFrame::Summary(summary)) => {
                assert_eq!(summary.canary, NEWLINE_CANARY);
                assert_eq!(summary.clocks.monotonic_raw_ns, 833_624_606_614);
                assert!(summary.clocks.monotonic_ns.is_some());
                assert_eq!(summary.attributes.get(b"PAGESIZE"), Some(&b"4096"[..]));
                assert!(summary
                    .attributes
                    .get(b"uname")
                    .unwrap()
                    .starts_with(b"Linux vm "));
            }
            Frame::PerfAttrs(attrs) if attrs.count == 0 => empty += 1,
            Frame::PerfAttrs(attrs) => attrs.messages().for_each(|message| match message {
                PerfAttrsMessage::KernelBuildId(id) => {
                    assert_eq!(id.len(), 20);
                    kernel_build_id += 1;
                }
                PerfAttrsMessage::Pea { attr, key } => {
                    assert_eq!(attr.len(), 0x90);
                    assert!(key >= 4);
                    pea += 1;
                }
                PerfAttrsMessage::OnlineCpu { .. } => online += 1,
                _ => {}
            }),
            _ => {}
        }
    }
    assert_eq!((kernel_build_id, pea, online, empty), (1, 3, 2, 2));
}

#[test]
fn d2c_one_byte_at_a_time_gives_the_same_events() {
    if !recorded() {
        return;
    }
    let whole = client_events(|| usize::MAX);
    assert_eq!(client_events(|| 1), whole);
}

#[test]
fn d2c_random_splits_give_the_same_events() {
    if !recorded() {
        return;
    }
    let whole = client_events(|| usize::MAX);
    // A small xorshift generator keeps the splits reproducible.
    for seed in [0x9e37_79b9_7f4a_7c15_u64, 12345, 0xdead_beef] {
        let mut state = seed;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mostly small chunks, sometimes large ones.
            if state % 8 == 0 {
                (state >> 8) as usize % 200_000
            } else {
                (state >> 8) as usize % 700
            }
        };
        assert_eq!(client_events(&mut next), whole, "seed {seed:#x}");
    }
}
