//! Helpers shared by the CLI's integration tests: running `lizard`, a `lizard gatord-sim` child on a free
//! port, the gatord 9.7.2 data files, a `lizard` process run under a memory limit, and a Perfetto trace as
//! Perfetto's own protobuf module reads it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

/// Runs `lizard` with `args`.
pub fn lizard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(args)
        .output()
        .expect("run lizard")
}

/// The arguments of `lizard capture` from the gatord at `address` alone (no local counters) for
/// `duration`, then `rest`.
pub fn gatord_capture<'a>(address: &'a str, duration: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "capture",
        "--gatord",
        address,
        "--no-hwcpipe",
        "--duration",
        duration,
    ];
    args.extend_from_slice(rest);
    args
}

/// Standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `../shared/data/gatord-9.7.2/<path>` (files of the real gatord 9.7.2, see that folder's README), or
/// `None` (a printed skip) without the data folder.
pub fn gatord_data(path: &str) -> Option<PathBuf> {
    test_data::gatord(path)
}

/// A running `lizard gatord-sim`, killed when dropped.
pub struct Sim {
    child: Child,
    /// Its `host:port`.
    pub address: String,
}

/// Starts `lizard gatord-sim` on a free port with the extra arguments `extra`; returns it with its
/// address, read from its banner.
pub fn spawn_sim(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(["gatord-sim", "--port", "0", "--duration", "20s"])
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gatord-sim");
    let mut banner = String::new();
    let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
    lines.read_line(&mut banner).expect("banner");
    std::thread::spawn(move || std::io::Read::read_to_string(&mut lines, &mut String::new()));
    let address = banner
        .split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no address in {banner:?}"))
        .to_owned();
    (child, address)
}

impl Sim {
    /// Starts `lizard gatord-sim` on a free port with the extra arguments `args`.
    pub fn start(args: &[&str]) -> Sim {
        let (child, address) = spawn_sim(args);
        Sim { child, address }
    }
}

/// The line of `lizard args`' standard output (a table) that names `name`.
pub fn table_row(args: &[&str], name: &str) -> String {
    let output = lizard(args);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("no row {name}"))
        .to_owned()
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard output as JSON.
pub fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The entry of counter `name` in a JSON output.
pub fn counter<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|c| c["counter"] == name)
        .unwrap_or_else(|| panic!("no {name} in {doc}"))
}

/// Longest a measured command may run before it is killed and the test fails.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// Runs `cmd` with its address space limited to `bytes` (`ulimit -v`, RLIMIT_AS, set in the child before
/// it runs `lizard`): a command that holds its input whole fails there, one that streams does not. Its
/// standard output is read as it comes and only its lines counted (a listing may be far larger than this
/// process should hold); returns the exit status, that count and standard error.
pub fn run_limited(cmd: &mut Command, bytes: u64) -> (std::process::ExitStatus, usize, String) {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe and touches only the child being set up.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lizard");
    let mut stderr_pipe = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    // A child still running at the deadline is killed, which ends the reads below.
    let pid = child.id() as libc::pid_t;
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(DEADLINE).is_err() {
            // SAFETY: kill has no memory preconditions; `pid` is our unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return true;
        }
        false
    });
    let mut stdout = child.stdout.take().expect("stdout");
    let (mut lines, mut chunk) = (0, vec![0u8; 1 << 16]);
    loop {
        match stdout.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => lines += chunk[..n].iter().filter(|&&b| b == b'\n').count(),
        }
    }
    let status = child.wait().expect("wait");
    let _ = done.send(());
    assert!(
        !watchdog.join().expect("watchdog"),
        "lizard ran past {DEADLINE:?}: killed"
    );
    (status, lines, errors.join().expect("stderr reader"))
}

/// perfetto-writer's `tools/decode_trace.py` run on the trace at `path` (Perfetto's own
/// `perfetto_trace_pb2` decoding it); `None` (a printed skip) without python3 or Perfetto's module.
pub fn decode_trace_py(path: &Path) -> Option<Output> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../perfetto-writer/tools/decode_trace.py");
    let output = Command::new("python3").arg(script).arg(path).output();
    let missing = match &output {
        Err(e) => Some((test_data::Fixture::Python3, format!("no python3 ({e})"))),
        Ok(output) if output.status.code() == Some(3) => Some((
            test_data::Fixture::PerfettoPython,
            stderr(output).trim().to_owned(),
        )),
        Ok(_) => None,
    };
    if let Some((fixture, missing)) = missing {
        test_data::skip!(fixture, "{missing}");
        return None;
    }
    output.ok()
}

/// The trace at `path` as `decode_trace.py` reads it, whole (a trace the command wrote has no cut tail);
/// `None` (a printed skip) without Perfetto's module.
pub fn decode_trace(path: &Path) -> Option<Value> {
    let output = decode_trace_py(path)?;
    assert!(
        output.status.success(),
        "decode_trace.py: {}",
        stderr(&output)
    );
    let trace: Value = serde_json::from_slice(&output.stdout).expect("decode_trace.py's JSON");
    assert_eq!(trace["truncated_tail_bytes"], 0, "a whole trace");
    Some(trace)
}
