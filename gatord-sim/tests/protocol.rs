//! The simulated gatord seen from the wire, with hand-written client bytes over loopback TCP: the handshake
//! line per protocol generation, the XML-declaration rule of gatord 9, NAK for unknown requests, the key
//! binding rule (a configuration delivered on the capture connection itself gets key 0x0, as with gatord), the
//! end marker after APC_STOP with every sample due sent before it, and "Session already in progress" for a
//! second connection.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use gator_proto::ProtocolVersion;
use gatord_sim::{self as sim, SimConfig, SimHandle};

struct Wire(TcpStream);

impl Wire {
    fn connect(daemon: &SimHandle) -> (Wire, String) {
        let mut stream = TcpStream::connect(daemon.local_addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        stream.write_all(b"VERSION 671\nSTREAMLINE\n").unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while byte[0] != b'\n' {
            stream.read_exact(&mut byte).unwrap();
            line.push(byte[0]);
        }
        (Wire(stream), String::from_utf8(line).unwrap())
    }

    fn command(&mut self, kind: u8, payload: &[u8]) {
        let mut out = vec![kind];
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(payload);
        self.0.write_all(&out).unwrap();
    }

    fn response(&mut self) -> (u8, Vec<u8>) {
        let mut header = [0u8; 5];
        self.0.read_exact(&mut header).unwrap();
        let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
        let mut payload = vec![0u8; len];
        self.0.read_exact(&mut payload).unwrap();
        (header[0], payload)
    }

    fn request(&mut self, xml: &str) -> (u8, String) {
        self.command(0, xml.as_bytes());
        let (kind, payload) = self.response();
        (kind, String::from_utf8(payload).unwrap())
    }
}

const DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

#[test]
fn handshake_and_declaration_rule_per_generation() {
    for (protocol, line, bare_answer) in [
        (ProtocolVersion::V670, "GATOR 670\n", 1u8),
        (ProtocolVersion::V950, "GATOR 950\n", 5),
    ] {
        let daemon = sim::start(SimConfig {
            protocol,
            ..SimConfig::quick()
        })
        .unwrap();
        let (mut wire, answer) = Wire::connect(&daemon);
        assert_eq!(answer, line);
        wire.command(5, &[]);
        assert_eq!(wire.response(), (4, Vec::new()), "PING is ACKed");
        let (kind, text) = wire.request("<request type=\"counters\"/>");
        assert_eq!(
            kind, bare_answer,
            "{protocol:?}: request without declaration"
        );
        if kind == 5 {
            assert_eq!(text, "Unknown request");
        }
        let (kind, text) = wire.request(&format!("{DECL}<request type=\"bogus\"/>"));
        assert_eq!((kind, text.as_str()), (5, "Unknown request"));
        let (kind, text) = wire.request(&format!("{DECL}<request type=events/>"));
        assert_eq!(kind, 1, "unquoted attribute values work, as with mxml");
        assert!(text.contains("Sim_ccnt"));
    }
}

#[test]
fn keys_are_bound_when_a_connection_starts() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let config = format!(
        "{DECL}<configurations revision=\"3\"><configuration counter=\"Sim_memfree\"/></configurations>"
    );
    // Delivered on the capture connection itself: listed with key 0x0, no data.
    let (mut wire, _) = Wire::connect(&daemon);
    wire.command(1, config.as_bytes());
    assert_eq!(wire.response().0, 4);
    let (_, captured) = wire.request(&format!("{DECL}<request type=\"captured\"/>"));
    assert!(
        captured.contains("key=\"0x0\" type=\"Sim_memfree\""),
        "{captured}"
    );
    wire.command(4, &[]);
    drop(wire);
    std::thread::sleep(Duration::from_millis(50));
    // The next connection binds it: Sim_memfree is the third counter, so its key is 0xa + 2 * 2 (the keys
    // below 0xa are gatord's Mali constants').
    let (mut wire, _) = Wire::connect(&daemon);
    let (_, captured) = wire.request(&format!("{DECL}<request type=\"captured\"/>"));
    assert!(
        captured.contains("key=\"0xe\" type=\"Sim_memfree\""),
        "{captured}"
    );
    assert_eq!(daemon.configuration(), ["Sim_memfree"]);
    // A capture: SUMMARY first, frames, then the end marker after APC_STOP.
    wire.command(2, &[]);
    let (kind, summary) = wire.response();
    assert_eq!(
        (kind, summary[0]),
        (3, 1),
        "an APC_DATA SUMMARY frame first"
    );
    let (kind, frame) = wire.response();
    assert_eq!((kind, frame[0]), (3, 5), "then BLOCK_COUNTER frames");
    wire.command(3, &[]);
    loop {
        let (kind, payload) = wire.response();
        assert_eq!(kind, 3);
        if payload.is_empty() {
            break;
        }
    }
    let mut rest = [0u8; 1];
    assert_eq!(
        wire.0.read(&mut rest).unwrap(),
        0,
        "the daemon closes after the end marker"
    );
}

#[test]
fn second_connection_gets_session_already_in_progress() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let (_first, _) = Wire::connect(&daemon);
    let (mut second, answer) = Wire::connect(&daemon);
    assert_eq!(answer, "GATOR 950\n", "the handshake still completes");
    second.command(5, &[]);
    let (kind, text) = second.response();
    assert_eq!(
        (kind, text.as_slice()),
        (0xff, &b"Session already in progress"[..])
    );
    assert_eq!(daemon.stats().busy_rejections, 1);
}

#[test]
fn idle_connections_beyond_the_limit_are_closed_and_counted_and_the_daemon_serves_again() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let idle: Vec<TcpStream> = (0..sim::MAX_CONNECTIONS)
        .map(|_| TcpStream::connect(daemon.local_addr()).unwrap())
        .collect();
    // The accept loop takes them in order; wait (bounded) until it has.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while daemon.stats().connections < sim::MAX_CONNECTIONS as u64 {
        assert!(std::time::Instant::now() < deadline, "{:?}", daemon.stats());
        std::thread::sleep(Duration::from_millis(5));
    }
    // One more is closed at once: it reads end of stream without sending anything.
    let mut extra = TcpStream::connect(daemon.local_addr()).unwrap();
    extra
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(extra.read(&mut byte).unwrap(), 0);
    assert_eq!(daemon.stats().connections_refused, 1);
    // Once the idle peers leave, a client is served again.
    drop(idle);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut stream = TcpStream::connect(daemon.local_addr()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        stream.write_all(b"VERSION 671\nSTREAMLINE\n").unwrap();
        if stream.read(&mut byte).is_ok_and(|n| n == 1) {
            assert_eq!(byte[0], b'G');
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{:?}", daemon.stats());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stop_sends_every_sample_due_before_the_end_marker() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let config = format!(
        "{DECL}<configurations revision=\"3\"><configuration counter=\"Sim_ccnt\"/></configurations>"
    );
    let (mut wire, _) = Wire::connect(&daemon);
    wire.command(1, config.as_bytes());
    assert_eq!(wire.response().0, 4);
    wire.command(4, &[]);
    drop(wire);
    std::thread::sleep(Duration::from_millis(50));
    // APC_START and APC_STOP in one write: the daemon meets both in one turn, as a thread that had no
    // time between them would. The sample due at the start is still sent, before the end marker.
    let (mut wire, _) = Wire::connect(&daemon);
    let mut both = vec![2u8, 0, 0, 0, 0];
    both.extend_from_slice(&[3, 0, 0, 0, 0]);
    wire.0.write_all(&both).unwrap();
    let mut kinds = Vec::new();
    loop {
        let (kind, payload) = wire.response();
        assert_eq!(kind, 3, "APC_DATA only");
        match payload.first() {
            Some(&frame) => kinds.push(frame),
            None => break,
        }
    }
    assert_eq!(kinds.first(), Some(&1), "SUMMARY first: {kinds:?}");
    assert!(kinds.contains(&5), "a BLOCK_COUNTER frame: {kinds:?}");
}
