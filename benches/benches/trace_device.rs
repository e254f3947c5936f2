//! GPU device memory in trace records, each figure beside a baseline measured in the same run:
//!
//! 1. **What lizard itself costs** (criterion, in the client process): a synchronous 64 B and 4 KiB device
//!    record, from `TraceClient::record_device` to the server's acknowledgement that the bytes are in its
//!    ring, beside a host record of the same size (`TraceClient::record`) as the baseline, and the same
//!    device record by clients that always spin or always sleep while they wait (`AckWait`; the default
//!    client chooses by what it measures). Against the driver stand-in, whose copy is a `memcpy`, this is
//!    lizard's own cost.
//! 2. **The server path against the original design's way**, 64 B to 256 MiB: a client process records
//!    through `record_device` (median per record, GB/s); a third process — neither the allocation's owner
//!    nor the server, which has the handle open already — opens the IPC handle, copies into pageable host
//!    memory and closes it, for every record.
//! 3. **What a large record costs others**: a second client's 64-byte records alone, then while a client
//!    records 256 MiB records, each of which is stored (the ring is sized so that both stay within their
//!    shares; a refused record costs no copy).
//!
//! `cargo bench -p lizard-benches --bench trace_device` with a CUDA driver on the loader's path: NVIDIA's on
//! a GPU machine, or the stand-in (`bash .ci/gpu-trace sim`). Without one it prints "skipped: no CUDA
//! driver" and exits 0. `LIZARD_BENCH_SECONDS` sets criterion's measurement time per function (default 2).
//! Goals: a ≤ 4 KiB device record at a median ≤ 8 µs against the stand-in on the development machine and
//! ≤ 15 µs on an H200; 16 MiB records at ≥ 40 GB/s on an H200 (the design's way: 11–15 GB/s); no record
//! lost uncounted.

#[path = "../../lizard-trace/tests/gpu/mod.rs"]
mod gpu;

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use gpu::peer::{hear, say, Peer};
use gpu::{open_copy_close, pattern, DeviceBuffer, Gpu};
use lizard_benches::Ratios;
use lizard_trace::{
    AckWait, ClientConfig, Delivery, DeviceMode, DeviceSupport, SendPolicy, ServerConfig,
    SocketName, TraceClient, TraceServer,
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

/// The allocation every record of the rows reads from.
const ALLOCATION: usize = 256 * MIB;

/// Large records the last row stores while the small client measures.
const LARGE_RECORDS: usize = 4;

/// Bytes of a record head in the ring.
const HEAD: usize = lizard_trace::HEAD_LEN;

/// The longest any step waits.
const WAIT: Duration = Duration::from_secs(120);

const ROLE: &str = "LIZARD_BENCH_ROLE";
const SOCKET: &str = "LIZARD_BENCH_SOCKET";
const HANDLE: &str = "LIZARD_BENCH_HANDLE";

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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn connect() -> TraceClient {
    connect_with(AckWait::default())
}

/// A client that waits for its acknowledgements as `ack_wait` says.
fn connect_with(ack_wait: AckWait) -> TraceClient {
    let name: SocketName = std::env::var(SOCKET).expect(SOCKET).parse().unwrap();
    let mut config = ClientConfig::default();
    config.ack_wait = ack_wait;
    config.device_mode = DeviceMode::Sync {
        deadline: Duration::from_secs(30),
    };
    config.policy = SendPolicy::Block {
        timeout: Duration::from_secs(30),
    };
    TraceClient::connect_with(&name, config).expect("connect")
}

fn stored(delivery: Result<Delivery, lizard_trace::ClientError>) {
    assert!(
        matches!(delivery, Ok(Delivery::Stored { .. })),
        "{delivery:?}"
    );
}

/// Criterion's measurement time per function.
fn seconds() -> Duration {
    let s = std::env::var("LIZARD_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(2.0);
    Duration::from_secs_f64(s.max(0.1))
}

/// The client process: owns the allocation, measures the small records with criterion, times the rows,
/// says its handle for the baseline process, and keeps the allocation until told.
fn client_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(ALLOCATION, |k| pattern(5, k));
    let mut client = connect();
    let mut spinner = connect_with(AckWait::Spin(lizard_trace::ack_wait::DEFAULT_SPIN));
    let mut sleeper = connect_with(AckWait::Sleep);
    // 1. Small records: a device record against a host record of the same size, and the same device record
    // by clients that always spin, or always sleep, while they wait for the acknowledgement (the default
    // client chooses between the two by what it measures).
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(seconds())
        .sample_size(50)
        .without_plots();
    for (label, size) in [("64B", 64), ("4KiB", 4096)] {
        let payload: Vec<u8> = (0..size).map(|k| pattern(5, k)).collect();
        stored(client.record_device("bench", buffer.ptr, size));
        let ratios = Ratios::new();
        let group_name = format!("trace_device_{label}");
        let mut group = criterion.benchmark_group(&group_name);
        group.bench_function("host_record", |b| {
            ratios.iter(b, "host_record", || {
                assert_eq!(client.record("bench", &payload).unwrap(), Delivery::Sent)
            })
        });
        group.bench_function("device_record_sync", |b| {
            ratios.iter(b, "device_record_sync", || {
                stored(client.record_device("bench", buffer.ptr, size))
            })
        });
        stored(spinner.record_device("bench", buffer.ptr, size));
        group.bench_function("device_record_sync_spinning_client", |b| {
            ratios.iter(b, "device_record_sync_spinning_client", || {
                stored(spinner.record_device("bench", buffer.ptr, size))
            })
        });
        stored(sleeper.record_device("bench", buffer.ptr, size));
        group.bench_function("device_record_sync_sleeping_client", |b| {
            ratios.iter(b, "device_record_sync_sleeping_client", || {
                stored(sleeper.record_device("bench", buffer.ptr, size))
            })
        });
        group.finish();
        ratios.print(&group_name, "host_record", 50);
        if let Some(t) = ratios.median("device_record_sync", 50) {
            say("small", format!("{label} {:.2}", t * 1e6));
        }
    }
    // 2. The rows: one warm-up record opens the handle in the server; the timed ones reuse it.
    for (size, count) in ROWS {
        stored(client.record_device("bench", buffer.ptr, size));
        let mut times = Vec::with_capacity(count);
        for _ in 0..count {
            let start = Instant::now();
            let delivery = client.record_device("bench", buffer.ptr, size);
            times.push(start.elapsed());
            stored(delivery);
        }
        say("row", format!("{size} {}", median(times).as_nanos()));
    }
    say("handle", hex(&buffer.ipc_handle()));
    // Keeps the allocation alive while the baseline process reads it.
    let _ = hear(WAIT);
}

/// The third process: the original design's way, open, copy into pageable memory and close per record,
/// for each row; says `baseline SIZE MEDIAN_NS`.
fn baseline_role() {
    let _gpu = Gpu::open();
    let text = std::env::var(HANDLE).expect(HANDLE);
    let mut handle = [0u8; 64];
    for (i, b) in handle.iter_mut().enumerate() {
        *b = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap();
    }
    for (size, count) in ROWS {
        let mut dst = vec![0u8; size];
        open_copy_close(&handle, 0, &mut dst);
        assert!(dst
            .iter()
            .take(4096)
            .enumerate()
            .all(|(k, &b)| b == pattern(5, k)));
        let times: Vec<Duration> = (0..count)
            .map(|_| {
                let start = Instant::now();
                open_copy_close(&handle, 0, &mut dst);
                start.elapsed()
            })
            .collect();
        say("baseline", format!("{size} {}", median(times).as_nanos()));
    }
}

/// A client of 64-byte records: alone first, then, once told, until told to stop; says `alone` and
/// `beside` with P50 P99 MAX in ns and the count.
fn small_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(MIB, |k| pattern(6, k));
    let mut client = connect();
    let mut measure = |until: &dyn Fn(usize) -> bool| {
        let mut times = Vec::new();
        while !until(times.len()) {
            let start = Instant::now();
            let delivery = client.record_device("small", buffer.ptr, 64);
            times.push(start.elapsed());
            stored(delivery);
        }
        format!(
            "{} {} {} {}",
            median(times.clone()).as_nanos(),
            quantile(times.clone(), 0.99).as_nanos(),
            quantile(times.clone(), 1.0).as_nanos(),
            times.len()
        )
    };
    say("alone", measure(&|n| n >= 5000));
    say("ready", "");
    assert_eq!(hear(WAIT).as_deref(), Some("go"));
    let stop = Arc::new(AtomicBool::new(false));
    let told = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = hear(WAIT);
        told.store(true, Ordering::Relaxed);
    });
    let end = Instant::now() + WAIT;
    say(
        "beside",
        measure(&|_| stop.load(Ordering::Relaxed) || Instant::now() > end),
    );
}

/// A client that stores `LARGE_RECORDS` records of 256 MiB once told.
fn large_role() {
    let _gpu = Gpu::open();
    let buffer = DeviceBuffer::new(256 * MIB, |k| pattern(7, k));
    let mut client = connect();
    say("ready", "");
    assert_eq!(hear(WAIT).as_deref(), Some("go"));
    for _ in 0..LARGE_RECORDS {
        stored(client.record_device("large", buffer.ptr, 256 * MIB));
    }
}

fn spawn(role: &str, name: &SocketName, env: &[(&str, String)]) -> Peer {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env(ROLE, role)
        .env(SOCKET, name.to_string())
        .env(
            "CRITERION_HOME",
            std::env::temp_dir().join("lizard-bench-criterion"),
        )
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    Peer::spawn(command)
}

/// Says `done ROLE` after a role's work (the harness's sign that a child finished).
fn run_role(role: &str, body: fn()) {
    body();
    say("done", role);
}

fn start_server(capacity: usize) -> (TraceServer, SocketName) {
    let name = SocketName::abstract_name(format!(
        "lizard-bench-device-{}-{capacity}",
        std::process::id()
    ));
    let mut config = ServerConfig::with_capacity(capacity);
    config.max_payload = 256 * MIB as u32;
    (TraceServer::start(&name, config).unwrap(), name)
}

fn field(text: &str, i: usize) -> f64 {
    text.split_whitespace().nth(i).unwrap().parse().unwrap()
}

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("client") => return run_role("client", client_role),
        Ok("baseline") => return run_role("baseline", baseline_role),
        Ok("small") => return run_role("small", small_role),
        Ok("large") => return run_role("large", large_role),
        _ => {}
    }
    if !gpu::available() {
        test_data::skip!(test_data::Fixture::Cuda, "no CUDA driver");
        return;
    }
    let (server, name) = start_server(1 << 30);
    println!("server: {}", server.device_support());
    if !matches!(server.device_support(), DeviceSupport::Available { .. }) {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "the server cannot copy device memory"
        );
        return;
    }
    // 1 and 2: the client measures, then the third process reads its allocation the design's way.
    let mut client = spawn("client", &name, &[]);
    let mut small = Vec::new();
    for _ in 0..2 {
        small.push(client.expect("small", WAIT).unwrap());
    }
    let rows: Vec<(usize, Duration)> = ROWS
        .iter()
        .map(|_| {
            let row = client.expect("row", WAIT).unwrap();
            (
                field(&row, 0) as usize,
                Duration::from_nanos(field(&row, 1) as u64),
            )
        })
        .collect();
    let handle = client.expect("handle", WAIT).unwrap();
    let baseline = spawn("baseline", &name, &[(HANDLE, handle)]);
    let base: Vec<Duration> = ROWS
        .iter()
        .map(|_| {
            let row = baseline.expect("baseline", WAIT).unwrap();
            Duration::from_nanos(field(&row, 1) as u64)
        })
        .collect();
    baseline.finish(WAIT).unwrap();
    client.tell("done");
    let out = client.finish(WAIT).unwrap();
    for line in out.lines().filter(|l| !l.contains(gpu::peer::MARK)) {
        println!("{line}");
    }
    for line in &small {
        println!(
            "device record, synchronous, median (criterion): {} µs",
            line.replace(' ', ": ")
        );
    }
    println!(
        "{:>10} {:>14} {:>10} {:>18} {:>10} {:>7}",
        "record", "server path", "GB/s", "open/copy/close", "GB/s", "ratio"
    );
    for ((size, server_time), baseline) in rows.iter().zip(&base) {
        println!(
            "{:>10} {:>11.1} µs {:>10.2} {:>15.1} µs {:>10.2} {:>6.2}x",
            size,
            server_time.as_secs_f64() * 1e6,
            gbps(*size, *server_time),
            baseline.as_secs_f64() * 1e6,
            gbps(*size, *baseline),
            baseline.as_secs_f64() / server_time.as_secs_f64()
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
    drop(server);

    // 3. What 256 MiB records of one client cost another client's 64-byte records. Each client's share is
    // half the ring: the large client's records all fit in its share, so none is refused.
    let capacity = 2 * LARGE_RECORDS * (256 * MIB + HEAD) + 64 * MIB;
    let (server, name) = start_server(capacity);
    let mut small = spawn("small", &name, &[]);
    let alone = small.expect("alone", WAIT).unwrap();
    small.expect("ready", WAIT).unwrap();
    let mut large = spawn("large", &name, &[]);
    large.expect("ready", WAIT).unwrap();
    small.tell("go");
    large.tell("go");
    large.finish(WAIT).unwrap();
    small.tell("stop");
    let beside = small.expect("beside", WAIT).unwrap();
    small.finish(WAIT).unwrap();
    let us = |text: &str, i: usize| field(text, i) / 1e3;
    println!(
        "64 B records alone: median {:.1} µs, p99 {:.1} µs, max {:.1} µs ({} records)",
        us(&alone, 0),
        us(&alone, 1),
        us(&alone, 2),
        field(&alone, 3)
    );
    println!(
        "64 B records beside a client storing {LARGE_RECORDS} records of 256 MiB: median {:.1} µs, p99 {:.1} µs, max {:.1} µs ({} records); median {:.2}x alone",
        us(&beside, 0),
        us(&beside, 1),
        us(&beside, 2),
        field(&beside, 3),
        field(&beside, 0) / field(&alone, 0)
    );
    let stats = server.stats();
    println!(
        "server: {} records stored, {} refused",
        stats.records_stored,
        stats.rejected.total()
    );
    assert_eq!(stats.rejected.total(), 0, "records refused: {stats:?}");
    assert_eq!(
        server.ledger().accounts().map(|a| a.stored).sum::<u64>(),
        stats.records_stored
    );
}
