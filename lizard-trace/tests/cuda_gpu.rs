//! GPU device memory end to end on a machine with an NVIDIA GPU: the server runs in this test process, each
//! client is this test binary re-run as a child process (`gpu_child`), as CUDA IPC requires (a process cannot
//! open its own handles). Without a CUDA driver every test says "skipped: no CUDA driver" and returns; CI has
//! no GPU, and `.ci/gpu-trace` runs this binary on one.
//!
//! - Bytes checked exactly for 1 B, 4 KiB, 1 MiB, 16 MiB and 256 MiB records at offsets inside one
//!   allocation, synchronous and asynchronous, with the handle opened once.
//! - An allocation freed and made again (at the same address, as the driver tends to) is read anew: never the
//!   freed allocation's bytes.
//! - A client killed in the middle of its records: the server keeps serving and closes the client's handles.
//! - Two clients recording one buffer, one of them through the handle the other took.
//! - Client-side and server-side refusals: a host pointer, a range past the allocation.

mod common;
#[path = "gpu/mod.rs"]
mod gpu;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{unique_name, WAIT};
use gpu::{pattern, DeviceBuffer, Gpu};
use lizard_trace::{
    ClientConfig, ClientError, CopyMode, Delivery, DeviceError, DeviceMode, DeviceRegion,
    DeviceSupport, DeviceUuid, IpcHandle, Origin, Refusal, ServerConfig, SocketName, TraceClient,
    TraceServer,
};

const ROLE: &str = "LIZARD_GPU_ROLE";
const SOCKET: &str = "LIZARD_GPU_SOCKET";
const HANDLE: &str = "LIZARD_GPU_HANDLE";
const UUID: &str = "LIZARD_GPU_UUID";

const MIB: usize = 1 << 20;

/// The records of the sizes test: (offset inside the allocation, length).
const SIZES: [(usize, usize); 5] = [
    (0, 1),
    (4093, 4096),
    (65_543, MIB),
    (3 * MIB + 1, 16 * MIB),
    (64 << 10, 256 * MIB),
];

/// The allocation of the sizes test: the largest record and its offset fit.
const SIZES_ALLOCATION: usize = 256 * MIB + (128 << 10);

/// Seeds of the test patterns.
const SIZES_SEED: u64 = 1;
const SHARED_SEED: u64 = 7;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(text: &str) -> [u8; N] {
    let mut out = [0; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex");
    }
    out
}

fn connect(mode: DeviceMode) -> TraceClient {
    let name: SocketName = std::env::var(SOCKET).expect(SOCKET).parse().unwrap();
    let mut config = ClientConfig::default();
    config.device_mode = mode;
    TraceClient::connect_with(&name, config).expect("connect")
}

fn sync() -> DeviceMode {
    DeviceMode::Sync {
        deadline: Duration::from_secs(30),
    }
}

fn stored(result: Result<Delivery, ClientError>) -> u64 {
    match result {
        Ok(Delivery::Stored { seq }) => seq,
        other => panic!("not stored: {other:?}"),
    }
}

/// The client side of every test, chosen by `LIZARD_GPU_ROLE`. Ignored in an ordinary run; run any other way
/// than by the tests below it fails instead of passing without doing anything.
#[test]
#[ignore = "the child process of the GPU tests"]
fn gpu_child() {
    let role = std::env::var(ROLE).expect("gpu_child runs only as the child of a GPU test");
    let gpu = Gpu::open();
    match role.as_str() {
        "sizes" => {
            let buffer = DeviceBuffer::new(SIZES_ALLOCATION, |k| pattern(SIZES_SEED, k));
            let mut client = connect(sync());
            for (offset, len) in SIZES {
                stored(client.record_device("sizes", buffer.ptr + offset as u64, len));
            }
            // The same allocation again: its handle is open already.
            for _ in 0..10 {
                stored(client.record_device("again", buffer.ptr + 4093, 4096));
            }
            // Refusals on this side: a host pointer, a range past the allocation.
            let host = [0u8; 64];
            let err = client
                .record_device("host", host.as_ptr() as u64, 64)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::Device(DeviceError::NotDeviceMemory { .. })
                ),
                "{err:?}"
            );
            let err = client
                .record_device("past", buffer.ptr + SIZES_ALLOCATION as u64 - 10, 100)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::Device(DeviceError::OutsideAllocation { .. })
                ),
                "{err:?}"
            );
            // And on the server's: a region past the allocation sent with the handle itself.
            let region = DeviceRegion {
                handle: IpcHandle(buffer.ipc_handle()),
                offset: SIZES_ALLOCATION as u64 - 10,
                len: 100,
                device: DeviceUuid(gpu.uuid()),
            };
            let err = client
                .record_ipc_at("past", "cuda_gpu.rs", 1, &region)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ClientError::Refused {
                        refusal: Refusal::OutsideAllocation,
                        ..
                    }
                ),
                "{err:?}"
            );
            // One asynchronous record: the call returns at once, the record carries both times.
            let mut later = connect(DeviceMode::Async);
            let sent = later
                .record_device("async", buffer.ptr + 4093, 4096)
                .unwrap();
            assert_eq!(sent, Delivery::Sent);
        }
        "realloc" => {
            let mut client = connect(sync());
            let a = DeviceBuffer::new(MIB, |_| 0xAA);
            let a_ptr = a.ptr;
            stored(client.record_device("a", a.ptr, MIB));
            drop(a);
            let b = DeviceBuffer::new(MIB, |_| 0xBB);
            println!("same-address {}", b.ptr == a_ptr);
            stored(client.record_device("b", b.ptr, MIB));
        }
        "stream" => {
            let buffer = DeviceBuffer::new(256 * MIB, |k| pattern(3, k));
            let mut client = connect(sync());
            let deadline = Instant::now() + WAIT;
            while Instant::now() < deadline {
                let _ = client.record_device("stream", buffer.ptr, 256 * MIB);
            }
        }
        "owner" => {
            let buffer = DeviceBuffer::new(MIB, |k| pattern(SHARED_SEED, k));
            let mut client = connect(sync());
            stored(client.record_device("owner", buffer.ptr, MIB));
            println!(
                "handle {} uuid {}",
                hex(&buffer.ipc_handle()),
                hex(&gpu.uuid())
            );
            // Keeps the allocation alive until the parent closes standard input.
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        }
        "peer" => {
            let handle = unhex::<64>(&std::env::var(HANDLE).expect(HANDLE));
            let uuid = unhex::<16>(&std::env::var(UUID).expect(UUID));
            let mut client = connect(sync());
            let region = DeviceRegion {
                handle: IpcHandle(handle),
                offset: 0,
                len: MIB as u32,
                device: DeviceUuid(uuid),
            };
            stored(client.record_ipc_at("peer", "cuda_gpu.rs", 1, &region));
        }
        other => panic!("unknown role {other}"),
    }
    drop(gpu);
    println!("ok");
}

/// Starts `gpu_child` in `role` against the server on `name`.
fn child(role: &str, name: &SocketName, env: &[(&str, String)]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "gpu_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(SOCKET, name.to_string())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (bounded) for `child` and gives its standard output; fails when it failed.
fn finish(mut child: Child) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
            assert!(status.success(), "child failed: {status:?}\n{out}");
            assert!(out.lines().any(|l| l == "ok"), "{out}");
            return out;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("child did not finish within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server that can copy device memory, or `None` (after saying why) where there is no GPU.
fn server(test: &str, capacity: usize) -> Option<(TraceServer, SocketName)> {
    if !gpu::available() {
        return None;
    }
    let name = unique_name(test);
    let mut config = ServerConfig::with_capacity(capacity);
    config.max_payload = 300 * MIB as u32;
    let server = TraceServer::start(&name, config).unwrap();
    match server.device_support() {
        DeviceSupport::Available { .. } => {
            eprintln!("{test}: {}", server.device_support());
            Some((server, name))
        }
        DeviceSupport::Unavailable(reason) => panic!("a GPU is here but the server says: {reason}"),
    }
}

#[test]
fn every_size_at_offsets_inside_one_allocation_arrives_exact() {
    let Some((server, name)) = server("sizes", 768 * MIB) else {
        return;
    };
    finish(child("sizes", &name, &[]));
    let records = SIZES.len() as u64 + 10 + 1;
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= records);
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_device_sync, records - 1);
    assert_eq!(stats.records_device_async, 1);
    assert_eq!(stats.rejected.device_outside_allocation, 1, "{stats:?}");
    assert_eq!(stats.rejected.total(), 1, "{stats:?}");
    // The process's handle stays open: the records after the first reuse it.
    assert!(stats.handles.reused >= 10, "{:?}", stats.handles);
    server.with_ring(|ring| {
        for record in ring.iter() {
            let Origin::Device {
                mode,
                offset,
                device,
            } = record.head().meta.origin
            else {
                panic!("not a device record: {record:?}");
            };
            assert!(!device.is_any());
            let want: Vec<u8> = (0..record.payload().len())
                .map(|k| pattern(SIZES_SEED, offset as usize + k))
                .collect();
            assert!(
                record.payload() == &want[..],
                "record {} ({} bytes at {offset}) differs",
                record.seq(),
                record.payload().len()
            );
            let meta = record.head().meta;
            assert!(meta.stored_ns >= meta.timestamp_ns);
            assert_eq!(
                mode,
                if record.module() == "async" {
                    CopyMode::Async
                } else {
                    CopyMode::Sync
                }
            );
        }
        let lens: Vec<usize> = ring
            .iter()
            .take(SIZES.len())
            .map(|r| r.payload().len())
            .collect();
        assert_eq!(lens, SIZES.map(|(_, len)| len));
        let account = ring.ledger().accounts().next().unwrap();
        assert_eq!(
            (account.device_sync, account.device_async),
            (records - 1, 1)
        );
    });
}

#[test]
fn an_allocation_freed_and_made_again_is_read_anew() {
    let Some((server, name)) = server("realloc", 64 * MIB) else {
        return;
    };
    let out = finish(child("realloc", &name, &[]));
    eprintln!(
        "{}",
        out.lines()
            .find(|l| l.starts_with("same-address"))
            .unwrap_or("")
    );
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 2);
    assert!(done, "{stats:?}");
    assert_eq!(stats.handles.opened, 2, "{:?}", stats.handles);
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        assert!(records[0].payload().iter().all(|&b| b == 0xAA));
        assert!(
            records[1].payload().iter().all(|&b| b == 0xBB),
            "the second allocation's record holds the freed allocation's bytes"
        );
    });
}

#[test]
fn a_client_killed_in_the_middle_of_its_records_leaves_the_server_serving() {
    let Some((server, name)) = server("killed", 600 * MIB) else {
        return;
    };
    let mut streaming = child("stream", &name, &[]);
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 2);
    if !done {
        let _ = streaming.kill();
        panic!("the streaming child stored nothing: {stats:?}");
    }
    streaming.kill().unwrap();
    streaming.wait().unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.disconnects >= 1);
    assert!(done, "{stats:?}");
    // Its handles were closed with its last connection: no freed memory kept alive for it.
    assert_eq!(stats.handles.open, 0, "{:?}", stats.handles);
    assert!(stats.handles.closed >= 1);
    // Every record that was stored is whole.
    server.with_ring(|ring| {
        for record in ring.iter() {
            assert_eq!(record.payload().len(), 256 * MIB);
            assert!(record.payload()[..4096]
                .iter()
                .enumerate()
                .all(|(k, &b)| b == pattern(3, k)));
        }
    });
    // The server goes on serving others.
    finish(child("realloc", &name, &[]));
    let before = stats.records_stored;
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= before + 2);
    assert!(done, "{stats:?}");
}

#[test]
fn two_clients_record_one_buffer() {
    let Some((server, name)) = server("shared", 64 * MIB) else {
        return;
    };
    let mut owner = child("owner", &name, &[]);
    let mut out = BufReader::new(owner.stdout.take().unwrap());
    let mut line = String::new();
    let mut handle = None;
    while out.read_line(&mut line).unwrap() > 0 {
        if let Some(rest) = line.trim().strip_prefix("handle ") {
            handle = rest
                .split_once(" uuid ")
                .map(|(h, u)| (h.to_owned(), u.to_owned()));
            break;
        }
        line.clear();
    }
    let (handle, uuid) = handle.expect("the owner printed its handle");
    finish(child("peer", &name, &[(HANDLE, handle), (UUID, uuid)]));
    drop(owner.stdin.take());
    assert!(owner.wait().unwrap().success());
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 2);
    assert!(done, "{stats:?}");
    // Handles are kept per process: each client opened its own.
    assert_eq!(stats.handles.opened, 2);
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        assert_ne!(records[0].client_pid(), records[1].client_pid());
        for record in records {
            assert!(record
                .payload()
                .iter()
                .enumerate()
                .all(|(k, &b)| b == pattern(SHARED_SEED, k)));
        }
    });
}
