//! GPU device memory end to end: the server runs in this test process, each client is this test binary re-run
//! as a child process (`gpu_child`), as CUDA IPC requires (a process cannot open its own handles). They run
//! against NVIDIA's driver on a machine with a GPU and against the driver stand-in (`cuda-standin`) in CI
//! (`bash .ci/gpu-trace sim`). Without any driver every GPU test says "skipped: no CUDA driver" and returns.
//!
//! - Bytes checked exactly for 1 B, 4 KiB, 1 MiB, 16 MiB and 256 MiB records at offsets inside one
//!   allocation, synchronous and asynchronous, with the handle opened once.
//! - Records are bounded by the allocation, also where its memory block is larger and holds neighbours.
//! - An allocation freed and made again (at the same address, as the driver tends to) is read anew.
//! - A client killed in the middle of its records, and one that exits while the server copies its memory:
//!   the server keeps serving, also after a copy that faulted.
//! - Two clients recording one buffer, one of them through the handle the other took.
//! - A thread without a current context, a process with no active context, a MIG GPU's UUID, and how many
//!   driver calls a record costs.
//! - `driver_answers` prints what the driver does where the stand-in had to choose (`driver answer:` lines).
//!
//! The child-process harness (`gpu/peer.rs`) has tests of its own that need no GPU.

mod common;
#[path = "gpu/mod.rs"]
mod gpu;

use std::os::unix::net::UnixStream;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{unique_name, WAIT};
use gpu::peer::{hear, hear_from, say, Peer};
use gpu::{pattern, DeviceBuffer, Gpu};
use lizard_trace::device_support::CopyPath;
use lizard_trace::shared_ring::{RingReader, SyncPolicy};
use lizard_trace::{
    ClientConfig, ClientError, CopyMode, Delivery, DeviceError, DeviceMode, DeviceRegion,
    DeviceSupport, DeviceUuid, IpcHandle, Origin, Refusal, ServerConfig, SocketName, TraceClient,
    TraceRing, TraceServer,
};

const ROLE: &str = "LIZARD_GPU_ROLE";
const SOCKET: &str = "LIZARD_GPU_SOCKET";
const HANDLE: &str = "LIZARD_GPU_HANDLE";
const UUID: &str = "LIZARD_GPU_UUID";
/// The driver stand-in's MIG switch (NVIDIA's driver ignores it).
const MIG: &str = "CUDA_STANDIN_MIG";

const MIB: usize = 1 << 20;

/// The records of the sizes test: (offset inside the allocation, length).
const SIZES: [(usize, usize); 5] = [
    (0, 1),
    (4093, 4096),
    (65_543, MIB),
    (3 * MIB + 1, 16 * MIB),
    (64 << 10, 256 * MIB),
];

/// The allocation of the sizes test: the largest record and its offset fit. Not a multiple of 2 MiB, so
/// its memory block (2 MiB granules) reaches past its end.
const SIZES_ALLOCATION: usize = 256 * MIB + (128 << 10);

/// Seeds of the test patterns.
const SIZES_SEED: u64 = 1;
const SHARED_SEED: u64 = 7;

/// One GPU test at a time: a server that resets its GPU's context after a fault resets it for this whole
/// process.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

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

fn refused_outside(result: Result<Delivery, ClientError>) {
    assert!(
        matches!(
            result,
            Err(ClientError::Refused {
                refusal: Refusal::OutsideAllocation,
                ..
            })
        ),
        "{result:?}"
    );
}

/// The client side of every test, chosen by `LIZARD_GPU_ROLE`. Ignored in an ordinary run; run any other way
/// than by the tests below it fails instead of passing without doing anything. Its last line says it
/// finished (`gpu::peer`).
#[test]
#[ignore = "the child process of the GPU tests"]
fn gpu_child() {
    let role = std::env::var(ROLE).expect("gpu_child runs only as the child of a GPU test");
    match role.as_str() {
        // Roles that must not make a context current on the main thread.
        "no-context" => no_context_role(),
        "mig-server" => mig_server_role(),
        _ => {
            let gpu = Gpu::open();
            child_role(&role, &gpu);
            drop(gpu);
        }
    }
    say("done", role);
}

fn child_role(role: &str, gpu: &Gpu) {
    match role {
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
            // And on the server's: a region past the allocation sent with the handle itself. The block the
            // handle maps is larger than the allocation: the allocation's size the region carries bounds it.
            let region = DeviceRegion {
                handle: IpcHandle(buffer.ipc_handle()),
                offset: SIZES_ALLOCATION as u64 - 10,
                len: 100,
                device: DeviceUuid(gpu.uuid()),
                allocation_len: Some(SIZES_ALLOCATION as u64),
            };
            refused_outside(client.record_ipc_at("past", "cuda_gpu.rs", 1, &region));
            // Without it, the block's end does.
            let region = DeviceRegion {
                offset: SIZES_ALLOCATION as u64 + 2 * MIB as u64 - 10,
                allocation_len: None,
                ..region
            };
            refused_outside(client.record_ipc_at("past", "cuda_gpu.rs", 2, &region));
            // One asynchronous record: the call returns at once, the record carries both times.
            let mut later = connect(DeviceMode::Async);
            let sent = later
                .record_device("async", buffer.ptr + 4093, 4096)
                .unwrap();
            assert_eq!(sent, Delivery::Sent);
            // The server copies it when it gets to it: the allocation stays until the parent saw it stored.
            say("async-sent", "");
            let _ = hear(WAIT);
        }
        "neighbours" => {
            // Three small allocations: the driver may place them in one block, which a handle maps whole.
            let a = DeviceBuffer::new(64 << 10, |k| pattern(21, k));
            let b = DeviceBuffer::new(64 << 10, |k| pattern(22, k));
            let c = DeviceBuffer::new(64 << 10, |k| pattern(23, k));
            let mut client = connect(sync());
            stored(client.record_device("b", b.ptr, 64 << 10));
            let handle = IpcHandle(b.ipc_handle());
            let region = DeviceRegion {
                handle,
                offset: (64 << 10) - 10,
                len: 100,
                device: DeviceUuid(gpu.uuid()),
                allocation_len: Some(64 << 10),
            };
            refused_outside(client.record_ipc_at("past", "cuda_gpu.rs", 1, &region));
            // Past the end of b's block, counted from b's start, not the block's: a 2 MiB block holding b
            // 64 KiB (or more) from its start ends less than 2 MiB after b.
            let region = DeviceRegion {
                offset: 2 * MIB as u64 - (64 << 10) + 4096,
                len: 64 << 10,
                allocation_len: None,
                ..region
            };
            refused_outside(client.record_ipc_at("block", "cuda_gpu.rs", 2, &region));
            drop((a, c));
        }
        "realloc" => {
            let mut client = connect(sync());
            let a = DeviceBuffer::new(MIB, |_| 0xAA);
            let a_ptr = a.ptr;
            stored(client.record_device("a", a.ptr, MIB));
            drop(a);
            let b = DeviceBuffer::new(MIB, |_| 0xBB);
            say("same-address", b.ptr == a_ptr);
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
        "exit-mid-copy" => {
            // The server opens the handle for the first record, then copies the others after this process
            // has exited: it reads memory of an exporter that is gone.
            let buffer = DeviceBuffer::new(64 * MIB, |k| pattern(4, k));
            let mut client = connect(sync());
            stored(client.record_device("first", buffer.ptr, 64 * MIB));
            let mut later = connect(DeviceMode::Async);
            for _ in 0..8 {
                assert_eq!(
                    later.record_device("later", buffer.ptr, 64 * MIB).unwrap(),
                    Delivery::Sent
                );
            }
            say("done", "exit-mid-copy");
            // No destructors: the process is gone as soon as it can be.
            std::process::exit(0);
        }
        "owner" => {
            let buffer = DeviceBuffer::new(MIB, |k| pattern(SHARED_SEED, k));
            let mut client = connect(sync());
            stored(client.record_device("owner", buffer.ptr, MIB));
            say(
                "handle",
                format!("{} uuid {}", hex(&buffer.ipc_handle()), hex(&gpu.uuid())),
            );
            // Keeps the allocation alive until the parent says so (or gives up).
            let _ = hear(WAIT);
        }
        "peer" | "v2-client" => {
            let handle = unhex::<64>(&std::env::var(HANDLE).expect(HANDLE));
            let uuid = unhex::<16>(&std::env::var(UUID).expect(UUID));
            let mut client = connect(sync());
            let region = DeviceRegion {
                handle: IpcHandle(handle),
                offset: 0,
                len: MIB as u32,
                device: DeviceUuid(uuid),
                allocation_len: Some(MIB as u64),
            };
            stored(client.record_ipc_at("peer", "cuda_gpu.rs", 1, &region));
        }
        "mig-owner" => {
            // Under MIG: the UUID the runtime reports (v2) is what names this GPU to the server.
            let buffer = DeviceBuffer::new(MIB, |k| pattern(SHARED_SEED, k));
            let mut client = connect(sync());
            stored(client.record_device("mig", buffer.ptr, MIB));
            say("uuids-differ", gpu.uuid() != gpu.uuid_v1());
            say(
                "handle",
                format!("{} uuid {}", hex(&buffer.ipc_handle()), hex(&gpu.uuid())),
            );
            let _ = hear(WAIT);
        }
        "worker" => {
            // The allocation is made on this thread; a thread that never made a context current records it.
            let buffer = DeviceBuffer::new(4096, |k| pattern(8, k));
            let ptr = buffer.ptr;
            std::thread::spawn(move || {
                assert_eq!(gpu::current_context(), 0);
                let mut client = connect(sync());
                stored(client.record_device("worker", ptr + 16, 1000));
                // The thread's context stack is as it was.
                assert_eq!(gpu::current_context(), 0);
            })
            .join()
            .unwrap();
        }
        "calls" => {
            let buffer = DeviceBuffer::new(MIB, |k| pattern(9, k));
            let mut client = connect(sync());
            stored(client.record_device("warm", buffer.ptr, 64));
            let before = [
                "cuPointerGetAttribute",
                "cuPointerGetAttributes",
                "cuIpcGetMemHandle",
            ]
            .map(gpu::standin_calls);
            for i in 0..100 {
                stored(client.record_device("calls", buffer.ptr + i, 64));
            }
            let after = [
                "cuPointerGetAttribute",
                "cuPointerGetAttributes",
                "cuIpcGetMemHandle",
            ]
            .map(gpu::standin_calls);
            match (before, after) {
                ([Some(a0), Some(b0), Some(h0)], [Some(a1), Some(b1), Some(h1)]) => {
                    say("attribute-calls", a1 - a0 + b1 - b0);
                    say("handle-calls", h1 - h0);
                }
                _ => say("attribute-calls", "not counted by this driver"),
            }
        }
        "answers-exporter" => {
            let a = DeviceBuffer::new(64 << 10, |k| pattern(31, k));
            let b = DeviceBuffer::new(64 << 10, |k| pattern(32, k));
            let c = DeviceBuffer::new(64 << 10, |k| pattern(33, k));
            say(
                "exporter-range",
                format!(
                    "{:?}",
                    gpu::address_range(b.ptr).map(|(base, size)| (b.ptr - base, size))
                ),
            );
            say("distance", format!("{}", b.ptr.abs_diff(a.ptr)));
            say("own-open", format!("{:?}", gpu::ipc_open(&b.ipc_handle())));
            say("handle", hex(&b.ipc_handle()));
            say("first-handle", hex(&a.ipc_handle()));
            let big = DeviceBuffer::new(64 * MIB, |k| pattern(34, k));
            say("big-handle", hex(&big.ipc_handle()));
            let _ = hear(WAIT);
            say("done", "answers-exporter");
            // Exits with its allocations still allocated: the importer's mappings outlive the process.
            std::mem::forget((a, b, c, big));
            std::process::exit(0);
        }
        other => panic!("unknown role {other}"),
    }
}

/// A process that initialised the driver but made no context current or active: recording a pointer is a
/// typed error, not a driver failure.
fn no_context_role() {
    gpu::init_only();
    assert!(!gpu::primary_active());
    let mut client = connect(sync());
    let err = client
        .record_device("none", 0x7000_0000_0000, 64)
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Device(DeviceError::NoContext)),
        "{err:?}"
    );
}

/// A server of its own under MIG (the stand-in's `CUDA_STANDIN_MIG`, inherited from the test), and a client
/// that names the GPU by the UUID the runtime reports.
fn mig_server_role() {
    let name = unique_name("mig");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    let DeviceSupport::Available { gpus, .. } = server.device_support() else {
        panic!("{}", server.device_support());
    };
    let owner = child("mig-owner", &name, &[]);
    let differ = owner.expect("uuids-differ", WAIT).unwrap();
    let (handle, uuid) = owner_handle(&owner);
    // The server knows its GPU by the UUID clients see (v2).
    assert_eq!(hex(&gpus[0].uuid.0), uuid);
    say(
        "answer",
        format!("cuDeviceGetUuid and cuDeviceGetUuid_v2 differ under CUDA_STANDIN_MIG=1: {differ}"),
    );
    let peer = child("v2-client", &name, &[(HANDLE, handle), (UUID, uuid)]);
    peer.finish(WAIT).unwrap();
    owner.finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 2);
    assert!(done, "{stats:?}");
    assert_eq!(stats.rejected.total(), 0, "{stats:?}");
}

/// Starts `gpu_child` in `role` against the server on `name`.
fn child(role: &str, name: &SocketName, env: &[(&str, String)]) -> Peer {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            "gpu_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .env(SOCKET, name.to_string())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    Peer::spawn(command)
}

/// The handle and UUID an owner child says.
fn owner_handle(owner: &Peer) -> (String, String) {
    let said = owner.expect("handle", WAIT).unwrap();
    let (handle, uuid) = said.split_once(" uuid ").expect("handle HEX uuid HEX");
    (handle.to_owned(), uuid.to_owned())
}

/// A server that can copy device memory, or `None` (after saying why) where there is no driver.
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
    let _serial = serial();
    let Some((server, name)) = server("sizes", 768 * MIB) else {
        return;
    };
    let mut sizes = child("sizes", &name, &[]);
    sizes.expect("async-sent", WAIT).unwrap();
    let records = SIZES.len() as u64 + 10 + 1;
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= records);
    sizes.tell("exit");
    sizes.finish(WAIT).unwrap();
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_device_sync, records - 1);
    assert_eq!(stats.records_device_async, 1);
    assert_eq!(stats.rejected.device_outside_allocation, 2, "{stats:?}");
    assert_eq!(stats.rejected.total(), 2, "{stats:?}");
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
fn a_ring_of_any_capacity_is_pinned_whole() {
    // Drivers register page-aligned ranges only: the server registers the ring's whole pages.
    let _serial = serial();
    let Some((server, _name)) = server("pinned", 1_000_003) else {
        return;
    };
    let DeviceSupport::Available { path, .. } = server.device_support() else {
        unreachable!("server() returns servers that copy");
    };
    assert_eq!(path, CopyPath::PinnedRing, "{}", server.device_support());
}

#[test]
fn a_shared_ring_file_is_pinned_and_device_records_land_in_it() {
    let _serial = serial();
    if !gpu::available() {
        return;
    }
    let path = std::env::temp_dir().join(format!("lizard-gpu-shared-{}.ring", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let (ring, _) = TraceRing::open_shared(&path, Some(64 * MIB), SyncPolicy::Never).unwrap();
    let name = unique_name("shared");
    let server = TraceServer::start_with_ring(&name, ring, ServerConfig::default()).unwrap();
    let DeviceSupport::Available { path: copy, .. } = server.device_support() else {
        panic!(
            "a GPU is here but the server says: {}",
            server.device_support()
        );
    };
    assert_eq!(copy, CopyPath::PinnedRing, "{}", server.device_support());
    child("neighbours", &name, &[]).finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.rejected.total() >= 2);
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_stored, 1, "{stats:?}");
    // Another reader of the file sees the copied bytes, while the server runs and after it stops.
    for _ in 0..2 {
        let snapshot = RingReader::open(&path).unwrap().snapshot();
        assert_eq!(snapshot.records.len(), 1);
        assert!(snapshot.records[0]
            .payload
            .iter()
            .enumerate()
            .all(|(k, &b)| b == pattern(22, k)));
        if server.stats().records_stored == 1 {
            break;
        }
    }
    drop(server);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_small_buffer_is_bounded_by_itself_not_by_the_block_that_holds_it() {
    let _serial = serial();
    let Some((server, name)) = server("neighbours", 64 * MIB) else {
        return;
    };
    child("neighbours", &name, &[]).finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.rejected.total() >= 2);
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_stored, 1, "{stats:?}");
    assert_eq!(stats.rejected.device_outside_allocation, 2, "{stats:?}");
    assert_eq!(stats.rejected.device_copy_failed, 0, "{stats:?}");
    server.with_ring(|ring| {
        let record = ring.iter().next().unwrap();
        assert!(record
            .payload()
            .iter()
            .enumerate()
            .all(|(k, &b)| b == pattern(22, k)));
    });
}

#[test]
fn an_allocation_freed_and_made_again_is_read_anew() {
    let _serial = serial();
    let Some((server, name)) = server("realloc", 64 * MIB) else {
        return;
    };
    let realloc = child("realloc", &name, &[]);
    eprintln!(
        "same address after a free: {}",
        realloc.expect("same-address", WAIT).unwrap()
    );
    realloc.finish(WAIT).unwrap();
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
    let _serial = serial();
    let Some((server, name)) = server("killed", 600 * MIB) else {
        return;
    };
    let streaming = child("stream", &name, &[]);
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 2);
    if !done {
        streaming.kill();
        panic!("the streaming child stored nothing: {stats:?}");
    }
    streaming.kill();
    let (stats, done) = server.wait_until(WAIT, |s| s.disconnects >= 1);
    assert!(done, "{stats:?}");
    // Its handles were closed with its last connection: no freed memory kept alive for it.
    assert_eq!(stats.handles.open, 0, "{:?}", stats.handles);
    assert!(stats.handles.closed + stats.handles.lost >= 1);
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
    let before = stats.records_stored;
    child("realloc", &name, &[]).finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= before + 2);
    assert!(done, "{stats:?}");
}

#[test]
fn a_copy_from_a_client_that_exited_does_not_refuse_every_later_record() {
    let _serial = serial();
    let Some((server, name)) = server("exited", 700 * MIB) else {
        return;
    };
    child("exit-mid-copy", &name, &[]).finish(WAIT).unwrap();
    // Its nine records were stored or refused, one by one.
    let (stats, done) = server.wait_until(WAIT, |s| {
        s.records_stored + s.rejected.total() >= 9 && s.disconnects >= 2
    });
    assert!(done, "{stats:?}");
    println!(
        "driver answer: copies from the memory of a client that exited: {} of 8 refused ({} failed copies, {} failed opens), {} context resets",
        stats.rejected.total(),
        stats.rejected.device_copy_failed,
        stats.rejected.device_open_failed,
        stats.device_resets
    );
    if stats.rejected.device_copy_failed > 0 {
        // The copy faulted: the server reset the context rather than fail every later record.
        assert!(stats.device_resets >= 1, "{stats:?}");
    }
    let before = stats.records_stored;
    child("realloc", &name, &[]).finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= before + 2);
    assert!(done, "records after the fault were refused: {stats:?}");
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        let n = records.len();
        assert!(records[n - 2].payload().iter().all(|&b| b == 0xAA));
        assert!(records[n - 1].payload().iter().all(|&b| b == 0xBB));
    });
}

#[test]
fn two_clients_record_one_buffer() {
    let _serial = serial();
    let Some((server, name)) = server("shared", 64 * MIB) else {
        return;
    };
    let mut owner = child("owner", &name, &[]);
    let (handle, uuid) = owner_handle(&owner);
    child("peer", &name, &[(HANDLE, handle), (UUID, uuid)])
        .finish(WAIT)
        .unwrap();
    owner.tell("done");
    owner.finish(WAIT).unwrap();
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

#[test]
fn a_thread_without_a_current_context_records_device_memory() {
    let _serial = serial();
    let Some((server, name)) = server("worker", 64 * MIB) else {
        return;
    };
    child("worker", &name, &[]).finish(WAIT).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored >= 1);
    assert!(done, "{stats:?}");
    server.with_ring(|ring| {
        let record = ring.iter().next().unwrap();
        assert!(record
            .payload()
            .iter()
            .enumerate()
            .all(|(k, &b)| b == pattern(8, 16 + k)));
    });
}

#[test]
fn a_process_with_no_active_context_gets_a_typed_error() {
    let _serial = serial();
    let Some((_server, name)) = server("no-context", MIB) else {
        return;
    };
    child("no-context", &name, &[]).finish(WAIT).unwrap();
}

#[test]
fn a_mig_gpu_is_named_by_the_uuid_the_runtime_reports() {
    let _serial = serial();
    let Some((_server, name)) = server("mig", MIB) else {
        return;
    };
    let out = child("mig-server", &name, &[(MIG, "1".to_owned())])
        .finish(WAIT)
        .unwrap();
    if let Some((_, answer)) = out
        .lines()
        .find_map(|l| l.split_once("lizard-gpu-child: answer "))
    {
        println!("driver answer: {answer}");
    }
}

#[test]
fn a_device_record_asks_the_driver_once() {
    let _serial = serial();
    let Some((_server, name)) = server("calls", 64 * MIB) else {
        return;
    };
    let calls = child("calls", &name, &[]);
    let attribute_calls = calls.expect("attribute-calls", WAIT).unwrap();
    if let Ok(n) = attribute_calls.parse::<u64>() {
        assert!(n <= 100, "{n} pointer attribute calls for 100 records");
        let handles: u64 = calls.expect("handle-calls", WAIT).unwrap().parse().unwrap();
        assert_eq!(handles, 0, "the allocation's handle is taken once");
    } else {
        println!("driver calls per record: {attribute_calls}");
    }
    calls.finish(WAIT).unwrap();
}

/// What the driver does where the stand-in had to choose (its README lists them): printed as
/// `driver answer: QUESTION: ANSWER` lines, which `.ci/gpu-trace` collects. Only driver calls that must
/// work are checked.
#[test]
fn driver_answers() {
    let _serial = serial();
    if !gpu::available() {
        return;
    }
    let answer = |question: &str, value: String| println!("driver answer: {question}: {value}");
    let name = unique_name("answers");
    let gpu = Gpu::open();
    let mut exporter = child("answers-exporter", &name, &[]);
    let said = |key: &str| exporter.expect(key, WAIT).unwrap();
    answer(
        "cuMemGetAddressRange, exporter's side, of the second of three 64 KiB buffers (offset, size)",
        said("exporter-range"),
    );
    answer(
        "distance between the first two 64 KiB buffers",
        said("distance"),
    );
    answer("opening a handle of one's own process", said("own-open"));
    let handle = unhex::<64>(&said("handle"));
    let first = unhex::<64>(&said("first-handle"));
    match gpu::ipc_open(&handle) {
        Ok(ptr) => {
            answer(
                "cuMemGetAddressRange, importer's side, of the pointer cuIpcOpenMemHandle returned (offset, size)",
                format!("{:?}", gpu::address_range(ptr).map(|(b, s)| (ptr - b, s))),
            );
            let mut bytes = vec![0u8; 16];
            let code = gpu::copy_code(&mut bytes, ptr + (64 << 10));
            answer(
                "the 16 bytes after the buffer, read through its handle, are its neighbour's",
                match code {
                    0 => {
                        (bytes == (0..16).map(|k| pattern(33, k)).collect::<Vec<u8>>()).to_string()
                    }
                    c => format!("the copy failed with {c}"),
                },
            );
            answer(
                "distance between the pointers the first two buffers' handles open at (64 KiB: one mapping of their block)",
                format!("{:?}", gpu::ipc_open(&first).map(|p| ptr.abs_diff(p))),
            );
            // Which handle bytes the driver checks: each of these altered alone.
            let opened: Vec<String> = [0usize, 1, 4, 7, 16, 24, 32, 40, 48, 56, 63]
                .iter()
                .map(|&i| {
                    let mut forged = handle;
                    forged[i] ^= 0x5a;
                    match gpu::ipc_open(&forged) {
                        Ok(p) => {
                            let _ = gpu::ipc_close(p);
                            format!("{i}: opens")
                        }
                        Err(code) => format!("{i}: {code}"),
                    }
                })
                .collect();
            answer(
                "a handle with one byte altered (byte: result)",
                opened.join(", "),
            );
        }
        Err(code) => answer(
            "opening the second buffer's handle",
            format!("failed with {code}"),
        ),
    }
    let big = unhex::<64>(&said("big-handle"));
    let big_ptr = gpu::ipc_open(&big);
    answer(
        "opening a 64 MiB buffer's handle",
        format!("{:?}", big_ptr.map(|_| "opened")),
    );
    // Without a current context.
    let codes = std::thread::spawn(move || gpu::pointer_codes(big_ptr.unwrap_or(0)))
        .join()
        .unwrap();
    answer(
        "cuPointerGetAttribute and cuPointerGetAttributes on a thread without a context",
        format!("{codes:?}"),
    );
    answer(
        "cuDeviceGetUuid and cuDeviceGetUuid_v2 agree",
        (gpu.uuid() == gpu.uuid_v1()).to_string(),
    );
    let mut memory = vec![0u8; 3 << 12];
    let aligned = (memory.as_mut_ptr() as usize).div_ceil(4096) * 4096;
    let unaligned = gpu::host_register_code((aligned + 8) as *mut u8, 4096);
    answer(
        "cuMemHostRegister of a range 8 bytes past a page boundary",
        unaligned.to_string(),
    );
    if unaligned == 0 {
        answer(
            "cuMemHostUnregister of it",
            gpu::host_unregister_code((aligned + 8) as *mut u8).to_string(),
        );
    }
    let registered = gpu::host_register_code(aligned as *mut u8, 4096);
    // The exporter exits; then a copy from its memory.
    exporter.tell("exit");
    exporter.finish(WAIT).unwrap();
    if let Ok(ptr) = big_ptr {
        let mut bytes = vec![0u8; 64 * MIB];
        answer(
            "a copy from the mapping of an exporter that exited",
            gpu::copy_code(&mut bytes, ptr).to_string(),
        );
        answer(
            "cuCtxSynchronize after it (a sticky error repeats)",
            gpu::synchronize_code().to_string(),
        );
        answer(
            "opening again the handle of an exporter that exited",
            format!("{:?}", gpu::ipc_open(&big)),
        );
    }
    answer("cuDevicePrimaryCtxReset", gpu::reset_code().to_string());
    answer(
        "cuMemHostUnregister after the reset (0: the registration survived it)",
        if registered == 0 {
            gpu::host_unregister_code(aligned as *mut u8).to_string()
        } else {
            format!("not registered ({registered})")
        },
    );
    drop(memory);
    drop(gpu);
}

#[test]
fn a_childs_marked_line_is_read_after_libtests_prefix_and_waits_are_bounded() {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        "printf 'test gpu_child ... lizard-gpu-child: handle ab uuid cd\\n'; sleep 30",
    ]);
    let peer = Peer::spawn(command);
    assert_eq!(
        peer.expect("handle", Duration::from_secs(10)).unwrap(),
        "ab uuid cd"
    );
    let started = Instant::now();
    assert!(peer.expect("more", Duration::from_millis(200)).is_err());
    assert!(started.elapsed() < Duration::from_secs(5));
    let started = Instant::now();
    assert!(peer.finish(Duration::from_millis(200)).is_err());
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_child_that_stopped_before_its_end_is_not_finished_whatever_libtest_printed() {
    let run = |script: &str| {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        Peer::spawn(command).finish(Duration::from_secs(10))
    };
    let early = run("echo 'test gpu_child ... ok'; echo ok; echo 'test result: ok. 1 passed'");
    assert!(early.is_err(), "{early:?}");
    assert!(run("echo 'test gpu_child ... lizard-gpu-child: done sizes'; echo ok").is_ok());
    assert!(run("echo 'lizard-gpu-child: done sizes'; exit 3").is_err());
}

#[test]
fn a_child_waiting_for_its_parent_gives_up_at_its_deadline() {
    let (quiet, _keep_open) = UnixStream::pair().unwrap();
    let started = Instant::now();
    assert_eq!(hear_from(quiet, Duration::from_millis(200)), None);
    assert!(started.elapsed() < Duration::from_secs(5));
    let (said, mut speaker) = UnixStream::pair().unwrap();
    std::io::Write::write_all(&mut speaker, b"exit\n").unwrap();
    assert_eq!(
        hear_from(said, Duration::from_secs(10)).as_deref(),
        Some("exit")
    );
}
