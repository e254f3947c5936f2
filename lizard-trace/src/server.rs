//! [`TraceServer`]: a thread that accepts trace clients on a UNIX socket and stores their records in a
//! [`TraceRing`].

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::io::Errno;

use crate::error::{MessageError, RingFileError, ServerError};
use crate::head::{RecordMeta, HEAD_LEN};
use crate::ledger::ClientLedger;
use crate::memfd;
use crate::message::{Message, PayloadKind, MAX_INLINE_PAYLOAD, MESSAGE_HEAD_LEN};
use crate::ring::{Directory, TraceRing};
use crate::socket_name::{SocketName, MAX_SOCKET_NAME_LEN};
use crate::sys;

/// Default ring capacity of a server: 64 MiB.
pub const DEFAULT_CAPACITY: usize = 64 << 20;

/// Default largest payload a server accepts: 16 MiB.
pub const DEFAULT_MAX_PAYLOAD: u32 = 16 << 20;

/// Default largest number of clients connected at once.
pub const DEFAULT_MAX_CLIENTS: usize = 256;

/// Default largest number of connections one client process may hold at once.
pub const DEFAULT_MAX_CLIENTS_PER_PROCESS: usize = 16;

/// Pause after a failed `accept`.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// Messages read from one client before the server turns to the others.
const BATCH: usize = 64;

/// Who may connect, decided on the credentials the kernel records at `connect` (`SO_PEERCRED`): an
/// abstract socket has no file and so no permissions, so the server itself admits or refuses each peer.
/// A refused peer is closed at once, counted in [`ServerStats::peers_refused`], and never stores a record.
///
/// The default admits the server's own user and root only.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PeerPolicy {
    /// Peers of any user are admitted (for a path socket whose file mode already decides, or a device
    /// where every app may trace).
    pub anyone: bool,
    /// User ids admitted besides the server's own and root.
    pub uids: Vec<u32>,
    /// Group ids whose members are admitted: the peer's effective group id at `connect`, as the kernel
    /// records it (supplementary groups are not recorded).
    pub gids: Vec<u32>,
}

impl PeerPolicy {
    /// Every peer admitted.
    pub fn anyone() -> PeerPolicy {
        PeerPolicy {
            anyone: true,
            ..PeerPolicy::default()
        }
    }

    /// The server's own user and root, and besides them the users `uids` and the members of the groups
    /// `gids`.
    pub fn allowing(uids: &[u32], gids: &[u32]) -> PeerPolicy {
        PeerPolicy {
            anyone: false,
            uids: uids.to_vec(),
            gids: gids.to_vec(),
        }
    }

    /// Whether a peer of user `uid` and group `gid` is admitted by a server running as `server_uid`.
    pub fn admits(&self, server_uid: u32, uid: u32, gid: u32) -> bool {
        self.anyone
            || uid == server_uid
            || uid == 0
            || self.uids.contains(&uid)
            || self.gids.contains(&gid)
    }
}

/// Server settings.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerConfig {
    /// Ring capacity in bytes (ignored by [`TraceServer::start_with_ring`]).
    pub capacity: usize,
    /// Largest payload accepted, inline or in a memfd; larger claims are rejected before any mapping.
    pub max_payload: u32,
    /// Connections beyond this many are closed at once and counted in [`ServerStats::connections_refused`].
    pub max_clients: usize,
    /// Connections of one process beyond this many at once are closed and counted in
    /// [`ServerStats::connections_refused_per_process`], so one process cannot take every slot.
    pub max_clients_per_process: usize,
    /// Who may connect (by default the server's own user and root).
    pub peers: PeerPolicy,
    /// For a path socket, the permission bits its file gets (`0o660`: the server's user and group may
    /// connect); the kernel refuses `connect` to any other user before the server sees it. `None` (the
    /// default) leaves what the umask gives. Ignored for an abstract name, which has no file.
    pub socket_mode: Option<u32>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            capacity: DEFAULT_CAPACITY,
            max_payload: DEFAULT_MAX_PAYLOAD,
            max_clients: DEFAULT_MAX_CLIENTS,
            max_clients_per_process: DEFAULT_MAX_CLIENTS_PER_PROCESS,
            peers: PeerPolicy::default(),
            socket_mode: None,
        }
    }
}

impl ServerConfig {
    /// The default settings with another ring capacity.
    pub fn with_capacity(capacity: usize) -> Self {
        ServerConfig {
            capacity,
            ..ServerConfig::default()
        }
    }
}

/// Messages the server rejected, by reason. A rejected message never reaches the ring and never closes the
/// connection it came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rejections {
    /// Heads that do not decode: too short, bad version, kind or tags, lying lengths.
    pub malformed: u64,
    /// Datagrams longer than the receive limit, or claimed payloads above [`ServerConfig::max_payload`].
    pub oversized: u64,
    /// Descriptors where none belong, more than one, none for a memfd message, or truncated.
    pub bad_fds: u64,
    /// Payload memfds that are not memfds, are not sealed, are smaller than claimed or cannot be mapped.
    pub bad_memfd: u64,
    /// Records larger than the whole ring.
    pub too_large_for_ring: u64,
    /// Records refused because their client already held its share of the ring (the capacity divided
    /// among the connected client processes) and the oldest record was another client's: one client
    /// cannot overwrite the others' records.
    pub over_share: u64,
}

impl Rejections {
    /// All rejected messages.
    pub fn total(&self) -> u64 {
        self.malformed
            + self.oversized
            + self.bad_fds
            + self.bad_memfd
            + self.too_large_for_ring
            + self.over_share
    }
}

/// What a server has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerStats {
    /// Connections accepted.
    pub connections_accepted: u64,
    /// Connections closed at once because [`ServerConfig::max_clients`] were connected.
    pub connections_refused: u64,
    /// Connections closed at once because their process already held
    /// [`ServerConfig::max_clients_per_process`] connections.
    pub connections_refused_per_process: u64,
    /// Connections closed at once because [`ServerConfig::peers`] does not admit the peer's user (or its
    /// credentials could not be read).
    pub peers_refused: u64,
    /// Clients connected now.
    pub clients_connected: u64,
    /// Connections that ended (the client closed, exited or died).
    pub disconnects: u64,
    /// Failed `accept` calls (for example, out of file descriptors); the server pauses briefly after each.
    pub accept_errors: u64,
    /// Records stored in the ring.
    pub records_stored: u64,
    /// Of those, records whose payload came in a memfd.
    pub records_memfd: u64,
    /// Payload bytes stored.
    pub payload_bytes_stored: u64,
    /// Messages rejected.
    pub rejected: Rejections,
}

/// State shared by the server thread and its handle.
#[derive(Debug)]
struct State {
    /// The records.
    ring: TraceRing,
    /// The counters.
    stats: ServerStats,
    /// False once the server thread has ended.
    running: bool,
    /// Bytes of records each client process holds in the ring, by process id.
    held: HashMap<u32, u64>,
}

/// The shared state and the condition signalled when it changes.
#[derive(Debug)]
struct Shared {
    /// The state.
    state: Mutex<State>,
    /// Signalled after each batch of messages and each connection change.
    changed: Condvar,
}

impl Shared {
    /// Locks the state; a poisoned lock still holds consistent data (the ring is updated in one call).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A trace server running on its own thread.
///
/// It listens on a `SOCK_SEQPACKET` UNIX socket ([`SocketName`]: abstract or path), takes each client's process
/// id from the kernel, and stores every valid record in its [`TraceRing`], overwriting the oldest when full.
/// Bad messages are counted in [`ServerStats::rejected`] and skipped; a client that dies loses only the
/// record it had not sent yet. Dropping the server (or [`TraceServer::stop`]) ends the thread, closes every
/// connection and removes a path socket's file.
///
/// Call contract: start with [`TraceServer::start`] or [`TraceServer::start_with_ring`]; observe with
/// [`TraceServer::stats`], [`TraceServer::directory`], [`TraceServer::with_ring`],
/// [`TraceServer::wait_until`]; persist with [`TraceServer::save`]; end with [`TraceServer::stop`], which
/// returns the ring.
#[derive(Debug)]
pub struct TraceServer {
    /// Where it listens.
    name: SocketName,
    /// State shared with the thread.
    shared: Arc<Shared>,
    /// Writing a byte (or closing) wakes the thread to stop.
    wake: Option<UnixStream>,
    /// The server thread.
    thread: Option<JoinHandle<()>>,
}

impl TraceServer {
    /// Starts a server on `name` with an empty ring of `config.capacity` bytes.
    pub fn start(name: &SocketName, config: ServerConfig) -> Result<TraceServer, ServerError> {
        let ring = TraceRing::new(config.capacity)?;
        Self::start_with_ring(name, ring, config)
    }

    /// Starts a server on `name` that continues `ring` (for example one loaded from a file): new records get
    /// the sequence numbers after the ring's.
    pub fn start_with_ring(
        name: &SocketName,
        ring: TraceRing,
        config: ServerConfig,
    ) -> Result<TraceServer, ServerError> {
        if name.is_empty() || name.len() > MAX_SOCKET_NAME_LEN {
            return Err(ServerError::BadName {
                name: name.clone(),
                max: MAX_SOCKET_NAME_LEN,
            });
        }
        let listener = bind(name, config.socket_mode)?;
        let ring_capacity = ring.capacity() as u64;
        let (wake, wake_rx) = UnixStream::pair().map_err(ServerError::Thread)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                held: held_by_client(&ring),
                ring,
                stats: ServerStats::default(),
                running: true,
            }),
            changed: Condvar::new(),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = thread::Builder::new()
            .name("lizard-trace".into())
            .spawn(move || {
                let mut server = Loop {
                    listener,
                    wake: wake_rx,
                    clients: Vec::new(),
                    shared: thread_shared,
                    config,
                    server_uid: sys::effective_uid(),
                    ring_capacity,
                    buf: vec![0; MESSAGE_HEAD_LEN + MAX_INLINE_PAYLOAD],
                };
                server.run();
                server.shared.lock().running = false;
                server.shared.changed.notify_all();
            })
            .map_err(ServerError::Thread)?;
        Ok(TraceServer {
            name: name.clone(),
            shared,
            wake: Some(wake),
            thread: Some(thread),
        })
    }

    /// Where the server listens.
    pub fn name(&self) -> &SocketName {
        &self.name
    }

    /// The counters.
    pub fn stats(&self) -> ServerStats {
        self.shared.lock().stats
    }

    /// The ring's directory.
    pub fn directory(&self) -> Directory {
        self.shared.lock().ring.directory()
    }

    /// Whether the server thread is still serving.
    pub fn is_running(&self) -> bool {
        self.shared.lock().running
    }

    /// Runs `f` on the ring; the server stores nothing meanwhile, so keep `f` short, and do not call this
    /// server's other methods from inside `f` (they would wait for the ring forever).
    pub fn with_ring<T>(&self, f: impl FnOnce(&TraceRing) -> T) -> T {
        f(&self.shared.lock().ring)
    }

    /// A copy of the ring's ledger: what each client process stored, lost to overwriting and had refused.
    pub fn ledger(&self) -> ClientLedger {
        self.shared.lock().ring.ledger().clone()
    }

    /// Saves a snapshot of the ring to `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), RingFileError> {
        self.with_ring(|ring| ring.save(path))
    }

    /// Waits until `done` holds for the counters or `timeout` passes; returns the last counters seen and
    /// whether `done` held.
    pub fn wait_until(
        &self,
        timeout: Duration,
        mut done: impl FnMut(&ServerStats) -> bool,
    ) -> (ServerStats, bool) {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if done(&state.stats) {
                return (state.stats, true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !state.running {
                return (state.stats, done(&state.stats));
            }
            state = match self.shared.changed.wait_timeout(state, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Stops the server, closes every connection and returns the ring.
    pub fn stop(mut self) -> TraceRing {
        self.shutdown();
        let mut state = self.shared.lock();
        std::mem::replace(&mut state.ring, TraceRing::unallocated())
    }

    /// Ends the thread and removes a path socket's file.
    fn shutdown(&mut self) {
        if let Some(mut wake) = self.wake.take() {
            // A failed write still wakes the thread: dropping `wake` closes the pair.
            let _ = wake.write_all(&[1]);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let SocketName::Path(path) = &self.name {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for TraceServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Bytes of records each client process holds in `ring`.
fn held_by_client(ring: &TraceRing) -> HashMap<u32, u64> {
    let mut held = HashMap::new();
    for record in ring.iter() {
        *held.entry(record.client_pid()).or_insert(0) += (HEAD_LEN + record.payload().len()) as u64;
    }
    held
}

/// Binds the listening socket, replacing a stale socket file no server answers on.
fn bind(name: &SocketName, mode: Option<u32>) -> Result<OwnedFd, ServerError> {
    let listen_err = |source| ServerError::Listen {
        name: name.clone(),
        source,
    };
    match sys::listen(name, 128, mode) {
        Ok(fd) => Ok(fd),
        Err(err) if err.raw_os_error() == Some(Errno::ADDRINUSE.raw_os_error()) => match name {
            SocketName::Path(path) if sys::connect(name).is_err() => {
                std::fs::remove_file(path).map_err(listen_err)?;
                sys::listen(name, 128, mode).map_err(listen_err)
            }
            _ => Err(ServerError::InUse(name.clone())),
        },
        Err(err) => Err(listen_err(err)),
    }
}

/// One connected client.
#[derive(Debug)]
struct Client {
    /// Its socket.
    fd: OwnedFd,
    /// Its process id, from `SO_PEERCRED`.
    pid: u32,
}

/// Why a message was rejected.
enum Reject {
    /// See [`Rejections::malformed`].
    Malformed,
    /// See [`Rejections::oversized`].
    Oversized,
    /// See [`Rejections::bad_fds`].
    BadFds,
    /// See [`Rejections::bad_memfd`].
    BadMemfd,
    /// See [`Rejections::too_large_for_ring`].
    TooLargeForRing,
    /// See [`Rejections::over_share`].
    OverShare,
}

/// The server thread's state.
struct Loop {
    /// The listening socket.
    listener: OwnedFd,
    /// Readable when the handle asks the thread to stop.
    wake: UnixStream,
    /// Connected clients.
    clients: Vec<Client>,
    /// State shared with the handle.
    shared: Arc<Shared>,
    /// Settings.
    config: ServerConfig,
    /// The server's effective user id, always admitted.
    server_uid: u32,
    /// The ring's capacity in bytes.
    ring_capacity: u64,
    /// Receive buffer: one message head and the largest inline payload.
    buf: Vec<u8>,
}

impl Loop {
    /// Serves until woken to stop or until `poll` fails.
    fn run(&mut self) {
        loop {
            let mut set = Vec::with_capacity(self.clients.len() + 2);
            set.push(sys::poll_entry(self.wake.as_fd(), sys::POLLIN));
            set.push(sys::poll_entry(self.listener.as_fd(), sys::POLLIN));
            for client in &self.clients {
                set.push(sys::poll_entry(client.fd.as_fd(), sys::POLLIN));
            }
            if sys::poll(&mut set, -1).is_err() {
                return;
            }
            let ready: Vec<bool> = set.iter().map(|e| !e.revents().is_empty()).collect();
            drop(set);
            if ready[0] {
                let mut byte = [0u8; 1];
                let _ = (&self.wake).read(&mut byte);
                return;
            }
            let mut changed = false;
            let mut index = self.clients.len();
            while index > 0 {
                index -= 1;
                if !ready[index + 2] {
                    continue;
                }
                changed = true;
                if !self.drain(index) {
                    self.clients.swap_remove(index);
                    self.shared.lock().stats.disconnects += 1;
                }
            }
            if ready[1] {
                changed = true;
                self.accept_all();
            }
            if changed {
                self.shared.lock().stats.clients_connected = self.clients.len() as u64;
                self.shared.changed.notify_all();
            }
        }
    }

    /// Accepts every pending connection.
    fn accept_all(&mut self) {
        loop {
            let fd = match sys::accept(self.listener.as_fd()) {
                Ok(Some(fd)) => fd,
                Ok(None) => return,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    // The connection stays queued; pausing keeps a persistent failure (EMFILE) from spinning.
                    self.shared.lock().stats.accept_errors += 1;
                    thread::sleep(ACCEPT_PAUSE);
                    return;
                }
            };
            let peer = sys::peer_credentials(fd.as_fd());
            let mut state = self.shared.lock();
            let admitted = peer
                .as_ref()
                .is_ok_and(|p| self.config.peers.admits(self.server_uid, p.uid, p.gid));
            let pid = peer.as_ref().map_or(0, |p| p.pid);
            if !admitted {
                // Dropping `fd` closes the connection before anything of it is read.
                state.stats.peers_refused += 1;
                state.ring.ledger_mut().note_connection_refused(pid);
                continue;
            }
            if self.clients.len() >= self.config.max_clients {
                state.stats.connections_refused += 1;
                state.ring.ledger_mut().note_connection_refused(pid);
                continue;
            }
            if self.clients.iter().filter(|c| c.pid == pid).count()
                >= self.config.max_clients_per_process
            {
                state.stats.connections_refused_per_process += 1;
                state.ring.ledger_mut().note_connection_refused(pid);
                continue;
            }
            state.stats.connections_accepted += 1;
            self.clients.push(Client { fd, pid });
        }
    }

    /// Reads up to [`BATCH`] messages from client `index`; false when the connection ended.
    fn drain(&mut self, index: usize) -> bool {
        for _ in 0..BATCH {
            let received = match sys::recv(self.clients[index].fd.as_fd(), &mut self.buf) {
                Ok(received) => received,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return true,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            };
            if received.len == 0 && !received.truncated && received.fds.is_empty() {
                // End of stream (an empty datagram reads the same and also ends the connection).
                return false;
            }
            let pid = self.clients[index].pid;
            let outcome = self.handle(pid, received);
            let mut state = self.shared.lock();
            if outcome.is_err() {
                state.ring.note_refused(pid);
            }
            let rejected = &mut state.stats.rejected;
            match outcome {
                Ok(()) => {}
                Err(Reject::Malformed) => rejected.malformed += 1,
                Err(Reject::Oversized) => rejected.oversized += 1,
                Err(Reject::BadFds) => rejected.bad_fds += 1,
                Err(Reject::BadMemfd) => rejected.bad_memfd += 1,
                Err(Reject::TooLargeForRing) => rejected.too_large_for_ring += 1,
                Err(Reject::OverShare) => rejected.over_share += 1,
            }
        }
        true
    }

    /// Validates one received message and stores its record.
    fn handle(&mut self, pid: u32, received: sys::Received) -> Result<(), Reject> {
        if received.truncated {
            return Err(Reject::Oversized);
        }
        if received.control_truncated {
            return Err(Reject::BadFds);
        }
        let message = match Message::decode(&self.buf[..received.len], self.config.max_payload) {
            Ok(message) => message,
            Err(MessageError::PayloadTooLarge { .. }) => return Err(Reject::Oversized),
            Err(_) => return Err(Reject::Malformed),
        };
        let head = message.head;
        let meta = RecordMeta {
            module: head.module,
            timestamp_ns: head.timestamp_ns,
            file: head.file,
            line: head.line,
            client_pid: pid,
            client_seq: head.client_seq,
        };
        let share = self.share();
        let shared = &self.shared;
        let store = |payload: &[u8]| {
            let mut state = shared.lock();
            let size = (HEAD_LEN + payload.len()) as u64;
            let held = state.held.get(&pid).copied().unwrap_or(0);
            // Beyond its share a client's record is stored only when the oldest record is its own (it then
            // overwrites its own oldest): a flood costs the flooder its newest records, never the others'.
            if held.saturating_add(size) > share && state.ring.oldest_client() != Some(pid) {
                return Ok(Err(Reject::OverShare));
            }
            let State { ring, held, .. } = &mut *state;
            ring.push_noting(&meta, payload, |owner, bytes| {
                if let Some(h) = held.get_mut(&owner) {
                    *h = h.saturating_sub(bytes);
                }
            })?;
            *held.entry(pid).or_insert(0) += size;
            state.stats.records_stored += 1;
            state.stats.payload_bytes_stored += payload.len() as u64;
            if head.kind == PayloadKind::Memfd {
                state.stats.records_memfd += 1;
            }
            Ok::<Result<(), Reject>, crate::error::RingError>(Ok(()))
        };
        let stored = match head.kind {
            PayloadKind::Inline if received.fds.is_empty() => store(message.inline),
            PayloadKind::Inline => return Err(Reject::BadFds),
            PayloadKind::Memfd => {
                let [fd] = received.fds.as_slice() else {
                    return Err(Reject::BadFds);
                };
                memfd::with_payload(fd.as_fd(), head.payload_len, store)
                    .map_err(|_| Reject::BadMemfd)?
            }
        };
        stored.map_err(|_| Reject::TooLargeForRing)?
    }

    /// Each client process's share of the ring: the capacity divided among the processes connected now.
    fn share(&self) -> u64 {
        let mut pids: Vec<u32> = self.clients.iter().map(|c| c.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        self.ring_capacity / pids.len().max(1) as u64
    }
}
