//! Fuzzes `gator_proto::daemon::Session` with arbitrary client bytes in arbitrary chunks, for protocols 670 and
//! 950: it must never panic, answer every command the way gatord does without error, and refuse more input
//! after a reported failure. The `<request type=…>` scanner is fed the same bytes.
#![no_main]

use arbitrary::Arbitrary;
use gator_proto::daemon::{request_type, Config, DaemonError, Event, Session};
use gator_proto::ProtocolVersion;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Script {
    modern: bool,
    chunks: Vec<Vec<u8>>,
}

fuzz_target!(|script: Script| {
    let version = if script.modern {
        ProtocolVersion::V950
    } else {
        ProtocolVersion::V670
    };
    let mut config = Config::default();
    config.protocol_version = version;
    config.max_command_payload = 1 << 12;
    let mut session = Session::new(config);
    let mut out = Vec::new();
    let mut failed = false;
    for chunk in &script.chunks {
        let _ = request_type(chunk);
        match session.handle_input(chunk) {
            Ok(()) => assert!(!failed),
            Err(DaemonError::Failed) => assert!(failed),
            Err(_) => {
                assert!(!failed);
                failed = true;
                session.send_error(b"Target error").unwrap();
            }
        }
        while let Some(event) = session.poll_event() {
            match event {
                Event::Ping | Event::DeliverXml(_) => session.send_ack(),
                Event::RequestXml {
                    request_type: Some(_),
                    ..
                } => session.send_xml(b"<x/>").unwrap(),
                Event::RequestXml {
                    request_type: None, ..
                } => session.send_nak(b"Unknown request").unwrap(),
                Event::RequestCurrentConfig => {
                    session.send_current_config(b"<current_config/>").unwrap()
                }
                Event::ApcStart => session.send_apc_frame(&[5, 0, 0, 1]).unwrap(),
                Event::ApcStop => session.send_end_of_capture(),
                // Connected, Disconnect, Exit and any later event need no answer.
                _ => {}
            }
        }
        let moved = session.poll_transmit(&mut out);
        assert!(moved <= out.len());
    }
});
