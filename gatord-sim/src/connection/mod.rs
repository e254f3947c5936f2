//! One simulated gatord connection: `gator-proto`'s daemon state machine over a socket, answering the way
//! gatord does, streaming frames during a capture and injecting the configured faults.
//!
//! The parts: [`answers`] (the documents requests get), [`schedule`] (when samples are due),
//! [`frames`] (the bytes of value, SUMMARY and EXTERNAL frames), [`output`] (bytes waiting for the socket
//! and the `live_rate` gate); this module holds the connection's state and its steps.

mod answers;
mod frames;
mod output;
mod schedule;

use std::io::{self, Read};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use gator_proto::daemon::{Config as DaemonConfig, Event, Session, SESSION_IN_PROGRESS};

use super::config::Stream;
use super::documents;
use super::perf::{PerfCounter, PerfLeader, PerfRole, PerfStream};
use super::server::{pause, Shared, Stats};
use super::workload::{synthetic_event_value, synthetic_value};
use output::{LiveRate, Output};
use schedule::Schedule;

/// A capture in progress on this connection.
#[derive(Debug)]
struct Capturing {
    started: Instant,
    /// The polled (BLOCK_COUNTER) samples.
    polled: Schedule,
    /// The perf samples, when they have a schedule of their own (the session's sample rate).
    perf: Option<Schedule>,
    /// When captured frames are held until gatord would commit them (every `live_rate`).
    live: Option<LiveRate>,
}

/// What the connection does after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    Continue,
    Close,
}

struct Conn<'a> {
    stream: TcpStream,
    shared: &'a Shared,
    session: Session,
    /// `(key, name)` bound when the connection started (the saved configuration).
    bound: Vec<(i32, String)>,
    /// Counters configured on this connection: listed in `captured` with key 0, never streamed.
    late: Vec<String>,
    /// `(slot, event code)` of the slots the saved configuration programs (bound slots count these).
    slot_events: Vec<(String, u64)>,
    capturing: Option<Capturing>,
    /// The perf side of the capture, when perf-backed counters are bound.
    perf: Option<PerfStream>,
    /// Indices into `bound` of the perf-backed counters, in the order `perf` knows them.
    perf_bound: Vec<usize>,
    /// APC frames sent on this connection (SUMMARY excluded): the index fault knobs count.
    frames: usize,
    /// Streaming stopped for good (after an oversize header or an ignored APC_STOP).
    silent: bool,
    /// Bytes waiting for the (non-blocking) socket.
    out: Output,
    /// The pace the delivered `<session>` document asked for.
    pace: documents::SessionPace,
}

/// Serves one connection until the client closes, the capture ends or the simulator stops.
pub(crate) fn serve(stream: TcpStream, shared: &Shared, busy: bool) {
    if stream.set_nonblocking(true).is_err() || stream.set_nodelay(true).is_err() {
        return;
    }
    let (bound, slot_events) = {
        let state = shared.state();
        let bound = shared
            .counters
            .iter()
            .enumerate()
            .filter(|(_, name)| state.configuration.contains(name))
            // A counter-set slot counts nothing until an event is programmed into it.
            .filter(|(_, name)| {
                documents::slot_event(&state.slot_events, name).is_some()
                    || !shared.slots.contains(name)
            })
            .map(|(i, name)| (documents::key_for(i), name.clone()))
            .collect();
        (bound, state.slot_events.clone())
    };
    let mut conn = Conn {
        stream,
        shared,
        session: Session::new({
            let mut config = DaemonConfig::default();
            config.protocol_version = shared.config.protocol;
            config
        }),
        bound,
        late: Vec::new(),
        slot_events,
        capturing: None,
        perf: None,
        perf_bound: Vec::new(),
        frames: 0,
        silent: false,
        out: Output::default(),
        pace: documents::SessionPace::default(),
    };
    if !busy {
        // gatord forks a child for the connection and starts its agents before it answers.
        conn.pause(shared.config.timing.handshake);
    }
    conn.run(busy);
    let _ = conn.stream.shutdown(Shutdown::Both);
}

impl Conn<'_> {
    fn run(&mut self, busy: bool) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                return;
            }
            let mut idle = true;
            match self.stream.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    idle = false;
                    if self.session.handle_input(&buf[..n]).is_err() {
                        // gatord reports a broken command stream and closes.
                        let _ = self.session.send_error(b"Target error: invalid command");
                        self.drain();
                        return;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
            let mut next = Next::Continue;
            while let Some(event) = self.session.poll_event() {
                next = if busy {
                    self.busy(event)
                } else {
                    self.handle(event)
                };
                if next == Next::Close {
                    break;
                }
            }
            if next == Next::Continue {
                next = self.stream_due();
            }
            if next == Next::Close {
                self.drain();
                return;
            }
            match self.flush() {
                Ok(wrote) => idle &= !wrote,
                Err(_) => return,
            }
            if idle {
                std::thread::sleep(self.idle_pause());
            }
        }
    }

    /// How long to sleep when nothing happened: until the next synthetic sample or flush is due (at most
    /// 1 ms).
    fn idle_pause(&self) -> Duration {
        let max = Duration::from_millis(1);
        match (&self.capturing, self.silent) {
            (Some(c), false) => {
                let next = [
                    Some(c.polled.next_due),
                    c.perf.as_ref().map(|p| p.next_due),
                    c.live.map(|l| l.next).filter(|_| !self.out.is_empty()),
                ]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(c.polled.next_due);
                next.saturating_duration_since(Instant::now())
                    .clamp(Duration::from_micros(20), max)
            }
            _ => max,
        }
    }

    /// Sleeps for `delay` (a simulated latency), returning early when the simulator stops.
    fn pause(&self, delay: Duration) {
        pause(self.shared, delay);
    }

    /// Moves the state machine's output to the pending bytes and writes as much as the socket takes now
    /// (captured frames wait for the next `live_rate` commit). Returns whether anything was written.
    fn flush(&mut self) -> io::Result<bool> {
        self.out.take_from(&mut self.session);
        let live = self.capturing.as_mut().and_then(|c| c.live.as_mut());
        if !self.out.part_written() && live.is_some_and(|l| l.holding(Instant::now())) {
            return Ok(false);
        }
        self.out.write_to(&mut self.stream)
    }

    /// Before closing: writes everything pending (for up to 2 s, while the client keeps reading).
    fn drain(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && !self.shared.stop.load(Ordering::SeqCst) {
            match self.flush() {
                Ok(_) if self.out.is_empty() => return,
                Ok(_) => std::thread::sleep(Duration::from_micros(200)),
                Err(_) => return,
            }
        }
    }

    /// gatord with another session running: the handshake, then one command answered with an error.
    fn busy(&mut self, event: Event) -> Next {
        match event {
            Event::Connected { .. } => Next::Continue,
            _ => {
                let _ = self.session.send_error_only(SESSION_IN_PROGRESS.as_bytes());
                Stats::bump(&self.shared.stats.busy_rejections);
                Next::Close
            }
        }
    }

    fn handle(&mut self, event: Event) -> Next {
        match event {
            Event::Connected { .. } => {}
            Event::Ping => self.session.send_ack(),
            Event::RequestXml {
                request_type,
                document,
            } => self.request(request_type.as_deref(), &document),
            Event::DeliverXml(document) => self.deliver(&document),
            Event::ApcStart => return self.start(),
            Event::ApcStop => return self.stop(),
            Event::Disconnect | Event::Exit => return Next::Close,
            Event::RequestCurrentConfig => {
                let doc = frames::current_config_document(std::process::id());
                let _ = self.session.send_current_config(doc.as_bytes());
            }
            // A command a later protocol adds: this daemon has nothing to answer.
            _ => {}
        }
        Next::Continue
    }

    fn request(&mut self, kind: Option<&str>, document: &[u8]) {
        let kind = answers::request_kind(self.shared.config.protocol, kind, document);
        self.pause(self.shared.config.timing.xml_reply);
        let _ = match answers::reply(self.shared, kind, &self.bound, &self.late) {
            Some(xml) => self.session.send_xml(xml.as_bytes()),
            None => self.session.send_nak(b"Unknown request"),
        };
    }

    fn deliver(&mut self, document: &[u8]) {
        match documents::delivered(document) {
            Some(documents::Delivered::Configurations { names, events }) => {
                let mut state = self.shared.state();
                state.configuration = names.clone();
                state.slot_events = events;
                drop(state);
                self.late = names;
                Stats::bump(&self.shared.stats.configurations);
                self.session.send_ack();
            }
            Some(documents::Delivered::Session(pace)) => {
                self.pace = pace;
                self.session.send_ack();
            }
            None => {
                let _ = self.session.send_nak(b"");
            }
        }
    }

    fn start(&mut self) -> Next {
        Stats::bump(&self.shared.stats.captures);
        let now = Instant::now();
        let timing = self.shared.config.timing;
        let live = match self.pace.live_rate_ms {
            Some(ms) if timing.live_rate_flush => Some(LiveRate {
                next: now,
                period: Duration::from_millis(u64::from(ms)),
            }),
            _ => None,
        };
        let period = match self.shared.config.stream {
            Stream::Synthetic { period } => period.max(Duration::from_micros(100)),
            _ => Duration::MAX,
        };
        self.capturing = Some(Capturing {
            started: now,
            polled: Schedule::starting(now, period),
            perf: None,
            live,
        });
        match self.shared.config.stream.clone() {
            Stream::Raw(frames) => {
                for frame in frames {
                    if self.send_frame(&frame) == Next::Close {
                        return Next::Close;
                    }
                }
                self.silent = true;
            }
            Stream::Samples(samples) => {
                if self.start_perf(Duration::ZERO) == Next::Close {
                    return Next::Close;
                }
                for sample in samples {
                    let per_counter: Vec<u64> = self
                        .bound
                        .iter()
                        .map(|(_, name)| {
                            sample
                                .values
                                .iter()
                                .find(|(n, _)| n == name)
                                .map_or(0, |(_, v)| *v as u64)
                        })
                        .collect();
                    let frames = self.perf_frames(sample.timestamp_ns, |i, core| {
                        if core == 0 {
                            per_counter.get(i).copied().unwrap_or(0)
                        } else {
                            0
                        }
                    });
                    let block = self.encode_values(
                        sample.timestamp_ns,
                        sample.values.iter().filter_map(|(name, value)| {
                            self.block_bound()
                                .find(|(_, b)| b == name)
                                .map(|&(key, _)| (key, *value))
                        }),
                    );
                    for f in block.into_iter().chain(frames) {
                        if self.send_frame(&f) == Next::Close {
                            return Next::Close;
                        }
                    }
                }
                self.silent = true;
            }
            Stream::Synthetic { period } => {
                let own_rate = match self.pace.sample_hz {
                    Some(hz) if timing.perf_at_sample_rate => {
                        Some(Duration::from_nanos(1_000_000_000 / u64::from(hz.max(1))))
                    }
                    _ => None,
                };
                if self.start_perf(own_rate.unwrap_or(period)) == Next::Close {
                    return Next::Close;
                }
                if let (Some(perf_period), Some(capturing), true) =
                    (own_rate, &mut self.capturing, self.perf.is_some())
                {
                    capturing.perf = Some(Schedule::starting(now + timing.perf_start, perf_period));
                }
            }
        }
        Next::Continue
    }

    /// The bound counters served in BLOCK_COUNTER frames (every bound counter that is not perf-backed).
    fn block_bound(&self) -> impl Iterator<Item = &(i32, String)> {
        self.bound
            .iter()
            .filter(|(_, name)| self.perf_role(name).is_none())
    }

    /// How a perf-backed counter is served: the configured perf counters and every programmed slot are read
    /// in gatord's sampling group, the configured counting-only ones never; `None` for a BLOCK_COUNTER one.
    fn perf_role(&self, name: &str) -> Option<PerfRole> {
        let config = &self.shared.config;
        if config.perf_counters.iter().any(|n| n == name)
            || documents::slot_event(&self.slot_events, name).is_some()
        {
            Some(PerfRole::Sampled)
        } else if config.counting_only_counters.iter().any(|n| n == name) {
            Some(PerfRole::CountingOnly)
        } else {
            None
        }
    }

    /// The synthetic per-core increase of the bound counter at `index` in sample `sample`: a programmed slot
    /// grows by its event's value, any other counter by its position's.
    fn synthetic_increase(&self, index: usize, sample: u64) -> i64 {
        self.bound
            .get(index)
            .and_then(|(_, name)| documents::slot_event(&self.slot_events, name))
            .map_or_else(
                || synthetic_value(index, sample),
                |code| synthetic_event_value(code, sample),
            )
    }

    /// Sends the SUMMARY, preceded (when perf-backed counters are bound) by the PERF_ATTRS attributes and
    /// followed by the perf id map, as gatord does.
    fn start_perf(&mut self, period: Duration) -> Next {
        let mut counters = Vec::new();
        let mut indices = Vec::new();
        for (i, (key, name)) in self.bound.iter().enumerate() {
            let Some(role) = self.perf_role(name) else {
                continue;
            };
            let config = documents::slot_event(&self.slot_events, name)
                .or_else(|| documents::slot_event(&self.shared.fixed_events, name))
                .unwrap_or(0);
            counters.push(PerfCounter {
                key: *key,
                role,
                config,
            });
            indices.push(i);
        }
        let config = &self.shared.config;
        if counters.is_empty() {
            self.send_summary();
            return Next::Continue;
        }
        let clock_base = self.clock_base_ns();
        let perf = PerfStream::new(config.cores, counters, config.perf_leader, clock_base);
        let period_ns = u64::try_from(period.as_nanos()).unwrap_or(u64::MAX).max(1);
        if self.send_frame(&perf.attrs_frame(period_ns)) == Next::Close {
            return Next::Close;
        }
        if let PerfLeader::SchedSwitch { .. } = config.perf_leader {
            // gatord's ftrace reader announces itself on its pipe.
            if self.send_frame(&frames::ftrace_frame()) == Next::Close {
                return Next::Close;
            }
        }
        self.send_summary_at(clock_base);
        let keys = perf.keys_frame();
        self.perf = Some(perf);
        self.perf_bound = indices;
        self.send_frame(&keys)
    }

    /// The PERF_DATA frames of one sample at `timestamp_ns`: each perf-backed counter (by its index in
    /// `bound`) grows on each core by `increase(index, core)`. None when no perf-backed counter is bound.
    fn perf_frames(
        &mut self,
        timestamp_ns: i64,
        increase: impl Fn(usize, u32) -> u64,
    ) -> Vec<Vec<u8>> {
        let indices = &self.perf_bound;
        match &mut self.perf {
            Some(perf) => perf.sample_frames(
                timestamp_ns,
                u64::try_from(timestamp_ns).unwrap_or(0),
                |i, core| indices.get(i).map_or(0, |&b| increase(b, core)),
            ),
            None => Vec::new(),
        }
    }

    fn stop(&mut self) -> Next {
        if self.capturing.is_none() {
            // APC_STOP before a start: the gatord child exits quietly.
            return Next::Close;
        }
        // gatord stops its sources and drains its buffers before the end marker: every sample due by now is
        // sent, even where this thread had no time to send it on schedule (a loaded machine).
        if self.stream_due() == Next::Close {
            return Next::Close;
        }
        self.capturing = None;
        self.pause(self.shared.config.timing.stop);
        if self.shared.config.faults.no_end_marker {
            self.silent = true;
            return Next::Continue;
        }
        self.session.send_end_of_capture();
        Stats::bump(&self.shared.stats.end_markers);
        Next::Close
    }

    /// The simulated CLOCK_MONOTONIC_RAW: nanoseconds since the simulator started.
    fn clock_base_ns(&self) -> i64 {
        i64::try_from(self.shared.started.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    fn send_summary(&mut self) {
        let now = self.clock_base_ns();
        self.send_summary_at(now);
    }

    fn send_summary_at(&mut self, uptime: i64) {
        let frame = frames::summary_frame(self.shared.config.protocol, uptime);
        if self.session.send_apc_frame(&frame).is_ok() {
            Stats::bump(&self.shared.stats.frames);
        }
    }

    /// The frames carrying `values` at `timestamp_ns`, as the configuration says they travel.
    fn encode_values(
        &self,
        timestamp_ns: i64,
        values: impl Iterator<Item = (i32, i64)>,
    ) -> Vec<Vec<u8>> {
        frames::value_frames(self.shared.config.counter_frames, timestamp_ns, values)
    }

    /// Sends one APC frame, applying the fault knobs for its index.
    fn send_frame(&mut self, frame: &[u8]) -> Next {
        let index = self.frames;
        self.frames += 1;
        let faults = &self.shared.config.faults;
        if faults.die_after_frames == Some(index) {
            return Next::Close;
        }
        if let Some((_, text)) = faults
            .error_after_frames
            .as_ref()
            .filter(|(after, _)| *after == index)
        {
            // Sent even if the session state refuses it: the error closes the capture either way.
            let _ = self.session.send_error(text.as_bytes());
            return Next::Close;
        }
        if faults.oversize_length_at == Some(index) {
            self.out.take_from(&mut self.session);
            self.out.push_raw(&[0x03, 0xf0, 0xff, 0xff, 0xff]);
            self.silent = true;
            return Next::Continue;
        }
        let sent = if faults.malformed_frame_at == Some(index) {
            // A BLOCK_COUNTER whose last value has a continuation bit and no end.
            self.session
                .send_apc_frame(&[0x05, 0x00, 0x00, 0x01, 0x08, 0x80])
        } else {
            self.session.send_apc_frame(frame)
        };
        if sent.is_ok() {
            Stats::bump(&self.shared.stats.frames);
        }
        Next::Continue
    }

    /// Synthetic stream: sends every sample that is due, each stamped with its due time (socket timeouts are
    /// rounded up to the kernel tick, so several samples may be due at once). Perf samples follow their own
    /// schedule when they have one (the session's sample rate), else they ride with the polled samples.
    fn stream_due(&mut self) -> Next {
        let Stream::Synthetic { .. } = self.shared.config.stream else {
            return Next::Continue;
        };
        if self.perf_due() == Next::Close {
            return Next::Close;
        }
        loop {
            if self.silent {
                return Next::Continue;
            }
            let Some(capturing) = &mut self.capturing else {
                return Next::Continue;
            };
            let Some((due, sample)) = capturing.polled.take_due(Instant::now()) else {
                return Next::Continue;
            };
            let perf_rides_along = capturing.perf.is_none()
                && due >= capturing.started + self.shared.config.timing.perf_start;
            let timestamp =
                i64::try_from(due.duration_since(capturing.started).as_nanos()).unwrap_or(i64::MAX);
            let values: Vec<(i32, i64)> = self
                .bound
                .iter()
                .enumerate()
                .filter(|(_, (_, name))| self.perf_role(name).is_none())
                .map(|(i, &(key, _))| (key, synthetic_value(i, sample)))
                .collect();
            let mut frames = if values.is_empty() && self.perf.is_some() {
                Vec::new()
            } else {
                self.encode_values(timestamp, values.into_iter())
            };
            if perf_rides_along {
                frames.extend(self.perf_increase_frames(timestamp, sample));
            }
            for frame in frames {
                if self.send_frame(&frame) == Next::Close {
                    return Next::Close;
                }
            }
        }
    }

    /// The PERF_DATA frames of perf sample number `sample` at `timestamp_ns`: each perf-backed counter grows
    /// by its synthetic increase.
    fn perf_increase_frames(&mut self, timestamp_ns: i64, sample: u64) -> Vec<Vec<u8>> {
        let increases: Vec<u64> = (0..self.bound.len())
            .map(|i| u64::try_from(self.synthetic_increase(i, sample)).unwrap_or(0))
            .collect();
        self.perf_frames(timestamp_ns, |i, _| increases.get(i).copied().unwrap_or(0))
    }

    /// Sends every perf sample due on the perf schedule of its own, if there is one.
    fn perf_due(&mut self) -> Next {
        loop {
            if self.silent {
                return Next::Continue;
            }
            let Some(capturing) = &mut self.capturing else {
                return Next::Continue;
            };
            let started = capturing.started;
            let Some(schedule) = &mut capturing.perf else {
                return Next::Continue;
            };
            let Some((due, sample)) = schedule.take_due(Instant::now()) else {
                return Next::Continue;
            };
            let timestamp =
                i64::try_from(due.duration_since(started).as_nanos()).unwrap_or(i64::MAX);
            let frames = self.perf_increase_frames(timestamp, sample);
            for frame in frames {
                if self.send_frame(&frame) == Next::Close {
                    return Next::Close;
                }
            }
        }
    }
}
