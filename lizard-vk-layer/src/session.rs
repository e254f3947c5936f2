//! The session: the layer's settings, its output and its worker thread, from the first instance to the
//! last; and the frame count the application's presents advance.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::boundary::{self, Feature};
use crate::clock::Zero;
use crate::config::{Config, Mode};
use crate::device::Device;
use crate::message::Message;
use crate::worker;

/// The session's shared state.
#[derive(Debug)]
pub(crate) struct Session {
    /// The settings.
    pub config: Config,
    /// The trace's path for this session (`{n}` resolved).
    pub output: std::path::PathBuf,
    /// The trace's time zero.
    pub zero: Zero,
    sender: Mutex<Sender<Message>>,
    presents: AtomicU64,
    devices: AtomicU32,
    recordings: AtomicU64,
    submissions: AtomicU64,
    /// Time the layer waited for the GPU in the frame being submitted, in ns.
    frame_waits_ns: AtomicU64,
    /// The measured range has ended: nothing more is recorded.
    over: AtomicBool,
}

/// The session and how many instances hold it, with its worker.
struct Live {
    session: Arc<Session>,
    instances: usize,
    /// The worker and its end signal (none when it could not start).
    worker: Option<(JoinHandle<()>, mpsc::Receiver<()>)>,
}

static LIVE: Mutex<Option<Live>> = Mutex::new(None);

/// Joins the session (starting it with the first instance); `None` when the layer could not start one.
pub(crate) fn join(app_name: &str) -> Option<Arc<Session>> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(l) = live.as_mut() {
        l.instances += 1;
        return Some(Arc::clone(&l.session));
    }
    boundary::reset();
    let (config, errors) = Config::from_env();
    let (sender, receiver) = mpsc::channel();
    let output = config.claim_output().unwrap_or_else(|e| {
        eprintln!(
            "{}: {}: {e}; writing {} instead",
            crate::LAYER_NAME,
            config.output.display(),
            config.output.display()
        );
        config.output.clone()
    });
    let session = Arc::new(Session {
        output,
        config,
        zero: Zero::now(),
        sender: Mutex::new(sender),
        presents: AtomicU64::new(0),
        devices: AtomicU32::new(0),
        recordings: AtomicU64::new(0),
        submissions: AtomicU64::new(0),
        frame_waits_ns: AtomicU64::new(0),
        over: AtomicBool::new(false),
    });
    for error in &errors {
        eprintln!("{}: {error}; left at its default", crate::LAYER_NAME);
        session.send(Message::Note(format!("setting refused: {error}")));
    }
    let (finished_tx, finished) = mpsc::channel();
    let (ready_tx, ready) = mpsc::channel();
    match worker::start(
        Arc::clone(&session),
        app_name.to_owned(),
        receiver,
        ready_tx,
        finished_tx,
    ) {
        Ok(worker) => {
            // lizard's engine starts capturing before the application goes on, so that its first frames
            // have counters too (a few tens of milliseconds, once; never more than two seconds).
            let _ = ready.recv_timeout(Duration::from_secs(2));
            *live = Some(Live {
                session: Arc::clone(&session),
                instances: 1,
                worker: Some((worker, finished)),
            });
            Some(session)
        }
        Err(e) => {
            // The session stays (devices still need their dispatch), with everything the worker would
            // serve turned off.
            let reason = format!("the worker thread could not start ({e})");
            eprintln!(
                "{}: {reason}; the layer passes every call on",
                crate::LAYER_NAME
            );
            for feature in [
                Feature::Workloads,
                Feature::Timing,
                Feature::Serialise,
                Feature::Frames,
            ] {
                boundary::turn_off(feature, reason.clone());
            }
            *live = Some(Live {
                session: Arc::clone(&session),
                instances: 1,
                worker: None,
            });
            Some(session)
        }
    }
}

/// Leaves the session; the last instance ends it: the worker writes what it has, closes the trace and
/// the document and stops (waited for at most ten seconds; a worker still running then keeps the layer's
/// library loaded, so that it never runs unmapped code).
pub(crate) fn leave() {
    let ending = {
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        match live.as_mut() {
            Some(l) if l.instances > 1 => {
                l.instances -= 1;
                None
            }
            Some(_) => live.take(),
            None => None,
        }
    };
    let Some(Live {
        session,
        worker: Some((worker, finished)),
        ..
    }) = ending
    else {
        return;
    };
    session.send(Message::Stop);
    match finished.recv_timeout(Duration::from_secs(10)) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            let _ = worker.join();
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            eprintln!(
                "{}: the worker did not stop within 10 s; the layer stays loaded",
                crate::LAYER_NAME
            );
            crate::pin::keep_loaded();
        }
    }
}

impl Session {
    /// Sends `message` to the worker; `false` when the worker has gone (timing then turns off: nothing
    /// would give back what submissions use).
    pub(crate) fn send(&self, message: Message) -> bool {
        let sender = self.sender.lock().unwrap_or_else(|e| e.into_inner());
        let sent = sender.send(message).is_ok();
        if !sent {
            boundary::turn_off(
                Feature::Timing,
                "the worker thread has stopped: nothing reads the results any more".to_owned(),
            );
        }
        sent
    }

    /// A number for a new device.
    pub(crate) fn next_device_id(&self) -> u32 {
        self.devices.fetch_add(1, Ordering::Relaxed)
    }

    /// A number for a finished recording, from 1.
    pub(crate) fn next_recording_serial(&self) -> u64 {
        self.recordings.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A number for a submission, from 1.
    pub(crate) fn next_submission_serial(&self) -> u64 {
        self.submissions.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The frame being submitted: the presents so far.
    pub(crate) fn frame(&self) -> u64 {
        self.presents.load(Ordering::Relaxed)
    }

    /// Whether frame `frame` is measured.
    pub(crate) fn measures(&self, frame: u64) -> bool {
        self.config.frames.contains(frame)
    }

    /// Whether command buffers recorded now get the layer's queries: the range is not over, queries are
    /// asked for and workload tracking is on.
    pub(crate) fn records_workloads(&self) -> bool {
        self.config.queries.any()
            && !self.over.load(Ordering::Relaxed)
            && boundary::is_on(Feature::Workloads)
    }

    /// The mode in force on `device`: `renderpass` only where the driver allows it.
    pub(crate) fn mode_on(&self, device: &Device) -> Mode {
        match self.config.mode {
            Mode::RenderPass if !crate::render_pass_mode::available(device) => Mode::Frame,
            mode => mode,
        }
    }

    /// Adds the layer's wait for the GPU to the frame being submitted.
    pub(crate) fn add_wait(&self, ns: u64) {
        self.frame_waits_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// A present: the frame ends. Returns the frame ended, and the layer's waits in it.
    pub(crate) fn present(&self) -> (u64, u64) {
        let frame = self.presents.fetch_add(1, Ordering::Relaxed);
        if self.config.frames.is_past(frame + 1) {
            self.over.store(true, Ordering::Relaxed);
        }
        (frame, self.frame_waits_ns.swap(0, Ordering::Relaxed))
    }

    /// A device was created.
    pub(crate) fn device_created(&self, device: &Arc<Device>) {
        self.send(Message::Device(Arc::clone(device)));
    }

    /// A device is being destroyed: waits (at most `timeout`) for the worker to finish with it.
    pub(crate) fn device_closing(&self, device: &Arc<Device>, timeout: Duration) {
        let (ack, answered) = mpsc::sync_channel(1);
        self.send(Message::Closing {
            device: Arc::clone(device),
            ack,
        });
        let _ = answered.recv_timeout(timeout);
    }
}
