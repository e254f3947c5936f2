//! One client flooding the ring cannot overwrite another's records: once the ring is full, a client that
//! holds its share (the capacity divided among the connected client processes) has its new records
//! refused and counted, unless the oldest record is its own. The flooder is this test binary re-run as a
//! child process (`flooding_child`), since shares are kept per process.

mod common;

use std::process::{Command, Stdio};

use common::{unique_name, wait_for, WAIT};
use lizard_trace::{
    ClientConfig, Delivery, SendPolicy, ServerConfig, SocketName, TraceClient, TraceServer,
};

const SOCKET_ENV: &str = "LIZARD_TRACE_FLOOD_SOCKET";

/// Records the flooder sends: 64 times what the ring holds.
const FLOOD: u64 = 4096;
const FLOOD_PAYLOAD: usize = 1024;
const RING: usize = 64 << 10;

/// The flooder: sends [`FLOOD`] records of 1 KiB, waiting for room rather than dropping any. Ignored in an
/// ordinary run, and run (with `--ignored`) only by the test below, which sets its socket name.
#[test]
#[ignore = "the child process of a_flooding_client_keeps_to_its_share"]
fn flooding_child() {
    let name = std::env::var(SOCKET_ENV).unwrap_or_else(|_| {
        panic!("flooding_child runs only as the child of another test, which sets {SOCKET_ENV}")
    });
    let name: SocketName = name.parse().unwrap();
    let mut config = ClientConfig::default();
    config.policy = SendPolicy::Block { timeout: WAIT };
    let mut client = TraceClient::connect_with(&name, config).unwrap();
    for _ in 0..FLOOD {
        assert_eq!(
            client.record("flood", &[0x55; FLOOD_PAYLOAD]).unwrap(),
            Delivery::Sent
        );
    }
}

#[test]
fn a_flooding_client_keeps_to_its_share() {
    let name = unique_name("share");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(RING)).unwrap();
    // The well-behaved client: a few records before the flood and during it.
    let mut calm = TraceClient::connect(&name).unwrap();
    for n in 0..5u8 {
        assert_eq!(calm.record("calm", &[n; 100]).unwrap(), Delivery::Sent);
    }
    wait_for(&server, 5, 0);
    let mut flooder = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "flooding_child", "--ignored", "--test-threads=1"])
        .env(SOCKET_ENV, name.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (stats, flooding) = server.wait_until(WAIT, |s| s.rejected.over_share > 0);
    for n in 5..10u8 {
        assert_eq!(calm.record("calm", &[n; 100]).unwrap(), Delivery::Sent);
    }
    let status = flooder.wait().unwrap();
    assert!(status.success(), "the flooder failed: {status}");
    assert!(flooding, "the flooder never reached its share: {stats:?}");
    let (stats, done) = server.wait_until(WAIT, |s| {
        s.records_stored + s.rejected.over_share == 10 + FLOOD
    });
    assert!(done, "{stats:?}");
    // Every calm record is still there; the flooder holds no more than the rest of the ring.
    server.with_ring(|ring| {
        let calm: Vec<u8> = ring
            .iter()
            .filter(|r| r.module() == "calm")
            .map(|r| r.payload()[0])
            .collect();
        assert_eq!(calm, (0..10).collect::<Vec<u8>>(), "{stats:?}");
        let flood = ring.iter().filter(|r| r.module() == "flood").count();
        assert!(
            flood > 0 && flood * FLOOD_PAYLOAD < RING,
            "{flood} flood records"
        );
    });
    assert!(stats.rejected.over_share > 0, "{stats:?}");
    assert_eq!(
        stats.rejected.total(),
        stats.rejected.over_share,
        "{stats:?}"
    );
    // The ledger says whose records were refused and overwritten: all of them the flooder's.
    let ledger = server.ledger();
    let calm = ledger
        .get(std::process::id())
        .expect("the calm client's account");
    assert_eq!((calm.stored, calm.overwritten, calm.refused), (10, 0, 0));
    let flood = ledger.get(flooder.id()).expect("the flooder's account");
    assert_eq!(flood.stored + flood.refused, FLOOD, "{flood:?}");
    assert_eq!(flood.refused, stats.rejected.over_share);
    // And a saved ring keeps the ledger.
    let path = std::env::temp_dir().join(format!("lizard-fair-share-{}.ring", std::process::id()));
    server.save(&path).unwrap();
    let saved = lizard_trace::TraceRing::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(saved.ledger(), &ledger);
}
