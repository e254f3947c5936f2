//! Fuzzes `gator_proto::client::Session` with arbitrary operation sequences: daemon bytes in arbitrary chunks
//! interleaved with every client command and end of stream. The session must never panic, must report a
//! failure once and then only `Failed`, and every APC frame it hands out must decode without panicking.
#![no_main]

use arbitrary::Arbitrary;
use gator_proto::apc::Frame;
use gator_proto::client::{ClientError, Config, Event, Session};
use gator_proto::ProtocolVersion;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
enum Op {
    Input(Vec<u8>),
    Ping,
    RequestXml(u8),
    Deliver(Vec<u8>),
    CurrentConfig,
    Start,
    Stop,
    Disconnect,
    Exit,
    Eof,
}

#[derive(Debug, Arbitrary)]
struct Script {
    legacy_line: bool,
    small_limit: bool,
    ops: Vec<Op>,
}

const KINDS: [&str; 6] = [
    "events",
    "counters",
    "captured",
    "configuration",
    "defaults",
    "bad\"kind",
];

fuzz_target!(|script: Script| {
    let mut config = Config::default();
    config.max_response_payload = if script.small_limit { 64 } else { 1 << 20 };
    config.max_command_payload = 1 << 12;
    config.legacy_version_line = script.legacy_line.then_some(671);
    let mut session = Session::new(config);
    let mut sent = Vec::new();
    let mut failed = false;
    for op in script.ops {
        let result = match op {
            Op::Input(bytes) => session.handle_input(&bytes),
            Op::Ping => session.ping(),
            Op::RequestXml(i) => session.request_xml(KINDS[usize::from(i) % KINDS.len()]),
            Op::Deliver(doc) => session.deliver_xml(&doc),
            Op::CurrentConfig => session.request_current_config(),
            Op::Start => session.start_capture(),
            Op::Stop => session.stop_capture(),
            Op::Disconnect => session.disconnect(),
            Op::Exit => session.exit_daemon(),
            Op::Eof => session.handle_eof(),
        };
        match result {
            Err(ClientError::Failed) => assert!(failed),
            Err(ClientError::InvalidState { .. } | ClientError::Unsupported { .. })
            | Err(ClientError::InvalidRequestType(_) | ClientError::Encode(_)) => {}
            Err(_) => failed = true,
            Ok(()) => {}
        }
        let moved = session.poll_transmit(&mut sent);
        assert!(moved <= sent.len());
        let version = session.protocol_version().unwrap_or(ProtocolVersion::V950);
        while let Some(event) = session.poll_event() {
            if let Event::ApcFrame(bytes) = event {
                assert!(!bytes.is_empty());
                if let Ok(Frame::BlockCounter(block)) = Frame::parse(&bytes, version) {
                    block.records().for_each(drop);
                }
            }
        }
    }
});
