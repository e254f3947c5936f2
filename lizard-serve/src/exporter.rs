//! [`Exporter`]: the engine sampled window after window on one thread, the latest window served over HTTP
//! on another.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use lizard_core::Error;
use lizard_core::Lizard;

use crate::exposition::DeviceLabels;
use crate::http::{self, Route};
use crate::stats::Account;
use crate::windows::{Shared, Windows};

/// Where [`ServeConfig::new`]'s caller listens unless told otherwise: loopback only, port 9477.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9477));

/// How often the HTTP thread looks up from waiting for a connection to see whether it should stop.
const STOP_POLL: Duration = Duration::from_millis(200);

/// What [`Exporter::start`] needs besides the engine.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServeConfig {
    /// The address to listen on (port 0: any free port, see [`Exporter::local_addr`]).
    pub listen: SocketAddr,
    /// The length of a sampling window: a scrape answers with the last window closed.
    pub interval: Duration,
    /// The longest one HTTP request may take to arrive, and its answer to be written.
    pub request_deadline: Duration,
    /// The device labels of every series.
    pub device: DeviceLabels,
}

impl ServeConfig {
    /// Listening on `listen`, 1 s windows, a 2 s request deadline, labels for `device`.
    pub fn new(listen: SocketAddr, device: DeviceLabels) -> ServeConfig {
        ServeConfig {
            listen,
            interval: Duration::from_secs(1),
            request_deadline: Duration::from_secs(2),
            device,
        }
    }
}

/// Why an exporter could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be listened on (in use, not this host's, not permitted).
    #[error("cannot listen on {address}")]
    Bind {
        /// The address asked for.
        address: SocketAddr,
        /// The system's reason.
        #[source]
        source: std::io::Error,
    },
    /// The engine has no counter enabled.
    #[error("no counter is enabled: there is nothing to serve")]
    NothingEnabled,
    /// The first window could not start (gatord unreachable or busy, counters that cannot be opened).
    #[error("the first sampling window could not start")]
    FirstWindow(#[source] Error),
    /// A thread could not be started.
    #[error("cannot start the exporter's threads")]
    Thread(#[source] std::io::Error),
}

/// An OpenMetrics / Prometheus exporter over an engine.
///
/// [`start`](Self::start) takes a configured [`Lizard`] whose counters to serve are enabled, listens, and
/// starts the first window before returning (so an engine that cannot capture fails here). Then one thread
/// captures back-to-back windows of [`ServeConfig::interval`] and another answers `GET /metrics` with the
/// last window closed (see [`exposition`](super::exposition) for the families). A window that fails (gatord
/// died, a counter could not be read) is counted and the next one tries again; [`failure`](Self::failure)
/// says why. [`stop`](Self::stop) (or dropping it) ends both threads within a window's length and a
/// request deadline.
///
/// With gatord, configure the engine in [`CaptureMode::Persistent`](lizard_core::CaptureMode::Persistent): the
/// windows then share one gatord session instead of opening one each.
///
/// Memory is bounded: the engine keeps only the open window's samples (persistent mode prunes the rest),
/// each series one value, and the HTTP side one request buffer of
/// [`MAX_REQUEST_HEAD`](super::http::MAX_REQUEST_HEAD) at a time.
#[derive(Debug)]
pub struct Exporter {
    address: SocketAddr,
    shared: Arc<Shared>,
    stop_windows: Option<mpsc::Sender<()>>,
    stop_http: Arc<AtomicBool>,
    windows: Option<JoinHandle<Lizard>>,
    http: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Listens on [`ServeConfig::listen`], starts the first window and the two threads.
    pub fn start(lizard: Lizard, config: ServeConfig) -> Result<Exporter, ServeError> {
        let listener = TcpListener::bind(config.listen).map_err(|source| ServeError::Bind {
            address: config.listen,
            source,
        })?;
        let address = listener.local_addr().map_err(|source| ServeError::Bind {
            address: config.listen,
            source,
        })?;
        let mut windows = Windows::new(lizard, config.device.clone(), config.interval);
        if windows.len() == 0 {
            return Err(ServeError::NothingEnabled);
        }
        let shared = Arc::new(Shared::default());
        // The first window first: its session names the daemon in the device labels of the first scrape.
        let first = windows.start().map_err(ServeError::FirstWindow)?;
        windows.publish(&shared);

        let (stop_tx, stop_rx) = mpsc::channel();
        let sampler_shared = Arc::clone(&shared);
        let windows = std::thread::Builder::new()
            .name("lizard-serve-windows".into())
            .spawn(move || windows.run(Some(first), &sampler_shared, &stop_rx))
            .map_err(ServeError::Thread)?;
        let stop_http = Arc::new(AtomicBool::new(false));
        let http_shared = Arc::clone(&shared);
        let http_stop = Arc::clone(&stop_http);
        let deadline = config.request_deadline;
        let http = std::thread::Builder::new()
            .name("lizard-serve-http".into())
            .spawn(move || serve_http(&listener, &http_shared, &http_stop, deadline));
        let mut exporter = Exporter {
            address,
            shared,
            stop_windows: Some(stop_tx),
            stop_http,
            windows: Some(windows),
            http: None,
        };
        // On failure, dropping `exporter` ends the windows thread.
        exporter.http = Some(http.map_err(ServeError::Thread)?);
        Ok(exporter)
    }

    /// The address listened on (with the port chosen when port 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.address
    }

    /// What the exporter has done so far.
    pub fn account(&self) -> Account {
        self.shared.account()
    }

    /// The latest window failure and its number (1 for the first, counting up), so a caller polling it
    /// can report each new one once; `None` while every window has succeeded.
    pub fn failure(&self) -> Option<(u64, Arc<Error>)> {
        self.shared.failure()
    }

    /// Ends both threads (the open window is closed and counted) and returns the engine, with no capture
    /// running and, in persistent mode, its gatord session closed.
    pub fn stop(mut self) -> Option<Lizard> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Option<Lizard> {
        self.stop_windows.take();
        self.stop_http.store(true, Ordering::SeqCst);
        if let Some(http) = self.http.take() {
            let _ = http.join();
        }
        self.windows.take().and_then(|w| w.join().ok())
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// Answers connections one at a time until `stop` is set.
fn serve_http(listener: &TcpListener, shared: &Shared, stop: &AtomicBool, deadline: Duration) {
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: STOP_POLL.as_nanos() as _,
    };
    while !stop.load(Ordering::SeqCst) {
        let mut fds = [PollFd::new(listener, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(_) => continue,
            Ok(_) => {}
        }
        let Ok((mut stream, _peer)) = listener.accept() else {
            continue;
        };
        match http::read_request(&mut stream, deadline) {
            Ok(route) => answer(&mut stream, route, shared, deadline),
            Err(refusal) => {
                shared.update_account(|a| refusal.count(&mut a.refused));
                http::refuse(&mut stream, refusal, deadline);
            }
        }
    }
}

/// Answers a request that was routed.
fn answer(stream: &mut std::net::TcpStream, route: Route, shared: &Shared, deadline: Duration) {
    match route {
        Route::Metrics { format, head_only } => {
            shared.update_account(|a| a.scrapes += 1);
            let rendered = shared.rendered();
            let body = rendered.get(format).as_bytes();
            http::respond(
                stream,
                "200 OK",
                format.content_type(),
                body,
                head_only,
                deadline,
            );
        }
        Route::Index { head_only } => {
            let body = b"lizard: counters as OpenMetrics / Prometheus text at /metrics\n";
            let text = "text/plain; charset=utf-8";
            http::respond(stream, "200 OK", text, body, head_only, deadline);
        }
    }
}
