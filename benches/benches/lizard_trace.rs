//! Benches lizard-trace records per second from one client to a running `TraceServer` (real `SOCK_SEQPACKET`
//! socket on an abstract name, records stored in the ring) for 64-byte payloads (inline) and 64-KiB payloads
//! (sealed memfd), against raw sends of the same message bytes over a UNIX datagram socket pair to a thread that
//! only counts them, in the same run. Payload bytes are generated here.

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lizard_benches::Ratios;
use lizard_trace::message::{MessageHead, PayloadKind};
use lizard_trace::{
    ClientConfig, FileTag, ModuleTag, SendPolicy, ServerConfig, SocketName, TraceClient,
    TraceServer,
};

/// The longest a measurement waits for the receiver to catch up.
const WAIT: Duration = Duration::from_secs(120);

/// The bytes a client sends for `payload` inline: the 58-byte message head, then the payload.
fn message_bytes(payload: &[u8]) -> Vec<u8> {
    let head = MessageHead {
        kind: PayloadKind::Inline,
        ack: false,
        payload_len: payload.len() as u32,
        timestamp_ns: 0,
        client_seq: 0,
        line: 1,
        module: ModuleTag::new("bench").unwrap(),
        file: FileTag::new("lizard_trace.rs").unwrap(),
    };
    let mut out = head.encode().to_vec();
    out.extend_from_slice(payload);
    out
}

/// A datagram socket pair whose far end a thread drains, counting datagrams.
struct RawSink {
    sender: UnixDatagram,
    received: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl RawSink {
    fn new() -> RawSink {
        let (sender, receiver) = UnixDatagram::pair().unwrap();
        receiver
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let received = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (count, done) = (Arc::clone(&received), Arc::clone(&stop));
        let thread = thread::spawn(move || {
            let mut buf = vec![0u8; 128 * 1024];
            while !done.load(Ordering::Relaxed) {
                if receiver.recv(&mut buf).is_ok() {
                    count.fetch_add(1, Ordering::Release);
                }
            }
        });
        RawSink {
            sender,
            received,
            stop,
            thread: Some(thread),
        }
    }

    /// Sends `bytes` `n` times and waits until all arrived.
    fn send(&self, bytes: &[u8], n: u64) -> Duration {
        let target = self.received.load(Ordering::Acquire) + n;
        let start = Instant::now();
        for _ in 0..n {
            self.sender.send(bytes).unwrap();
        }
        while self.received.load(Ordering::Acquire) < target {
            assert!(start.elapsed() < WAIT, "receiver stalled");
            thread::yield_now();
        }
        start.elapsed()
    }
}

impl Drop for RawSink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn records_per_second(c: &mut Criterion, label: &str, payload_len: usize) {
    let payload: Vec<u8> = (0..payload_len).map(|i| i as u8).collect();
    let name =
        SocketName::abstract_name(format!("lizard-trace-bench-{}-{label}", std::process::id()));
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    let mut config = ClientConfig::default();
    config.policy = SendPolicy::Block { timeout: WAIT };
    let mut client = TraceClient::connect_with(&name, config).unwrap();
    let raw = RawSink::new();
    let bytes = message_bytes(&payload);

    let ratios = Ratios::new();
    let mut group = c.benchmark_group(format!("lizard_trace_{label}"));
    group.throughput(Throughput::Elements(1));
    group.bench_function("baseline_raw_datagram_send", |b| {
        ratios.iter_custom(b, "baseline_raw_datagram_send", |iters| {
            raw.send(&bytes, iters)
        })
    });
    group.bench_function("trace_client_to_server", |b| {
        ratios.iter_custom(b, "trace_client_to_server", |iters| {
            let target = server.stats().records_stored + iters;
            let start = Instant::now();
            for _ in 0..iters {
                let _ = client.record("bench", &payload).unwrap();
            }
            let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= target);
            assert!(done, "server stalled: {stats:?}");
            start.elapsed()
        })
    });
    group.finish();
    ratios.print(
        &format!("lizard_trace_{label}"),
        "baseline_raw_datagram_send",
        100,
    );
    assert_eq!(client.stats().dropped, 0);
}

fn payload_64_bytes(c: &mut Criterion) {
    records_per_second(c, "64B", 64);
}

fn payload_64_kib(c: &mut Criterion) {
    records_per_second(c, "64KiB", 64 * 1024);
}

criterion_group!(benches, payload_64_bytes, payload_64_kib);
criterion_main!(benches);
