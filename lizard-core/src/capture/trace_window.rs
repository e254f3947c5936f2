//! A trace server run beside a capture (feature `trace`), and its records that fall in the capture's window
//! as the capture document's [`TraceRecord`]s.

use lizard_trace::{ServerConfig, ServerError, SocketName, TraceServer};

use super::TraceRecord;

/// The ring capacity of a trace server run beside a capture: 16 MiB.
pub const CAPTURE_TRACE_CAPACITY: usize = 16 << 20;

/// A trace server receiving records while a capture runs.
#[derive(Debug)]
pub struct TraceWindow {
    server: TraceServer,
}

impl TraceWindow {
    /// Starts a server on `name` with a ring of [`CAPTURE_TRACE_CAPACITY`].
    pub fn start(name: &SocketName) -> Result<TraceWindow, ServerError> {
        let server = TraceServer::start(name, ServerConfig::with_capacity(CAPTURE_TRACE_CAPACITY))?;
        Ok(TraceWindow { server })
    }

    /// Stops the server and returns the records stamped between `start_ns` and `end_ns` (the capture's time
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_without_clients_holds_no_records() {
        let name = SocketName::Abstract(
            format!("lizard-core-trace-window-{}", std::process::id()).into_bytes(),
        );
        let window = TraceWindow::start(&name).expect("a server on an abstract name");
        assert!(window.finish(0, u64::MAX, 0).is_empty());
    }

    #[test]
    fn a_socket_in_a_missing_folder_is_the_servers_error() {
        let name = SocketName::Path("/nonexistent-lizard-folder/trace.sock".into());
        assert!(TraceWindow::start(&name).is_err());
    }
}
