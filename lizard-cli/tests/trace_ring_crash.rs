//! `lizard trace-server --ring FILE` keeps its records through a crash: four clients write records of mixed
//! sizes (inline and by memfd) while the server is killed with SIGKILL at random moments, 50 times, over a
//! million records in all. After each kill every record in the ring file is byte-exact, the sequence
//! numbers are consecutive, every record kept from before is still there unchanged, nothing torn is ever
//! shown, and the next server says what it kept and what was lost.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lizard_trace::shared_ring::{RingReader, Snapshot};
use lizard_trace::{SocketName, TraceClient};

/// Kills of the server, and the records the four clients send in all, at least: fewer in the emulated Arm
/// system (`LIZARD_ARM_VM`), where a million records would take most of an hour.
fn plan() -> (u32, u64) {
    match std::env::var_os("LIZARD_ARM_VM") {
        Some(_) => (5, 20_000),
        None => (50, 1_000_000),
    }
}
/// The longest any wait of the test lasts.
const DEADLINE: Duration = Duration::from_secs(120);

/// The payload of a client's record `n` (its own sequence number, from 0 on each connection) in round
/// `round`: 0 to 2999 bytes, every 64th 70 KiB (sent in a memfd), each byte following from the client, the
/// round, the record and its place.
fn payload(client: u8, round: u32, n: u64) -> Vec<u8> {
    let len = match n % 64 {
        63 => 70 << 10,
        _ => (n * 37 % 3000) as usize,
    };
    let seed = (n as usize).wrapping_mul(31) + round as usize * 13 + client as usize;
    (0..len).map(|i| seed.wrapping_add(i * 7) as u8).collect()
}

/// The module tag of client `client` in round `round`: `c2r17`.
fn module(client: u8, round: u32) -> String {
    format!("c{client}r{round}")
}

/// Starts a server on the ring file; returns it and its banner's recovery line.
fn start(socket: &str, ring: &Path) -> (Child, String) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args([
            "trace-server",
            "--socket",
            socket,
            "--no-device",
            "--capacity",
            "2MiB",
        ])
        .arg("--ring")
        .arg(ring)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trace-server");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr"));
    let mut recovery = String::new();
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line).expect("banner") == 0 {
            panic!("the server ended before its banner: {recovery}");
        }
        if line.contains("the ring is") {
            recovery = line.trim().to_owned();
        }
        if line.contains("device memory") {
            break;
        }
    }
    std::thread::spawn(move || std::io::Read::read_to_string(&mut lines, &mut String::new()));
    (server, recovery)
}

/// Checks a snapshot: every record byte-exact and whole, sequence numbers consecutive, each client's records
/// in its order. Returns the records by sequence number.
fn check(snapshot: &Snapshot) -> BTreeMap<u64, (String, u64)> {
    let mut by_seq = BTreeMap::new();
    let mut last_of: BTreeMap<String, u64> = BTreeMap::new();
    for (i, r) in snapshot.records.iter().enumerate() {
        assert_eq!(
            r.head.seq,
            snapshot.directory.first_seq + i as u64,
            "consecutive"
        );
        let module = r.head.meta.module.as_str().to_owned();
        let (client, round) = module
            .strip_prefix('c')
            .and_then(|m| m.split_once('r'))
            .and_then(|(c, r)| Some((c.parse::<u8>().ok()?, r.parse::<u32>().ok()?)))
            .unwrap_or_else(|| panic!("record {} of an unknown writer {module:?}", r.head.seq));
        let n = r.head.meta.client_seq;
        assert_eq!(
            r.payload,
            payload(client, round, n),
            "record {} ({module}, its {n}) byte-exact",
            r.head.seq
        );
        if let Some(&last) = last_of.get(&module) {
            assert!(n > last, "{module}'s records in its order");
        }
        last_of.insert(module.clone(), n);
        by_seq.insert(r.head.seq, (module, n));
    }
    by_seq
}

#[test]
fn records_survive_fifty_kills_of_the_server_byte_exact() {
    let (kills, records) = plan();
    let ring = std::env::temp_dir().join(format!("lizard-crash-{}.ring", std::process::id()));
    let _ = std::fs::remove_file(&ring);
    let socket = format!("@lizard-crash-{}", std::process::id());
    let name: SocketName = socket.parse().expect("name");
    let sent = Arc::new(AtomicU64::new(0));
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut before: BTreeMap<u64, (String, u64)> = BTreeMap::new();
    let mut kept_in_all = 0;
    let mut lost_lines = Vec::new();
    let started = Instant::now();
    for kill in 0..kills {
        let (mut server, recovery) = start(&socket, &ring);
        assert!(recovery.contains("the ring is"), "{recovery}");
        if kill == 0 {
            assert!(recovery.contains("a new ring"), "{recovery}");
        } else {
            assert!(recovery.contains("picked up the ring"), "{recovery}");
            lost_lines.push(recovery.clone());
        }
        // Four clients, until the server is gone.
        let stop = Arc::new(AtomicBool::new(false));
        let round_start = sent.load(Ordering::Relaxed);
        let clients: Vec<_> = (0..4u8)
            .map(|client| {
                let (name, stop, sent) = (name.clone(), Arc::clone(&stop), Arc::clone(&sent));
                std::thread::spawn(move || {
                    let Ok(mut c) = TraceClient::connect(&name) else {
                        return;
                    };
                    let module = module(client, kill);
                    while !stop.load(Ordering::Relaxed) {
                        let n = c.next_client_seq();
                        if c.record(&module, &payload(client, kill, n)).is_err() {
                            break;
                        }
                        sent.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // Killed somewhere after its share of the million records.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let share = records / u64::from(kills);
        let wait = Instant::now();
        while sent.load(Ordering::Relaxed) - round_start < share {
            assert!(
                wait.elapsed() < DEADLINE,
                "kill {kill}: the clients do not get through"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_micros(x % 5000));
        server.kill().expect("SIGKILL");
        server.wait().expect("reap");
        stop.store(true, Ordering::Relaxed);
        for thread in clients {
            thread.join().expect("client");
        }
        // Every record byte-exact; every record kept before, and not overwritten since, unchanged.
        let snapshot = RingReader::open(&ring).expect("open the ring").snapshot();
        let now = check(&snapshot);
        for (seq, record) in before.range(snapshot.directory.first_seq..) {
            assert_eq!(
                now.get(seq),
                Some(record),
                "kill {kill}: record {seq} kept from before"
            );
        }
        kept_in_all = snapshot.lost_in_crashes;
        before = now;
    }
    let (mut server, recovery) = start(&socket, &ring);
    lost_lines.push(recovery.clone());
    server.kill().expect("SIGKILL");
    server.wait().expect("reap");
    let total = sent.load(Ordering::Relaxed);
    assert!(total >= records, "{total} records sent");
    eprintln!(
        "{kills} kills in {:.1} s, {total} records sent; the last pick-up: {recovery}",
        started.elapsed().as_secs_f64()
    );
    eprintln!("records lost in the crashes before the last: {kept_in_all}");
    std::fs::remove_file(&ring).expect("clean up");
}

#[test]
fn trace_dump_follows_a_running_server_record_by_record() {
    let ring = std::env::temp_dir().join(format!("lizard-follow-{}.ring", std::process::id()));
    let _ = std::fs::remove_file(&ring);
    let socket = format!("@lizard-follow-{}", std::process::id());
    let (mut server, _) = start(&socket, &ring);
    let mut follower = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(["trace-dump", "--follow", "--format", "json"])
        .arg(&ring)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn trace-dump --follow");
    let name: SocketName = socket.parse().expect("name");
    let mut client = TraceClient::connect(&name).expect("connect");
    for n in 0..50u64 {
        let _ = client.record("follow", &payload(9, 0, n)).expect("record");
    }
    let mut lines = BufReader::new(follower.stdout.take().expect("stdout")).lines();
    let started = Instant::now();
    for n in 0..50u64 {
        assert!(started.elapsed() < DEADLINE, "the follower stopped at {n}");
        let line = lines.next().expect("a line").expect("text");
        let record: serde_json::Value =
            serde_json::from_str(&line).expect("one JSON record a line");
        assert_eq!(record["seq"], n, "{line}");
        assert_eq!(record["payload_len"], payload(9, 0, n).len(), "{line}");
    }
    // Ctrl-C ends it, cleanly.
    // SAFETY: kill has no memory preconditions; the pid is our own running child.
    unsafe { libc::kill(follower.id() as i32, libc::SIGINT) };
    let status = follower.wait().expect("reap");
    assert!(status.success(), "{status:?}");
    server.kill().expect("SIGKILL");
    server.wait().expect("reap");
    std::fs::remove_file(&ring).expect("clean up");
}
