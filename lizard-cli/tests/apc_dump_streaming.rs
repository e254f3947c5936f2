//! `lizard apc-dump` streams its listing: on a large capture (generated here with gator-proto's encoder:
//! BLOCK_COUNTER frames of 32 values each, keys bound by the real gatord 9.7.2 `captured.xml` when the data
//! folder is there), its peak resident memory stays under a constant well below the size of the frame file,
//! so neither the file nor the listing is ever held whole.

mod common;

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::run_measuring_peak;
use gator_proto::apc::{local_capture, BlockCounter, Record};

/// Size of the generated frame file.
const FILE_BYTES: usize = 16 << 20;
/// Peak resident set allowed for the whole process, whatever the file's size. Reading the file whole alone
/// would pass it (the file is larger), and so would the listing kept in memory.
const PEAK_LIMIT_KIB: i64 = 12 << 10;

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
fn apc_dump_peak_memory_stays_constant_on_a_large_capture() {
    let dir = capture_dir();
    let file_kib = (std::fs::metadata(dir.join("0000000000"))
        .expect("file")
        .len()
        / 1024) as i64;
    assert!(
        file_kib > PEAK_LIMIT_KIB,
        "the capture must be larger than the limit"
    );
    for format in ["csv", "json", "table"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lizard"));
        cmd.args(["apc-dump", dir.to_str().expect("utf-8"), "--format", format])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let (status, peak_kib) = run_measuring_peak(&mut cmd);
        eprintln!(
            "apc-dump --format {format}: peak RSS {peak_kib} KiB for a {file_kib} KiB capture"
        );
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{format}: {status:#x}"
        );
        assert!(
            peak_kib < PEAK_LIMIT_KIB,
            "{format}: peak RSS {peak_kib} KiB for a {file_kib} KiB capture"
        );
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
    assert!(output.status.success());
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
    std::fs::write(dir.join("0000000000"), [1, 0]).expect("frames");
    let output = common::lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    assert!(output.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert!(doc["errors"][0]
        .as_str()
        .expect("error")
        .contains("length prefix"));
    std::fs::write(dir.join("0000000000"), [0xff, 0xff, 0xff, 0xff, 0]).expect("frames");
    let output = common::lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("valid JSON");
    assert!(doc["errors"][0].as_str().expect("error").contains("limit"));
    assert_eq!(doc["samples"], serde_json::json!([]));
    std::fs::remove_dir_all(&dir).expect("clean up");
}
