//! [`TraceServer`]: a thread that accepts trace clients on a UNIX socket and stores their records in a
//! [`TraceRing`].

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use rustix::io::Errno;

use crate::ack::{Ack, Outcome, Refusal};
use crate::device::{CopyMode, DeviceRegion};
use crate::device_support::{DeviceSupport, Unavailable};
use crate::error::{MessageError, RingFileError, ServerError};
pub use crate::handle_cache::{HandleLimits, HandleStats};
use crate::head::{Origin, RecordMeta, HEAD_LEN};
use crate::ledger::ClientLedger;
use crate::memfd;
use crate::message::{
    Message, Payload, DEVICE_REGION_SIZED_LEN, MAX_INLINE_PAYLOAD, MESSAGE_HEAD_LEN,
};
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

/// How long the server thread keeps looking for messages before it sleeps, by default: 50 µs (see
/// [`ServerConfig::idle_spin`]).
pub const DEFAULT_IDLE_SPIN: Duration = Duration::from_micros(50);

/// Pause after a failed `accept`.
const ACCEPT_PAUSE: Duration = Duration::from_millis(10);

/// Messages read from one client before the server turns to the others.
const BATCH: usize = 64;

/// The longest [`TraceServer::start`] waits for its thread to say whether it can copy device memory.
const DEVICE_PROBE_LIMIT: Duration = Duration::from_secs(60);

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

impl std::fmt::Display for PeerPolicy {
    /// Who is admitted: `every user`, or `this user and root` with the other uids and gids
    /// (`this user and root, uids 1000,1001, gids 20`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.anyone {
            return f.write_str("every user");
        }
        f.write_str("this user and root")?;
        for (label, ids) in [("uids", &self.uids), ("gids", &self.gids)] {
            for (i, id) in ids.iter().enumerate() {
                match i {
                    0 => write!(f, ", {label} {id}")?,
                    _ => write!(f, ",{id}")?,
                }
            }
        }
        Ok(())
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
    /// GPU device memory records.
    pub device: DeviceConfig,
    /// How long the server thread looks for more messages, yielding the processor between looks, before it
    /// sleeps after serving ([`DEFAULT_IDLE_SPIN`]; zero sleeps at once). A synchronous client's next record
    /// comes within microseconds of its acknowledgement, and in a virtual machine waking a processor that
    /// went idle costs more than that (`trace_device` bench).
    pub idle_spin: Duration,
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
            device: DeviceConfig::default(),
            idle_spin: DEFAULT_IDLE_SPIN,
        }
    }
}

/// How a server treats GPU device memory records (feature `cuda`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceConfig {
    /// Whether to load the CUDA driver at start (the default). Off, every device record is refused with
    /// [`Unavailable::Disabled`] and the ring is never pinned.
    pub enabled: bool,
    /// The bounds on IPC handles kept open between records.
    pub handles: HandleLimits,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            enabled: true,
            handles: HandleLimits::default(),
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
    /// Device records refused because the server cannot read device memory at all
    /// ([`TraceServer::device_support`] says why).
    pub device_unavailable: u64,
    /// Device records naming a GPU the server does not have.
    pub device_unknown: u64,
    /// Device records whose IPC handle could not be opened (freed, invalid, or made by the server itself).
    pub device_open_failed: u64,
    /// Device records reaching past the end of their allocation.
    pub device_outside_allocation: u64,
    /// Device records whose copy failed.
    pub device_copy_failed: u64,
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
            + self.device_unavailable
            + self.device_unknown
            + self.device_open_failed
            + self.device_outside_allocation
            + self.device_copy_failed
    }

    /// Counts one refusal.
    fn count(&mut self, refusal: Refusal) {
        let counter = match refusal {
            Refusal::Malformed => &mut self.malformed,
            Refusal::Oversized => &mut self.oversized,
            Refusal::BadFds => &mut self.bad_fds,
            Refusal::BadMemfd => &mut self.bad_memfd,
            Refusal::TooLargeForRing => &mut self.too_large_for_ring,
            Refusal::OverShare => &mut self.over_share,
            Refusal::DeviceUnavailable(_) => &mut self.device_unavailable,
            Refusal::UnknownDevice => &mut self.device_unknown,
            Refusal::OpenFailed { .. } => &mut self.device_open_failed,
            Refusal::OutsideAllocation => &mut self.device_outside_allocation,
            Refusal::CopyFailed { .. } => &mut self.device_copy_failed,
        };
        *counter += 1;
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
    /// Of those, records copied from GPU device memory while the client waited ([`CopyMode::Sync`]).
    pub records_device_sync: u64,
    /// Of those, records copied from GPU device memory without the client waiting ([`CopyMode::Async`]).
    pub records_device_async: u64,
    /// Payload bytes stored.
    pub payload_bytes_stored: u64,
    /// Of those, bytes copied from GPU device memory.
    pub device_bytes_stored: u64,
    /// Acknowledgements sent to clients that asked for them.
    pub acks_sent: u64,
    /// Acknowledgements dropped because the client's socket queue was full or the client had gone (the
    /// server never waits for a client).
    pub acks_dropped: u64,
    /// Times a GPU's context was reset because a copy left it with a sticky error (for example, it read
    /// memory of a client that died during the copy); without the reset every later device record would fail.
    /// The reset is of this process's primary context: whatever else this process made on that GPU is gone.
    pub device_resets: u64,
    /// The IPC handles kept open between device records.
    pub handles: HandleStats,
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
    /// Whether the server can copy device memory.
    device: DeviceSupport,
}

/// The shared state and the condition signalled when it changes.
#[derive(Debug)]
struct Shared {
    /// The state.
    state: Mutex<State>,
    /// Signalled after each batch of messages and each connection change, when someone waits.
    changed: Condvar,
    /// Threads in [`TraceServer::wait_until`]: counted under the state's lock, so the server thread, which
    /// reads it after changing the state, signals whenever a waiter may have missed the change, and makes no
    /// futex call per batch when nobody waits.
    waiters: AtomicUsize,
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
                device: DeviceSupport::Unavailable(Unavailable::Disabled),
            }),
            changed: Condvar::new(),
            waiters: AtomicUsize::new(0),
        });
        let thread_shared = Arc::clone(&shared);
        let (probed, probe) = mpsc::channel();
        let thread = thread::Builder::new()
            .name("lizard-trace".into())
            .spawn(move || {
                // The driver's contexts are made current on this thread, so the device is set up here.
                let device = Device::start(&config.device, &thread_shared);
                thread_shared.lock().device = device.support();
                let _ = probed.send(());
                let mut server = Loop {
                    device,
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
        let server = TraceServer {
            name: name.clone(),
            shared,
            wake: Some(wake),
            thread: Some(thread),
        };
        match probe.recv_timeout(DEVICE_PROBE_LIMIT) {
            Ok(()) => Ok(server),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(server),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Dropping the handle would wait for the thread, which waits for the driver: leave it told to
                // stop instead.
                let mut server = server;
                drop(server.wake.take());
                drop(server.thread.take());
                Err(ServerError::DeviceProbe(DEVICE_PROBE_LIMIT))
            }
        }
    }

    /// Whether the server can copy GPU device memory, and if not, why: every device record is then refused
    /// with that reason ([`Refusal::DeviceUnavailable`]).
    pub fn device_support(&self) -> DeviceSupport {
        self.shared.lock().device.clone()
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
        self.shared.waiters.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if done(&state.stats) {
                break (state.stats, true);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || !state.running {
                break (state.stats, done(&state.stats));
            }
            state = match self.shared.changed.wait_timeout(state, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        };
        self.shared.waiters.fetch_sub(1, Ordering::SeqCst);
        result
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
        *held.entry(record.client_pid()).or_insert(0) += ring.footprint(record.payload().len());
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

/// The server thread's access to device memory.
enum Device {
    /// None, for this reason.
    Unavailable(Unavailable),
    /// Through the CUDA driver.
    #[cfg(feature = "cuda")]
    Cuda(Box<crate::cuda::copier::Copier>),
}

impl Device {
    /// Loads the driver and pins the ring, if the feature and `config` allow.
    #[allow(unsafe_code)]
    fn start(config: &DeviceConfig, shared: &Shared) -> Device {
        if !config.enabled {
            return Device::Unavailable(Unavailable::Disabled);
        }
        #[cfg(feature = "cuda")]
        {
            let memory = shared.lock().ring.memory();
            // SAFETY: the ring lives in `shared` until the server thread has ended, and its memory never moves
            // (an anonymous mapping); the copier is dropped with the thread's loop, before the ring can go.
            match unsafe { crate::cuda::copier::Copier::start(config.handles, memory) } {
                Ok(copier) => Device::Cuda(Box::new(copier)),
                Err(reason) => Device::Unavailable(reason),
            }
        }
        #[cfg(not(feature = "cuda"))]
        {
            let _ = shared;
            Device::Unavailable(Unavailable::FeatureOff)
        }
    }

    /// What the server can do.
    fn support(&self) -> DeviceSupport {
        match self {
            Device::Unavailable(reason) => DeviceSupport::Unavailable(*reason),
            #[cfg(feature = "cuda")]
            Device::Cuda(copier) => copier.support(),
        }
    }

    /// Closes the IPC handles of client process `pid`.
    fn close_process(&mut self, pid: u32) {
        #[cfg(feature = "cuda")]
        if let Device::Cuda(copier) = self {
            copier.close_process(pid);
        }
        let _ = pid;
    }

    /// The handle counters.
    fn handles(&self) -> HandleStats {
        match self {
            Device::Unavailable(_) => HandleStats::default(),
            #[cfg(feature = "cuda")]
            Device::Cuda(copier) => copier.stats(),
        }
    }
}

/// The server thread's state.
struct Loop {
    /// Device memory access. Declared first: it is dropped (its handles closed, the ring unpinned) before
    /// anything else of the loop.
    device: Device,
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
            // Looks again and again for a while before sleeping: the next record of a client that waited
            // for its acknowledgement comes within microseconds, sooner than waking an idle processor takes.
            let started = Instant::now();
            loop {
                match sys::poll(&mut set, 0) {
                    Ok(0) if started.elapsed() < self.config.idle_spin => std::thread::yield_now(),
                    Ok(0) => {
                        if sys::poll(&mut set, -1).is_err() {
                            return;
                        }
                        break;
                    }
                    Ok(_) => break,
                    Err(_) => return,
                }
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
                    let gone = self.clients.swap_remove(index);
                    if !self.clients.iter().any(|c| c.pid == gone.pid) {
                        self.device.close_process(gone.pid);
                    }
                    // One lock for the disconnect and the count, so no reader sees one without the
                    // other.
                    let mut state = self.shared.lock();
                    state.stats.disconnects += 1;
                    state.stats.clients_connected = self.clients.len() as u64;
                    state.stats.handles = self.device.handles();
                }
            }
            if ready[1] {
                changed = true;
                self.accept_all();
            }
            if changed {
                self.shared.lock().stats.clients_connected = self.clients.len() as u64;
                if self.shared.waiters.load(Ordering::SeqCst) > 0 {
                    self.shared.changed.notify_all();
                }
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
            let (ack, outcome) = self.handle(pid, received);
            if let Err(refusal) = outcome {
                let mut state = self.shared.lock();
                state.ring.note_refused(pid);
                state.stats.rejected.count(refusal);
            }
            if let Some(client_seq) = ack {
                self.acknowledge(index, client_seq, outcome);
            }
        }
        true
    }

    /// Sends client `index` the acknowledgement of record `client_seq`, never waiting.
    fn acknowledge(&mut self, index: usize, client_seq: u64, outcome: Result<u64, Refusal>) {
        let ack = Ack {
            client_seq,
            outcome: match outcome {
                Ok(seq) => Outcome::Stored { seq },
                Err(refusal) => Outcome::Refused(refusal),
            },
        };
        let sent = sys::send(self.clients[index].fd.as_fd(), &ack.encode(), &[], true);
        let mut state = self.shared.lock();
        match sent {
            Ok(_) => state.stats.acks_sent += 1,
            Err(_) => state.stats.acks_dropped += 1,
        }
    }

    /// Validates one received message and stores its record. Gives the client sequence number to acknowledge,
    /// when the message decoded and asked for an acknowledgement, and the ring sequence number or the refusal.
    fn handle(&mut self, pid: u32, received: sys::Received) -> (Option<u64>, Result<u64, Refusal>) {
        if received.truncated {
            return (None, Err(Refusal::Oversized));
        }
        if received.control_truncated {
            return (None, Err(Refusal::BadFds));
        }
        // The message borrows the receive buffer while the record is stored.
        let buf = std::mem::take(&mut self.buf);
        let datagram = &buf[..received.len];
        let result = match Message::decode(datagram, self.config.max_payload) {
            Ok(message) => (
                message.head.ack.then_some(message.head.client_seq),
                self.store(pid, &message, &received.fds),
            ),
            Err(MessageError::PayloadTooLarge { .. }) => {
                (ack_requested(datagram), Err(Refusal::Oversized))
            }
            Err(_) => (ack_requested(datagram), Err(Refusal::Malformed)),
        };
        self.buf = buf;
        result
    }

    /// Stores the record of a decoded message.
    fn store(&mut self, pid: u32, message: &Message<'_>, fds: &[OwnedFd]) -> Result<u64, Refusal> {
        let head = message.head;
        let mut meta = RecordMeta {
            module: head.module,
            timestamp_ns: head.timestamp_ns,
            file: head.file,
            line: head.line,
            client_pid: pid,
            client_seq: head.client_seq,
            origin: Origin::Unknown,
            stored_ns: 0,
        };
        match message.payload {
            Payload::Inline(payload) if fds.is_empty() => {
                meta.origin = Origin::Inline;
                self.store_bytes(&meta, payload)
            }
            Payload::Memfd => {
                let [fd] = fds else {
                    return Err(Refusal::BadFds);
                };
                meta.origin = Origin::Memfd;
                memfd::with_payload(fd.as_fd(), head.payload_len, |payload| {
                    self.store_bytes(&meta, payload)
                })
                .map_err(|_| Refusal::BadMemfd)?
            }
            Payload::Device(region) if fds.is_empty() => {
                let mode = if head.ack {
                    CopyMode::Sync
                } else {
                    CopyMode::Async
                };
                self.store_device(meta, &region, mode)
            }
            Payload::Inline(_) | Payload::Device(_) => Err(Refusal::BadFds),
        }
    }

    /// Stores a record of host bytes.
    fn store_bytes(&self, meta: &RecordMeta, payload: &[u8]) -> Result<u64, Refusal> {
        let share = self.share();
        let mut state = self.shared.lock();
        let size = state.ring.footprint(payload.len());
        admit(&state, meta.client_pid, size, share)?;
        let mut meta = *meta;
        meta.stored_ns = sys::monotonic_raw_ns();
        let State {
            ring, held, stats, ..
        } = &mut *state;
        let seq = ring
            .push_noting(&meta, payload, release(held))
            .map_err(|_| Refusal::TooLargeForRing)?;
        *held.entry(meta.client_pid).or_insert(0) += size;
        stats.records_stored += 1;
        stats.payload_bytes_stored += payload.len() as u64;
        if meta.origin == Origin::Memfd {
            stats.records_memfd += 1;
        }
        Ok(seq)
    }

    /// Stores a record of device memory, copied by the driver straight into the ring's place for it.
    #[cfg_attr(not(feature = "cuda"), allow(unused_variables))]
    fn store_device(
        &mut self,
        meta: RecordMeta,
        region: &DeviceRegion,
        mode: CopyMode,
    ) -> Result<u64, Refusal> {
        let size = HEAD_LEN as u64 + u64::from(region.len);
        if size > self.ring_capacity {
            return Err(Refusal::TooLargeForRing);
        }
        let share = self.share();
        match &mut self.device {
            Device::Unavailable(reason) => Err(Refusal::DeviceUnavailable(*reason)),
            #[cfg(feature = "cuda")]
            Device::Cuda(copier) => {
                let source = copier.resolve(meta.client_pid, region)?;
                let mut state = self.shared.lock();
                let result = (|| {
                    let size = state.ring.footprint(region.len as usize);
                    admit(&state, meta.client_pid, size, share)?;
                    let mut meta = meta;
                    meta.origin = Origin::Device {
                        mode,
                        device: source.device(),
                        offset: region.offset,
                    };
                    let State {
                        ring, held, stats, ..
                    } = &mut *state;
                    let seq = ring
                        .push_filled(
                            meta,
                            region.len,
                            |dst, meta| {
                                copier.copy(&source, dst)?;
                                meta.stored_ns = sys::monotonic_raw_ns();
                                Ok(())
                            },
                            release(held),
                        )
                        .map_err(|_| Refusal::TooLargeForRing)??;
                    *held.entry(meta.client_pid).or_insert(0) += size;
                    stats.records_stored += 1;
                    stats.payload_bytes_stored += u64::from(region.len);
                    stats.device_bytes_stored += u64::from(region.len);
                    match mode {
                        CopyMode::Sync => stats.records_device_sync += 1,
                        CopyMode::Async => stats.records_device_async += 1,
                    }
                    Ok(seq)
                })();
                copier.trim();
                state.stats.handles = copier.stats();
                state.stats.device_resets = copier.resets();
                result
            }
        }
    }

    /// Each client process's share of the ring: the capacity divided among the processes connected now.
    fn share(&self) -> u64 {
        let mut pids: Vec<u32> = self.clients.iter().map(|c| c.pid).collect();
        pids.sort_unstable();
        pids.dedup();
        self.ring_capacity / pids.len().max(1) as u64
    }
}

/// The client sequence number of a message that did not decode but whose version and flags ask for an
/// acknowledgement, so that a waiting client learns of the refusal at once rather than at its deadline.
fn ack_requested(datagram: &[u8]) -> Option<u64> {
    let seq: [u8; 8] = datagram.get(16..24)?.try_into().ok()?;
    (datagram[0] == crate::message::MESSAGE_VERSION && datagram[2] & crate::message::FLAG_ACK != 0)
        .then(|| u64::from_le_bytes(seq))
}

/// Whether a record of `size` bytes from `pid` may be stored when each process's share is `share`: beyond its
/// share a client's record is stored only when the oldest record is its own (it then overwrites its own
/// oldest), so a flood costs the flooder its newest records, never the others'.
fn admit(state: &State, pid: u32, size: u64, share: u64) -> Result<(), Refusal> {
    let held = state.held.get(&pid).copied().unwrap_or(0);
    if held.saturating_add(size) > share && state.ring.oldest_client() != Some(pid) {
        return Err(Refusal::OverShare);
    }
    Ok(())
}

/// What the ring calls for each record it overwrites: the owner's bytes held go down.
fn release(held: &mut HashMap<u32, u64>) -> impl FnMut(u32, u64) + '_ {
    move |owner, bytes| {
        if let Some(h) = held.get_mut(&owner) {
            *h = h.saturating_sub(bytes);
        }
    }
}

// The receive buffer holds any valid message: a head with the largest inline payload or a device region.
const _: () = assert!(MAX_INLINE_PAYLOAD >= DEVICE_REGION_SIZED_LEN);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_a_policy_admits_as_text() {
        assert_eq!(PeerPolicy::anyone().to_string(), "every user");
        assert_eq!(PeerPolicy::default().to_string(), "this user and root");
        assert_eq!(
            PeerPolicy::allowing(&[1000, 1001], &[20]).to_string(),
            "this user and root, uids 1000,1001, gids 20"
        );
        assert_eq!(
            PeerPolicy::allowing(&[], &[5]).to_string(),
            "this user and root, gids 5"
        );
    }
}
