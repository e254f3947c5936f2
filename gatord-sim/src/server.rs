//! The simulator's listening socket, its per-connection threads and the state they share.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::config::SimConfig;
use super::connection::serve;
use super::documents;

/// The most connections served at once (one session and the others waiting to be told it is busy); more
/// are closed at once and counted in [`SimStats::connections_refused`], so idle peers cannot pile up threads.
pub const MAX_CONNECTIONS: usize = 32;

/// Counters of what a simulator did, for tests and the CLI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// TCP connections accepted.
    pub connections: u64,
    /// Connections answered "Session already in progress".
    pub busy_rejections: u64,
    /// Connections closed at once because [`MAX_CONNECTIONS`] were being served.
    pub connections_refused: u64,
    /// `<configurations>` documents delivered (and saved).
    pub configurations: u64,
    /// APC_START commands obeyed.
    pub captures: u64,
    /// APC frames sent (SUMMARY included).
    pub frames: u64,
    /// End-of-capture markers sent.
    pub end_markers: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) connections: AtomicU64,
    pub(crate) busy_rejections: AtomicU64,
    pub(crate) connections_refused: AtomicU64,
    pub(crate) configurations: AtomicU64,
    pub(crate) captures: AtomicU64,
    pub(crate) frames: AtomicU64,
    pub(crate) end_markers: AtomicU64,
}

impl Stats {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> SimStats {
        SimStats {
            connections: self.connections.load(Ordering::Relaxed),
            busy_rejections: self.busy_rejections.load(Ordering::Relaxed),
            connections_refused: self.connections_refused.load(Ordering::Relaxed),
            configurations: self.configurations.load(Ordering::Relaxed),
            captures: self.captures.load(Ordering::Relaxed),
            frames: self.frames.load(Ordering::Relaxed),
            end_markers: self.end_markers.load(Ordering::Relaxed),
        }
    }
}

/// State the daemon keeps across connections.
#[derive(Debug, Default)]
pub(crate) struct DaemonState {
    /// The saved configuration (counter names), as gatord's configuration.xml.
    pub(crate) configuration: Vec<String>,
    /// The event codes the saved configuration programs into counter-set slots: `(slot, code)`.
    pub(crate) slot_events: Vec<(String, u64)>,
    /// The connection currently holding the one session gatord allows.
    pub(crate) holder: Option<u64>,
}

/// Everything the connection threads share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: SimConfig,
    pub(crate) events: String,
    pub(crate) counters: Vec<String>,
    /// The counter-set slots of the events document.
    pub(crate) slots: Vec<String>,
    /// `(counter, event code)` of every fixed counter the events document gives an event (an Arm PMU's
    /// cycle counter: 0x11).
    pub(crate) fixed_events: Vec<(String, u64)>,
    pub(crate) state: Mutex<DaemonState>,
    pub(crate) stop: AtomicBool,
    pub(crate) stats: Stats,
    pub(crate) started: Instant,
}

impl Shared {
    /// The daemon `config` describes, before any connection: its documents made, no session held.
    pub(crate) fn new(config: SimConfig) -> Shared {
        let events = documents::events_document(&config);
        let counters = documents::available_counters(&config, &events);
        let slots = documents::slots(&events);
        let fixed_events = documents::fixed_events(&events);
        Shared {
            config,
            events,
            counters,
            slots,
            fixed_events,
            state: Mutex::new(DaemonState::default()),
            stop: AtomicBool::new(false),
            stats: Stats::default(),
            started: Instant::now(),
        }
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, DaemonState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running simulated gatord. Dropping it (or [`SimHandle::shutdown`]) closes every connection and joins
/// every thread.
#[derive(Debug)]
pub struct SimHandle {
    address: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

/// Starts a simulated gatord: binds `config.bind`, then accepts connections on a background thread, serving
/// each on its own thread.
pub fn start(config: SimConfig) -> io::Result<SimHandle> {
    let listener = TcpListener::bind(config.bind)?;
    let address = listener.local_addr()?;
    let shared = Arc::new(Shared::new(config));
    let accept = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("gatord-sim".into())
            .spawn(move || accept_loop(listener, shared))?
    };
    Ok(SimHandle {
        address,
        shared,
        accept: Some(accept),
    })
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        threads.retain(|t| !t.is_finished());
        if threads.len() >= MAX_CONNECTIONS {
            // Dropping the stream closes it before anything is read or written.
            Stats::bump(&shared.stats.connections_refused);
            continue;
        }
        Stats::bump(&shared.stats.connections);
        next_id += 1;
        let id = next_id;
        let busy = {
            let mut state = shared.state();
            if shared.config.faults.busy || state.holder.is_some() {
                true
            } else {
                state.holder = Some(id);
                false
            }
        };
        let conn_shared = Arc::clone(&shared);
        let spawned = std::thread::Builder::new()
            .name(format!("gatord-sim-{id}"))
            .spawn(move || {
                serve(stream, &conn_shared, busy);
                if !busy {
                    // gatord's child for the session is still exiting: the session stays taken.
                    pause(&conn_shared, conn_shared.config.timing.session_release);
                }
                let mut state = conn_shared.state();
                if state.holder == Some(id) {
                    state.holder = None;
                }
            });
        match spawned {
            Ok(handle) => threads.push(handle),
            Err(_) => {
                let mut state = shared.state();
                if state.holder == Some(id) {
                    state.holder = None;
                }
            }
        }
    }
    for thread in threads {
        let _ = thread.join();
    }
}

/// Sleeps for `delay` (a simulated latency), in slices, returning early when the simulator stops.
pub(crate) fn pause(shared: &Shared, delay: Duration) {
    let until = Instant::now() + delay;
    while !shared.stop.load(Ordering::SeqCst) {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

impl SimHandle {
    /// The socket address the simulator listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// The socket address the simulator listens on, under the name clients use for a daemon's address
    /// (`lizard_core::Config::gatord_only(handle.address())` takes it as is).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// What the simulator has done so far.
    pub fn stats(&self) -> SimStats {
        self.shared.stats.snapshot()
    }

    /// The saved configuration: the counter names of the last `<configurations>` delivered.
    pub fn configuration(&self) -> Vec<String> {
        self.shared.state().configuration.clone()
    }

    /// The event codes the saved configuration programs into counter-set slots: `(slot, code)`, in document
    /// order.
    pub fn slot_events(&self) -> Vec<(String, u64)> {
        self.shared.state().slot_events.clone()
    }

    /// The counter names the simulator offers, in key order.
    pub fn counters(&self) -> &[String] {
        &self.shared.counters
    }

    /// Stops accepting, closes every connection and joins every thread.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop with one last connection.
        let _ = TcpStream::connect_timeout(&self.address, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.stop();
    }
}
