//! The worker thread: it waits for each submission's fence (never the application), reads the results,
//! puts them on the host's clock, writes the trace and the document, and reads lizard's counters over
//! each frame once the engine has sampled past its end.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ash::vk;

use crate::boundary;
use crate::clock::{self, Zero};
use crate::config::Mode;
use crate::device::Device;
use crate::document::Document;
use crate::frame_counters::FrameCounters;
use crate::message::{Message, Present, Submission};
use crate::queue;
use crate::results::{self, Read};
use crate::session::Session;
use crate::trace::{statistics_names, Placed, Serialised, Trace};

/// How long the worker sleeps between looks while the application sends.
const TICK: Duration = Duration::from_millis(4);

/// The longest the worker waits for one submission before giving its results up.
const FENCE_PATIENCE: Duration = Duration::from_secs(20);

/// Starts the worker; it says on `ready` once its trace is open and lizard's engine captures (or failed
/// to).
pub(crate) fn start(
    session: Arc<Session>,
    app_name: String,
    receiver: Receiver<Message>,
    ready: Sender<()>,
    finished: Sender<()>,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("lizard-vk".to_owned())
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| {
                let mut worker = Worker::new(session, &app_name);
                let _ = ready.send(());
                worker.run(&receiver);
                worker.finish();
            }));
            if result.is_err() {
                eprintln!(
                    "{}: the worker stopped on a panic; the trace ends there",
                    crate::LAYER_NAME
                );
            }
            let _ = finished.send(());
        })
}

/// A device's clock mapping: device ticks to `CLOCK_MONOTONIC`.
#[derive(Debug)]
struct DeviceClock {
    calibrated: bool,
    period: f64,
    mask: u64,
    /// `(ticks, CLOCK_MONOTONIC ns)` read together.
    anchor: Option<(u64, u64)>,
    refreshed: Option<Instant>,
}

impl DeviceClock {
    fn new(device: &Device) -> DeviceClock {
        let bits = device
            .info
            .families
            .iter()
            .map(|f| f.timestamp_valid_bits)
            .filter(|&b| b > 0)
            .min()
            .unwrap_or(64);
        DeviceClock {
            calibrated: device.info.calibrated,
            period: device.info.timestamp_period,
            mask: if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            },
            anchor: None,
            refreshed: None,
        }
    }

    /// Reads both clocks together (every second at most).
    fn calibrate(&mut self, device: &Device) {
        if !self.calibrated
            || self
                .refreshed
                .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        let Some(get) = device.table.get_calibrated_timestamps_ext else {
            self.calibrated = false;
            return;
        };
        let infos = [
            vk::CalibratedTimestampInfoKHR::default().time_domain(vk::TimeDomainKHR::DEVICE),
            vk::CalibratedTimestampInfoKHR::default()
                .time_domain(vk::TimeDomainKHR::CLOCK_MONOTONIC),
        ];
        let mut stamps = [0u64; 2];
        let mut deviation = 0u64;
        // SAFETY: a live device with the extension enabled; two infos and two outputs.
        let result = unsafe {
            get(
                device.handle,
                2,
                infos.as_ptr(),
                stamps.as_mut_ptr(),
                &mut deviation,
            )
        };
        if result == vk::Result::SUCCESS {
            self.anchor = Some((stamps[0] & self.mask, stamps[1]));
            self.refreshed = Some(Instant::now());
        } else {
            self.calibrated = false;
        }
    }

    /// `ticks` on `CLOCK_MONOTONIC`; an uncalibrated clock is anchored at `fallback` the first time.
    fn monotonic(&mut self, ticks: u64, fallback: u64) -> u64 {
        let ticks = ticks & self.mask;
        let (t0, m0) = *self.anchor.get_or_insert((ticks, fallback));
        let forward = ticks.wrapping_sub(t0) & self.mask;
        let ns = |d: u64| (d as f64 * self.period) as u64;
        if forward <= self.mask / 2 {
            m0.saturating_add(ns(forward))
        } else {
            m0.saturating_sub(ns(t0.wrapping_sub(ticks) & self.mask))
        }
    }
}

struct Worker {
    session: Arc<Session>,
    zero: Zero,
    trace: Option<Trace>,
    document: Document,
    counters: Option<FrameCounters>,
    clocks: HashMap<u32, DeviceClock>,
    pending: VecDeque<Pending>,
    /// When the front of `pending` was last found not readable yet.
    tried: Option<Instant>,
    /// Readings of lizard's counters that had no value, by reason.
    no_value: HashMap<String, u64>,
    frame_start: Option<u64>,
    /// Frame times with and without serialising, for the closing note: `(sum ns, frames)`.
    serialised: (u64, u64),
    unserialised: (u64, u64),
    serialising: bool,
    untimed: HashMap<String, u64>,
}

impl Worker {
    fn new(session: Arc<Session>, app_name: &str) -> Worker {
        let zero = session.zero;
        let config = &session.config;
        let name = if app_name.is_empty() {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_default()
        } else {
            app_name.to_owned()
        };
        let output = session.output.clone();
        let trace = match Trace::create(&output, zero, &name) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!(
                    "{}: cannot write the trace {}: {e}",
                    crate::LAYER_NAME,
                    output.display()
                );
                None
            }
        };
        let mut worker = Worker {
            document: Document::new(crate::config::Config::document_path(&output), zero),
            session: Arc::clone(&session),
            zero,
            trace,
            counters: None,
            clocks: HashMap::new(),
            pending: VecDeque::new(),
            tried: None,
            no_value: HashMap::new(),
            frame_start: None,
            serialised: (0, 0),
            unserialised: (0, 0),
            serialising: config.mode == Mode::Submit,
            untimed: HashMap::new(),
        };
        let c = &session.config;
        worker.note(&format!(
            "settings: mode {}, frames {}, queries: timestamps {}, pipeline statistics {}; trace {}, document {}",
            c.mode,
            c.frames,
            if c.queries.timestamps { "on" } else { "off" },
            if c.queries.pipeline_statistics { "on" } else { "off" },
            output.display(),
            crate::config::Config::document_path(&output).display()
        ));
        match FrameCounters::start(c, &zero) {
            None => worker.note("lizard's counters: none asked for (LIZARD_VK_COUNTERS=none)"),
            Some(Ok(counters)) => {
                let names: Vec<&str> = counters.chosen().iter().map(|c| c.name.as_str()).collect();
                let text = format!(
                    "lizard's counters read at each present: {}",
                    names.join(", ")
                );
                worker.note(&text);
                worker.counters = Some(counters);
            }
            Some(Err(e)) => {
                let text = format!(
                    "lizard's counters are off: {}",
                    lizard_core::error_chain(&e)
                );
                eprintln!("{}: {text}", crate::LAYER_NAME);
                worker.note(&text);
            }
        }
        worker
    }

    /// Writes a note; a trace that cannot be written is given up, with the reason on standard error.
    fn note(&mut self, text: &str) {
        let at = clock::monotonic_ns();
        self.with_trace(|t| t.note(at, text));
    }

    fn with_trace(&mut self, f: impl FnOnce(&mut Trace) -> io::Result<()>) {
        if let Some(trace) = self.trace.as_mut() {
            if let Err(e) = f(trace) {
                eprintln!(
                    "{}: writing the trace failed ({e}); it ends here",
                    crate::LAYER_NAME
                );
                self.trace = None;
            }
        }
    }

    /// Handles one message; `false` at the session's end.
    fn handle(&mut self, message: Message) -> bool {
        match message {
            Message::Submission(s) => self.submission(*s),
            Message::Present(p) => self.pending.push_back(Pending::Frame(p)),
            Message::Device(d) => self.device(&d),
            Message::Note(text) => self.note(&text),
            Message::Closing { device, ack } => {
                self.clocks.remove(&device.id);
                let _ = ack.send(());
            }
            Message::Stop => return false,
        }
        true
    }

    /// While the application sends, the worker sleeps a tick between looks and handles everything that
    /// came at once: a message is then only a push onto a list for the application's thread, which never
    /// wakes the worker. When nothing came for a tick, it blocks until something comes (or 200 ms).
    fn run(&mut self, receiver: &Receiver<Message>) {
        let mut flushed = Instant::now();
        let mut quiet = false;
        loop {
            if quiet && self.pending.is_empty() {
                match receiver.recv_timeout(Duration::from_millis(200)) {
                    Ok(message) => {
                        if !self.handle(message) {
                            return;
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            } else {
                std::thread::sleep(TICK);
            }
            let mut came = false;
            loop {
                match receiver.try_recv() {
                    Ok(message) => {
                        came = true;
                        if !self.handle(message) {
                            return;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            quiet = !came;
            self.flush_pending(false);
            for (feature, reason) in boundary::take_reasons() {
                let text = format!("{} turned off: {reason}", feature.name());
                eprintln!("{}: {text}", crate::LAYER_NAME);
                self.note(&text);
            }
            if let Err(e) = self.document.write(false) {
                eprintln!("{}: writing the document failed: {e}", crate::LAYER_NAME);
            }
            // What is buffered goes to the file when nothing came for a tick, and every 20 ms at most
            // otherwise: an application that exits without destroying its instance, or is killed,
            // leaves a trace up to its last work read.
            if quiet || flushed.elapsed() >= Duration::from_millis(20) {
                self.with_trace(|t| t.flush());
                flushed = Instant::now();
            }
        }
    }

    fn finish(mut self) {
        // The engine's last samples (its stop takes one, and drains what its sources hold) close the last
        // frames' windows.
        if let Some(c) = self.counters.as_mut() {
            if let Err(e) = c.stop() {
                self.note(&format!("lizard's capture stopped with an error: {e}"));
            }
        }
        self.flush_pending(true);
        // Work after the last present (or of an application that never presents) counts too.
        let start = self.frame_start.unwrap_or(self.zero.monotonic_ns);
        self.document.settle(None, start);
        for (feature, reason) in boundary::take_reasons() {
            self.note(&format!("{} turned off: {reason}", feature.name()));
        }
        let mut untimed: Vec<(String, u64)> = self.untimed.drain().collect();
        untimed.sort();
        for (reason, n) in untimed {
            self.note(&format!("{n} workload(s) without a time: {reason}"));
        }
        let mut no_value: Vec<(String, u64)> = self.no_value.drain().collect();
        no_value.sort();
        for (reason, n) in no_value {
            self.note(&format!(
                "{n} reading(s) of lizard's counters without a value: {reason}"
            ));
        }
        if self.serialising && self.serialised.1 > 0 {
            let mean = |(sum, n): (u64, u64)| sum as f64 / n.max(1) as f64 / 1e6;
            let text = if self.unserialised.1 > 0 {
                format!(
                    "submit mode: mean frame time {:.3} ms over {} serialised frames, {:.3} ms over {} frames \
                     outside the measured range (not serialised)",
                    mean(self.serialised),
                    self.serialised.1,
                    mean(self.unserialised),
                    self.unserialised.1
                )
            } else {
                format!(
                    "submit mode: mean frame time {:.3} ms over {} serialised frames (every frame was \
                     measured: LIZARD_VK_FRAMES with frames outside it gives the time without)",
                    mean(self.serialised),
                    self.serialised.1
                )
            };
            self.note(&text);
        }
        if let Err(e) = self.document.write(true) {
            eprintln!("{}: writing the document failed: {e}", crate::LAYER_NAME);
        }
        if let Some(trace) = self.trace.take() {
            if let Err(e) = trace.finish() {
                eprintln!("{}: closing the trace failed: {e}", crate::LAYER_NAME);
            }
        }
        drop(self.counters.take());
    }

    fn device(&mut self, device: &Arc<Device>) {
        let info = &device.info;
        let clock = if info.calibrated {
            "workload times: the device's timestamps calibrated to CLOCK_MONOTONIC with \
             VK_EXT_calibrated_timestamps, every second"
        } else {
            "workload times: the device's own clock (no VK_EXT_calibrated_timestamps with CLOCK_MONOTONIC), \
             anchored at the first submission; not aligned with the host's events"
        };
        let description = format!(
            "{}; driver {}; {}; pipeline statistics {}",
            info.name,
            info.driver_name(),
            clock,
            if info.pipeline_statistics {
                "on"
            } else {
                "off"
            }
        );
        self.document.gpu(&info.name);
        self.with_trace(|t| t.device(device, &description));
        self.note(&format!("VkDevice {} ({}): {clock}", device.id, info.name));
        for note in &info.notes {
            self.note(&format!("VkDevice {}: {note}", device.id));
        }
        if self.session.config.mode == Mode::RenderPass {
            match crate::render_pass_mode::refusal(device) {
                Some(why) => {
                    eprintln!("{}: {why}", crate::LAYER_NAME);
                    self.note(&why);
                }
                None => self.note(&crate::render_pass_mode::accepted(device)),
            }
        }
        self.clocks.insert(device.id, DeviceClock::new(device));
    }

    /// Waits (with a deadline) for a submission's fence, reads it, writes it, gives back what it used.
    fn submission(&mut self, s: Submission) {
        let device = Arc::clone(&s.device);
        let signalled = match (s.fence, device.table.wait_for_fences) {
            (Some(fence), Some(wait)) => {
                let started = Instant::now();
                loop {
                    // SAFETY: the layer's fence on a live device (the device waits for the worker before it
                    // is destroyed); a wait of 100 ms at a time.
                    let r = unsafe { wait(device.handle, 1, &fence, vk::TRUE, 100_000_000) };
                    match r {
                        vk::Result::SUCCESS => break true,
                        vk::Result::TIMEOUT
                            if started.elapsed() < FENCE_PATIENCE
                                && !device.closing.load(std::sync::atomic::Ordering::Relaxed) =>
                        {
                            continue
                        }
                        other => {
                            let why = if device.closing.load(std::sync::atomic::Ordering::Relaxed) {
                                "its device is being destroyed with it still pending".to_owned()
                            } else {
                                format!(
                                    "its fence did not signal ({other}) within {} s",
                                    FENCE_PATIENCE.as_secs()
                                )
                            };
                            self.note(&format!(
                                "submission {}: {why}; its results are given up",
                                s.serial
                            ));
                            break false;
                        }
                    }
                }
            }
            _ => false,
        };
        if !signalled {
            return;
        }
        self.frame_start.get_or_insert(s.submitted_ns);
        let reads: Vec<(usize, Vec<Read>)> = s
            .buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (i, results::read(b, s.readback.as_deref())))
            .collect();
        // The results are read: the fence, the copies and the range go back to the queue.
        if let (Some(fence), Some(reset)) = (s.fence, device.table.reset_fences) {
            // SAFETY: the layer's fence, signalled, in use by no one.
            let ok = unsafe { reset(device.handle, 1, &fence) } == vk::Result::SUCCESS;
            s.shared.give_back(&s.post, ok.then_some(fence), s.range);
        }
        let position = queue::position(&device, s.queue);
        let clock = self
            .clocks
            .entry(device.id)
            .or_insert_with(|| DeviceClock::new(&device));
        clock.calibrate(&device);
        let calibrated = clock.calibrated;
        let mut placed = Vec::new();
        for (_, reads) in &reads {
            for read in reads {
                match read.ticks {
                    Some((a, b)) => {
                        let begin = clock.monotonic(a, s.submitted_ns);
                        let end = clock.monotonic(b, s.submitted_ns);
                        placed.push((read, Some((begin, end))));
                    }
                    None => placed.push((read, None)),
                }
            }
        }
        for (read, times) in placed {
            let w = &read.workload;
            let stats: Vec<(&'static str, u64)> = match &read.statistics {
                Some(values) => statistics_names(w.kind)
                    .iter()
                    .map(|(_, n)| *n)
                    .zip(values.iter().copied())
                    .collect(),
                None => Vec::new(),
            };
            let gpu_ns = times.map(|(b, e)| e.saturating_sub(b));
            self.document.workload(
                s.frame,
                w.kind,
                read.labels.last().map(|l| l.as_ref()),
                gpu_ns,
                w.draws,
                &stats,
            );
            match times {
                Some((begin, end)) => {
                    let p = Placed {
                        read,
                        begin,
                        end,
                        frame: s.frame,
                        submission: s.serial,
                        calibrated,
                    };
                    self.with_trace(|t| t.workload(&device, s.queue.as_raw_handle(), position, &p));
                }
                None => {
                    let reason = read
                        .untimed
                        .clone()
                        .unwrap_or_else(|| "no timestamps".to_owned());
                    *self.untimed.entry(reason).or_insert(0) += 1;
                }
            }
        }
        // Serialising modes: each command buffer's window (and in renderpass mode each trapped workload's,
        // from the trap before it), with lizard's counters over it once they reach it.
        for (b, (_, reads)) in s.buffers.iter().zip(&reads) {
            let Some(window) = b.window else { continue };
            self.pending.push_back(Pending::Window {
                device: Arc::clone(&device),
                queue: s.queue.as_raw_handle(),
                position,
                what: Serialised::CommandBuffer(b.recording.command_buffer),
                window,
                waited_ns: b.waited_ns,
            });
            let mut previous = window.0;
            for read in reads.iter().filter(|r| !r.secondary) {
                let Some(at) = read
                    .workload
                    .trap
                    .and_then(|i| b.trap_times.get(i as usize).copied())
                else {
                    continue;
                };
                let name = read
                    .labels
                    .last()
                    .map_or_else(|| read.workload.kind.name().to_owned(), |l| l.to_string());
                self.pending.push_back(Pending::Window {
                    device: Arc::clone(&device),
                    queue: s.queue.as_raw_handle(),
                    position,
                    what: Serialised::Workload {
                        name,
                        kind: read.workload.kind,
                        frame: s.frame,
                    },
                    window: (previous, at),
                    waited_ns: 0,
                });
                previous = at;
            }
        }
    }

    /// Writes what waits for lizard's counters, in order, once the engine's samples reach its end (or
    /// a second after, or at once when `all`): frames, and in `submit` mode command buffers' windows.
    fn flush_pending(&mut self, all: bool) {
        let mut wrote = false;
        while let Some(front) = self.pending.front() {
            let end = front.end();
            let give_up = all || clock::monotonic_ns() > end.saturating_add(PATIENCE_NS);
            if !give_up
                && self
                    .tried
                    .is_some_and(|t| t.elapsed() < Duration::from_millis(10))
            {
                break;
            }
            let start = match front {
                Pending::Frame(_) => self.frame_start.unwrap_or(self.zero.monotonic_ns).min(end),
                Pending::Window { window, .. } => window.0,
            };
            let wants = match front {
                Pending::Frame(p) => p.measured,
                Pending::Window { .. } => true,
            };
            let (chosen, values) = match (wants, self.counters.as_mut()) {
                (true, Some(c)) => match c.read(start, end, give_up) {
                    Some(values) => (c.chosen().to_vec(), values),
                    None => {
                        self.tried = Some(Instant::now());
                        break;
                    }
                },
                _ => (Vec::new(), Vec::new()),
            };
            self.tried = None;
            let Some(item) = self.pending.pop_front() else {
                break;
            };
            for value in &values {
                if let Err(reason) = value {
                    *self.no_value.entry(reason.clone()).or_insert(0) += 1;
                }
            }
            match item {
                Pending::Frame(p) => self.frame(p, start, &chosen, &values),
                Pending::Window {
                    device,
                    queue,
                    position,
                    what,
                    window,
                    waited_ns,
                } => self.with_trace(|t| {
                    t.serialised_window(
                        &device, queue, position, &what, window, waited_ns, &chosen, &values,
                    )
                }),
            }
            wrote = true;
        }
        if wrote || all {
            self.with_trace(|t| t.flush());
        }
    }

    /// Writes frame `p`, from `start`, with lizard's counters over it.
    fn frame(
        &mut self,
        p: Present,
        start: u64,
        chosen: &[lizard_core::Counter],
        values: &[Result<f64, String>],
    ) {
        let end = p.monotonic_ns;
        let cpu = end - start;
        if p.measured {
            self.serialised.0 += cpu;
            self.serialised.1 += 1;
        } else {
            self.unserialised.0 += cpu;
            self.unserialised.1 += 1;
        }
        self.with_trace(|t| t.frame(p.frame, start, end, p.measured, p.waits_ns));
        if p.measured {
            if !chosen.is_empty() {
                self.with_trace(|t| t.frame_counters(chosen, start, values));
            }
            self.document
                .frame(p.frame, start, end, p.waits_ns, chosen, values);
            if let Some(c) = self.counters.as_mut() {
                c.forget_before(start);
            }
        }
        self.frame_start = Some(end);
    }
}

/// Something written once lizard's counters over its window can be read.
enum Pending {
    /// A frame, ended by this present.
    Frame(Present),
    /// A serialised window: a command buffer's (`submit` mode) or a trapped workload's (`renderpass`
    /// mode).
    Window {
        device: Arc<Device>,
        queue: u64,
        position: Option<(u32, u32)>,
        what: Serialised,
        window: (u64, u64),
        waited_ns: u64,
    },
}

impl Pending {
    /// Where its window ends (`CLOCK_MONOTONIC`).
    fn end(&self) -> u64 {
        match self {
            Pending::Frame(p) => p.monotonic_ns,
            Pending::Window { window, .. } => window.1,
        }
    }
}

/// How long after a window's end the worker waits for the engine's samples to reach it.
const PATIENCE_NS: u64 = 1_000_000_000;

/// A queue's handle as a number.
trait RawHandle {
    fn as_raw_handle(&self) -> u64;
}

impl RawHandle for vk::Queue {
    fn as_raw_handle(&self) -> u64 {
        use ash::vk::Handle;
        self.as_raw()
    }
}
