//! A report's timeline as a Perfetto trace (feature `perfetto`), written with lizard-core's writer as the
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

use lizard_core::perfetto::{Arg, Clock, CounterTrack, CounterValue, TraceWriter, TrackId, Unit};

use crate::cptracer::Layout;
use crate::dict::Dictionary;
use crate::keystone::Masters;
use crate::message::MessageKind;
use crate::report::{Loss, ReportEvent, ReportSink};

/// The longest instant name written, in bytes; longer texts are cut at a character boundary.
const MAX_NAME: usize = 512;

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
    name: String,
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
            name: String::new(),
        })
    }

    /// CP Tracer words are shown with the fields of `layout`.
    pub fn with_layout(mut self, layout: Layout) -> Self {
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

    fn channel(&mut self, master: u16, channel: u16) -> io::Result<TrackId> {
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
                let (category, reason) = match message.kind {
                    MessageKind::Stmlib { protocol } => (protocol.name(), None),
                    MessageKind::Values => ("values", None),
                    MessageKind::Undecodable { reason, .. } => ("undecodable", Some(reason)),
                };
                match reason {
                    Some(reason) => {
                        self.name.clear();
                        let _ = write!(self.name, "raw ({reason})");
                    }
                    None => self.set_name(message.text),
                }
                let protocol = message.kind.protocol().map(|p| p.to_string());
                let reason = reason.map(|r| r.to_string());
                let mut args: [(&str, Arg<'_>); 7] = [
                    ("master", Arg::Uint(message.master.into())),
                    ("channel", Arg::Uint(message.channel.into())),
                    ("packets", Arg::Uint(message.packets.into())),
                    ("bytes", Arg::Uint(message.bytes.len() as u64)),
                    ("timestamp", Arg::Uint(message.timestamp.unwrap_or(0))),
                    ("protocol", Arg::Str("")),
                    ("reason", Arg::Str("")),
                ];
                let mut n = 4 + usize::from(message.timestamp.is_some());
                if let Some(p) = &protocol {
                    args[n] = ("protocol", Arg::Str(p));
                    n += 1;
                }
                if let Some(r) = &reason {
                    args[n] = ("reason", Arg::Str(r));
                    n += 1;
                    args[n] = ("raw", Arg::Str(message.text));
                    n += 1;
                }
                let name = std::mem::take(&mut self.name);
                let result =
                    self.trace
                        .instant(track, time, &name, category, &args[..n.min(args.len())]);
                self.name = name;
                result
            }
            ReportEvent::Torn { time, torn } => {
                let track = self.channel(torn.master, torn.channel)?;
                let name = format!("torn: {}", torn.cause.name());
                self.trace.instant(
                    track,
                    time,
                    &name,
                    "torn",
                    &[
                        ("packets", Arg::Uint(torn.packets.into())),
                        ("bytes", Arg::Uint(torn.bytes)),
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
                self.trace.slice(
                    track,
                    begin,
                    end,
                    name,
                    "span",
                    &[("duration", Arg::Uint(end - begin))],
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
                let mut args: Vec<(&str, Arg<'_>)> = vec![("channel", Arg::Uint(channel.into()))];
                if let Some(layout) = &self.layout {
                    args.extend(
                        layout
                            .fields()
                            .iter()
                            .map(|f| (f.name.as_str(), Arg::Uint(f.get(word).into()))),
                    );
                }
                self.trace
                    .instant(track, time, &self.name, "cptracer", &args)
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
                self.trace
                    .instant(track, time, &name, "loss", &[("value", Arg::Uint(value))])
            }
        }
    }
}
