//! A gatord capture session and its receiver thread.
//!
//! Opening follows what works with the real daemon: the `<configurations>` document on one connection (gatord
//! saves it and binds keys when the next connection's child starts), then a new connection for the `<session>`
//! document, the `captured` key map (the only source of keys) and APC_START. A receiver thread then reads
//! frames until the end marker, the peer closing, or a framing error, storing samples as they arrive.
//!
//! The receiver thread owns the protocol session and the socket: it alone feeds the session what arrives and
//! writes what the session has to send. Stopping messages it ([`Command::Stop`]); it sends APC_STOP within
//! [`COMMAND_POLL`] and reads on until the end marker, which the stop path waits for up to a deadline. Past
//! it the stop path shuts the socket down through its own handle, which wakes the receiver at once. The
//! receiver is always joined and both socket handles are closed when the session is dropped.

use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gator_proto::client::{Event, Session};

use super::apc::{FrameSink, KeyMap, SinkError, Unavailable};
use super::connection::{daemon_error, protocol_error, Connection, READ_CHUNK};
use super::counter_sets::Configured;
use super::xml::{self, GatordDevice};
use crate::config::SampleRate;
use crate::counter::CounterId;
use crate::error::Error;
use crate::hwc::sampler::nanos_since;
use crate::store::SampleStore;
use crate::transport::{GatordAddress, Timeouts, Transport, TransportError};
use crate::GatordError;

/// How long the receiver waits for data before it looks for a message from the stop path: the most a stop
/// waits before APC_STOP is sent.
const COMMAND_POLL: Duration = Duration::from_millis(10);

/// A message to the receiver thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// Send APC_STOP and read on to the end marker.
    Stop,
}

/// What opening a session needs.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) address: GatordAddress,
    pub(crate) timeouts: Timeouts,
    pub(crate) max_len: u32,
    pub(crate) sample_rate: SampleRate,
    pub(crate) live_rate_ms: u32,
    pub(crate) busy_retry: Duration,
    /// Enabled gatord counters: engine id, the gatord counter configured (a slot for a set event) and the
    /// event programmed into a slot.
    pub(crate) counters: Vec<Configured>,
}

/// Progress the receiver shares with the engine.
#[derive(Debug, Default)]
struct Progress {
    latest_ns: Option<u64>,
    finished: bool,
    /// gatord reported an error during the capture.
    failed: bool,
    /// Enabled counters gatord will not send, with the reason (unbound keys, then what PERF_ATTRS said).
    unavailable: Vec<(CounterId, Unavailable)>,
}

#[derive(Debug, Default)]
struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How the receiver thread ended.
#[derive(Debug, Default)]
struct Exit {
    /// The zero-length APC_DATA arrived.
    ended: bool,
    /// The peer closed (or reset) the connection before the end marker.
    closed: bool,
    /// A fatal error: framing broken, socket error.
    fatal: Option<Error>,
    /// gatord's RESPONSE_ERROR, if it sent one.
    daemon: Option<Error>,
    malformed: u64,
    first_malformed: Option<SinkError>,
}

/// A running gatord capture.
#[derive(Debug)]
pub(crate) struct Capture {
    counters: Vec<CounterId>,
    target: Option<GatordDevice>,
    /// Messages to the receiver thread, which owns the session.
    commands: mpsc::Sender<Command>,
    /// A handle on the session's socket, used only to shut it down when a stop misses its deadline.
    socket: Transport,
    shared: Arc<Shared>,
    done: mpsc::Receiver<()>,
    thread: Option<JoinHandle<Exit>>,
}

/// Connection 1: deliver the configuration, then disconnect.
fn deliver_configuration(plan: &Plan) -> Result<(), Error> {
    let mut conn =
        Connection::open_retrying(&plan.address, plan.timeouts, plan.max_len, plan.busy_retry)?;
    conn.deliver_xml("configuration", &xml::configurations(&plan.counters))?;
    conn.disconnect();
    Ok(())
}

/// The keys of the `captured` document bound to the enabled counters.
struct Bound {
    keys: KeyMap,
    /// The enabled counters left without a key.
    unbound: Vec<CounterId>,
    /// Every bound key with its gatord counter name.
    names: Vec<(i32, String)>,
}

/// Binds the keys of the `captured` document to the enabled counters (the only place keys come from). A
/// slot binds its set event only when `captured` names the event code that was configured (a slot counting
/// another event is not this counter).
fn bind_keys(captured: &str, counters: &[Configured]) -> Result<Bound, Error> {
    let entries = xml::captured_keys(captured)?;
    let mut keys = KeyMap::new();
    let mut unbound = Vec::new();
    let mut names = Vec::new();
    for configured in counters {
        let entry = entries
            .iter()
            .find(|e| e.counter == configured.counter)
            .filter(|e| configured.event.is_none() || e.event == configured.event)
            .filter(|e| keys.insert(e.key, configured.id));
        match entry {
            Some(e) => names.push((e.key, configured.counter.clone())),
            None => unbound.push(configured.id),
        }
    }
    if keys.is_empty() {
        return Err(Error::Gatord(GatordError::KeysNotBound(
            counters.iter().map(|c| c.counter.clone()).collect(),
        )));
    }
    Ok(Bound {
        keys,
        unbound,
        names,
    })
}

impl Capture {
    /// Opens the two connections, starts the capture and the receiver thread.
    pub(crate) fn open(
        plan: &Plan,
        store: Arc<SampleStore>,
        epoch: Instant,
    ) -> Result<Capture, Error> {
        deliver_configuration(plan)?;
        let mut conn =
            Connection::open_retrying(&plan.address, plan.timeouts, plan.max_len, plan.busy_retry)?;
        conn.deliver_xml(
            "session",
            &xml::session(plan.sample_rate, plan.live_rate_ms),
        )?;
        let captured = conn.request_xml("captured")?;
        let Bound {
            keys,
            unbound,
            names,
        } = bind_keys(&captured, &plan.counters)?;
        let target = xml::captured_target(&captured);
        let version = conn.version();
        let offset_ns = nanos_since(epoch);
        let (session, mut reader, socket) = conn.start_capture()?;
        reader.set_read_timeout(COMMAND_POLL)?;
        let shared = Arc::new(Shared::default());
        shared.lock().unavailable = unbound
            .into_iter()
            .map(|id| (id, Unavailable::NotBound))
            .collect();
        let (done_tx, done) = mpsc::channel();
        let (commands, inbox) = mpsc::channel();
        let mut sink = FrameSink::new(version, keys, offset_ns);
        for (key, name) in &names {
            sink.bind_metric(*key, name);
        }
        let thread = {
            let shared = Arc::clone(&shared);
            let receiver = Receiver {
                socket: reader,
                session,
                inbox,
                sink,
                store,
                shared,
                done: done_tx,
            };
            std::thread::Builder::new()
                .name("lizard-gatord".into())
                .spawn(move || receiver.run())
                .map_err(Error::Thread)?
        };
        Ok(Capture {
            counters: plan.counters.iter().map(|c| c.id).collect(),
            target,
            commands,
            socket,
            shared,
            done,
            thread: Some(thread),
        })
    }

    /// The daemon and machine as the session's `<captured>` document described them.
    pub(crate) fn target(&self) -> Option<&GatordDevice> {
        self.target.as_ref()
    }

    /// The counters this session captures.
    pub(crate) fn counters(&self) -> &[CounterId] {
        &self.counters
    }

    /// The enabled counters gatord will not send values for in this session, with the reason.
    pub(crate) fn unavailable(&self) -> Vec<(CounterId, Unavailable)> {
        self.shared.lock().unavailable.clone()
    }

    /// Whether the receiver has ended (end marker, close or error).
    pub(crate) fn is_finished(&self) -> bool {
        self.shared.lock().finished
    }

    /// Whether the capture has ended on gatord's side or gatord reported an error: no more samples will
    /// come, so the capture should be stopped now.
    pub(crate) fn has_ended(&self) -> bool {
        let progress = self.shared.lock();
        progress.finished || progress.failed
    }

    /// The latest engine timestamp of any sample or frame received so far.
    pub(crate) fn latest_ns(&self) -> Option<u64> {
        self.shared.lock().latest_ns
    }

    /// Waits until `ready(latest)` holds, the receiver has ended, or `deadline` has passed; returns whether
    /// it held. `ready` is asked again after every batch of samples the receiver stores, with the latest
    /// timestamp received ([`Capture::latest_ns`]).
    pub(crate) fn wait_until(
        &self,
        deadline: Instant,
        mut ready: impl FnMut(Option<u64>) -> bool,
    ) -> bool {
        // The receiver stores a batch, then takes this lock to announce it: asking `ready` while holding
        // the lock cannot miss a batch stored after the question.
        let mut progress = self.shared.lock();
        loop {
            if ready(progress.latest_ns) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if progress.finished || left.is_zero() {
                return false;
            }
            progress = self
                .shared
                .changed
                .wait_timeout(progress, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Sends APC_STOP, waits up to `timeout` for the end marker, joins the receiver and closes the socket.
    ///
    /// Errors, in order of precedence: [`GatordError::StopTimeout`], a framing or socket error,
    /// [`GatordError::Disconnected`] (closed before the end marker), gatord's own error, [`GatordError::MalformedFrames`].
    /// Samples received before any of them stay in the store.
    pub(crate) fn stop(mut self, timeout: Duration) -> Result<(), Error> {
        self.finish(timeout)
    }

    fn finish(&mut self, timeout: Duration) -> Result<(), Error> {
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        // A receiver that has already ended no longer listens; it has nothing left to stop.
        let _ = self.commands.send(Command::Stop);
        let timed_out = match self.done.recv_timeout(timeout) {
            Err(RecvTimeoutError::Timeout) => {
                self.socket.shutdown();
                true
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => false,
        };
        let exit = thread.join();
        self.socket.shutdown();
        let exit = exit.map_err(|_| Error::Gatord(GatordError::ReceiverPanicked))?;
        if timed_out {
            return Err(Error::Gatord(GatordError::StopTimeout(timeout)));
        }
        if let Some(err) = exit.fatal {
            return Err(err);
        }
        if let Some(err) = exit.daemon {
            return Err(err);
        }
        if exit.closed && !exit.ended {
            return Err(Error::Gatord(GatordError::Disconnected));
        }
        if let Some(first) = exit.first_malformed {
            return Err(Error::Gatord(GatordError::MalformedFrames {
                count: exit.malformed,
                first,
            }));
        }
        Ok(())
    }
}

impl Drop for Capture {
    /// Stops a capture that was not stopped (with a short deadline), always joining the receiver.
    fn drop(&mut self) {
        let _ = self.finish(Duration::from_millis(200));
    }
}

/// The receiver thread's belongings: the session and its socket are its alone.
struct Receiver {
    socket: Transport,
    session: Session,
    inbox: mpsc::Receiver<Command>,
    sink: FrameSink,
    store: Arc<SampleStore>,
    shared: Arc<Shared>,
    /// Dropped when the receiver ends, which wakes a stop waiting for it.
    done: mpsc::Sender<()>,
}

impl Receiver {
    /// Reads frames and stores their samples until the end marker, the peer closing or a fatal error,
    /// sending APC_STOP when the stop path asks (or is gone).
    fn run(mut self) -> Exit {
        let mut exit = Exit::default();
        let mut buf = vec![0u8; READ_CHUNK];
        let mut events = Vec::new();
        let mut samples = Vec::new();
        let mut reported = None;
        let unbound = self.shared.lock().unavailable.clone();
        let mut withheld = Vec::new();
        let mut stopping = false;
        loop {
            if !stopping && self.stop_asked() {
                stopping = true;
                self.send_stop();
            }
            let mut stop = false;
            let fed = match self.socket.read_some(&mut buf) {
                Ok(n) => self.session.handle_input(&buf[..n]),
                // Nothing within the poll interval: gatord can be idle for long; the stop deadline bounds
                // the wait.
                Err(TransportError::Timeout(..)) => Ok(()),
                Err(TransportError::Closed { .. }) => {
                    exit.closed = true;
                    stop = true;
                    self.session.handle_eof()
                }
                Err(err) => {
                    exit.fatal = Some(err.into());
                    stop = true;
                    Ok(())
                }
            };
            if let Err(err) = fed {
                exit.fatal
                    .get_or_insert(protocol_error("reading APC data", err));
                stop = true;
            }
            while let Some(event) = self.session.poll_event() {
                events.push(event);
            }
            for event in events.drain(..) {
                match event {
                    Event::ApcFrame(frame) => {
                        if let Err(err) = self.sink.frame(&frame, &mut samples) {
                            exit.malformed += 1;
                            exit.first_malformed.get_or_insert(err);
                        }
                    }
                    Event::EndOfCapture => {
                        exit.ended = true;
                        stop = true;
                    }
                    Event::DaemonError(text) => {
                        exit.daemon.get_or_insert(daemon_error(&text));
                        self.shared.lock().failed = true;
                        self.shared.changed.notify_all();
                    }
                    Event::Closed => {
                        exit.closed = true;
                        stop = true;
                    }
                    _ => {}
                }
            }
            let stored = !samples.is_empty();
            if stored {
                self.store.push_all(samples.drain(..));
            }
            let now_withheld = self.sink.unavailable();
            if now_withheld != withheld {
                withheld = now_withheld;
                let mut all = unbound.clone();
                all.extend(withheld.iter().copied());
                self.shared.lock().unavailable = all;
            }
            if stored || self.sink.latest_ns() != reported {
                reported = self.sink.latest_ns();
                self.shared.lock().latest_ns = reported;
                self.shared.changed.notify_all();
            }
            if stop {
                break;
            }
        }
        self.shared.lock().finished = true;
        self.shared.changed.notify_all();
        drop(self.done);
        exit
    }

    /// Whether the stop path has asked for the capture to stop, or is gone (the capture was dropped).
    fn stop_asked(&self) -> bool {
        match self.inbox.try_recv() {
            Ok(Command::Stop) | Err(TryRecvError::Disconnected) => true,
            Err(TryRecvError::Empty) => false,
        }
    }

    /// Queues APC_STOP in the session and writes it. A failed write means the daemon is gone: the next read
    /// sees the close and reports it.
    fn send_stop(&mut self) {
        let mut out = Vec::new();
        if self.session.stop_capture().is_ok() {
            // The command is now in `out`; its length is not needed.
            let _ = self.session.poll_transmit(&mut out);
            let _ = self.socket.write_all(&out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_without_a_key_are_reported_unbound() {
        // Shaped like gatord 9.7.2's reply: a counter delivered on the capture connection itself gets key 0.
        let captured = r#"<captured version="1"><counters>
            <counter key="0x5e" type="Linux_meminfo_memfree"/>
            <counter key="0x0" type="Linux_net_rx"/>
        </counters></captured>"#;
        let configured = |id, counter: &str| Configured {
            id,
            counter: counter.into(),
            event: None,
        };
        let counters = [
            configured(1, "Linux_meminfo_memfree"),
            configured(2, "Linux_net_rx"),
            configured(3, "Missing"),
        ];
        let Bound { keys, unbound, .. } = bind_keys(captured, &counters).unwrap();
        assert_eq!(keys.get(0x5e), Some(1));
        assert_eq!(unbound, [2, 3]);
        assert!(matches!(
            bind_keys(captured, &counters[1..]),
            Err(Error::Gatord(GatordError::KeysNotBound(_)))
        ));
    }

    #[test]
    fn slots_bind_back_to_their_set_events() {
        // gatord 9.7.2's captured.xml of its local Arm PMU capture (arm64-vm-local.apc): cnt0 counts 0x8.
        let Some(captured) = test_data::gatord_text("arm64-vm-local.apc/captured.xml") else {
            return;
        };
        let slot = |id, event| Configured {
            id,
            counter: "ARMv8_Cortex_A72_cnt0".into(),
            event: Some(event),
        };
        let cycles = Configured {
            id: 1,
            counter: "ARMv8_Cortex_A72_ccnt".into(),
            event: None,
        };
        let Bound { keys, unbound, .. } =
            bind_keys(&captured, &[cycles.clone(), slot(7, 0x8)]).unwrap();
        assert_eq!((keys.get(0xa), keys.get(0xc)), (Some(1), Some(7)));
        assert!(unbound.is_empty());
        // The slot counts 0x8, not 0x3: that key is not the 0x3 event's.
        let Bound { keys, unbound, .. } = bind_keys(&captured, &[cycles, slot(7, 0x3)]).unwrap();
        assert_eq!(keys.get(0xc), None);
        assert_eq!(unbound, [7]);
    }
}
