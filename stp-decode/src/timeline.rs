//! A report's timeline as a Perfetto trace (feature `perfetto`), written with perfetto-writer as the
//! report's events come: memory does not grow with the trace.
//!
//! Tracks: one per master (named by the device: `DSP3`, `Arm0`, `CPT 0x8c`), and under it one per channel
//! (with its dictionary name), one per span, and for a hardware master its CP Tracer words. Messages are
//! instants on their channel's track named by their decoded text (an undecodable one `raw (reason)`, with
//! its bytes); torn data is an instant there too; spans are slices; losses (unsynchronised ranges,
//! decode and frame errors, MERR, GERR) are instants on a `stream` track; CP Tracer throughput per window
//! is a counter track in MB/s. Times are the report's (nanoseconds from the first timestamp, or ticks
//! without a clock), on the trace's clock from its start.
//!
//! ```
//! use stp_decode::dict::Dictionary;
//! use stp_decode::dump::Framing;
//! use stp_decode::keystone::{Device, Masters};
//! use stp_decode::message::NoImages;
//! use stp_decode::report::{Report, ReportConfig};
//! use stp_decode::timeline::PerfettoTimeline;
//! let dict = Dictionary::new();
//! let masters = Masters::for_device(Device::K2h);
//! let mut trace = PerfettoTimeline::new(Vec::new(), masters, &dict, "K2H system trace")?;
//! let mut config = ReportConfig::new(Framing::Raw, 0);
//! config.masters = masters;
//! let mut report = Report::new(config, &NoImages, &dict);
//! report.feed(&[0xFF; 64], &mut trace)?;
//! let stats = report.finish(&mut trace)?;
//! let bytes = trace.finish()?;
//! assert_eq!(stats.stream.nibbles_before_first_sync, 128);
//! assert!(bytes.len() > 20);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::string::{String, ToString};
use std::vec::Vec;
use std::{format, vec};

use perfetto_writer::{
    Arg, ArgId, CategoryId, Clock, CounterTrack, CounterValue, Name, NameId, TraceWriter, TrackId,
    Unit,
};

use crate::cptracer::Layout;
use crate::dict::Dictionary;
use crate::keystone::Masters;
use crate::message::MessageKind;
use crate::report::{Loss, ReportEvent, ReportSink};
use crate::stmlib::Protocol;

/// The longest instant name written, in bytes; longer texts are cut at a character boundary.
const MAX_NAME: usize = 512;

/// Slots of the channel track cache, indexed by master and channel.
const CHANNEL_SLOTS: usize = 128;

/// A protocol's slot among a message's categories (`PerfettoTimeline::message_categories`).
fn protocol_slot(protocol: Protocol) -> usize {
    match protocol {
        Protocol::Printf => 0,
        Protocol::PutMsg => 1,
        Protocol::PutBuf => 2,
        Protocol::Internal => 3,
        Protocol::PrintfStrings => 4,
        Protocol::Other(_) => 5,
    }
}

/// The interned names of the events' arguments.
#[derive(Debug, Clone, Copy)]
struct ArgNames {
    master: ArgId,
    channel: ArgId,
    packets: ArgId,
    bytes: ArgId,
    timestamp: ArgId,
    protocol: ArgId,
    reason: ArgId,
    raw: ArgId,
    duration: ArgId,
    value: ArgId,
}

impl ArgNames {
    fn new<W: Write>(trace: &mut TraceWriter<W>) -> Self {
        ArgNames {
            master: trace.intern_arg("master"),
            channel: trace.intern_arg("channel"),
            packets: trace.intern_arg("packets"),
            bytes: trace.intern_arg("bytes"),
            timestamp: trace.intern_arg("timestamp"),
            protocol: trace.intern_arg("protocol"),
            reason: trace.intern_arg("reason"),
            raw: trace.intern_arg("raw"),
            duration: trace.intern_arg("duration"),
            value: trace.intern_arg("value"),
        }
    }
}

/// Writes a report's events as a Perfetto trace; see the module documentation.
#[derive(Debug)]
pub struct PerfettoTimeline<'d, W: Write> {
    trace: TraceWriter<W>,
    masters: Masters,
    dict: &'d Dictionary,
    layout: Option<Layout>,
    top: TrackId,
    stream: Option<TrackId>,
    throughput: Option<TrackId>,
    master_tracks: BTreeMap<u16, TrackId>,
    channel_tracks: BTreeMap<(u16, u16), TrackId>,
    span_tracks: BTreeMap<(usize, u16), TrackId>,
    cptracer_tracks: BTreeMap<u16, TrackId>,
    /// The track of a recent `(master, channel)`, in the slot of its low bits: `(master << 16 | channel,
    /// track)`, `u32::MAX` when empty (no channel 0xffff of master 0xffff is cached).
    channel_cache: [(u32, TrackId); CHANNEL_SLOTS],
    /// Each span's name, once interned.
    span_names: Vec<Option<NameId>>,
    /// The categories interned so far (a handful: protocols, `values`, `span`, …).
    categories: Vec<(&'static str, CategoryId)>,
    /// A message's category by [`protocol_slot`], 6 for values, 7 for undecodable.
    message_categories: [Option<CategoryId>; 8],
    args: ArgNames,
    /// A CP Tracer layout's field names, interned.
    layout_args: Vec<ArgId>,
    name: String,
    protocol: String,
}

impl<'d, W: Write> PerfettoTimeline<'d, W> {
    /// Starts a trace on `out` whose top track is `title`; `masters` names the masters, `dict` the channels.
    pub fn new(out: W, masters: Masters, dict: &'d Dictionary, title: &str) -> io::Result<Self> {
        let mut trace = TraceWriter::new(out, Clock::CaptureStart)?;
        let top = trace.group_described(
            title,
            "STM system trace: a track per master, per channel under it; times from the first timestamp",
            None,
        )?;
        let args = ArgNames::new(&mut trace);
        Ok(PerfettoTimeline {
            trace,
            masters,
            dict,
            layout: None,
            top,
            stream: None,
            throughput: None,
            master_tracks: BTreeMap::new(),
            channel_tracks: BTreeMap::new(),
            span_tracks: BTreeMap::new(),
            cptracer_tracks: BTreeMap::new(),
            channel_cache: [(u32::MAX, top); CHANNEL_SLOTS],
            span_names: Vec::new(),
            categories: Vec::new(),
            message_categories: [None; 8],
            args,
            layout_args: Vec::new(),
            name: String::new(),
            protocol: String::new(),
        })
    }

    /// CP Tracer words are shown with the fields of `layout`.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout_args = layout
            .fields()
            .iter()
            .map(|f| self.trace.intern_arg(&f.name))
            .collect();
        self.layout = Some(layout);
        self
    }

    /// Flushes the trace and returns the output.
    pub fn finish(self) -> io::Result<W> {
        self.trace.finish()
    }

    fn master(&mut self, master: u16) -> io::Result<TrackId> {
        if let Some(&t) = self.master_tracks.get(&master) {
            return Ok(t);
        }
        let name = self.masters.name(master).to_string();
        let description = format!("STP master {master} (0x{master:02x})");
        let t = self
            .trace
            .group_described(&name, &description, Some(self.top))?;
        self.master_tracks.insert(master, t);
        Ok(t)
    }

    /// The track of `channel` of `master`: from the cache, else the map, else a new track.
    #[inline]
    fn channel(&mut self, master: u16, channel: u16) -> io::Result<TrackId> {
        let key = u32::from(master) << 16 | u32::from(channel);
        let slot = (usize::from(channel) ^ usize::from(master) << 3) % CHANNEL_SLOTS;
        let (cached, track) = self.channel_cache[slot];
        if cached == key {
            return Ok(track);
        }
        let track = self.channel_track(master, channel)?;
        self.channel_cache[slot] = (key, track);
        Ok(track)
    }

    fn channel_track(&mut self, master: u16, channel: u16) -> io::Result<TrackId> {
        if let Some(&t) = self.channel_tracks.get(&(master, channel)) {
            return Ok(t);
        }
        let parent = self.master(master)?;
        let name = match self.dict.channel_name(master, channel) {
            Some(n) => format!("channel {channel} ({n})"),
            None => format!("channel {channel}"),
        };
        let t = self.trace.group(&name, Some(parent))?;
        self.channel_tracks.insert((master, channel), t);
        Ok(t)
    }

    fn stream(&mut self) -> io::Result<TrackId> {
        if let Some(t) = self.stream {
            return Ok(t);
        }
        let t = self.trace.group_described(
            "stream",
            "where trace was lost: unsynchronised ranges, decode and frame errors, MERR, GERR",
            Some(self.top),
        )?;
        self.stream = Some(t);
        Ok(t)
    }

    /// `category` interned, once.
    #[inline]
    fn category(&mut self, category: &'static str) -> CategoryId {
        if let Some(&(_, id)) = self.categories.iter().find(|(c, _)| *c == category) {
            return id;
        }
        let id = self.trace.intern_category(category);
        self.categories.push((category, id));
        id
    }

    /// `text` cut to [`MAX_NAME`] bytes at a character boundary, into `self.name`.
    fn set_name(&mut self, text: &str) {
        self.name.clear();
        let mut end = text.len().min(MAX_NAME);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        self.name.push_str(&text[..end]);
        if end < text.len() {
            self.name.push('…');
        }
        if self.name.is_empty() {
            self.name.push_str("(empty)");
        }
    }
}

impl<W: Write> ReportSink for PerfettoTimeline<'_, W> {
    type Error = io::Error;

    fn event(&mut self, event: &ReportEvent<'_>) -> io::Result<()> {
        match *event {
            ReportEvent::Message { time, message } => {
                let track = self.channel(message.master, message.channel)?;
                let (category, slot, reason) = match message.kind {
                    MessageKind::Stmlib { protocol } => {
                        (protocol.name(), protocol_slot(protocol), None)
                    }
                    MessageKind::Values => ("values", 6, None),
                    MessageKind::Undecodable { reason, .. } => ("undecodable", 7, Some(reason)),
                };
                let category = match self.message_categories[slot] {
                    Some(id) => id,
                    None => {
                        let id = self.category(category);
                        self.message_categories[slot] = Some(id);
                        id
                    }
                };
                // The text is the name as it is, unless it is empty or too long or undecodable.
                let text_is_name =
                    reason.is_none() && !message.text.is_empty() && message.text.len() <= MAX_NAME;
                match reason {
                    Some(reason) => {
                        self.name.clear();
                        let _ = write!(self.name, "raw ({reason})");
                    }
                    None if text_is_name => {}
                    None => self.set_name(message.text),
                }
                let protocol = match message.kind.protocol() {
                    None => None,
                    Some(p @ Protocol::Other(_)) => {
                        self.protocol.clear();
                        let _ = write!(self.protocol, "{p}");
                        Some(self.protocol.as_str())
                    }
                    Some(p) => Some(p.name()),
                };
                let reason = reason.map(|r| r.to_string());
                let a = self.args;
                let mut args: [(ArgId, Arg<'_>); 8] = [
                    (a.master, Arg::Uint(message.master.into())),
                    (a.channel, Arg::Uint(message.channel.into())),
                    (a.packets, Arg::Uint(message.packets.into())),
                    (a.bytes, Arg::Uint(message.bytes.len() as u64)),
                    (a.timestamp, Arg::Uint(message.timestamp.unwrap_or(0))),
                    (a.protocol, Arg::Str("")),
                    (a.reason, Arg::Str("")),
                    (a.raw, Arg::Str("")),
                ];
                let mut n = 4 + usize::from(message.timestamp.is_some());
                if let Some(p) = protocol {
                    args[n] = (a.protocol, Arg::Str(p));
                    n += 1;
                }
                if let Some(r) = &reason {
                    args[n] = (a.reason, Arg::Str(r));
                    n += 1;
                    args[n] = (a.raw, Arg::Str(message.text));
                    n += 1;
                }
                let name = if text_is_name {
                    Name::Text(message.text)
                } else {
                    Name::Text(&self.name)
                };
                self.trace
                    .instant(track, time, name, Some(category), &args[..n])
            }
            ReportEvent::Torn { time, torn } => {
                let track = self.channel(torn.master, torn.channel)?;
                let category = self.category("torn");
                let name = format!("torn: {}", torn.cause.name());
                self.trace.instant(
                    track,
                    time,
                    Name::Text(&name),
                    Some(category),
                    &[
                        (self.args.packets, Arg::Uint(torn.packets.into())),
                        (self.args.bytes, Arg::Uint(torn.bytes)),
                    ],
                )
            }
            ReportEvent::Span {
                span,
                name,
                master,
                begin,
                end,
            } => {
                let track = match self.span_tracks.get(&(span, master)) {
                    Some(&t) => t,
                    None => {
                        let parent = self.master(master)?;
                        let t = self.trace.group(&format!("span {name}"), Some(parent))?;
                        self.span_tracks.insert((span, master), t);
                        t
                    }
                };
                if self.span_names.len() <= span {
                    self.span_names.resize(span + 1, None);
                }
                let name =
                    *self.span_names[span].get_or_insert_with(|| self.trace.intern_name(name));
                let category = self.category("span");
                self.trace.slice(
                    track,
                    begin,
                    end,
                    name.into(),
                    Some(category),
                    &[(self.args.duration, Arg::Uint(end - begin))],
                )
            }
            ReportEvent::CpTracer {
                time,
                master,
                channel,
                word,
            } => {
                let track = match self.cptracer_tracks.get(&master) {
                    Some(&t) => t,
                    None => {
                        let parent = self.master(master)?;
                        let t = self.trace.group_described(
                            "CP Tracer words",
                            "32-bit words of a hardware master, raw unless a layout was given",
                            Some(parent),
                        )?;
                        self.cptracer_tracks.insert(master, t);
                        t
                    }
                };
                self.name.clear();
                let _ = write!(self.name, "0x{word:08x}");
                let category = self.category("cptracer");
                let mut args: Vec<(ArgId, Arg<'_>)> =
                    vec![(self.args.channel, Arg::Uint(channel.into()))];
                if let Some(layout) = &self.layout {
                    args.extend(
                        layout
                            .fields()
                            .iter()
                            .zip(&self.layout_args)
                            .map(|(f, &id)| (id, Arg::Uint(f.get(word).into()))),
                    );
                }
                self.trace
                    .instant(track, time, Name::Text(&self.name), Some(category), &args)
            }
            ReportEvent::Window { begin, end, bytes } => {
                let track = match self.throughput {
                    Some(t) => t,
                    None => {
                        let t = self.trace.counter_track(&CounterTrack {
                            description:
                                "bytes of the CP Tracer transactions per window (user layout)",
                            unit: Unit::Named("MB/s".into()),
                            ..CounterTrack::new("CP Tracer throughput", Some(self.top))
                        })?;
                        self.throughput = Some(t);
                        t
                    }
                };
                let span = end.saturating_sub(begin).max(1);
                let mbs = bytes as f64 * 1_000.0 / span as f64;
                self.trace.counter(track, begin, CounterValue::Float(mbs))
            }
            ReportEvent::Loss { time, loss } => {
                let track = self.stream()?;
                let (name, value) = match loss {
                    Loss::Unsynced { nibbles } => ("unsynchronised".to_string(), nibbles),
                    Loss::Decode(e) => (format!("decode error: {}", e.error), e.offset),
                    Loss::Frame(e) => (format!("frame error: {}", e.error), e.offset),
                    Loss::MasterOverflow { master, value } => (
                        match master {
                            Some(m) => format!("MERR {}", self.masters.name(m)),
                            None => "MERR (master unknown)".to_string(),
                        },
                        value.into(),
                    ),
                    Loss::GlobalOverflow { value } => ("GERR".to_string(), value.into()),
                };
                let category = self.category("loss");
                self.trace.instant(
                    track,
                    time,
                    Name::Text(&name),
                    Some(category),
                    &[(self.args.value, Arg::Uint(value))],
                )
            }
        }
    }
}
