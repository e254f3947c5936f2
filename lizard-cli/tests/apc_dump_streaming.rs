//! `lizard apc-dump` streams its listing: a capture (generated here with gator-proto's encoder:
//! BLOCK_COUNTER frames of 32 values each, keys bound by the real gatord 9.7.2 `captured.xml` when the data
//! folder is there) larger than the whole address space it is allowed (`ulimit -v`) is listed
//! in every format, so neither the file nor the listing is ever held whole.

mod common;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::Command;

use gator_proto::apc::{local_capture, BlockCounter, Record};

/// The address space `apc-dump` gets (`ulimit -v`): the binary and its buffers fit, the capture does not.
const ADDRESS_SPACE: u64 = 24 << 20;
/// Size of the generated frame file.
const FILE_BYTES: usize = (ADDRESS_SPACE as usize) + (4 << 20);

fn capture_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-apc-memory-{}.apc", std::process::id()));
    std::fs::create_dir_all(&dir).expect("capture dir");
    // Written a frame at a time: this process stays small, so its size does not count in the child's peak.
    let mut file = BufWriter::new(std::fs::File::create(dir.join("0000000000")).expect("frames"));
    let (mut written, mut t) = (0, 0i64);
    let (mut frame, mut record) = (Vec::new(), Vec::new());
    while written < FILE_BYTES {
        t += 1_000_000;
        frame.clear();
        record.clear();
        let values = (0..32).map(|k| Record::Value {
            key: 0x40 + 2 * k,
            // Values of ten SLEB128 bytes: many bytes per value keep the run short.
            value: (1 << 62) + t * 7 + i64::from(k),
        });
        BlockCounter::encode(
            0,
            [Record::Timestamp(t), Record::Core(t % 4)]
                .into_iter()
                .chain(values),
            &mut frame,
        );
        assert!(local_capture::encode_record(&frame, &mut record));
        file.write_all(&record).expect("write");
        written += record.len();
    }
    file.flush().expect("flush");
    match test_data::gatord("live-session/resp-captured.xml") {
        Some(captured) => {
            std::fs::copy(captured, dir.join("captured.xml")).expect("captured.xml");
        }
        None => eprintln!("counters listed by key"),
    }
    dir
}

#[test]
fn apc_dump_lists_a_capture_larger_than_its_address_space() {
    let dir = capture_dir();
    let file = std::fs::metadata(dir.join("0000000000"))
        .expect("file")
        .len();
    assert!(
        file > ADDRESS_SPACE,
        "the capture must be larger than the address space"
    );
    for format in ["csv", "json", "table"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lizard"));
        cmd.args(["apc-dump", dir.to_str().expect("utf-8"), "--format", format]);
        let (status, lines, errors) = common::run_limited(&mut cmd, ADDRESS_SPACE);
        assert!(status.success(), "{format}: {errors}");
        eprintln!(
            "apc-dump --format {format} under ulimit -v {} KiB: {lines} lines from a {} KiB capture",
            ADDRESS_SPACE >> 10,
            file >> 10
        );
        assert!(lines > 1_000_000, "{format}: {lines} lines");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn apc_dump_reports_a_truncated_frame_file_after_the_values_before_it() {
    let dir = std::env::temp_dir().join(format!("lizard-apc-cut-{}.apc", std::process::id()));
    std::fs::create_dir_all(&dir).expect("capture dir");
    let mut frame = Vec::new();
    BlockCounter::encode(
        0,
        [Record::Timestamp(5), Record::Value { key: 4, value: 9 }],
        &mut frame,
    );
    let mut file = Vec::new();
    assert!(local_capture::encode_record(&frame, &mut file));
    assert!(local_capture::encode_record(&frame, &mut file));
    file.truncate(file.len() - 2); // the second frame is cut short
    std::fs::write(dir.join("0000000000"), &file).expect("frames");
    let output = common::lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "csv"]);
    assert!(output.status.success(), "{}", common::stderr(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    // No core marker before the value: a value of the whole system, with no core.
    assert_eq!(
        stdout,
        "timestamp_ns,core,key,counter,value,perf_total\n5,,4,key 0x4,9,\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("frame 1") && stderr.contains("claims"),
        "{stderr}"
    );
    // A length prefix cut short, and a length over the limit, are errors of their own.
    // Neither gives a value: the listing is written, and the exit status says nothing usable was found.
    std::fs::write(dir.join("0000000000"), [1, 0]).expect("frames");
    let output = common::lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    assert_eq!(output.status.code(), Some(4), "{}", common::stderr(&output));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert!(doc["errors"][0]
        .as_str()
        .expect("error")
        .contains("length prefix"));
    std::fs::write(dir.join("0000000000"), [0xff, 0xff, 0xff, 0xff, 0]).expect("frames");
    let output = common::lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    assert_eq!(output.status.code(), Some(4));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert!(doc["errors"][0].as_str().expect("error").contains("limit"));
    assert_eq!(doc["samples"], serde_json::json!([]));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
