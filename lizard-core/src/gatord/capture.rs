//! A gatord capture session and its receiver thread.
//!
//! Opening follows what works with the real daemon: the `<configurations>` document on one connection (gatord
//! saves it and binds keys when the next connection's child starts), then a new connection for the `<session>`
//! document, the `captured` key map (the only source of keys) and APC_START. A receiver thread then reads
//! frames until the end marker, the peer closing, or a framing error, storing samples as they arrive.
//!
//! Stopping sends APC_STOP and waits for the receiver to see the end marker, up to a deadline; past it the
//! socket is shut down, which wakes the receiver at once. The receiver is always joined and both socket handles
//! are closed when the session is dropped.

use std::sync::mpsc::{self, RecvTimeoutError};
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
    session: Arc<Mutex<Session>>,
    writer: Transport,
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
        let (session, reader, writer) = conn.start_capture()?;
        let session = Arc::new(Mutex::new(session));
        let shared = Arc::new(Shared::default());
        shared.lock().unavailable = unbound
            .into_iter()
            .map(|id| (id, Unavailable::NotBound))
            .collect();
        let (done_tx, done) = mpsc::channel();
        let mut sink = FrameSink::new(version, keys, offset_ns);
        for (key, name) in &names {
            sink.bind_metric(*key, name);
        }
        let thread = {
            let session = Arc::clone(&session);
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("lizard-gatord".into())
                .spawn(move || receive(reader, session, sink, store, shared, done_tx))
                .map_err(Error::Thread)?
        };
        Ok(Capture {
            counters: plan.counters.iter().map(|c| c.id).collect(),
            target,
            session,
            writer,
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
        let mut out = Vec::new();
        {
            let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
            if session.stop_capture().is_ok() {
                // The APC_STOP command is now in `out`, written below; its length is not needed.
                let _ = session.poll_transmit(&mut out);
            }
        }
        // A failed write means the daemon is gone; the receiver sees the close and reports it.
        let _ = self.writer.write_all(&out);
        let timed_out = match self.done.recv_timeout(timeout) {
            Err(RecvTimeoutError::Timeout) => {
                self.writer.shutdown();
                true
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => false,
        };
        let exit = thread.join();
        self.writer.shutdown();
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

fn receive(
    mut reader: Transport,
    session: Arc<Mutex<Session>>,
    mut sink: FrameSink,
    store: Arc<SampleStore>,
    shared: Arc<Shared>,
    done: mpsc::Sender<()>,
) -> Exit {
    let mut exit = Exit::default();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut events = Vec::new();
    let mut samples = Vec::new();
    let mut reported = None;
    let unbound = shared.lock().unavailable.clone();
    let mut withheld = Vec::new();
    loop {
        let read = reader.read_some(&mut buf);
        let mut stop = false;
        {
            let mut session = session.lock().unwrap_or_else(PoisonError::into_inner);
            let fed = match read {
                Ok(n) => session.handle_input(&buf[..n]),
                // No data within the read timeout: gatord can be idle for long; the stop deadline bounds waits.
                Err(TransportError::Timeout(..)) => Ok(()),
                Err(TransportError::Closed { .. }) => {
                    exit.closed = true;
                    stop = true;
                    session.handle_eof()
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
            while let Some(event) = session.poll_event() {
                events.push(event);
            }
        }
        for event in events.drain(..) {
            match event {
                Event::ApcFrame(frame) => {
                    if let Err(err) = sink.frame(&frame, &mut samples) {
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
                    shared.lock().failed = true;
                    shared.changed.notify_all();
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
            store.push_all(samples.drain(..));
        }
        let now_withheld = sink.unavailable();
        if now_withheld != withheld {
            withheld = now_withheld;
            let mut all = unbound.clone();
            all.extend(withheld.iter().copied());
            shared.lock().unavailable = all;
        }
        if stored || sink.latest_ns() != reported {
            reported = sink.latest_ns();
            shared.lock().latest_ns = reported;
            shared.changed.notify_all();
        }
        if stop {
            break;
        }
    }
    shared.lock().finished = true;
    shared.changed.notify_all();
    drop(done);
    exit
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
