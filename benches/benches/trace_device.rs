//! GPU device memory in trace records: per-record time and GB/s of the server path (a client process
//! records through `TraceClient::record_device`, synchronously: from the call to the server's
//! acknowledgement that the bytes are in its ring) against the original design's way (the reading process
//! opens the IPC handle, copies into pageable host memory and closes the handle, for every record), measured
//! in the same run, for 64 B, 64 KiB, 1 MiB, 16 MiB and 256 MiB. A last row measures what 256 MiB records of
//! one client cost a second client's 64-byte records (the server copies on one thread).
//!
//! Not a criterion bench: each figure is a median over a fixed number of records, one GPU, two processes.
//! `cargo bench -p lizard-benches --bench trace_device`. On a machine without a GPU it prints
//! "skipped: no CUDA driver" and exits 0. Goals (H200): a ≤ 4 KiB record at a median ≤ 15 µs, 16 MiB records
//! at ≥ 40 GB/s (the design's way: 11–15 GB/s), no record lost uncounted.

#[path = "../../lizard-trace/tests/gpu/mod.rs"]
mod gpu;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gpu::{open_copy_close, pattern, DeviceBuffer, Gpu};
use lizard_trace::{
    ClientConfig, Delivery, DeviceMode, DeviceSupport, ServerConfig, SocketName, TraceClient,
    TraceServer,
};

const MIB: usize = 1 << 20;

/// Record sizes and how many records of each are timed.
const ROWS: [(usize, usize); 5] = [
    (64, 2000),
    (64 << 10, 1000),
    (MIB, 300),
    (16 * MIB, 60),
    (256 * MIB, 8),
];

/// The allocation every record reads from.
const ALLOCATION: usize = 256 * MIB;

const ROLE: &str = "LIZARD_BENCH_ROLE";
const SOCKET: &str = "LIZARD_BENCH_SOCKET";

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples[samples.len() / 2]
}

fn quantile(mut samples: Vec<Duration>, q: f64) -> Duration {
    samples.sort_unstable();
    samples[((samples.len() - 1) as f64 * q) as usize]
}

fn gbps(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64() / 1e9
}

fn connect() -> TraceClient {
    let name: SocketName = std::env::var(SOCKET).expect(SOCKET).parse().unwrap();
    let mut config = ClientConfig::default();
    config.device_mode = DeviceMode::Sync {
        deadline: Duration::from_secs(30),
    };
    TraceClient::connect_with(&name, config).expect("connect")
}

/// The client process: owns the allocation, prints its handle for the baseline, times its records and
/// prints `row SIZE MEDIAN_NS`.
fn client_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(ALLOCATION, |k| pattern(5, k));
    println!(
        "handle {}",
        buffer
            .ipc_handle()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let mut client = connect();
    for (size, count) in ROWS {
        // One warm-up record opens the handle in the server; the timed ones reuse it.
        assert!(matches!(
            client.record_device("bench", buffer.ptr, size),
            Ok(Delivery::Stored { .. })
        ));
        let mut times = Vec::with_capacity(count);
        for _ in 0..count {
            let start = Instant::now();
            let delivery = client.record_device("bench", buffer.ptr, size);
            times.push(start.elapsed());
            assert!(
                matches!(delivery, Ok(Delivery::Stored { .. })),
                "{delivery:?}"
            );
        }
        println!("row {size} {}", median(times).as_nanos());
    }
    std::io::stdout().flush().unwrap();
    // Waits for the parent's baseline to finish with the allocation.
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// A second client's 64-byte records while another records 256 MiB ones: prints `small P50 P99 MAX`.
fn small_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(MIB, |k| pattern(6, k));
    let mut client = connect();
    let mut times = Vec::new();
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        let start = Instant::now();
        let delivery = client.record_device("small", buffer.ptr, 64);
        times.push(start.elapsed());
        assert!(
            matches!(delivery, Ok(Delivery::Stored { .. })),
            "{delivery:?}"
        );
    }
    println!(
        "small {} {} {}",
        median(times.clone()).as_nanos(),
        quantile(times.clone(), 0.99).as_nanos(),
        quantile(times, 1.0).as_nanos()
    );
}

/// A client that records 256 MiB records until killed.
fn large_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(256 * MIB, |k| pattern(7, k));
    let mut client = connect();
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        let _ = client.record_device("large", buffer.ptr, 256 * MIB);
    }
}

fn spawn(role: &str, name: &SocketName) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .env(ROLE, role)
        .env(SOCKET, name.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("client") => return client_role(),
        Ok("small") => return small_role(),
        Ok("large") => return large_role(),
        _ => {}
    }
    if !gpu::available() {
        test_data::skip!(test_data::Fixture::Cuda, "no CUDA driver");
        return;
    }
    let name = SocketName::abstract_name(format!("lizard-bench-device-{}", std::process::id()));
    let mut config = ServerConfig::with_capacity(1 << 30);
    config.max_payload = 256 * MIB as u32;
    let server = TraceServer::start(&name, config).unwrap();
    println!("server: {}", server.device_support());
    if !matches!(server.device_support(), DeviceSupport::Available { .. }) {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "the server cannot copy device memory"
        );
        return;
    }
    let mut child = spawn("client", &name);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut handle = [0u8; 64];
    let mut rows = Vec::new();
    let mut line = String::new();
    while out.read_line(&mut line).unwrap() > 0 {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["handle", hex] => {
                for (i, b) in handle.iter_mut().enumerate() {
                    *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
                }
            }
            ["row", size, ns] => rows.push((
                size.parse::<usize>().unwrap(),
                Duration::from_nanos(ns.parse().unwrap()),
            )),
            _ => {}
        }
        line.clear();
        if rows.len() == ROWS.len() {
            break;
        }
    }
    assert_eq!(rows.len(), ROWS.len(), "the client process failed");

    // The baseline, in this process (not the allocation's owner), while the owner waits.
    let _gpu = Gpu::open();
    println!(
        "{:>10} {:>14} {:>10} {:>14} {:>10} {:>7}",
        "record", "server path", "GB/s", "open/copy/close", "GB/s", "ratio"
    );
    for ((size, count), (_, server_time)) in ROWS.iter().zip(&rows) {
        let mut dst = vec![0u8; *size];
        open_copy_close(&handle, 0, &mut dst);
        assert!(dst
            .iter()
            .take(4096)
            .enumerate()
            .all(|(k, &b)| b == pattern(5, k)));
        let times: Vec<Duration> = (0..*count)
            .map(|_| {
                let start = Instant::now();
                open_copy_close(&handle, 0, &mut dst);
                start.elapsed()
            })
            .collect();
        let baseline = median(times);
        println!(
            "{:>10} {:>11.1} µs {:>10.2} {:>11.1} µs {:>10.2} {:>6.2}x",
            size,
            server_time.as_secs_f64() * 1e6,
            gbps(*size, *server_time),
            baseline.as_secs_f64() * 1e6,
            gbps(*size, baseline),
            baseline.as_secs_f64() / server_time.as_secs_f64()
        );
    }
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());

    // What 256 MiB records of one client cost another client's 64-byte records.
    let mut large = spawn("large", &name);
    std::thread::sleep(Duration::from_millis(500));
    let small = spawn("small", &name).wait_with_output().unwrap();
    let _ = large.kill();
    let _ = large.wait();
    let text = String::from_utf8_lossy(&small.stdout);
    if let Some(rest) = text.lines().find_map(|l| l.strip_prefix("small ")) {
        let ns: Vec<f64> = rest
            .split_whitespace()
            .map(|n| n.parse::<f64>().unwrap() / 1e3)
            .collect();
        println!(
            "64 B records beside a client recording 256 MiB records: median {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            ns[0], ns[1], ns[2]
        );
    }
    let stats = server.stats();
    println!(
        "server: {} records stored, {} refused, {} acknowledgements dropped; handles {:?}",
        stats.records_stored,
        stats.rejected.total(),
        stats.acks_dropped,
        stats.handles
    );
    assert_eq!(stats.rejected.total(), 0, "records refused: {stats:?}");
}
