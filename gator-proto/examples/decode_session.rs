//! Decodes the real gatord 9.7.2 session recorded byte for byte in `../shared/data/gatord-9.7.2/live-session/`
//! (`c2s.bin`: what the client sent; `d2c.bin`: what the daemon sent): the client's commands are read back
//! with the daemon-side session, replayed on a client session, and the daemon's bytes fed to it; every APC
//! frame is then decoded and counted by type.
//!
//! `cargo run -p gator-proto --example decode_session [DIR]`

use std::path::PathBuf;

use gator_proto::apc::{BlockCounter, Frame, Record};
use gator_proto::{client, daemon, ProtocolVersion};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/data/gatord-9.7.2/live-session")
        });
    let read = |name: &str| {
        std::fs::read(dir.join(name)).map_err(|e| {
            format!(
                "{}: {e} (the recorded session lives in ../shared/data beside the repository; \
                 pass its folder as the first argument)",
                dir.join(name).display()
            )
        })
    };
    let (c2s, d2c) = (read("c2s.bin")?, read("d2c.bin")?);

    // The client's side, as the daemon reads it, replayed on a client session.
    let mut server = daemon::Session::new(daemon::Config::default());
    server.handle_input(&c2s)?;
    let mut session = client::Session::new(client::Config::default());
    while let Some(event) = server.poll_event() {
        match event {
            daemon::Event::Ping => session.ping()?,
            daemon::Event::RequestXml {
                request_type: Some(kind),
                ..
            } => session.request_xml(&kind)?,
            daemon::Event::DeliverXml(document) => session.deliver_xml(&document)?,
            daemon::Event::RequestCurrentConfig => session.request_current_config()?,
            daemon::Event::ApcStart => session.start_capture()?,
            daemon::Event::ApcStop => session.stop_capture()?,
            daemon::Event::Connected { .. } => {}
            other => println!("client sent: {other:?}"),
        }
    }
    let mut sent = Vec::new();
    let moved = session.poll_transmit(&mut sent);
    assert_eq!(moved, sent.len());
    println!(
        "client commands re-encoded: {} bytes, identical to c2s.bin: {}",
        sent.len(),
        sent == c2s
    );

    // The daemon's side, in 4 KiB reads as from a socket.
    let mut frames: Vec<(String, usize)> = Vec::new();
    let mut first_block = None;
    let mut xml = 0;
    let mut handle = |event: client::Event| -> Result<(), Box<dyn std::error::Error>> {
        match event {
            client::Event::ApcFrame(bytes) => {
                let frame = Frame::parse(&bytes, ProtocolVersion::V950)?;
                let kind = match &frame {
                    Frame::Summary(_) => "SUMMARY",
                    Frame::BlockCounter(_) => "BLOCK_COUNTER",
                    Frame::PerfAttrs(_) => "PERF_ATTRS",
                    Frame::PerfData(_) => "PERF_DATA",
                    _ => "other",
                };
                if let (Frame::BlockCounter(block), None) = (&frame, &first_block) {
                    first_block = Some(describe(block)?);
                }
                match frames.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, n)) => *n += 1,
                    None => frames.push((kind.to_owned(), 1)),
                }
            }
            client::Event::Xml { .. } => xml += 1,
            _ => {}
        }
        Ok(())
    };
    for chunk in d2c.chunks(4096) {
        session.handle_input(chunk)?;
        while let Some(event) = session.poll_event() {
            handle(event)?;
        }
    }
    session.handle_eof()?;
    while let Some(event) = session.poll_event() {
        handle(event)?;
    }
    println!(
        "daemon sent {} bytes: {xml} XML replies and these APC frames:",
        d2c.len()
    );
    for (kind, n) in &frames {
        println!("  {kind:<14} {n}");
    }
    if let Some(text) = first_block {
        println!("first BLOCK_COUNTER frame: {text}");
    }
    Ok(())
}

/// The records of a BLOCK_COUNTER frame on one line: timestamps and key = value pairs.
fn describe(block: &BlockCounter<'_>) -> Result<String, Box<dyn std::error::Error>> {
    let mut parts = Vec::new();
    for record in block.records() {
        parts.push(match record? {
            Record::Timestamp(ns) => format!("t={ns} ns"),
            Record::Value { key, value } => format!("key {key:#x} = {value}"),
            Record::Tid(tid) => format!("tid {tid}"),
            Record::Core(core) => format!("core {core}"),
        });
    }
    Ok(parts.join(", "))
}
