//! Client and server over real `SOCK_SEQPACKET` UNIX sockets (abstract names unique to each test, or paths in
//! temporary directories): inline and memfd payloads, the record macro, drop and block policies, server
//! restart, name handling. Every record is made by the test.

mod common;

use std::time::Duration;

use common::{unique_name, wait_for, WAIT};
use lizard_trace::{
    trace_record, ClientConfig, ClientError, Delivery, SendPolicy, ServerConfig, ServerError,
    SocketName, TagError, TraceClient, TraceRing, TraceServer,
};

fn small_server(name: &SocketName) -> TraceServer {
    TraceServer::start(name, ServerConfig::with_capacity(1 << 20)).unwrap()
}

#[test]
fn inline_and_memfd_records_arrive_with_their_metadata() {
    let name = unique_name("basic");
    let server = small_server(&name);
    let mut client = TraceClient::connect(&name).unwrap();
    let before = lizard_trace::monotonic_raw_ns();
    let line = line!() + 1;
    assert_eq!(client.record("submit", b"draw 1").unwrap(), Delivery::Sent);
    let big = [9u8; 40_000];
    let sent = trace_record!(client, "copy", &big);
    let macro_line = line!() - 1;
    assert_eq!(sent.unwrap(), Delivery::Sent);
    assert_eq!(
        client.record_at("x", "a/b/c.cpp", 7, b"").unwrap(),
        Delivery::Sent
    );
    let after = lizard_trace::monotonic_raw_ns();
    let stats = wait_for(&server, 3, 0);
    assert_eq!(stats.records_memfd, 1);
    assert_eq!(stats.payload_bytes_stored, 6 + 40_000);
    assert_eq!(stats.connections_accepted, 1);
    assert_eq!(client.stats().sent, 3);
    assert_eq!(client.stats().sent_memfd, 1);
    server.with_ring(|ring| {
        let r: Vec<_> = ring.iter().collect();
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].seq(), r[0].module(), r[0].payload()),
            (0, "submit", &b"draw 1"[..])
        );
        assert_eq!((r[0].file(), r[0].line()), ("server.rs", line));
        assert_eq!(
            (r[1].module(), r[1].file(), r[1].line()),
            ("copy", "server.rs", macro_line)
        );
        assert!(r[1].payload().iter().all(|&b| b == 9) && r[1].payload().len() == 40_000);
        assert_eq!(
            (r[2].file(), r[2].line(), r[2].payload()),
            ("c.cpp", 7, &b""[..])
        );
        for (k, rec) in r.iter().enumerate() {
            assert_eq!(rec.client_seq(), k as u64);
            assert_eq!(rec.client_pid(), std::process::id());
            assert!(rec.timestamp_ns() >= before && rec.timestamp_ns() <= after);
        }
        assert!(r[0].timestamp_ns() <= r[1].timestamp_ns());
    });
}

#[test]
fn drop_policy_counts_drops_as_client_seq_gaps() {
    let name = unique_name("drop");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    let mut client = TraceClient::connect(&name).unwrap();
    // While the ring is held, the server cannot store, so the socket queue fills and records are dropped.
    let dropped_while_held = server.with_ring(|_| {
        let mut dropped = 0;
        for i in 0..200_000u32 {
            if client.record("m", &i.to_le_bytes()).unwrap() == Delivery::Dropped {
                dropped += 1;
                if dropped == 10 {
                    break;
                }
            }
        }
        dropped
    });
    assert_eq!(dropped_while_held, 10);
    let stats = client.stats();
    assert_eq!(stats.dropped, 10);
    assert_eq!(stats.sent + stats.dropped, client.next_client_seq());
    wait_for(&server, stats.sent, 0);
    server.with_ring(|ring| {
        let seqs: Vec<u64> = ring.iter().map(|r| r.client_seq()).collect();
        assert_eq!(seqs.len() as u64, stats.sent);
        let missing = client.next_client_seq() - seqs.len() as u64;
        assert_eq!(missing, stats.dropped);
        // Each stored record carries the payload its client_seq was sent with.
        for r in ring.iter() {
            assert_eq!(r.payload(), &(r.client_seq() as u32).to_le_bytes());
        }
    });
}

#[test]
fn block_policy_waits_then_drops_after_its_timeout() {
    let name = unique_name("block");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    let mut config = ClientConfig::default();
    config.policy = SendPolicy::Block {
        timeout: Duration::from_millis(20),
    };
    let mut client = TraceClient::connect_with(&name, config).unwrap();
    let outcome = server.with_ring(|_| {
        (0..200_000u32).find(|i| client.record("m", &i.to_le_bytes()).unwrap() == Delivery::Dropped)
    });
    assert!(outcome.is_some(), "the queue never filled");
    assert_eq!(client.stats().dropped, 1);
    // Once the server drains, a generous timeout delivers everything.
    let mut client = TraceClient::connect_with(&name, {
        let mut config = ClientConfig::default();
        config.policy = SendPolicy::Block { timeout: WAIT };
        config
    })
    .unwrap();
    for i in 0..5_000u32 {
        assert_eq!(
            client.record("m", &i.to_le_bytes()).unwrap(),
            Delivery::Sent
        );
    }
}

#[test]
fn client_errors_are_typed() {
    let name = unique_name("nobody");
    assert!(matches!(
        TraceClient::connect(&name),
        Err(ClientError::Connect { .. })
    ));
    let mut config = ClientConfig::default();
    config.inline_threshold = 70_000;
    assert!(matches!(
        TraceClient::connect_with(&name, config),
        Err(ClientError::InlineThreshold {
            threshold: 70_000,
            max: 65_536
        })
    ));
    let server = small_server(&name);
    let mut client = TraceClient::connect(&name).unwrap();
    assert!(matches!(
        client.record("eleven_byte", b""),
        Err(ClientError::Module(TagError::TooLong { len: 11, max: 10 }))
    ));
    assert!(matches!(
        client.record("a\0b", b""),
        Err(ClientError::Module(TagError::Nul { at: 1 }))
    ));
    // Invalid calls consume no sequence number and send nothing.
    assert_eq!(client.next_client_seq(), 0);
    assert_eq!(server.stats().records_stored, 0);
}

#[test]
fn server_restart_continues_the_ring_and_clients_reconnect() {
    let name = unique_name("restart");
    let server = small_server(&name);
    let mut client = TraceClient::connect(&name).unwrap();
    for i in 0..10u8 {
        assert_eq!(client.record("before", &[i]).unwrap(), Delivery::Sent);
    }
    wait_for(&server, 10, 0);
    let ring = server.stop();
    assert_eq!(ring.directory().next_seq, 10);
    let dir = tempdir("restart");
    let file = dir.join("ring.bin");
    ring.save(&file).unwrap();

    // The server is gone: the record in hand is dropped, then reconnecting fails.
    assert!(matches!(
        client.record("gone", b"x"),
        Err(ClientError::Disconnected(_))
    ));
    assert!(matches!(
        client.record("gone", b"y"),
        Err(ClientError::Connect { .. })
    ));

    let ring = TraceRing::load(&file).unwrap();
    let server = TraceServer::start_with_ring(&name, ring, ServerConfig::default()).unwrap();
    assert_eq!(client.record("after", b"z").unwrap(), Delivery::Sent);
    wait_for(&server, 1, 0);
    assert_eq!(client.stats().reconnects, 1);
    assert_eq!(client.stats().dropped, 2);
    server.with_ring(|ring| {
        let last = ring.iter().last().unwrap();
        assert_eq!(
            (last.seq(), last.module(), last.client_seq()),
            (10, "after", 12)
        );
        assert_eq!(ring.len(), 11);
    });
    std::fs::remove_dir_all(dir).unwrap();
}

fn tempdir(test: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-trace-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn path_sockets_replace_stale_files_and_are_removed() {
    let dir = tempdir("path");
    let path = dir.join("trace.sock");
    // A socket file left behind by a process that is gone.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let name = SocketName::path(&path);
    let server = small_server(&name);
    assert!(matches!(
        TraceServer::start(&name, ServerConfig::with_capacity(1 << 16)),
        Err(ServerError::InUse(_))
    ));
    let mut client = TraceClient::connect(&name).unwrap();
    assert_eq!(client.record("p", b"1").unwrap(), Delivery::Sent);
    wait_for(&server, 1, 0);
    drop(server);
    assert!(!path.exists());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn server_start_errors_are_typed() {
    let name = unique_name("inuse");
    let _server = small_server(&name);
    assert!(matches!(
        TraceServer::start(&name, ServerConfig::with_capacity(1 << 16)),
        Err(ServerError::InUse(_))
    ));
    assert!(matches!(
        TraceServer::start(&SocketName::abstract_name(""), ServerConfig::default()),
        Err(ServerError::BadName { .. })
    ));
    assert!(matches!(
        TraceServer::start(
            &SocketName::abstract_name(vec![b'x'; 108]),
            ServerConfig::default()
        ),
        Err(ServerError::BadName { max: 107, .. })
    ));
    assert!(matches!(
        TraceServer::start(&unique_name("tiny"), ServerConfig::with_capacity(10)),
        Err(ServerError::Ring(_))
    ));
    assert!(matches!(
        TraceServer::start(
            &SocketName::path("/nonexistent-dir/lizard/trace.sock"),
            ServerConfig::with_capacity(1 << 16)
        ),
        Err(ServerError::Listen { .. })
    ));
}

#[test]
fn connections_beyond_the_limit_are_refused() {
    let name = unique_name("limit");
    let mut config = ServerConfig::with_capacity(1 << 16);
    config.max_clients = 2;
    let server = TraceServer::start(&name, config).unwrap();
    let mut a = TraceClient::connect(&name).unwrap();
    let mut b = TraceClient::connect(&name).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.connections_accepted == 2);
    assert!(done, "{stats:?}");
    let mut c = TraceClient::connect(&name).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.connections_refused == 1);
    assert!(done, "{stats:?}");
    assert_eq!(stats.clients_connected, 2);
    assert!(c.record("c", b"").is_err());
    assert_eq!(a.record("a", b"").unwrap(), Delivery::Sent);
    assert_eq!(b.record("b", b"").unwrap(), Delivery::Sent);
    wait_for(&server, 2, 0);
    drop((a, b));
    let (stats, done) = server.wait_until(WAIT, |s| s.clients_connected == 0);
    assert!(done, "{stats:?}");
    assert_eq!(stats.disconnects, 2);
}

#[test]
fn one_process_cannot_take_every_connection() {
    let name = unique_name("per-process");
    let mut config = ServerConfig::with_capacity(1 << 16);
    config.max_clients = 8;
    config.max_clients_per_process = 3;
    let server = TraceServer::start(&name, config).unwrap();
    // This process holds three connections; its fourth and fifth are refused and counted by reason.
    let mut held: Vec<TraceClient> = (0..3)
        .map(|_| TraceClient::connect(&name).unwrap())
        .collect();
    let (stats, done) = server.wait_until(WAIT, |s| s.connections_accepted == 3);
    assert!(done, "{stats:?}");
    let mut refused: Vec<TraceClient> = (0..2)
        .map(|_| TraceClient::connect(&name).unwrap())
        .collect();
    let (stats, done) = server.wait_until(WAIT, |s| s.connections_refused_per_process == 2);
    assert!(done, "{stats:?}");
    assert_eq!(
        (stats.connections_refused, stats.clients_connected),
        (0, 3),
        "{stats:?}"
    );
    assert!(refused.iter_mut().all(|c| c.record("r", b"").is_err()));
    for client in &mut held {
        assert_eq!(client.record("held", b"").unwrap(), Delivery::Sent);
    }
    wait_for(&server, 3, 0);
    // A freed slot is this process's again.
    held.pop();
    let (stats, done) = server.wait_until(WAIT, |s| s.clients_connected == 2);
    assert!(done, "{stats:?}");
    let mut again = TraceClient::connect(&name).unwrap();
    assert_eq!(again.record("again", b"").unwrap(), Delivery::Sent);
    wait_for(&server, 4, 0);
}
