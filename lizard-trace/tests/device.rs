//! Device-memory records on a machine without a GPU, against a real server over `SOCK_SEQPACKET` sockets: the
//! server says why it cannot copy, refuses each device record with that reason, counts it and keeps the
//! connection; a synchronous client gets the refusal as its call's error, an asynchronous one sees it in the
//! server's counters. A stand-in server made of bare sockets checks the client's deadline, late and bad
//! acknowledgements. (`tests/cuda_gpu.rs` checks the same paths with a GPU.)

mod common;

use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use common::{unique_name, wait_for};
use lizard_trace::ack::{Ack, Outcome};
use lizard_trace::message::{Message, Payload};
use lizard_trace::{
    AckWait, ClientConfig, ClientError, CopyMode, Delivery, DeviceMode, DeviceRegion,
    DeviceSupport, DeviceUuid, IpcHandle, Origin, Refusal, ServerConfig, SocketName, TraceClient,
    TraceServer, Unavailable,
};

fn region(len: u32) -> DeviceRegion {
    DeviceRegion {
        handle: IpcHandle([0x5a; 64]),
        offset: 128,
        len,
        device: DeviceUuid::ANY,
        allocation_len: None,
    }
}

/// The reason this machine's server gives, or `None` when it can copy (a GPU machine: the GPU tests cover it).
fn expected_reason(server: &TraceServer) -> Option<Unavailable> {
    match server.device_support() {
        DeviceSupport::Unavailable(reason) => Some(reason),
        DeviceSupport::Available { .. } => {
            test_data::skip!(
                test_data::Fixture::NoCuda,
                "this machine can copy device memory; tests/cuda_gpu.rs checks it"
            );
            None
        }
    }
}

fn config_with(mode: DeviceMode) -> ClientConfig {
    let mut config = ClientConfig::default();
    config.device_mode = mode;
    config
}

#[test]
fn a_server_without_a_driver_says_why_and_refuses_each_device_record_with_that_reason() {
    let name = unique_name("no-driver");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 20)).unwrap();
    let Some(reason) = expected_reason(&server) else {
        return;
    };
    if cfg!(feature = "cuda") {
        assert_eq!(reason, Unavailable::LibraryMissing);
    } else {
        assert_eq!(reason, Unavailable::FeatureOff);
    }
    assert!(server.device_support().to_string().contains("cannot copy"));
    let mut client = TraceClient::connect(&name).unwrap();
    let err = client
        .record_ipc_at("gpu", "k.cu", 10, &region(4096))
        .unwrap_err();
    let ClientError::Refused {
        client_seq,
        refusal,
    } = err
    else {
        panic!("not a refusal: {err:?}");
    };
    assert_eq!(client_seq, 0);
    assert_eq!(refusal, Refusal::DeviceUnavailable(reason));
    // The connection stays open: a host record after it is stored.
    assert_eq!(client.record("host", b"after").unwrap(), Delivery::Sent);
    let stats = wait_for(&server, 1, 1);
    assert_eq!(stats.rejected.device_unavailable, 1);
    assert_eq!(stats.acks_sent, 1);
    assert_eq!(stats.disconnects, 0);
    let client_stats = client.stats();
    assert_eq!(
        (
            client_stats.refused,
            client_stats.dropped,
            client_stats.sent
        ),
        (1, 1, 2)
    );
    server.with_ring(|ring| {
        let record = ring.iter().next().unwrap();
        assert_eq!(record.payload(), b"after");
        assert_eq!(record.client_seq(), 1);
        assert_eq!(record.head().meta.origin, Origin::Inline);
        assert!(record.head().meta.stored_ns >= record.timestamp_ns());
        let account = ring.ledger().get(std::process::id()).unwrap();
        assert_eq!((account.stored, account.refused), (1, 1));
    });
}

#[test]
fn an_asynchronous_device_record_returns_at_once_and_its_refusal_is_counted() {
    let name = unique_name("async");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 20)).unwrap();
    if expected_reason(&server).is_none() {
        return;
    }
    let mut client = TraceClient::connect_with(&name, config_with(DeviceMode::Async)).unwrap();
    for _ in 0..3 {
        assert_eq!(
            client.record_ipc_at("gpu", "k.cu", 1, &region(64)).unwrap(),
            Delivery::Sent
        );
    }
    let stats = wait_for(&server, 0, 3);
    assert_eq!(stats.rejected.device_unavailable, 3);
    assert_eq!((stats.acks_sent, stats.acks_dropped), (0, 0));
    assert_eq!(client.stats().sent_device, 3);
}

#[test]
fn a_server_with_device_memory_turned_off_says_so() {
    let name = unique_name("disabled");
    let mut config = ServerConfig::with_capacity(1 << 20);
    config.device.enabled = false;
    let server = TraceServer::start(&name, config).unwrap();
    assert_eq!(
        server.device_support(),
        DeviceSupport::Unavailable(Unavailable::Disabled)
    );
    let mut client = TraceClient::connect(&name).unwrap();
    let err = client
        .record_ipc_at("gpu", "k.cu", 1, &region(8))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Refused {
                refusal: Refusal::DeviceUnavailable(Unavailable::Disabled),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_server_and_a_client_that_sleep_at_once_still_answer_and_hear() {
    // No spinning on either side: the server sleeps as soon as it has served, the client as soon as it sent.
    let name = unique_name("no-spin");
    let mut config = ServerConfig::with_capacity(4096);
    config.idle_spin = Duration::ZERO;
    let server = TraceServer::start(&name, config).unwrap();
    let mut client_config = ClientConfig::default();
    client_config.ack_wait = AckWait::Sleep;
    let mut client = TraceClient::connect_with(&name, client_config).unwrap();
    for seq in 0..3 {
        // Larger than the ring: refused on any machine, and the refusal is heard.
        let err = client
            .record_ipc_at("gpu", "k.cu", 1, &region(8192))
            .unwrap_err();
        assert!(
            matches!(err, ClientError::Refused { client_seq, refusal: Refusal::TooLargeForRing } if client_seq == seq),
            "{err:?}"
        );
    }
    assert_eq!(client.record("host", b"after").unwrap(), Delivery::Sent);
    wait_for(&server, 1, 3);
}

#[test]
fn limits_are_checked_before_any_device_is_touched() {
    let name = unique_name("limits");
    let mut config = ServerConfig::with_capacity(4096);
    config.max_payload = 1 << 20;
    let server = TraceServer::start(&name, config).unwrap();
    let mut client = TraceClient::connect(&name).unwrap();
    // Larger than the whole ring: refused as such on any machine, with or without a GPU.
    let err = client
        .record_ipc_at("gpu", "k.cu", 1, &region(8192))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Refused {
                refusal: Refusal::TooLargeForRing,
                ..
            }
        ),
        "{err:?}"
    );
    // Over the server's payload limit: the message does not decode, and the refusal still comes at once.
    let started = Instant::now();
    let err = client
        .record_ipc_at("gpu", "k.cu", 1, &region(2 << 20))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Refused {
                refusal: Refusal::Oversized,
                client_seq: 1
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(4));
    let stats = wait_for(&server, 0, 2);
    assert_eq!(
        (stats.rejected.too_large_for_ring, stats.rejected.oversized),
        (1, 1)
    );
}

/// A stand-in server made of bare sockets: it accepts one client and answers as a test tells it.
struct StandIn {
    listener: OwnedFd,
    name: SocketName,
}

impl StandIn {
    fn new(test: &str) -> StandIn {
        use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
        let name = format!("lizard-trace-standin-{}-{test}", std::process::id());
        let listener = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::SEQPACKET,
            SocketFlags::CLOEXEC,
            None,
        )
        .unwrap();
        let address = SocketAddrUnix::new_abstract_name(name.as_bytes()).unwrap();
        rustix::net::bind(&listener, &address).unwrap();
        rustix::net::listen(&listener, 4).unwrap();
        StandIn {
            listener,
            name: SocketName::abstract_name(name),
        }
    }

    fn accept(&self) -> OwnedFd {
        rustix::net::accept(&self.listener).unwrap()
    }
}

/// Reads one message from `fd` (blocking) and gives its client sequence number and whether it asked for an
/// acknowledgement.
fn read_message(fd: &OwnedFd) -> (u64, bool) {
    let mut buf = vec![0u8; 4096];
    let n = rustix::net::recv(fd, &mut buf, rustix::net::RecvFlags::empty())
        .unwrap()
        .0;
    let message = Message::decode(&buf[..n], u32::MAX).unwrap();
    assert!(matches!(message.payload, Payload::Device(_)));
    (message.head.client_seq, message.head.ack)
}

fn send(fd: &OwnedFd, bytes: &[u8]) {
    rustix::net::send(fd, bytes, rustix::net::SendFlags::NOSIGNAL).unwrap();
}

fn stored(client_seq: u64, seq: u64) -> [u8; 24] {
    Ack {
        client_seq,
        outcome: Outcome::Stored { seq },
    }
    .encode()
}

#[test]
fn a_missing_acknowledgement_is_a_timeout_that_says_the_record_may_be_stored_and_a_late_one_is_set_aside(
) {
    let stand_in = StandIn::new("late");
    let deadline = Duration::from_millis(200);
    let mut client =
        TraceClient::connect_with(&stand_in.name, config_with(DeviceMode::Sync { deadline }))
            .unwrap();
    let conn = stand_in.accept();
    let server = std::thread::spawn(move || {
        let (first, ack) = read_message(&conn);
        assert!(ack);
        // Answers the first record only after the client's deadline, then the second at once.
        std::thread::sleep(Duration::from_millis(400));
        send(&conn, &stored(first, 7));
        let (second, _) = read_message(&conn);
        send(&conn, &stored(second, 8));
        let (third, _) = read_message(&conn);
        // Not an acknowledgement at all.
        send(&conn, b"garbage");
        let _ = third;
        let (fourth, _) = read_message(&conn);
        // An acknowledgement of a record the client has not sent.
        send(&conn, &stored(fourth + 5, 9));
        conn
    });
    let started = Instant::now();
    let err = client
        .record_ipc_at("gpu", "k.cu", 1, &region(16))
        .unwrap_err();
    let elapsed = started.elapsed();
    let ClientError::AckTimeout { client_seq, waited } = err else {
        panic!("not a timeout: {err:?}");
    };
    assert_eq!(client_seq, 0);
    assert!(waited >= deadline && elapsed < Duration::from_secs(5));
    assert!(
        err_text(&ClientError::AckTimeout { client_seq, waited }).contains("may still be stored")
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        client.record_ipc_at("gpu", "k.cu", 2, &region(16)).unwrap(),
        Delivery::Stored { seq: 8 }
    );
    assert_eq!(client.stats().late_acks, 1);
    assert_eq!(client.stats().ack_timeouts, 1);
    assert!(matches!(
        client
            .record_ipc_at("gpu", "k.cu", 3, &region(16))
            .unwrap_err(),
        ClientError::BadAck(lizard_trace::AckError::Length { len: 7, .. })
    ));
    assert!(matches!(
        client
            .record_ipc_at("gpu", "k.cu", 4, &region(16))
            .unwrap_err(),
        ClientError::BadAck(lizard_trace::AckError::Unexpected {
            expected: 3,
            found: 8
        })
    ));
    drop(server.join().unwrap());
    // The stand-in is gone: the next record finds the connection closed.
    let err = client
        .record_ipc_at("gpu", "k.cu", 5, &region(16))
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::Disconnected(_) | ClientError::Connect { .. }
        ),
        "{err:?}"
    );
}

fn err_text(err: &ClientError) -> String {
    err.to_string()
}

#[test]
fn a_server_that_closes_while_the_client_waits_is_a_disconnect_not_a_hang() {
    let stand_in = StandIn::new("closes");
    let mut client = TraceClient::connect_with(
        &stand_in.name,
        config_with(DeviceMode::Sync {
            deadline: Duration::from_secs(30),
        }),
    )
    .unwrap();
    let conn = stand_in.accept();
    let server = std::thread::spawn(move || {
        let _ = read_message(&conn);
        drop(conn);
    });
    let started = Instant::now();
    let err = client
        .record_ipc_at("gpu", "k.cu", 1, &region(16))
        .unwrap_err();
    assert!(matches!(err, ClientError::Disconnected(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    server.join().unwrap();
    let _ = stand_in.listener.as_fd();
}

#[test]
fn the_copy_mode_is_kept_in_each_device_records_head() {
    // The head of a device record says which mode made it; the ledger counts both (ring_file's tests check
    // that they are saved). Checked here on records pushed as a server pushes them.
    let mut ring = lizard_trace::TraceRing::new(4096).unwrap();
    for mode in [CopyMode::Sync, CopyMode::Async] {
        let meta = lizard_trace::RecordMeta {
            client_pid: 9,
            origin: Origin::Device {
                mode,
                device: DeviceUuid([1; 16]),
                offset: 64,
            },
            ..lizard_trace::RecordMeta::new("gpu", "k.cu", 1).unwrap()
        };
        ring.push(&meta, &[0; 8]).unwrap();
    }
    let modes: Vec<_> = ring
        .iter()
        .map(|r| match r.head().meta.origin {
            Origin::Device { mode, .. } => mode,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(modes, [CopyMode::Sync, CopyMode::Async]);
    let account = ring.ledger().get(9).unwrap();
    assert_eq!((account.device_sync, account.device_async), (1, 1));
}
