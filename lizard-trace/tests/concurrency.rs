//! Eight concurrent clients × 10 000 records each into one server over a real `SOCK_SEQPACKET` socket (abstract
//! names unique to each test): no loss while the ring has room, and exact overwrite accounting when it does not.
//! Payloads are made by the test so that each identifies its client and record; every 1000th travels in a memfd.

mod common;

use std::thread;

use common::{unique_name, WAIT};
use lizard_trace::{
    ClientConfig, Delivery, SendPolicy, ServerConfig, SocketName, TraceClient, TraceRing,
    TraceServer, HEAD_LEN,
};

const CLIENTS: usize = 8;
const RECORDS: u64 = 10_000;

fn payload(client: usize, seq: u64) -> Vec<u8> {
    let len = if seq % 1000 == 999 {
        20_000
    } else {
        16 + (seq as usize * 7 + client) % 100
    };
    (0..len)
        .map(|k| (client * 131 + seq as usize * 17 + k) as u8)
        .collect()
}

fn run_clients(name: &SocketName) {
    let mut config = ClientConfig::default();
    config.policy = SendPolicy::Block { timeout: WAIT };
    let workers: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let name = name.clone();
            thread::spawn(move || {
                let mut client = TraceClient::connect_with(&name, config).unwrap();
                let module = format!("client{c}");
                for seq in 0..RECORDS {
                    assert_eq!(
                        client.record(&module, &payload(c, seq)).unwrap(),
                        Delivery::Sent
                    );
                }
                assert_eq!(client.stats().sent, RECORDS);
                assert_eq!(client.stats().sent_memfd, RECORDS / 1000);
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

fn wait_all(server: &TraceServer) {
    let total = CLIENTS as u64 * RECORDS;
    let (stats, done) = server.wait_until(WAIT, |s| s.records_stored == total);
    assert!(done, "{stats:?}");
    assert_eq!(stats.rejected.total(), 0);
    assert_eq!(stats.connections_accepted, CLIENTS as u64);
    assert_eq!(stats.records_memfd, CLIENTS as u64 * RECORDS / 1000);
}

/// Checks that each client's held records are a gap-free run ending at its last record, with its payloads.
fn check_suffixes(ring: &TraceRing) -> u64 {
    let mut next: Vec<Option<u64>> = vec![None; CLIENTS];
    let mut held = 0;
    for r in ring.iter() {
        let c: usize = r.module()["client".len()..].parse().unwrap();
        let expected = next[c].unwrap_or(r.client_seq());
        assert_eq!(r.client_seq(), expected, "client {c} has a gap");
        assert_eq!(r.payload(), &payload(c, r.client_seq())[..]);
        assert_eq!(r.client_pid(), std::process::id());
        next[c] = Some(expected + 1);
        held += 1;
    }
    for (c, n) in next.iter().enumerate() {
        if let Some(n) = n {
            assert_eq!(*n, RECORDS, "client {c} lost its newest records");
        }
    }
    held
}

#[test]
fn no_loss_while_the_ring_has_room() {
    let name = unique_name("room");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    run_clients(&name);
    wait_all(&server);
    let total = CLIENTS as u64 * RECORDS;
    server.with_ring(|ring| {
        let dir = ring.directory();
        assert_eq!(
            (
                dir.first_seq,
                dir.next_seq,
                dir.record_count,
                dir.records_overwritten
            ),
            (0, total, total, 0)
        );
        assert_eq!(check_suffixes(ring), total);
        // Every client's records start at 0: nothing was lost anywhere.
        let firsts = ring.iter().filter(|r| r.client_seq() == 0).count();
        assert_eq!(firsts, CLIENTS);
    });
}

#[test]
fn exact_overwrite_accounting_when_the_ring_is_full() {
    let name = unique_name("full");
    let capacity = 256 << 10;
    let server = TraceServer::start(&name, ServerConfig::with_capacity(capacity)).unwrap();
    run_clients(&name);
    wait_all(&server);
    let total = CLIENTS as u64 * RECORDS;
    let ring = server.stop();
    let dir = ring.directory();
    assert_eq!(dir.next_seq, total);
    assert_eq!(dir.records_overwritten, dir.first_seq);
    assert_eq!(dir.records_overwritten + dir.record_count, total);
    assert!(dir.records_overwritten > 0);
    let used: u64 = ring
        .iter()
        .map(|r| (HEAD_LEN + r.payload().len()) as u64)
        .sum();
    assert_eq!(dir.bytes_used, used);
    assert!(used <= capacity as u64);
    // Even with the largest record (20 066 bytes) wasted at the wrap point, the ring stays mostly full.
    assert!(used > capacity as u64 - 2 * 20_066, "{dir:?}");
    let seqs: Vec<u64> = ring.iter().map(|r| r.seq()).collect();
    assert_eq!(seqs, (dir.first_seq..dir.next_seq).collect::<Vec<_>>());
    assert_eq!(check_suffixes(&ring), dir.record_count);
}
