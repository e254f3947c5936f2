//! What the tests of C clients that record CUDA device memory share: a trace server that can copy device
//! memory (or a printed skip where it cannot), the line numbers a client prints, and the check of the
//! records it made.
#![allow(dead_code)]

use std::time::Duration;

use lizard_trace::{CopyMode, DeviceSupport, Origin, ServerConfig, SocketName, TraceServer};

/// A trace server with a 64 MiB ring on the abstract socket `@lizard-capi-TAG-PID`, and its name; `None`
/// (a printed skip, after `where_`) where the server cannot copy device memory.
pub fn device_server(tag: &str, where_: &str) -> Option<(String, TraceServer)> {
    let socket = format!("@lizard-capi-{tag}-{}", std::process::id());
    let name: SocketName = socket.parse().unwrap();
    let server = TraceServer::start(&name, ServerConfig::with_capacity(64 << 20)).unwrap();
    if let DeviceSupport::Unavailable(reason) = server.device_support() {
        test_data::skip!(
            test_data::Fixture::Cuda,
            "{where_} but the server cannot copy device memory: {reason}"
        );
        return None;
    }
    Some((socket, server))
}

/// The line a client printed as `line NAME N`: where in its source it recorded NAME.
pub fn printed_line(stdout: &str, name: &str) -> u32 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("line {name} ")))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `line {name}` in {stdout}"))
}

/// Waits for `expected.len()` records and `rejected` rejections, then checks each record in order: made by
/// `file` at the line the client printed for its module, a synchronous device copy at its offset, and the
/// bytes `pattern` gives over `offset..offset + len`. Returns the records' origins.
pub fn check_device_records(
    server: &TraceServer,
    file: &str,
    stdout: &str,
    expected: &[(&str, usize, usize)],
    rejected: u64,
    pattern: fn(usize) -> u8,
) -> Vec<Origin> {
    let records = expected.len() as u64;
    let (stats, done) = server.wait_until(Duration::from_secs(60), |s| {
        s.records_stored >= records && s.rejected.total() >= rejected
    });
    assert!(done, "{stats:?}");
    assert_eq!(stats.records_device_sync, records, "{stats:?}");
    assert_eq!(
        stats.rejected.device_outside_allocation, rejected,
        "{stats:?}"
    );
    assert_eq!(stats.rejected.total(), rejected, "{stats:?}");
    server.with_ring(|ring| {
        let records: Vec<_> = ring.iter().collect();
        assert_eq!(records.len(), expected.len());
        records
            .iter()
            .zip(expected)
            .map(|(record, &(module, offset, len))| {
                assert_eq!(
                    (record.module(), record.file(), record.line()),
                    (module, file, printed_line(stdout, module))
                );
                let want: Vec<u8> = (offset..offset + len).map(pattern).collect();
                assert_eq!(record.payload(), &want[..], "{module}");
                let origin = record.head().meta.origin;
                assert!(
                    matches!(origin, Origin::Device { mode: CopyMode::Sync, offset: o, .. }
                        if o == offset as u64),
                    "{module}: {origin:?}"
                );
                origin
            })
            .collect()
    })
}
