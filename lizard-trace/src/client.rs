//! [`TraceClient`]: what an application links to record trace records, and the [`trace_record!`](crate::trace_record) macro.

use std::io;
use std::os::fd::AsFd;
use std::panic::Location;
use std::time::{Duration, Instant};

use rustix::io::Errno;

use crate::ack::{Ack, Outcome, ACK_LEN};
use crate::ack_wait::{AckWait, Chooser};
use crate::clock::monotonic_raw_ns;
use crate::device::DeviceRegion;
use crate::error::ClientError;
use crate::memfd;
use crate::message::{
    write_region, MessageHead, PayloadKind, MAX_INLINE_PAYLOAD, MESSAGE_HEAD_LEN,
};
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

/// How long a synchronous device record waits for the server's copy by default.
pub const DEFAULT_DEVICE_DEADLINE: Duration = Duration::from_secs(5);

/// When a device-memory record's call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceMode {
    /// After the server has copied the bytes into its ring and said so, waiting at most `deadline` (the
    /// default, 5 s): the record holds the bytes of the call, and a refusal is an error of the call.
    Sync {
        /// The longest wait for the server's acknowledgement, the send included.
        deadline: Duration,
    },
    /// At once, under the [`SendPolicy`]: the server copies the bytes when it gets to the record, so they may
    /// include writes made after the call; the record carries both times (`timestamp_ns` and `stored_ns`).
    Async,
}

impl Default for DeviceMode {
    fn default() -> Self {
        DeviceMode::Sync {
            deadline: DEFAULT_DEVICE_DEADLINE,
        }
    }
}

/// Client settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// What to do when the server is slow.
    pub policy: SendPolicy,
    /// Payloads longer than this travel in a memfd; at most [`MAX_INLINE_PAYLOAD`].
    pub inline_threshold: usize,
    /// When device-memory records return.
    pub device_mode: DeviceMode,
    /// How a synchronous device record waits for the server's acknowledgement: by default it spins or sleeps,
    /// whichever it measured to be faster lately ([`AckWait`]).
    pub ack_wait: AckWait,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            policy: SendPolicy::Drop,
            inline_threshold: DEFAULT_INLINE_THRESHOLD,
            device_mode: DeviceMode::default(),
            ack_wait: AckWait::default(),
        }
    }
}

/// What happened to one record.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Handed to the server's socket.
    Sent,
    /// Stored in the server's ring under this sequence number, as the server acknowledged (a synchronous
    /// device record).
    Stored {
        /// The ring's sequence number of the record.
        seq: u64,
    },
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
    /// Of the records sent, those naming GPU device memory.
    pub sent_device: u64,
    /// Synchronous device records the server acknowledged as stored.
    pub stored: u64,
    /// Records the server refused and said why (counted in `dropped` too).
    pub refused: u64,
    /// Synchronous device records whose acknowledgement did not come in time (they may still be stored).
    pub ack_timeouts: u64,
    /// Acknowledgements that came after their record's deadline, read and set aside.
    pub late_acks: u64,
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
    /// How the next synchronous device record waits for its acknowledgement.
    chooser: Chooser,
    /// The allocations whose IPC handles were taken, by identity.
    #[cfg(feature = "cuda")]
    exports: crate::cuda::exports::Exports,
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
            chooser: Chooser::new(config.ack_wait),
            #[cfg(feature = "cuda")]
            exports: Default::default(),
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
            ack: false,
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
            Ok(Delivery::Sent | Delivery::Stored { .. }) => {
                self.stats.sent += 1;
                if kind == PayloadKind::Memfd {
                    self.stats.sent_memfd += 1;
                }
            }
            Ok(Delivery::Dropped) | Err(_) => self.stats.dropped += 1,
        }
        result
    }

    /// Records `len` bytes of GPU device memory at `ptr` under `module`, with the caller's file and line: the
    /// client finds the allocation holding `ptr` and its IPC handle (taken once per allocation) and the server
    /// copies the bytes. Returns when the server has stored them unless [`DeviceMode::Async`] is set.
    ///
    /// Record after the work that writes the buffer has finished (`cudaStreamSynchronize`): the server's copy
    /// is not ordered after the application's streams.
    #[cfg(feature = "cuda")]
    #[track_caller]
    pub fn record_device(
        &mut self,
        module: &str,
        ptr: u64,
        len: usize,
    ) -> Result<Delivery, ClientError> {
        let at = Location::caller();
        self.record_device_at(module, at.file(), at.line(), ptr, len)
    }

    /// [`TraceClient::record_device`] with an explicit source location.
    #[cfg(feature = "cuda")]
    pub fn record_device_at(
        &mut self,
        module: &str,
        file: &str,
        line: u32,
        ptr: u64,
        len: usize,
    ) -> Result<Delivery, ClientError> {
        match self.exports.region(ptr, len) {
            Ok(region) => self.record_ipc_at(module, file, line, &region),
            Err(err) => {
                ModuleTag::new(module).map_err(ClientError::Module)?;
                self.next_seq += 1;
                self.stats.dropped += 1;
                Err(ClientError::Device(err))
            }
        }
    }

    /// Records the device memory `region` names, for a caller that took the allocation's IPC handle itself
    /// (`cudaIpcGetMemHandle`, as the original design's clients do). Returns like
    /// [`TraceClient::record_device`]. Needs no CUDA in this process.
    pub fn record_ipc_at(
        &mut self,
        module: &str,
        file: &str,
        line: u32,
        region: &DeviceRegion,
    ) -> Result<Delivery, ClientError> {
        let module = ModuleTag::new(module).map_err(ClientError::Module)?;
        let deadline = match self.config.device_mode {
            DeviceMode::Sync { deadline } => Some(deadline),
            DeviceMode::Async => None,
        };
        let head = MessageHead {
            kind: PayloadKind::Device,
            ack: deadline.is_some(),
            payload_len: region.len,
            timestamp_ns: monotonic_raw_ns(),
            client_seq: self.next_seq,
            line,
            module,
            file: FileTag::file_name(file),
        };
        self.next_seq += 1;
        let started = Instant::now();
        let policy = match deadline {
            Some(timeout) => SendPolicy::Block { timeout },
            None => self.config.policy,
        };
        self.buf.clear();
        self.buf.extend_from_slice(&head.encode());
        write_region(region, &mut self.buf);
        let result = match self.send_buf(None, policy) {
            Ok(Delivery::Sent) => match deadline {
                Some(deadline) => {
                    let answer = self.await_ack(head.client_seq, started, deadline);
                    if matches!(answer, Ok(_) | Err(ClientError::Refused { .. })) {
                        self.chooser.waited(started.elapsed());
                    }
                    answer
                }
                None => Ok(Delivery::Sent),
            },
            other => other,
        };
        match &result {
            Ok(Delivery::Sent) => {
                self.stats.sent += 1;
                self.stats.sent_device += 1;
            }
            Ok(Delivery::Stored { .. }) => {
                self.stats.sent += 1;
                self.stats.sent_device += 1;
                self.stats.stored += 1;
            }
            Ok(Delivery::Dropped) => self.stats.dropped += 1,
            Err(ClientError::AckTimeout { .. }) => {
                self.stats.sent += 1;
                self.stats.sent_device += 1;
                self.stats.ack_timeouts += 1;
            }
            Err(err) => {
                if matches!(err, ClientError::Refused { .. }) {
                    self.stats.refused += 1;
                    self.stats.sent += 1;
                    self.stats.sent_device += 1;
                }
                self.stats.dropped += 1;
            }
        }
        result
    }

    /// Waits until `deadline` after `started` for the acknowledgement of record `client_seq`, setting aside
    /// late ones of earlier records.
    fn await_ack(
        &mut self,
        client_seq: u64,
        started: Instant,
        deadline: Duration,
    ) -> Result<Delivery, ClientError> {
        let mut datagram = [0u8; 2 * ACK_LEN];
        loop {
            let Some(conn) = &self.conn else {
                return Err(ClientError::Disconnected(
                    io::ErrorKind::NotConnected.into(),
                ));
            };
            let left = deadline.saturating_sub(started.elapsed());
            let len = match conn.recv_answer(&mut datagram, self.chooser.spin(), left) {
                Ok(Some(0)) => {
                    self.conn = None;
                    return Err(ClientError::Disconnected(
                        io::ErrorKind::ConnectionReset.into(),
                    ));
                }
                Ok(Some(len)) => len,
                Ok(None) => {
                    return Err(ClientError::AckTimeout {
                        client_seq,
                        waited: started.elapsed(),
                    })
                }
                Err(err) if is_disconnect(&err) => {
                    self.conn = None;
                    return Err(ClientError::Disconnected(err));
                }
                Err(err) => return Err(ClientError::Receive(err)),
            };
            let ack = Ack::decode(&datagram[..len]).map_err(ClientError::BadAck)?;
            if ack.client_seq < client_seq {
                self.stats.late_acks += 1;
                continue;
            }
            if ack.client_seq > client_seq {
                return Err(ClientError::BadAck(crate::error::AckError::Unexpected {
                    expected: client_seq,
                    found: ack.client_seq,
                }));
            }
            return match ack.outcome {
                Outcome::Stored { seq } => Ok(Delivery::Stored { seq }),
                Outcome::Refused(refusal) => Err(ClientError::Refused {
                    client_seq,
                    refusal,
                }),
            };
        }
    }

    /// Sends one message, reconnecting first if the server went away earlier.
    fn send(&mut self, head: &MessageHead, payload: &[u8]) -> Result<Delivery, ClientError> {
        self.buf.clear();
        self.buf.extend_from_slice(&head.encode());
        let payload_fd = match head.kind {
            PayloadKind::Inline => {
                self.buf.extend_from_slice(payload);
                None
            }
            PayloadKind::Memfd => Some(memfd::sealed_payload(payload).map_err(ClientError::Memfd)?),
            PayloadKind::Device => None,
        };
        self.send_buf(payload_fd.as_ref().map(|fd| fd.as_fd()), self.config.policy)
    }

    /// Sends the message in `self.buf` with `fd` attached under `policy`, reconnecting first if the server
    /// went away earlier.
    fn send_buf(
        &mut self,
        fd: Option<std::os::fd::BorrowedFd<'_>>,
        policy: SendPolicy,
    ) -> Result<Delivery, ClientError> {
        if self.conn.is_none() {
            let conn = Connection::connect(&self.name).map_err(|source| ClientError::Connect {
                name: self.name.clone(),
                source,
            })?;
            self.conn = Some(conn);
            self.stats.reconnects += 1;
        }
        let Some(conn) = &self.conn else {
            return Ok(Delivery::Dropped);
        };
        let sent = match policy {
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

// An application hands its client to other threads (the C library keeps every client in one registry).
const _: fn() = || {
    fn send<T: Send>() {}
    send::<TraceClient>();
};

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
