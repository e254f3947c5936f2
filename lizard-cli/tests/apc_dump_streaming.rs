//! `lizard apc-dump` streams its listing: on a capture of BLOCK_COUNTER frames only (generated here with
//! gator-proto's encoder, keys bound by the real gatord 9.7.2 `captured.xml` when it is there), its peak
//! resident memory is the frame file plus a small constant, whatever the number of samples, where the
//! listing held in memory would take several times the file.

mod common;

use std::process::{Command, Stdio};

use common::run_measuring_peak;
use gator_proto::apc::{BlockCounter, Record};

/// Size of the frame file.
const FILE_BYTES: usize = 1 << 20;
/// Peak resident set allowed beyond the frame file, which the command reads whole.
const OVERHEAD_LIMIT_KIB: i64 = 10 << 10;

fn capture_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-apc-memory-{}.apc", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut frames = Vec::new();
    let mut t = 0;
    while frames.len() < FILE_BYTES {
        let mut frame = Vec::new();
        t += 1_000_000;
        let records = [Record::Timestamp(t)]
            .into_iter()
            .chain((0..32).map(|k| Record::Value {
                key: 0x40 + 2 * k,
                value: t * 7 + i64::from(k),
            }));
        BlockCounter::encode(0, records, &mut frame);
        frames.extend_from_slice(&u32::try_from(frame.len()).unwrap().to_le_bytes());
        frames.extend_from_slice(&frame);
    }
    std::fs::write(dir.join("0000000000"), &frames).unwrap();
    let captured = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/gatord-9.7.2/live-session/resp-captured.xml"
    );
    if std::fs::copy(captured, dir.join("captured.xml")).is_err() {
        eprintln!("no ../shared/data: counters listed by key");
    }
    dir
}

#[test]
fn apc_dump_peak_memory_is_the_file_plus_a_constant() {
    let dir = capture_dir();
    let file_kib = (std::fs::metadata(dir.join("0000000000")).unwrap().len() / 1024) as i64;
    for format in ["csv", "json", "table"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lizard"));
        cmd.args(["apc-dump", dir.to_str().unwrap(), "--format", format])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let (status, peak_kib) = run_measuring_peak(&mut cmd);
        eprintln!("apc-dump --format {format}: peak RSS {peak_kib} KiB for a {file_kib} KiB file");
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{format}: {status:#x}"
        );
        assert!(
            peak_kib < file_kib + OVERHEAD_LIMIT_KIB,
            "{format}: peak RSS {peak_kib} KiB for a {file_kib} KiB capture"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
