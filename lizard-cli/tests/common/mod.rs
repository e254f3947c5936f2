//! Helpers shared by the CLI's integration tests: running `lizard`, a `lizard gatord-sim` child on a free
//! port, the gatord 9.7.2 data files, and the peak memory of a `lizard` process.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

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

/// Runs `cmd` to its end (killed after [`DEADLINE`]); returns its exit status and peak RSS in KiB.
///
/// Linux carries the high-water mark of the memory a child had before `exec` (a copy or a share of
/// this test process's) into the child's `ru_maxrss`, so this process's own mark is first reset to its
/// current size (`/proc/self/clear_refs`, "5"): the figure is then the larger of this process's size at
/// the spawn and the command's own peak.
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, not Child::wait"
)]
pub fn run_measuring_peak(cmd: &mut Command) -> (i32, i64) {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset this process's peak RSS");
    let mut child = cmd.spawn().expect("run lizard");
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: all-zero bytes are a valid `rusage` (a struct of integers).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `usage` are valid for writes; `pid` is our own unreaped child.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(reaped >= 0, "wait4: {}", std::io::Error::last_os_error());
        if reaped == pid {
            return (status, usage.ru_maxrss);
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lizard stm-dump did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
