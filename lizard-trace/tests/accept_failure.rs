//! A server whose process runs out of file descriptors: `accept` fails with `EMFILE`, the failure is
//! counted, the waiting connection stays queued, and once descriptors are free again the same client is
//! accepted and its records are stored. The scenario lowers the descriptor limit, so it runs in a child:
//! this test binary re-run with `LIZARD_TRACE_FD_CHILD` set.

mod common;

use std::fs::File;
use std::process::Command;

use common::{unique_name, wait_for, WAIT};
use lizard_trace::{Delivery, ServerConfig, TraceClient, TraceServer};

const CHILD_ENV: &str = "LIZARD_TRACE_FD_CHILD";

/// Descriptors the child may have open in all: its own, the server's, and a handful to fill.
const FD_HEADROOM: u64 = 32;

/// Sets the soft descriptor limit to the highest descriptor now open plus [`FD_HEADROOM`].
fn lower_descriptor_limit() {
    let highest = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u64>().ok())
        .max()
        .unwrap_or(2);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a live rlimit for getrlimit to fill and setrlimit to read.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = (highest + 1 + FD_HEADROOM).min(limit.rlim_max);
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

/// Opens `/dev/null` until the process is out of descriptors; returns the files, the last one closed so
/// that exactly one descriptor is free.
fn exhaust_descriptors() -> Vec<File> {
    let mut files = Vec::new();
    loop {
        match File::open("/dev/null") {
            Ok(file) => files.push(file),
            Err(err) => {
                assert_eq!(err.raw_os_error(), Some(libc::EMFILE), "{err}");
                break;
            }
        }
    }
    files.pop().expect("at least one descriptor was free");
    files
}

#[test]
fn out_of_descriptors_is_counted_and_the_queued_client_is_served_later() {
    if std::env::var_os(CHILD_ENV).is_none() {
        let output = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "out_of_descriptors_is_counted_and_the_queued_client_is_served_later",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, "1")
            .output()
            .expect("re-run the test binary");
        assert!(
            output.status.success(),
            "child failed: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        return;
    }

    let name = unique_name("emfile");
    let server = TraceServer::start(&name, ServerConfig::with_capacity(1 << 20)).expect("start");
    lower_descriptor_limit();
    let fillers = exhaust_descriptors();
    // The client's socket takes the last free descriptor; its connection waits in the listen queue.
    let mut client = TraceClient::connect(&name).expect("connect with the last descriptor");
    let (stats, failed) = server.wait_until(WAIT, |s| s.accept_errors >= 2);
    assert!(failed, "accept never failed: {stats:?}");
    assert_eq!(stats.connections_accepted, 0);
    assert!(server.is_running());

    drop(fillers);
    let (stats, accepted) = server.wait_until(WAIT, |s| s.connections_accepted == 1);
    assert!(accepted, "the queued client was never accepted: {stats:?}");
    assert_eq!(
        client.record("late", b"served").expect("send"),
        Delivery::Sent
    );
    wait_for(&server, 1, 0);
    server.with_ring(|ring| {
        let record = ring.iter().next().expect("the record");
        assert_eq!(record.payload(), b"served");
        assert_eq!(record.client_pid(), std::process::id());
    });
}
