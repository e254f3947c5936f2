//! Writes to a peer that has gone away never raise SIGPIPE, which would kill a C host process that has not
//! ignored it. Each scenario runs in a child process (this test binary re-run with `LIZARD_SIGPIPE_CHILD`)
//! that first restores SIGPIPE's default action; a control scenario writing with plain `write(2)` proves the
//! harness sees the signal. The peers are loopback listeners and the simulated gatord.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use gatord_sim::{self as sim, Faults, SimConfig};
use lizard_core::GatordError;
use lizard_core::{Error, Lizard, Timeouts, Transport};

const CHILD: &str = "LIZARD_SIGPIPE_CHILD";

fn restore_default_sigpipe() {
    // SAFETY: `signal` with a valid signal number and SIG_DFL has no memory-safety preconditions; this child
    // process runs exactly one test, so no other thread depends on the previous disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Runs `scenario` in a child process with default SIGPIPE handling; returns its exit status.
fn in_child(test: &str, scenario: &str) -> std::process::ExitStatus {
    Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--test-threads=1"])
        .env(CHILD, scenario)
        .status()
        .unwrap()
}

/// A connected socket whose peer has already closed.
fn closed_peer() -> std::net::TcpStream {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    drop(listener.accept().unwrap());
    let mut probe = [0u8; 1];
    let _ = (&client).read(&mut probe);
    client
}

fn run_scenario(scenario: &str) {
    restore_default_sigpipe();
    match scenario {
        "control" => {
            let stream = closed_peer();
            for _ in 0..100 {
                // SAFETY: the fd is owned by `stream`, open for the whole loop; the buffer is valid for 64 bytes.
                unsafe {
                    libc::write(stream.as_raw_fd(), [0u8; 64].as_ptr().cast(), 64);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        "transport" => {
            let stream = closed_peer();
            let mut transport = Transport::from_stream(stream, Duration::from_secs(1)).unwrap();
            let mut failed = false;
            for _ in 0..100 {
                if transport.write_all(&[0u8; 64]).is_err() {
                    failed = true;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            assert!(failed, "writes to a closed peer must fail");
        }
        "engine" => {
            let daemon = sim::start(SimConfig {
                faults: Faults {
                    die_after_frames: Some(3),
                    ..Faults::default()
                },
                ..SimConfig::quick()
            })
            .unwrap();
            let mut config = lizard_core::Config::gatord_only(daemon.address());
            config.timeouts = Timeouts::default();
            let mut lizard = Lizard::configure(config).unwrap();
            lizard.enable(1).unwrap();
            lizard.start_capture().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            // APC_STOP goes to a socket the daemon has closed.
            assert!(matches!(
                lizard.stop_capture(),
                Err(Error::Gatord(GatordError::Disconnected))
            ));
        }
        other => panic!("unknown scenario {other}"),
    }
}

#[test]
fn control_plain_write_to_closed_peer_dies_of_sigpipe() {
    if let Ok(s) = std::env::var(CHILD) {
        return run_scenario(&s);
    }
    let status = in_child(
        "control_plain_write_to_closed_peer_dies_of_sigpipe",
        "control",
    );
    assert_eq!(status.signal(), Some(libc::SIGPIPE), "{status:?}");
}

#[test]
fn transport_writes_to_closed_peer_raise_no_sigpipe() {
    if let Ok(s) = std::env::var(CHILD) {
        return run_scenario(&s);
    }
    let status = in_child(
        "transport_writes_to_closed_peer_raise_no_sigpipe",
        "transport",
    );
    assert!(status.success(), "{status:?}");
}

#[test]
fn stop_after_daemon_closed_raises_no_sigpipe() {
    if let Ok(s) = std::env::var(CHILD) {
        return run_scenario(&s);
    }
    let status = in_child("stop_after_daemon_closed_raises_no_sigpipe", "engine");
    assert!(status.success(), "{status:?}");
}
