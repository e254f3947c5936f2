//! What a new user meets in a first hour with every subcommand, and the mistakes people make: `/dev/zero`,
//! a FIFO nobody writes to, a directory, random bytes, XML of another kind, an unwritable `-o`, an IPv6
//! address without brackets. Each ends by itself, in bounded time and memory, with the documented exit
//! status and a line that says what was expected and what was found; outputs say what they mean in words.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{stderr, stdout};

/// Longest any of these may take: each ends in well under a second on a sound build.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `lizard args` to its end, killed (and the test failed) past [`DEADLINE`]; returns its output and
/// how long it took.
fn run(args: &[&str]) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lizard");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let readers = (
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes);
            bytes
        }),
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = err.read_to_end(&mut bytes);
            bytes
        }),
    );
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lizard {args:?} ran past {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let output = Output {
        status,
        stdout: readers.0.join().expect("stdout"),
        stderr: readers.1.join().expect("stderr"),
    };
    (output, started.elapsed())
}

/// `lizard args` fails with `code`, its standard error saying `says`.
fn fails(args: &[&str], code: i32, says: &str) -> Output {
    let (output, _) = run(args);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}: {}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains(says),
        "{args:?}: {}",
        stderr(&output)
    );
    output
}

/// A fresh folder of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-first-hour-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    dir
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path.to_str().expect("utf-8").to_owned()
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A capture document with these delta counters and values, over `seconds`.
fn capture_doc(counters: &[(&str, i64)], seconds: f64) -> String {
    let counters: Vec<String> = counters
        .iter()
        .enumerate()
        .map(|(i, (name, value))| {
            format!(
                r#"{{"id": {}, "counter": "{name}", "units": "cycles", "class": "delta", "value": {value}, "samples": []}}"#,
                i + 1
            )
        })
        .collect();
    format!(
        r#"{{"window_ns": [0, {}], "duration_s": {seconds}, "counters": [{}]}}"#,
        (seconds * 1e9) as u64,
        counters.join(",")
    )
}

#[test]
fn dev_zero_is_refused_at_each_inputs_limit_by_every_command() {
    let dir = scratch("zero");
    let doc = write(&dir, "c.json", capture_doc(&[("A", 1)], 1.0).as_bytes());
    let trace = write(&dir, "t.bin", &[0u8; 64]);
    for args in [
        vec!["report", "/dev/zero"],
        vec!["diff", "/dev/zero", &doc],
        vec!["events", "/dev/zero"],
        vec!["stm-report", &trace, "--elf", "/dev/zero"],
        vec!["stm-report", &trace, "--dict", "/dev/zero"],
        vec!["stm-report", &trace, "--dcm", "/dev/zero"],
        vec!["stm-report", &trace, "--cptracer-layout", "/dev/zero"],
        vec!["gatord-sim", "--port", "0", "--events", "/dev/zero"],
    ] {
        let (output, took) = run(&args);
        assert_eq!(
            output.status.code(),
            Some(4),
            "{args:?}: {}",
            stderr(&output)
        );
        let message = stderr(&output);
        assert!(
            message.contains("/dev/zero") && message.contains("larger than the limit"),
            "{args:?}: {message}"
        );
        assert_eq!(message.lines().count(), 1, "{args:?}: {message}");
        eprintln!("{args:?}: {:.2} s", took.as_secs_f64());
    }
    // The limit is raisable, and small limits hold too.
    fails(&["--max-input", "1KiB", "diff", &doc, &doc], 0, "");
    fails(
        &["report", "--max-input", "8", &doc],
        4,
        "limit for a capture document, 8 bytes",
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_fifo_nobody_writes_to_ends_at_sigterm() {
    let dir = scratch("fifo");
    let fifo = dir.join("events.xml");
    mkfifo(&fifo);
    for args in [
        vec![
            "gatord-sim",
            "--port",
            "0",
            "--events",
            fifo.to_str().unwrap(),
        ],
        vec!["report", fifo.to_str().unwrap()],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lizard"))
            .args(&args)
            .stderr(Stdio::piped())
            .spawn()
            .expect("run lizard");
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: kill has no memory preconditions; the pid is our own running child.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("{args:?} ignored SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130), "{args:?}");
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn files_that_are_not_events_are_refused_as_such() {
    let dir = scratch("events");
    let cases = [
        (write(&dir, "empty.xml", b""), "no XML element"),
        (write(&dir, "text.txt", b"hello world\n"), "no XML element"),
        (write(&dir, "foo.xml", b"<foo/>"), "found <foo>"),
        (
            write(
                &dir,
                "pmus.xml",
                b"<?xml version=\"1.0\"?>\n<pmus><pmu/></pmus>\n",
            ),
            "found <pmus> at 2:1",
        ),
        (
            write(
                &dir,
                "capture.json",
                capture_doc(&[("A", 1)], 1.0).as_bytes(),
            ),
            "no XML element",
        ),
        (
            write(&dir, "none.xml", b"<events></events>"),
            "an events XML file with counter sets or events, but it has none",
        ),
        (dir.to_str().unwrap().to_owned(), "is a directory"),
    ];
    for (file, says) in &cases {
        fails(&["events", file], 4, says);
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_local_capture_of_zeros_or_random_bytes_fails_with_its_problems_summed_up() {
    let dir = scratch("apc");
    let zeros = dir.join("zeros.apc");
    std::fs::create_dir(&zeros).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zeros.join("0000000000")).unwrap();
    let output = fails(
        &["apc-dump", zeros.to_str().unwrap()],
        4,
        "a frame file of a capture, with counter values, but it gave no value",
    );
    let message = stderr(&output);
    assert!(
        message.lines().count() < 10,
        "summed up, not listed: {message}"
    );
    assert!(message.contains("more like these"), "{message}");
    let random = dir.join("random.apc");
    std::fs::create_dir(&random).unwrap();
    // A fixed pseudo-random sequence (xorshift).
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..65536)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(random.join("0000000000"), &bytes).unwrap();
    let output = fails(&["apc-dump", random.to_str().unwrap()], 4, "gave no value");
    assert!(stdout(&output).contains("samples: 0"));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn stm_dump_finds_frames_and_says_which_trace_ids_it_saw() {
    let Some(file) = test_data::path("opencsd-stm/stm_only/cstraceitm.bin") else {
        return;
    };
    let file = file.to_str().unwrap();
    // CoreSight frames without --trace-id: found, said, and decoded for their one trace ID.
    let (found, _) = run(&["stm-dump", file, "--elements"]);
    assert!(found.status.success(), "{}", stderr(&found));
    assert!(
        stderr(&found).contains("holds CoreSight frames of trace ID 0x20"),
        "{}",
        stderr(&found)
    );
    let (named, _) = run(&["stm-dump", file, "--elements", "--trace-id", "0x20"]);
    assert_eq!(stdout(&found), stdout(&named));
    // A trace ID that carries nothing: the IDs seen are listed, and nothing decoded is a failure.
    fails(
        &["stm-dump", file, "--trace-id", "0x30"],
        4,
        "no packet of trace ID 0x30 decoded in its 32768 bytes (trace IDs in its first frames: 0x20",
    );
    fails(
        &["stm-dump", file, "--trace-id", "0x80"],
        2,
        "trace IDs are 7-bit",
    );
    fails(
        &["stm-dump", file, "--trace-id", "0"],
        2,
        "trace IDs are 7-bit",
    );
    // Read as bare STP on purpose, it says it looks like frames.
    fails(
        &["stm-dump", file, "--bare"],
        4,
        "it looks like CoreSight frames (trace IDs: 0x20",
    );
    // The same format names as every subcommand: `table` (and `text`, its other name).
    for format in ["table", "text"] {
        let (output, _) = run(&["stm-dump", file, "--trace-id", "0x20", "--format", format]);
        assert!(output.status.success(), "{format}");
    }
}

#[test]
fn diff_refuses_an_empty_comparison_and_says_when_windows_differ() {
    let dir = scratch("diff");
    let a = write(&dir, "a.json", capture_doc(&[("A", 100)], 1.0).as_bytes());
    let b = write(&dir, "b.json", capture_doc(&[("B", 100)], 1.0).as_bytes());
    fails(
        &["diff", &a, &b, "--max-increase", "5"],
        4,
        "the two have no counter in common",
    );
    // A 1 s capture against a 2 s one of the same rate: as captured, +100 % and a word about the
    // windows; per second, no change.
    let long = write(
        &dir,
        "long.json",
        capture_doc(&[("A", 200)], 2.0).as_bytes(),
    );
    let output = fails(
        &["diff", &a, &long, "--max-increase", "5"],
        5,
        "the windows differ (base 1.000 s, new 2.000 s)",
    );
    assert!(stderr(&output).contains("over windows of different lengths"));
    let (rates, _) = run(&[
        "diff",
        &a,
        &long,
        "--max-increase",
        "5",
        "--per-second",
        "--format",
        "json",
    ]);
    assert!(rates.status.success(), "{}", stderr(&rates));
    let doc: serde_json::Value = serde_json::from_slice(&rates.stdout).unwrap();
    assert_eq!(doc["basis"], "per-second");
    assert_eq!(doc["counters"][0]["base"], 100.0);
    assert_eq!(doc["counters"][0]["new"], 100.0);
    assert_eq!(doc["counters"][0]["units"], "cycles/s");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn stat_json_never_mixes_with_the_commands_output() {
    let (output, _) = run(&["stat", "--format", "json", "--", "echo", "hello"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is the document");
    assert_eq!(doc["command"], serde_json::json!(["echo", "hello"]));
    assert!(stderr(&output).contains("hello"));
    // -o: the document in the file, the command's output where it was.
    let dir = scratch("stat");
    let file = dir.join("s.json");
    let (output, _) = run(&[
        "stat",
        "--format",
        "json",
        "-o",
        file.to_str().unwrap(),
        "--",
        "echo",
        "hi",
    ]);
    assert!(output.status.success());
    assert_eq!(stdout(&output), "hi\n");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(doc["user_s"].is_f64() && doc["system_s"].is_f64(), "{doc}");
    // The table reads like perf stat's: the scope in the header, no row per counter not counted.
    let (table, _) = run(&["stat", "--", "true"]);
    let text = stderr(&table);
    assert!(
        text.starts_with("Counters for command 'true' and its children ("),
        "{text}"
    );
    assert!(
        text.contains("CPUs utilised") && text.contains(" s elapsed"),
        "{text}"
    );
    assert!(
        !text.lines().any(|l| l.contains("  -  ")),
        "no row without a value: {text}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn outputs_that_cannot_be_written_fail_before_the_work() {
    // A 30 s capture to a folder that does not exist ends at once.
    let (output, took) = run(&[
        "capture",
        "--no-gatord",
        "--duration",
        "30s",
        "-o",
        "/nonexistent/dir/x",
    ]);
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(stderr(&output).contains("/nonexistent/dir/x"));
    assert!(took < Duration::from_secs(10), "{took:?}");
    let (output, took) = run(&["stat", "-o", "/nonexistent/dir/x", "--", "sleep", "30"]);
    assert_eq!(output.status.code(), Some(4));
    assert!(took < Duration::from_secs(10), "{took:?}");
    for args in [
        vec!["list", "--no-gatord", "-o", "/nonexistent/x"],
        vec!["doctor", "-o", "/nonexistent/x"],
        vec!["events", "-o", "/nonexistent/x", "/dev/null"],
    ] {
        fails(&args, 4, "/nonexistent/x");
    }
}

#[test]
fn a_binary_format_headed_for_a_terminal_is_refused_before_the_capture() {
    // `script` (util-linux's: BusyBox's takes other options) gives the command a terminal for its output.
    let util_linux = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("util-linux"));
    if !util_linux {
        eprintln!("skipped: no util-linux `script` to give the command a terminal");
        return;
    }
    let command = format!(
        "{} capture --no-gatord --format perfetto --duration 30s",
        env!("CARGO_BIN_EXE_lizard")
    );
    let started = Instant::now();
    let output = Command::new("timeout")
        .args(["60", "script", "-qec", &command, "/dev/null"])
        .output()
        .expect("run script");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "refused before the capture"
    );
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("a Perfetto trace is binary"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn trace_server_and_trace_dump_speak_in_words() {
    let dir = scratch("trace");
    let ring = dir.join("ring.bin");
    let socket = format!("@lizard-first-hour-{}", std::process::id());
    let (server, _) = run(&[
        "trace-server",
        "--socket",
        &socket,
        "--capacity",
        "64KiB",
        "--duration",
        "300ms",
        "--no-device",
        "-o",
        ring.to_str().unwrap(),
    ]);
    assert!(server.status.success(), "{}", stderr(&server));
    let text = stderr(&server);
    assert!(
        text.contains("trace-server: stopped; the ring: no records held"),
        "{text}"
    );
    assert!(text.contains("connections: 0 accepted"), "{text}");
    assert!(!text.contains('{'), "no Debug structs: {text}");
    let (dump, _) = run(&["trace-dump", ring.to_str().unwrap()]);
    assert!(dump.status.success(), "{}", stderr(&dump));
    assert!(stdout(&dump)
        .starts_with("no records held (the next gets sequence 0), 0 bytes of 64 KiB used"));
    assert!(!stdout(&dump).contains('{'), "{}", stdout(&dump));
    fails(&["trace-dump", "/dev/zero"], 4, "bad magic");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn addresses_take_host_names_and_refuse_an_ambiguous_ipv6() {
    fails(&["capture", "--gatord", "::1:8080"], 2, "[::1]:8080");
    fails(&["doctor", "--gatord", "::1:8080"], 2, "ambiguous");
    // A host name where an address is: serve listens on what localhost resolves to.
    let (serve, _) = run(&[
        "serve",
        "--no-gatord",
        "--listen",
        "localhost:0",
        "--interval",
        "100ms",
        "--",
        "sleep",
        "0.3",
    ]);
    assert!(serve.status.success(), "{}", stderr(&serve));
    assert!(
        stderr(&serve).contains("at http://127.0.0.1:")
            || stderr(&serve).contains("at http://[::1]:"),
        "{}",
        stderr(&serve)
    );
    let (sim, _) = run(&[
        "gatord-sim",
        "--bind",
        "localhost",
        "--port",
        "0",
        "--duration",
        "100ms",
    ]);
    assert!(sim.status.success(), "{}", stderr(&sim));
    assert!(
        stderr(&sim).contains("listening on 127.0.0.1:")
            || stderr(&sim).contains("listening on [::1]:")
    );
}

#[test]
fn gatord_sim_lists_its_gpus_and_checks_the_counters_it_is_asked_to_serve() {
    let (list, _) = run(&["gatord-sim", "--gpu", "list"]);
    assert!(list.status.success());
    assert!(stdout(&list).lines().any(|l| l.trim() == "Mali-G78"));
    fails(
        &[
            "gatord-sim",
            "--port",
            "0",
            "--perf-counters",
            "ARMv8_Cortex_A72_ccnt",
        ],
        2,
        "the events served name Sim_ccnt",
    );
    let (ok, _) = run(&[
        "gatord-sim",
        "--port",
        "0",
        "--perf-counters",
        "Sim_ccnt",
        "--duration",
        "100ms",
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

#[test]
fn the_help_gives_one_exit_status_table() {
    let (help, _) = run(&["--help"]);
    let text = stdout(&help);
    for line in [
        "Exit status:",
        "  2    bad arguments",
        "  4    an input file",
        "  130  interrupted",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
}
