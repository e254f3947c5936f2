//! Hostile clients against a real server over `SOCK_SEQPACKET` sockets with abstract names unique to each test:
//! malformed heads, lying lengths, oversized datagrams, missing, extra or truncated descriptors, memfds that are
//! unsealed, half sealed, smaller than claimed or not memfds at all, records larger than the ring. Every message
//! is built in the test with the crate's own encoder and then corrupted.

mod common;

use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};

use common::{unique_name, wait_for, WAIT};
use lizard_trace::memfd;
use lizard_trace::message::{MessageHead, PayloadKind, MESSAGE_HEAD_LEN};
use lizard_trace::transport::Connection;
use lizard_trace::{FileTag, ModuleTag, Rejections, ServerConfig, TraceServer};

fn head(kind: PayloadKind, len: u32, seq: u64) -> MessageHead {
    MessageHead {
        kind,
        ack: false,
        payload_len: len,
        timestamp_ns: 5,
        client_seq: seq,
        line: 1,
        module: ModuleTag::new("evil").unwrap(),
        file: FileTag::new("hostile.rs").unwrap(),
    }
}

fn inline(payload: &[u8], seq: u64) -> Vec<u8> {
    let mut out = head(PayloadKind::Inline, payload.len() as u32, seq)
        .encode()
        .to_vec();
    out.extend_from_slice(payload);
    out
}

fn memfd_head(len: u32, seq: u64) -> Vec<u8> {
    head(PayloadKind::Memfd, len, seq).encode().to_vec()
}

/// Sends `bad`, then a valid record, and checks that only the valid one is stored and `bad` is counted as
/// `expect` while the connection stays open.
fn check(
    server: &TraceServer,
    conn: &Connection,
    good_seq: &mut u64,
    bad: &[u8],
    fds: &[BorrowedFd<'_>],
    expect: fn(&mut Rejections),
) {
    let before = server.stats();
    conn.send_fds(bad, fds).unwrap();
    conn.send(&inline(b"good", *good_seq), None).unwrap();
    *good_seq += 1;
    let mut want = before.rejected;
    expect(&mut want);
    let after = wait_for(server, before.records_stored + 1, want.total());
    assert_eq!(after.rejected, want);
    assert_eq!(after.records_stored, before.records_stored + 1);
    assert_eq!(after.disconnects, 0);
    assert_eq!(after.clients_connected, 1);
}

#[test]
fn every_bad_message_is_rejected_and_counted_and_the_connection_survives() {
    let name = unique_name("hostile");
    let mut config = ServerConfig::with_capacity(8192);
    config.max_payload = 1 << 20;
    let server = TraceServer::start(&name, config).unwrap();
    let conn = Connection::connect(&name).unwrap();
    let mut seq = 0;

    // Malformed heads.
    check(&server, &conn, &mut seq, &[1, 1, 0], &[], |r| {
        r.malformed += 1
    });
    let mut bad = inline(b"x", 0);
    bad[0] = 9;
    check(&server, &conn, &mut seq, &bad, &[], |r| r.malformed += 1);
    let mut bad = inline(b"x", 0);
    bad[1] = 0;
    check(&server, &conn, &mut seq, &bad, &[], |r| r.malformed += 1);
    let mut bad = inline(b"x", 0);
    bad[30] = 0xFF;
    check(&server, &conn, &mut seq, &bad, &[], |r| r.malformed += 1);

    // Lying lengths: the head claims more, or fewer, bytes than follow it.
    let mut bad = inline(b"0123456789", 0);
    bad[4..8].copy_from_slice(&100u32.to_le_bytes());
    check(&server, &conn, &mut seq, &bad, &[], |r| r.malformed += 1);
    let mut bad = inline(b"0123456789", 0);
    bad[4..8].copy_from_slice(&3u32.to_le_bytes());
    check(&server, &conn, &mut seq, &bad, &[], |r| r.malformed += 1);

    // A datagram longer than any valid inline message, and a claim above max_payload.
    let huge = inline(&vec![0u8; 70_000], 0);
    check(&server, &conn, &mut seq, &huge, &[], |r| r.oversized += 1);
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(2 << 20, 0),
        &[],
        |r| r.oversized += 1,
    );

    // Descriptors: on an inline message, missing from a memfd message, two of them, too many to receive.
    let payload = memfd::sealed_payload(&[7; 100]).unwrap();
    let other = memfd::sealed_payload(&[8; 100]).unwrap();
    check(
        &server,
        &conn,
        &mut seq,
        &inline(b"x", 0),
        &[payload.as_fd()],
        |r| r.bad_fds += 1,
    );
    check(&server, &conn, &mut seq, &memfd_head(100, 0), &[], |r| {
        r.bad_fds += 1
    });
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(100, 0),
        &[payload.as_fd(), other.as_fd()],
        |r| r.bad_fds += 1,
    );
    let many: Vec<BorrowedFd<'_>> = (0..20).map(|_| payload.as_fd()).collect();
    check(&server, &conn, &mut seq, &memfd_head(100, 0), &many, |r| {
        r.bad_fds += 1
    });

    // Memfds: unsealed, sealed against resizing but still writable, smaller than claimed, not a memfd.
    let mut unsealed = memfd::create().unwrap();
    unsealed.write_all(&[1; 100]).unwrap();
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(100, 0),
        &[unsealed.as_fd()],
        |r| r.bad_memfd += 1,
    );
    let mut writable = memfd::create().unwrap();
    writable.write_all(&[1; 100]).unwrap();
    memfd::add_seals(writable.as_fd(), libc::F_SEAL_SHRINK | libc::F_SEAL_GROW).unwrap();
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(100, 0),
        &[writable.as_fd()],
        |r| r.bad_memfd += 1,
    );
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(101, 0),
        &[payload.as_fd()],
        |r| r.bad_memfd += 1,
    );
    let (sock, _peer) = std::os::unix::net::UnixStream::pair().unwrap();
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(1, 0),
        &[sock.as_fd()],
        |r| r.bad_memfd += 1,
    );

    // A valid memfd record larger than the whole ring.
    let big = memfd::sealed_payload(&vec![3; 10_000]).unwrap();
    check(
        &server,
        &conn,
        &mut seq,
        &memfd_head(10_000, 0),
        &[big.as_fd()],
        |r| r.too_large_for_ring += 1,
    );

    // And a valid memfd record still goes through, read from the memfd the server mapped.
    conn.send(&memfd_head(100, 99), Some(payload.as_fd()))
        .unwrap();
    let stats = wait_for(&server, seq + 1, 0);
    assert_eq!(stats.records_memfd, 1);
    assert_eq!(stats.rejected.total(), 17);
    server.with_ring(|ring| {
        let stored: Vec<_> = ring.iter().collect();
        assert_eq!(stored.len() as u64, seq + 1);
        for (k, r) in stored[..stored.len() - 1].iter().enumerate() {
            assert_eq!((r.client_seq(), r.payload()), (k as u64, &b"good"[..]));
        }
        let last = stored.last().unwrap();
        assert_eq!((last.client_seq(), last.payload()), (99, &[7u8; 100][..]));
    });
    assert_eq!(MESSAGE_HEAD_LEN, 58);
}

#[test]
fn an_empty_datagram_ends_only_its_own_connection() {
    let name = unique_name("empty");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 16)).unwrap();
    let quiet = Connection::connect(&name).unwrap();
    let rude = Connection::connect(&name).unwrap();
    rude.send(&[], None).unwrap();
    let (stats, done) = server.wait_until(WAIT, |s| s.disconnects == 1);
    assert!(done, "{stats:?}");
    assert_eq!(stats.clients_connected, 1);
    quiet.send(&inline(b"still here", 0), None).unwrap();
    wait_for(&server, 1, 0);
}

#[test]
fn garbage_streams_never_stop_the_server() {
    let name = unique_name("garbage");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 16)).unwrap();
    let conn = Connection::connect(&name).unwrap();
    // Deterministic pseudo-random datagrams of every length up to two heads.
    let mut x: u32 = 0x1234_5678;
    for len in 1..=2 * MESSAGE_HEAD_LEN {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        conn.send(&bytes, None).unwrap();
    }
    conn.send(&inline(b"ok", 0), None).unwrap();
    let stats = wait_for(&server, 1, 2 * MESSAGE_HEAD_LEN as u64);
    assert_eq!(stats.records_stored, 1);
    assert_eq!(stats.rejected.malformed, 2 * MESSAGE_HEAD_LEN as u64);
    assert!(server.is_running());
}

/// Descriptors open in this process (the server runs in it too).
fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Set in the child process that runs [`descriptor_flood`] alone.
const ALONE_ENV: &str = "LIZARD_TRACE_TEST_ALONE";

/// Runs the descriptor flood in a child process of its own (this test binary again, one test, one thread),
/// so no other test opens or closes descriptors while it counts them.
#[test]
fn a_descriptor_flood_leaves_the_server_working_and_its_descriptor_table_as_it_was() {
    const TEST: &str =
        "a_descriptor_flood_leaves_the_server_working_and_its_descriptor_table_as_it_was";
    if std::env::var_os(ALONE_ENV).is_some() {
        return descriptor_flood();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--test-threads=1", "--nocapture"])
        .env(ALONE_ENV, "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("1 passed"),
        "the flood failed: {}\n{text}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

fn descriptor_flood() {
    let name = unique_name("fd-flood");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 20)).unwrap();
    let calm = Connection::connect(&name).unwrap();
    let rude = Connection::connect(&name).unwrap();
    let (stats, both) = server.wait_until(WAIT, |s| s.clients_connected == 2);
    assert!(both, "{stats:?}");
    let payload = memfd::sealed_payload(&[9; 100]).unwrap();
    let baseline = open_descriptors();
    // 500 messages of 36 descriptors each (more than the 12 the server receives) and 500 of 12, then 500
    // valid memfd records: 24,500 descriptors passed in all, far more than a descriptor table holds.
    let many: Vec<BorrowedFd<'_>> = (0..36).map(|_| payload.as_fd()).collect();
    let mut sent_bad = 0u64;
    for round in 0..1000u64 {
        let fds = if round % 2 == 0 {
            &many[..]
        } else {
            &many[..12]
        };
        rude.send_fds(&memfd_head(100, round), fds).unwrap();
        sent_bad += 1;
        if round % 100 == 0 {
            calm.send(&inline(b"calm", round), None).unwrap();
        }
    }
    for round in 0..500u64 {
        rude.send(&memfd_head(100, round), Some(payload.as_fd()))
            .unwrap();
    }
    let stats = wait_for(&server, 10 + 500, sent_bad);
    assert_eq!(stats.rejected.bad_fds, sent_bad, "{stats:?}");
    assert_eq!(stats.records_memfd, 500, "{stats:?}");
    assert_eq!(stats.clients_connected, 2, "{stats:?}");
    // Every descriptor the server received it closed: the table is as before the flood.
    assert_eq!(open_descriptors(), baseline);
    // And it still serves: a new client is admitted and stored.
    let late = Connection::connect(&name).unwrap();
    late.send(&inline(b"late", 0), None).unwrap();
    wait_for(&server, 10 + 500 + 1, sent_bad);
    let ledger = server.ledger();
    let own = ledger.get(std::process::id()).unwrap();
    assert_eq!((own.stored, own.refused), (511, sent_bad));
}
