//! Error paths against the simulated gatord over loopback TCP (frames from its synthetic workload and scripted
//! samples): a daemon that dies mid-capture, one that never sends the end marker, a malformed frame, an
//! oversize length, "Session already in progress", and a malformed events document.

mod common;

use std::time::{Duration, Instant};

use common::{config_for, id_of};
use gator_proto::client::ClientError;
use gator_proto::response::ResponseError;
use gatord_sim::{self as sim, Faults, SimConfig, SimSample, Stream};
use lizard_core::{Error, GatordError, Lizard, ProtocolFault};

fn samples(n: i64) -> Stream {
    Stream::Samples(
        (0..n)
            .map(|i| SimSample {
                timestamp_ns: (i + 1) * 1_000_000,
                values: vec![("Sim_ccnt".into(), 10 + i)],
            })
            .collect(),
    )
}

fn start_ccnt(daemon: &sim::SimHandle) -> (Lizard, u32) {
    let mut lizard = Lizard::configure(config_for(daemon)).unwrap();
    let id = id_of(&lizard, "Sim_ccnt");
    lizard.enable(id).unwrap();
    lizard.start_capture().unwrap();
    (lizard, id)
}

/// Waits until the daemon has sent `frames` frames (or 2 s).
/// A simulated daemon that dies (closes every connection) after sending 5 capture frames.
fn dying_after_five_frames() -> sim::SimHandle {
    sim::start(SimConfig {
        faults: Faults {
            die_after_frames: Some(5),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap()
}

fn wait_frames(daemon: &sim::SimHandle, frames: u64) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while daemon.stats().frames < frames && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn daemon_dying_mid_capture_returns_disconnected_promptly_and_keeps_samples() {
    let daemon = dying_after_five_frames();
    let (mut lizard, id) = start_ccnt(&daemon);
    wait_frames(&daemon, 6);
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        matches!(err, Error::Gatord(GatordError::Disconnected)),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "prompt: {:?}",
        started.elapsed()
    );
    assert!(!lizard.is_capturing());
    let values: Vec<i64> = lizard
        .samples(id)
        .unwrap()
        .iter()
        .map(|s| s.value.as_f64() as i64)
        .collect();
    let expected: Vec<i64> = (0..5).map(|n| sim::synthetic_value(0, n)).collect();
    assert_eq!(
        values, expected,
        "the five frames sent before dying stay readable"
    );
    // The engine is usable again afterwards (the simulator serves new connections).
    drop(daemon);
}

#[test]
fn missing_end_marker_hits_the_stop_deadline() {
    let daemon = sim::start(SimConfig {
        stream: samples(3),
        faults: Faults {
            no_end_marker: true,
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let mut config = config_for(&daemon);
    config.stop_timeout = Duration::from_millis(300);
    let mut lizard = Lizard::configure(config).unwrap();
    let id = id_of(&lizard, "Sim_ccnt");
    lizard.enable(id).unwrap();
    lizard.start_capture().unwrap();
    wait_frames(&daemon, 4);
    std::thread::sleep(Duration::from_millis(20));
    let started = Instant::now();
    let err = lizard.stop_capture().unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(err, Error::Gatord(GatordError::StopTimeout(_))),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "{took:?}"
    );
    assert_eq!(lizard.read_int(id).unwrap(), 10 + 11 + 12);
}

#[test]
fn malformed_frame_is_reported_and_the_rest_kept() {
    let daemon = sim::start(SimConfig {
        stream: samples(5),
        faults: Faults {
            malformed_frame_at: Some(2),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let (mut lizard, id) = start_ccnt(&daemon);
    wait_frames(&daemon, 6);
    let err = lizard.stop_capture().unwrap_err();
    let Error::Gatord(GatordError::MalformedFrames { count, .. }) = err else {
        panic!("expected MalformedFrames, got {err:?}");
    };
    assert_eq!(count, 1);
    assert_eq!(
        lizard.read_int(id).unwrap(),
        10 + 11 + 13 + 14,
        "frame 2 skipped, the others kept"
    );
}

#[test]
fn oversize_length_is_a_protocol_error_without_allocating() {
    let daemon = sim::start(SimConfig {
        stream: samples(5),
        faults: Faults {
            oversize_length_at: Some(2),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let (mut lizard, id) = start_ccnt(&daemon);
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        matches!(err, Error::Gatord(GatordError::Protocol { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("protocol error"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(
        lizard.read_int(id).unwrap(),
        10 + 11,
        "frames before the bad header kept"
    );
}

#[test]
fn busy_daemon_is_a_typed_retryable_error() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut config = config_for(&daemon);
    config.busy_retry = Duration::from_millis(100);
    let mut lizard = Lizard::configure(config).unwrap();
    lizard.enable(1).unwrap();
    // Another client holds the one session gatord allows (retrying until the discovery connection is released).
    let other = loop {
        let mut other = std::net::TcpStream::connect(daemon.local_addr()).unwrap();
        std::io::Write::write_all(&mut other, b"STREAMLINE\n\x05\0\0\0\0").unwrap();
        let mut answer = [0u8; 15];
        std::io::Read::read_exact(&mut other, &mut answer).unwrap();
        assert_eq!(&answer[..10], b"GATOR 950\n");
        if answer[10] == 4 {
            break other; // PING was ACKed: this connection holds the session.
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = lizard.start_capture().unwrap_err();
    assert!(
        matches!(err, Error::Gatord(GatordError::SessionInProgress { waited }) if waited > Duration::ZERO),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert!(err.to_string().contains("retry"), "{err}");
    assert!(!lizard.is_capturing());
    // Once the other client leaves, the same engine captures.
    drop(other);
    std::thread::sleep(Duration::from_millis(50));
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    lizard.stop_capture().unwrap();
}

#[test]
fn always_busy_daemon_fails_configure_with_the_reason() {
    let daemon = sim::start(SimConfig {
        faults: Faults {
            busy: true,
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let mut config = config_for(&daemon);
    config.busy_retry = Duration::from_millis(50);
    let err = Lizard::configure(config).unwrap_err();
    let Error::NoSource { gatord, .. } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    assert!(
        matches!(
            *gatord,
            Error::Gatord(GatordError::SessionInProgress { .. })
        ),
        "{gatord:?}"
    );
    assert!(daemon.stats().busy_rejections >= 1);
}

#[test]
fn malformed_events_document_fails_discovery_with_an_xml_error() {
    let daemon = sim::start(SimConfig {
        events_xml: Some("<?xml version=\"1.0\"?><events><category name=\"x\">".into()),
        counters: Some(vec!["x".into()]),
        ..SimConfig::quick()
    })
    .unwrap();
    let err = Lizard::configure(config_for(&daemon)).unwrap_err();
    let Error::NoSource { gatord, .. } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    assert!(
        matches!(
            *gatord,
            Error::Gatord(GatordError::Xml {
                document: "events",
                ..
            })
        ),
        "{gatord:?}"
    );
}

#[test]
fn too_small_message_limit_refuses_the_events_document() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut config = config_for(&daemon);
    config.max_message_len = 64;
    let err = Lizard::configure(config).unwrap_err();
    let Error::NoSource { gatord, .. } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    // The typed cause is kept: the events XML announced a payload over the 64-byte limit.
    assert!(
        matches!(
            &*gatord,
            Error::Gatord(GatordError::Protocol {
                source: ProtocolFault::Client(ClientError::Response(ResponseError::TooLarge {
                    max: 64,
                    ..
                })),
                ..
            })
        ),
        "{gatord:?}"
    );
    let cause = std::error::Error::source(&*gatord).expect("the fault is the source");
    assert!(!gatord.to_string().contains(&cause.to_string()), "{gatord}");
}

#[test]
fn dropping_during_a_capture_stops_and_joins() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let (lizard, _) = start_ccnt(&daemon);
    std::thread::sleep(Duration::from_millis(10));
    let started = Instant::now();
    drop(lizard);
    assert!(started.elapsed() < Duration::from_secs(1));
    let deadline = Instant::now() + Duration::from_secs(1);
    while daemon.stats().end_markers == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        daemon.stats().end_markers,
        1,
        "the capture was stopped cleanly"
    );
}

#[test]
fn silent_daemon_times_out_instead_of_hanging() {
    // Accepts connections and never answers the handshake.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address =
        lizard_core::GatordAddress::new("127.0.0.1", listener.local_addr().unwrap().port());
    let holder = std::thread::spawn(move || {
        let conn = listener.accept();
        std::thread::sleep(Duration::from_millis(500));
        drop(conn);
    });
    let mut config = lizard_core::Config::gatord_only(address);
    config.timeouts.io = Duration::from_millis(100);
    let started = Instant::now();
    let err = Lizard::configure(config).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let Error::NoSource { gatord, .. } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    assert!(
        matches!(
            *gatord,
            Error::Gatord(GatordError::Transport(
                lizard_core::TransportError::Timeout(..)
            ))
        ),
        "{gatord:?}"
    );
    holder.join().unwrap();
}

#[test]
fn garbage_handshake_is_a_protocol_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address =
        lizard_core::GatordAddress::new("127.0.0.1", listener.local_addr().unwrap().port());
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let _ = std::io::Write::write_all(&mut conn, b"HTTP/1.1 400 Bad Request\r\n\r\n");
        std::thread::sleep(Duration::from_millis(100));
    });
    let err = Lizard::configure(lizard_core::Config::gatord_only(address)).unwrap_err();
    let Error::NoSource { gatord, .. } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    assert!(
        matches!(
            &*gatord,
            Error::Gatord(GatordError::Protocol {
                source: ProtocolFault::Client(ClientError::Handshake(_)),
                ..
            })
        ),
        "{gatord:?}"
    );
    server.join().unwrap();
}

/// Waits until the engine reports the capture ended on gatord's side (or 2 s); returns how long it took.
fn wait_ended(lizard: &Lizard) -> Duration {
    let started = Instant::now();
    while !lizard.capture_ended() && started.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(2));
    }
    started.elapsed()
}

#[test]
fn daemon_dying_mid_capture_is_seen_at_once_while_capturing() {
    let daemon = dying_after_five_frames();
    let (mut lizard, id) = start_ccnt(&daemon);
    let waited = wait_ended(&lizard);
    assert!(lizard.capture_ended(), "not seen after {waited:?}");
    assert!(lizard.is_capturing(), "seen, not stopped: the caller stops");
    assert!(matches!(
        lizard.stop_capture(),
        Err(Error::Gatord(GatordError::Disconnected))
    ));
    assert_eq!(lizard.samples(id).unwrap().len(), 5);
    assert!(!lizard.capture_ended());
}

#[test]
fn daemon_error_during_capture_ends_it_with_the_text_and_keeps_samples() {
    const TEXT: &str = "Perf agent failed. Invalid event and/or could not online CPUs";
    let daemon = sim::start(SimConfig {
        faults: Faults {
            error_after_frames: Some((3, TEXT.into())),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let (mut lizard, id) = start_ccnt(&daemon);
    wait_ended(&lizard);
    assert!(lizard.capture_ended());
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        matches!(&err, Error::Gatord(GatordError::Daemon(text)) if text == TEXT),
        "{err:?}"
    );
    let expected: i64 = (0..3).map(|n| sim::synthetic_value(0, n)).sum();
    assert_eq!(
        lizard.read_int(id).unwrap(),
        expected,
        "the three frames before the error"
    );
}

#[test]
fn capture_without_any_sample_is_nothing_captured_and_reads_no_value() {
    let daemon = sim::start(SimConfig {
        stream: Stream::Samples(Vec::new()),
        ..SimConfig::quick()
    })
    .unwrap();
    let (mut lizard, id) = start_ccnt(&daemon);
    std::thread::sleep(Duration::from_millis(20));
    assert!(!lizard.capture_ended(), "a quiet daemon has not ended");
    let err = lizard.stop_capture().unwrap_err();
    assert!(matches!(err, Error::NothingCaptured(1)), "{err:?}");
    assert!(matches!(
        lizard.read_int(id),
        Err(Error::NoValue {
            reason: lizard_core::NoValue::NoSamples,
            ..
        })
    ));
}

#[test]
fn counters_gatord_binds_no_key_to_read_not_bound() {
    // gatord's `captured` map gives Sim_memfree no key (as for counters it cannot capture here).
    let daemon = sim::start(SimConfig {
        captured_xml: Some(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<captured version="1" protocol="950"><counters>
<counter key="0xa" type="Sim_ccnt" event="0x11"/>
<counter key="0x0" type="Sim_memfree"/>
</counters></captured>"#
                .into(),
        ),
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let ccnt = id_of(&lizard, "Sim_ccnt");
    let memfree = id_of(&lizard, "Sim_memfree");
    lizard.enable(ccnt).unwrap();
    lizard.enable(memfree).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    lizard.stop_capture().unwrap();
    assert!(lizard.read_int(ccnt).unwrap() > 0);
    let err = lizard.read_double(memfree).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoValue {
                reason: lizard_core::NoValue::Unavailable(lizard_core::Unavailable::NotBound),
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn session_in_progress_says_how_long_it_retried_and_claims_no_end() {
    let text = Error::Gatord(GatordError::SessionInProgress {
        waited: Duration::from_millis(2000),
    })
    .to_string();
    assert!(text.contains("after 2.0 s of retries"), "{text}");
    let rest = text.replace("2.0 s", "");
    assert!(
        !rest.chars().any(|c| c.is_ascii_digit()),
        "nothing is known about when the other session ends: {text}"
    );
}
