//! A trace server run beside a capture, and the records that fall in the capture window.

use lizard_core::capture::TraceRecord;
use lizard_trace::{ServerConfig, SocketName, TraceServer};

use crate::error::CliError;

/// The ring capacity of a trace server run beside a capture.
const CAPTURE_TRACE_CAPACITY: usize = 16 << 20;

/// A trace server receiving records while a capture runs.
pub struct TraceWindow {
    server: TraceServer,
}

impl TraceWindow {
    /// Starts a server on `socket` (`@name` abstract, else a path).
    pub fn start(socket: &str) -> Result<TraceWindow, CliError> {
        let name: SocketName = socket
            .parse()
            .map_err(|e| CliError::Other(format!("bad trace socket name '{socket}': {e}")))?;
        let server = TraceServer::start(&name, ServerConfig::with_capacity(CAPTURE_TRACE_CAPACITY))
            .map_err(|e| {
                CliError::Other(format!("cannot start the trace server on '{socket}': {e}"))
            })?;
        eprintln!("trace records: listening on {socket}");
        Ok(TraceWindow { server })
    }

    /// Stops the server and returns the records stamped between `start_ns` and `end_ns` (capture time
    /// base), where capture time = CLOCK_MONOTONIC_RAW − `raw_offset`.
    pub fn finish(self, start_ns: u64, end_ns: u64, raw_offset: i128) -> Vec<TraceRecord> {
        let to_raw =
            |t: u64| u64::try_from((i128::from(t) + raw_offset).max(0)).unwrap_or(u64::MAX);
        let ring = self.server.stop();
        ring.window(to_raw(start_ns), to_raw(end_ns))
            .map(|r| TraceRecord {
                timestamp_ns: u64::try_from((i128::from(r.timestamp_ns()) - raw_offset).max(0))
                    .unwrap_or(0),
                seq: r.seq(),
                module: r.module().to_owned(),
                file: r.file().to_owned(),
                line: r.line(),
                pid: r.client_pid(),
                bytes: r.payload().len() as u64,
            })
            .collect()
    }
}
