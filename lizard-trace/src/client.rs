//! [`TraceClient`]: what an application links to record trace records, and the [`trace_record!`](crate::trace_record) macro.

use std::io;
use std::os::fd::AsFd;
use std::panic::Location;
use std::time::Duration;

use rustix::io::Errno;

use crate::clock::monotonic_raw_ns;
use crate::error::ClientError;
use crate::memfd;
use crate::message::{MessageHead, PayloadKind, MAX_INLINE_PAYLOAD, MESSAGE_HEAD_LEN};
use crate::socket_name::SocketName;
use crate::tag::{FileTag, ModuleTag};
use crate::transport::Connection;

/// Payloads up to this many bytes travel inline by default; larger ones in a sealed memfd.
pub const DEFAULT_INLINE_THRESHOLD: usize = 16 * 1024;

/// What a client does when the server has not yet drained earlier records and the socket queue is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SendPolicy {
    /// Never wait: drop the record and count it (the default; an application is never slowed down).
    #[default]
    Drop,
    /// Wait for room at most this long, then drop the record and count it.
    Block {
        /// The longest wait per record.
        timeout: Duration,
    },
}

/// Client settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// What to do when the server is slow.
    pub policy: SendPolicy,
    /// Payloads longer than this travel in a memfd; at most [`MAX_INLINE_PAYLOAD`].
    pub inline_threshold: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            policy: SendPolicy::Drop,
            inline_threshold: DEFAULT_INLINE_THRESHOLD,
        }
    }
}

/// What happened to one record.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Handed to the server's socket.
    Sent,
    /// Dropped under the send policy because the server was slow; counted in [`ClientStats::dropped`].
    Dropped,
}

/// What a client has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientStats {
    /// Records handed to the server.
    pub sent: u64,
    /// Of those, records whose payload went in a memfd.
    pub sent_memfd: u64,
    /// Records dropped: server slow, server gone, or payload not deliverable.
    pub dropped: u64,
    /// Successful reconnections after the server went away.
    pub reconnects: u64,
}

/// A connection from an application to a trace server.
///
/// Each [`TraceClient::record`] stamps the record with `CLOCK_MONOTONIC_RAW` and the next client sequence
/// number, then sends it without blocking (see [`SendPolicy`]). Every record attempt consumes a client sequence
/// number, so records the client dropped show as gaps in `client_seq` on the server. When the server goes away
/// the record in hand is dropped, [`ClientError::Disconnected`] is returned, and the next record reconnects.
#[derive(Debug)]
pub struct TraceClient {
    /// Where the server listens.
    name: SocketName,
    /// The connection, or `None` after the server went away.
    conn: Option<Connection>,
    /// Settings.
    config: ClientConfig,
    /// The next client sequence number.
    next_seq: u64,
    /// Counters.
    stats: ClientStats,
    /// Reused message buffer.
    buf: Vec<u8>,
}

impl TraceClient {
    /// Connects with the default settings: drop when the server is slow, 16 KiB inline threshold.
    pub fn connect(name: &SocketName) -> Result<TraceClient, ClientError> {
        Self::connect_with(name, ClientConfig::default())
    }

    /// Connects with `config`.
    pub fn connect_with(
        name: &SocketName,
        config: ClientConfig,
    ) -> Result<TraceClient, ClientError> {
        if config.inline_threshold > MAX_INLINE_PAYLOAD {
            return Err(ClientError::InlineThreshold {
                threshold: config.inline_threshold,
                max: MAX_INLINE_PAYLOAD,
            });
        }
        let conn = Connection::connect(name).map_err(|source| ClientError::Connect {
            name: name.clone(),
            source,
        })?;
        Ok(TraceClient {
            name: name.clone(),
            conn: Some(conn),
            config,
            next_seq: 0,
            stats: ClientStats::default(),
            buf: Vec::with_capacity(MESSAGE_HEAD_LEN + config.inline_threshold),
        })
    }

    /// The counters.
    pub fn stats(&self) -> ClientStats {
        self.stats
    }

    /// The client sequence number the next record will get.
    pub fn next_client_seq(&self) -> u64 {
        self.next_seq
    }

    /// The settings.
    pub fn config(&self) -> ClientConfig {
        self.config
    }

    /// Records `payload` under `module`, with the caller's file and line.
    #[track_caller]
    pub fn record(&mut self, module: &str, payload: &[u8]) -> Result<Delivery, ClientError> {
        let at = Location::caller();
        self.record_at(module, at.file(), at.line(), payload)
    }

    /// Records `payload` under `module` with an explicit source location (the file name keeps its last path
    /// component, cut to 20 bytes).
    pub fn record_at(
        &mut self,
        module: &str,
        file: &str,
        line: u32,
        payload: &[u8],
    ) -> Result<Delivery, ClientError> {
        let module = ModuleTag::new(module).map_err(ClientError::Module)?;
        let payload_len =
            u32::try_from(payload.len()).map_err(|_| ClientError::PayloadTooLarge {
                len: payload.len(),
                max: u32::MAX as usize,
            })?;
        let kind = if payload.len() > self.config.inline_threshold {
            PayloadKind::Memfd
        } else {
            PayloadKind::Inline
        };
        let head = MessageHead {
            kind,
            payload_len,
            timestamp_ns: monotonic_raw_ns(),
            client_seq: self.next_seq,
            line,
            module,
            file: FileTag::file_name(file),
        };
        self.next_seq += 1;
        let result = self.send(&head, payload);
        match &result {
            Ok(Delivery::Sent) => {
                self.stats.sent += 1;
                if kind == PayloadKind::Memfd {
                    self.stats.sent_memfd += 1;
                }
            }
            Ok(Delivery::Dropped) | Err(_) => self.stats.dropped += 1,
        }
        result
    }

    /// Sends one message, reconnecting first if the server went away earlier.
    fn send(&mut self, head: &MessageHead, payload: &[u8]) -> Result<Delivery, ClientError> {
        if self.conn.is_none() {
            let conn = Connection::connect(&self.name).map_err(|source| ClientError::Connect {
                name: self.name.clone(),
                source,
            })?;
            self.conn = Some(conn);
            self.stats.reconnects += 1;
        }
        self.buf.clear();
        self.buf.extend_from_slice(&head.encode());
        let payload_fd = match head.kind {
            PayloadKind::Inline => {
                self.buf.extend_from_slice(payload);
                None
            }
            PayloadKind::Memfd => Some(memfd::sealed_payload(payload).map_err(ClientError::Memfd)?),
        };
        let Some(conn) = &self.conn else {
            return Ok(Delivery::Dropped);
        };
        let fd = payload_fd.as_ref().map(|fd| fd.as_fd());
        let sent = match self.config.policy {
            SendPolicy::Drop => match conn.try_send(&self.buf, fd) {
                Ok(_) => Ok(true),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(false),
                Err(err) => Err(err),
            },
            SendPolicy::Block { timeout } => conn.send_timeout(&self.buf, fd, timeout),
        };
        match sent {
            Ok(true) => Ok(Delivery::Sent),
            Ok(false) => Ok(Delivery::Dropped),
            Err(err) if is_disconnect(&err) => {
                self.conn = None;
                Err(ClientError::Disconnected(err))
            }
            Err(err) => Err(ClientError::Send(err)),
        }
    }
}

/// Whether a send error means the server end is gone.
fn is_disconnect(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error().map(Errno::from_raw_os_error),
        Some(Errno::PIPE | Errno::CONNRESET | Errno::NOTCONN | Errno::CONNREFUSED)
    )
}

/// Records a payload with the caller's `file!()` and `line!()`:
/// `trace_record!(client, "module", payload)` is `client.record_at("module", file!(), line!(), payload)`.
#[macro_export]
macro_rules! trace_record {
    ($client:expr, $module:expr, $payload:expr $(,)?) => {
        $client.record_at($module, ::core::file!(), ::core::line!(), $payload)
    };
}
