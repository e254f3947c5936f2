//! Whether `lizard serve` keeps its memory flat: the release `lizard serve` at its default rate (a window a
//! second) over the local counters, scraped every second for `LIZARD_BENCH_SECONDS` (600 by default), its
//! resident set (`VmRSS`, `/proc/PID/status`) printed after its first 10 s and at the end, as a ratio.
//!
//! Not a criterion bench: the figure is one long run. Run with
//! `cargo build --release -p lizard-cli && cargo bench -p lizard-benches --bench serve_memory`; without the
//! release `lizard` binary it is skipped with a note.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The release `lizard` beside this bench's own binary (`target/release/deps/serve_memory-…`).
fn lizard_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe.parent()?.parent()?.join("lizard");
    path.exists().then_some(path)
}

/// The resident set of process `pid` in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// One scrape; the length of the answer.
fn scrape(address: SocketAddr) -> usize {
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(2)) else {
        return 0;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = stream.write_all(b"GET /metrics HTTP/1.0\r\n\r\n");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer.len()
}

fn main() {
    let Some(lizard) = lizard_binary() else {
        test_data::skip!(
            test_data::Fixture::ReleaseBinary,
            "serve_memory: build the release binary first (cargo build --release -p lizard-cli)"
        );
        return;
    };
    let seconds: u64 = std::env::var("LIZARD_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let mut child = Command::new(lizard)
        .args(["serve", "--no-gatord", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lizard serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let address: SocketAddr = loop {
        let Some(Ok(line)) = lines.next() else {
            println!("serve_memory: lizard serve did not start");
            let _ = child.kill();
            let _ = child.wait();
            return;
        };
        if let Some(rest) = line.split("http://").nth(1) {
            break rest
                .split('/')
                .next()
                .and_then(|a| a.parse().ok())
                .expect("an address");
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    let pid = child.id();
    let started = Instant::now();
    let mut first = None;
    let mut scrapes = 0u64;
    let mut bytes = 0usize;
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        bytes = scrape(address);
        scrapes += 1;
        if first.is_none() && started.elapsed() >= Duration::from_secs(10.min(seconds)) {
            first = Some(rss_kib(pid));
        }
    }
    let end = rss_kib(pid);
    let first = first.unwrap_or(end);
    println!(
        "ratio serve_memory/{seconds}s/rss = {:.4} x its size after 10 s ({first} KiB then {end} KiB; {scrapes} scrapes of {bytes} bytes)",
        end as f64 / first.max(1) as f64
    );
    let _ = child.kill();
    let _ = child.wait();
}
