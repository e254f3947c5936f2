//! Helpers shared by the socket tests: socket names unique to each test, and bounded waits.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use lizard_trace::{ServerStats, SocketName, TraceServer};

/// The longest any test waits for the server to catch up.
pub const WAIT: Duration = Duration::from_secs(60);

/// An abstract socket name no other test or process uses.
pub fn unique_name(test: &str) -> SocketName {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    SocketName::abstract_name(format!(
        "lizard-trace-test-{}-{test}-{n}",
        std::process::id()
    ))
}

/// Waits (bounded) until the server has stored `records` records and rejected `rejected` messages.
pub fn wait_for(server: &TraceServer, records: u64, rejected: u64) -> ServerStats {
    let (stats, done) = server.wait_until(WAIT, |s| {
        s.records_stored >= records && s.rejected.total() >= rejected
    });
    assert!(done, "server did not catch up: {stats:?}");
    stats
}
