//! `lizard stm-dump` streams: it decodes a trace larger than the whole address space it is allowed
//! (`ulimit -v`), whose listing is over a hundred MiB, and a reader that goes away early ends it quietly.
//! The traces are generated here with stp-decode's encoder and formatter.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

use stp_decode::encoder::StpEncoder;
use stp_decode::formatter::format_frames;
use stp_decode::{DataWidth, IdWidth, PacketKind};

/// The address space `stm-dump` gets for a trace larger than it (`ulimit -v`): the binary and its
/// buffers fit, the trace does not.
const ADDRESS_SPACE: u64 = 24 << 20;
const DEADLINE: Duration = common::DEADLINE;

/// ASYNC, VERSION 3, M8, then C8 and 8 D32 messages per channel; an even number of nibbles, so that
/// copies back to back decode cleanly.
fn segment() -> Vec<u8> {
    let mut e = StpEncoder::new();
    e.async_packet();
    e.packet(&PacketKind::Version { version: 3 }).unwrap();
    e.packet(&PacketKind::Master {
        width: IdWidth::W8,
        master: 0x41,
    })
    .unwrap();
    for channel in 0..64u16 {
        e.packet(&PacketKind::Channel {
            width: IdWidth::W8,
            channel,
        })
        .unwrap();
        for i in 0..8u64 {
            e.packet(&PacketKind::Data {
                width: DataWidth::W32,
                value: 0x1000_0000 + u64::from(channel) * 8 + i,
                marker: i == 7,
                ts: None,
            })
            .unwrap();
        }
    }
    if e.writer().nibble_len() % 2 == 1 {
        e.packet(&PacketKind::Null { ts: None }).unwrap();
    }
    e.finish().into_bytes()
}

/// A formatted trace of at least `bytes` bytes on trace ID 0x20, written to a temporary file.
fn trace_file(name: &str, bytes: usize) -> PathBuf {
    let one = segment();
    let stream = one.repeat(bytes / one.len() + 1);
    let mut buffer = Vec::new();
    format_frames(0x20, &stream, &mut buffer).unwrap();
    let path = std::env::temp_dir().join(format!("lizard-stm-{name}-{}.bin", std::process::id()));
    std::fs::write(&path, &buffer).unwrap();
    path
}

#[test]
fn stm_dump_decodes_a_trace_larger_than_its_address_space() {
    let path = trace_file("ulimit", ADDRESS_SPACE as usize + (4 << 20));
    let (status, elements, errors) =
        common::run_limited(stm_dump(&path).arg("--elements"), ADDRESS_SPACE);
    let size = std::fs::metadata(&path).unwrap().len();
    std::fs::remove_file(&path).unwrap();
    assert!(status.success(), "{errors}");
    assert!(size > ADDRESS_SPACE);
    eprintln!(
        "stm-dump under ulimit -v {} KiB: {elements} elements of a {} KiB trace",
        ADDRESS_SPACE >> 10,
        size >> 10
    );
    assert!(elements > 100_000, "{elements}");
}

fn stm_dump(path: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lizard"));
    cmd.args(["stm-dump", path.to_str().unwrap(), "--trace-id", "0x20"]);
    cmd
}

#[test]
fn a_closed_pipe_ends_the_listing_quietly() {
    let path = trace_file("pipe", 1 << 20);
    for format in ["text", "json"] {
        let mut child = stm_dump(&path)
            .args(["--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty(), "{format}: no listing");
        // The reader is gone: the rest of the listing is dropped and the command exits at once, with 0.
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < DEADLINE, "{format}: still running");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(status.success(), "{format}: {status} {stderr}");
        assert!(stderr.is_empty(), "{format}: {stderr}");
    }
    std::fs::remove_file(&path).unwrap();
}
