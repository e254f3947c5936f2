//! The shape of a gatord capture stream, to hold the simulator to the real daemon: which frame types come
//! and in what order, which counter gets a key and where its values travel, the perf attributes gatord
//! announces, and the timing classes (sample periods, how often data reaches the socket, how late perf data
//! starts). Rendered as lines; two streams of the same configuration must render the same `held` lines.
//! The `noted` lines (what the simulator leaves out on purpose) are printed, not compared.

use std::collections::BTreeMap;
use std::time::Duration;

use gator_proto::apc::{
    Frame, PerfAttrsMessage, PerfCounterTracker, PerfEventAttr, PerfFrames, Record,
};
use gator_proto::client::{Config, Event, Session};
use gator_proto::{daemon, ProtocolVersion};
use gator_xml::Captured;

use super::proxy::Connection;

/// A stream's profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Lines two streams of one configuration must share.
    pub held: Vec<String>,
    /// Lines shown for information.
    pub noted: Vec<String>,
}

/// A client session that has sent the recorded commands `c2s` (read back with the daemon's side of the
/// protocol), ready to take the daemon's answers.
fn replayed_client(c2s: &[u8]) -> Result<Session, String> {
    let mut server = daemon::Session::new(daemon::Config::default());
    server
        .handle_input(c2s)
        .map_err(|e| format!("the client's commands do not decode: {e}"))?;
    let mut session = Session::new(Config::default());
    while let Some(event) = server.poll_event() {
        let sent = match event {
            daemon::Event::Ping => session.ping(),
            daemon::Event::RequestXml {
                request_type: Some(kind),
                ..
            } => session.request_xml(&kind),
            daemon::Event::DeliverXml(document) => session.deliver_xml(&document),
            daemon::Event::RequestCurrentConfig => session.request_current_config(),
            daemon::Event::ApcStart => session.start_capture(),
            daemon::Event::ApcStop => session.stop_capture(),
            _ => Ok(()),
        };
        sent.map_err(|e| format!("replaying the client's commands: {e}"))?;
    }
    let mut sent = Vec::new();
    let _ = session.poll_transmit(&mut sent);
    Ok(session)
}

/// A frame with the moment its last byte arrived.
struct Arrived {
    at: Duration,
    frame: Vec<u8>,
}

/// Splits the daemon's bytes into responses, stamping each APC frame with the arrival of its last byte.
fn frames(
    conn: &Connection,
) -> Result<(ProtocolVersion, Option<String>, Vec<Arrived>, bool), String> {
    let mut session = replayed_client(&conn.to_daemon)?;
    let mut out = Vec::new();
    let mut captured = None;
    let mut ended = false;
    let mut offset = 0;
    let mut take = |session: &mut Session, at: Duration| {
        while let Some(event) = session.poll_event() {
            match event {
                Event::ApcFrame(frame) => out.push(Arrived {
                    at,
                    frame: frame.as_bytes().to_vec(),
                }),
                Event::Xml { document, .. } => {
                    captured = Some(String::from_utf8_lossy(&document).into_owned())
                }
                Event::EndOfCapture => ended = true,
                _ => {}
            }
        }
    };
    for &(at, len) in &conn.arrivals {
        let chunk = conn
            .from_daemon
            .get(offset..offset + len)
            .ok_or("arrivals beyond the recorded bytes")?;
        offset += len;
        session
            .handle_input(chunk)
            .map_err(|e| format!("the stream does not decode: {e}"))?;
        take(&mut session, at);
    }
    let _ = session.handle_eof();
    let last = conn.arrivals.last().map_or(Duration::ZERO, |a| a.0);
    take(&mut session, last);
    let version = session
        .protocol_version()
        .ok_or("no handshake in the stream")?;
    Ok((version, captured, out, ended))
}

fn kind_name(frame: &Frame<'_>) -> &'static str {
    match frame {
        Frame::Summary(_) => "SUMMARY",
        Frame::Name(_) => "NAME",
        Frame::Counter(_) => "COUNTER",
        Frame::BlockCounter(_) => "BLOCK_COUNTER",
        Frame::External(_) => "EXTERNAL",
        Frame::PerfAttrs(_) => "PERF_ATTRS",
        Frame::PerfData(_) => "PERF_DATA",
        Frame::PerfAux(_) => "PERF_AUX",
        _ => "other",
    }
}

fn message_name(message: &PerfAttrsMessage<'_>) -> &'static str {
    match message {
        PerfAttrsMessage::Pea { .. } => "PEA",
        PerfAttrsMessage::Keys(_) => "KEYS",
        PerfAttrsMessage::Format(_) => "FORMAT",
        PerfAttrsMessage::Maps { .. } => "MAPS",
        PerfAttrsMessage::Comm { .. } => "COMM",
        PerfAttrsMessage::OnlineCpu { .. } => "ONLINE_CPU",
        PerfAttrsMessage::OfflineCpu { .. } => "OFFLINE_CPU",
        PerfAttrsMessage::Kallsyms(_) => "KALLSYMS",
        PerfAttrsMessage::Counters(_) => "COUNTERS",
        PerfAttrsMessage::HeaderPage(_) => "HEADER_PAGE",
        PerfAttrsMessage::HeaderEvent(_) => "HEADER_EVENT",
        PerfAttrsMessage::KernelBuildId(_) => "KERNEL_BUILD_ID",
        _ => "other",
    }
}

/// A duration's order of magnitude: the power of ten nearest to it (on a log scale), as text.
pub fn class(d: Duration) -> String {
    let ns = d.as_nanos().max(1) as f64;
    let exponent = ns.log10().round() as i32;
    match exponent {
        i32::MIN..=3 => "≤ 1 µs".into(),
        4 => "10 µs".into(),
        5 => "100 µs".into(),
        6 => "1 ms".into(),
        7 => "10 ms".into(),
        8 => "100 ms".into(),
        9 => "1 s".into(),
        _ => "≥ 10 s".into(),
    }
}

fn median(values: Vec<Duration>) -> Option<Duration> {
    quantile(values, 0.5)
}

/// The value `q` of the way up the sorted `values` (0.5 the median).
fn quantile(mut values: Vec<Duration>, q: f64) -> Option<Duration> {
    values.sort_unstable();
    let last = values.len().checked_sub(1)?;
    values.get((last as f64 * q).round() as usize).copied()
}

/// The gaps between consecutive values.
fn gaps(times: &[Duration]) -> Vec<Duration> {
    times
        .windows(2)
        .map(|w| w[1].saturating_sub(w[0]))
        .collect()
}

/// How a perf event is set up, as the profile shows it.
fn attr_line(attr: &PerfEventAttr) -> String {
    let role = if attr.samples() {
        "samples"
    } else if attr.reaches_perf_data() {
        "read in the group's samples"
    } else {
        "counting only"
    };
    format!(
        "type {} config {:#x} size {} period {} sample_type {:#x} read_format {:#x} flags {:#x} clockid {}: {role}",
        attr.kind,
        attr.config,
        attr.size,
        attr.sample_period_or_freq,
        attr.sample_type.0,
        attr.read_format.0,
        attr.flags,
        attr.clockid
    )
}

impl Profile {
    /// The profile of the capture connection `conn` (the one that sent APC_START).
    pub fn of(conn: &Connection) -> Result<Profile, String> {
        let (version, captured, arrived, ended) = frames(conn)?;
        let captured = captured.ok_or("no captured document on the capture connection")?;
        let captured = Captured::parse(&captured).map_err(|e| format!("captured: {e}"))?;
        let mut held = vec![format!("protocol {}", version.0)];
        let mut noted = Vec::new();

        let mut kinds: Vec<&str> = Vec::new();
        let mut messages: Vec<&str> = Vec::new();
        let mut attrs: BTreeMap<i32, PerfEventAttr> = BTreeMap::new();
        let mut ids: BTreeMap<i32, usize> = BTreeMap::new();
        let mut block_keys: BTreeMap<i32, Vec<Duration>> = BTreeMap::new();
        let mut perf_times: BTreeMap<i32, Vec<Duration>> = BTreeMap::new();
        let mut perf_keys: BTreeMap<i32, usize> = BTreeMap::new();
        let mut block_arrivals = Vec::new();
        let mut perf_arrivals = Vec::new();
        let mut tracker = PerfCounterTracker::new();
        let mut first_frame_at = None;
        for Arrived { at, frame } in &arrived {
            let frame = Frame::parse(frame, version).map_err(|e| format!("a frame: {e}"))?;
            first_frame_at.get_or_insert(*at);
            let kind = kind_name(&frame);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            match &frame {
                Frame::PerfAttrs(frame) => {
                    for message in frame.messages() {
                        let name = message_name(&message);
                        if !messages.contains(&name) {
                            messages.push(name);
                        }
                        match message {
                            PerfAttrsMessage::Pea { attr, key } => {
                                if let Ok(attr) = PerfEventAttr::parse(attr) {
                                    attrs.insert(key, attr);
                                }
                            }
                            PerfAttrsMessage::Keys(map) => {
                                for (_, key) in map.iter() {
                                    *ids.entry(key).or_default() += 1;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                Frame::BlockCounter(block) => {
                    if block_arrivals.last() != Some(at) {
                        block_arrivals.push(*at);
                    }
                    let mut time = 0i64;
                    for record in block.records() {
                        match record.map_err(|e| format!("a BLOCK_COUNTER record: {e}"))? {
                            Record::Timestamp(ns) => time = ns,
                            Record::Value { key, .. } => block_keys
                                .entry(key)
                                .or_default()
                                .push(Duration::from_nanos(time.max(0) as u64)),
                            _ => {}
                        }
                    }
                }
                Frame::PerfData(_) if perf_arrivals.last() != Some(at) => perf_arrivals.push(*at),
                _ => {}
            }
            let mut samples = Vec::new();
            let _ = tracker.handle_frame(&frame, &mut samples);
            for sample in samples {
                *perf_keys.entry(sample.key).or_default() += 1;
                let times = perf_times.entry(sample.core).or_default();
                let time = Duration::from_nanos(sample.time_ns.max(0) as u64);
                if times.last() != Some(&time) {
                    times.push(time);
                }
            }
        }
        held.push(format!(
            "frame types, first seen in this order: {}",
            kinds.join(" ")
        ));
        held.push(format!(
            "capture end: {}",
            if ended {
                "the zero-length end marker"
            } else {
                "no end marker"
            }
        ));
        noted.push(format!("PERF_ATTRS messages: {}", messages.join(" ")));

        // Counters: their key and where their values travel.
        let mut counter_keys = Vec::new();
        for counter in &captured.counters {
            let key = i32::try_from(counter.key).unwrap_or(-1);
            counter_keys.push(key);
            let name = match counter.event {
                Some(event) => format!("{} (event {event:#x})", counter.counter),
                None => counter.counter.clone(),
            };
            let route = if block_keys.contains_key(&key) {
                "values in BLOCK_COUNTER frames".to_owned()
            } else if perf_keys.contains_key(&key) {
                "values in PERF_DATA samples".to_owned()
            } else {
                "no values".to_owned()
            };
            let perf = match attrs.get(&key) {
                Some(attr) => format!(
                    "; perf event {}, ids on {} CPU(s)",
                    attr_line(attr),
                    ids.get(&key).copied().unwrap_or(0)
                ),
                None => String::new(),
            };
            held.push(format!("counter {name}: {route}{perf}"));
        }
        // The perf events gatord adds itself (its sampling group's leader and clock).
        for (key, attr) in &attrs {
            if !counter_keys.contains(key) {
                held.push(format!(
                    "perf event of gatord's own: {}, ids on {} CPU(s)",
                    attr_line(attr),
                    ids.get(key).copied().unwrap_or(0)
                ));
            }
        }

        // Timing classes.
        let block_period = median(block_keys.values().flat_map(|times| gaps(times)).collect());
        // Samples come every period of gatord's clock and at every context switch besides (its group
        // leader samples too): nine gaps in ten are within the clock's period.
        let perf_period = quantile(perf_times.values().flat_map(|t| gaps(t)).collect(), 0.9);
        let line = |what: &str, d: Option<Duration>| match d {
            Some(d) => format!("{what}: {}", class(d)),
            None => format!("{what}: none"),
        };
        held.push(line("BLOCK_COUNTER sample period", block_period));
        held.push(line("perf samples: nine gaps in ten within", perf_period));
        held.push(line(
            "BLOCK_COUNTER frames reach the socket every",
            median(gaps(&block_arrivals)),
        ));
        held.push(line(
            "PERF_DATA frames reach the socket every",
            median(gaps(&perf_arrivals)),
        ));
        let start = match (block_arrivals.first(), perf_arrivals.first()) {
            (Some(block), Some(perf)) if perf >= block => format!(
                "the first PERF_DATA frame comes after the first BLOCK_COUNTER frame by: {}",
                class(*perf - *block)
            ),
            (Some(_), Some(_)) => {
                "the first PERF_DATA frame comes before the first BLOCK_COUNTER frame".into()
            }
            _ => "PERF_DATA and BLOCK_COUNTER frames do not both come".into(),
        };
        held.push(start);
        noted.push(format!(
            "{} frames, {} bytes; BLOCK_COUNTER frames in {} reads, PERF_DATA frames in {} reads, {} perf samples; perf lost records {}",
            arrived.len(),
            conn.from_daemon.len(),
            block_arrivals.len(),
            perf_arrivals.len(),
            tracker.sample_records(),
            tracker.lost_records()
        ));
        if let (Some(first), Some(last)) = (first_frame_at, arrived.last().map(|a| a.at)) {
            noted.push(format!(
                "frames arrived over {:?} from the first",
                last.saturating_sub(first)
            ));
        }
        Ok(Profile { held, noted })
    }

    /// The held lines as text, one a line.
    pub fn render(&self) -> String {
        let mut text = self.held.join("\n");
        text.push('\n');
        text
    }

    /// The lines of `self` and `other` that differ, marked `-` (only in `self`) and `+` (only in
    /// `other`); empty when the held lines agree.
    pub fn differences(&self, other: &Profile) -> Vec<String> {
        let mut out = Vec::new();
        for line in &self.held {
            if !other.held.contains(line) {
                out.push(format!("- {line}"));
            }
        }
        for line in &other.held {
            if !self.held.contains(line) {
                out.push(format!("+ {line}"));
            }
        }
        out
    }
}

/// The held lines of a profile written by [`Profile::render`], without `#` comments and blank lines.
pub fn held_lines(text: &str) -> Profile {
    Profile {
        held: text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_owned)
            .collect(),
        noted: Vec::new(),
    }
}
