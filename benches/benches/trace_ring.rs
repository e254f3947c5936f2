//! Records per second into a trace ring kept in a shared ring file (`TraceRing::open_shared`: a commit word
//! per record, the header kept current for readers and the next server) against the in-memory ring, in the
//! same run, for 64-byte and 4-KiB payloads; and the shared ring written back to a file on disk at a few
//! `--sync` settings. Each ring is 16 MiB and overwrites its oldest records throughout. Payload bytes are
//! generated here.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lizard_benches::Ratios;
use lizard_trace::shared_ring::SyncPolicy;
use lizard_trace::{RecordMeta, TraceRing};

/// Bytes of each ring.
const CAPACITY: usize = 16 << 20;

/// A ring file of this bench's own under `dir`.
fn ring_path(dir: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(dir);
    let dir = match dir.is_dir() {
        true => dir,
        false => std::env::temp_dir(),
    };
    let path = dir.join(format!("lizard-bench-{}-{name}.ring", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

/// Pushes `iters` records into `ring`; their time.
fn push(ring: &mut TraceRing, meta: &mut RecordMeta, payload: &[u8], iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        meta.client_seq += 1;
        ring.push(meta, payload).unwrap();
    }
    start.elapsed()
}

fn records_per_second(c: &mut Criterion, label: &str, payload_len: usize) {
    let payload: Vec<u8> = (0..payload_len).map(|i| i as u8).collect();
    let mut meta = RecordMeta::new("bench", "trace_ring.rs", 1).unwrap();
    let mut memory = TraceRing::new(CAPACITY).unwrap();
    // tmpfs: what survives the server; disk: what a sync policy writes back.
    let shm = ring_path("/dev/shm", &format!("{label}-shm"));
    let disk = ring_path(env!("CARGO_TARGET_TMPDIR"), &format!("{label}-disk"));
    let (mut shared, _) = TraceRing::open_shared(&shm, Some(CAPACITY), SyncPolicy::Never).unwrap();
    let mut synced: Vec<(String, TraceRing, PathBuf)> = [
        ("sync_every_1000_records", "1000"),
        ("sync_every_10ms", "10ms"),
    ]
    .into_iter()
    .map(|(name, policy)| {
        let path = PathBuf::from(format!("{}-{name}", disk.display()));
        let _ = std::fs::remove_file(&path);
        let (ring, _) =
            TraceRing::open_shared(&path, Some(CAPACITY), policy.parse().unwrap()).unwrap();
        (name.to_owned(), ring, path)
    })
    .collect();

    let ratios = Ratios::new();
    let mut group = c.benchmark_group(format!("trace_ring_{label}"));
    group.throughput(Throughput::Elements(1));
    group.bench_function("baseline_in_memory_ring", |b| {
        ratios.iter_custom(b, "baseline_in_memory_ring", |iters| {
            push(&mut memory, &mut meta, &payload, iters)
        })
    });
    group.bench_function("shared_ring_on_tmpfs", |b| {
        ratios.iter_custom(b, "shared_ring_on_tmpfs", |iters| {
            push(&mut shared, &mut meta, &payload, iters)
        })
    });
    for (name, ring, _) in &mut synced {
        let function = format!("shared_ring_on_disk_{name}");
        group.bench_function(&function, |b| {
            ratios.iter_custom(b, &function, |iters| push(ring, &mut meta, &payload, iters))
        });
    }
    group.finish();
    ratios.print(
        &format!("trace_ring_{label}"),
        "baseline_in_memory_ring",
        100,
    );
    for (_, ring, path) in synced {
        assert_eq!(ring.sync_failures(), 0);
        drop(ring);
        let _ = std::fs::remove_file(path);
    }
    drop(shared);
    let _ = std::fs::remove_file(shm);
}

fn payload_64_bytes(c: &mut Criterion) {
    records_per_second(c, "64B", 64);
}

fn payload_4_kib(c: &mut Criterion) {
    records_per_second(c, "4KiB", 4096);
}

criterion_group!(benches, payload_64_bytes, payload_4_kib);
criterion_main!(benches);
