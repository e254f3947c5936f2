//! The report: a trace buffer in, in chunks of any size; messages, spans, CP Tracer words and losses out to
//! a [`ReportSink`] as they are decoded; [`Stats`] at the end. Memory is bounded by the number of masters,
//! channels and spans (a buffer per channel, a histogram per span), not by the size of the trace.
//!
//! # Call contract
//!
//! [`Report::new`] with a [`ReportConfig`], the target's strings ([`FormatStrings`], e.g.
//! [`ElfImages`](crate::elf::ElfImages)) and a [`Dictionary`]; then [`Report::feed`] with each chunk of the
//! buffer in order (a wrapped buffer put in order first, see [`crate::tbr`]), then [`Report::finish`] once.
//! Every call hands its events to the sink before it returns; a sink error stops the call and is returned.
//! [`Report::stats`] may be read at any time.
//!
//! # Time
//!
//! Times are counted from the trace's first timestamp: nanoseconds when the STM clock is known (the
//! configured frequency, else the first FREQ packet with a non-zero frequency seen before the first time
//! is needed), else timestamp ticks. An event without a timestamp of its own takes the last one seen.
//!
//! # What is lost, and where it is counted
//!
//! Bytes before the first frame boundary of a wrapped buffer ([`StreamStats::partial_frame_bytes`]);
//! nibbles before the first ASYNC and in unsynchronised ranges; decode and frame errors; data before its
//! master or channel is known; and data that does not make a whole message ([`Torn`], by master, channel
//! and cause): none of it is decoded as messages, all of it is counted.
//!
//! ```
//! use stp_decode::dict::Dictionary;
//! use stp_decode::dump::Framing;
//! use stp_decode::encoder::StpEncoder;
//! use stp_decode::message::NoImages;
//! use stp_decode::report::{Report, ReportConfig, ReportEvent};
//! use stp_decode::stmlib::{message_words, Protocol};
//! use stp_decode::{DataWidth, IdWidth, PacketKind, Timestamp};
//!
//! // A putMsg "hello" from master 2 on channel 5: ASYNC, VERSION, M8, C8, two D32 and a D32MTS.
//! let mut e = StpEncoder::new();
//! e.async_packet();
//! e.packet(&PacketKind::Version { version: 3 })?;
//! e.packet(&PacketKind::Master { width: IdWidth::W8, master: 2 })?;
//! e.packet(&PacketKind::Channel { width: IdWidth::W8, channel: 5 })?;
//! let words = message_words(Protocol::PutMsg, b"hello");
//! for (i, &w) in words.iter().enumerate() {
//!     let last = i + 1 == words.len();
//!     let ts = last.then_some(Timestamp { nibbles: 4, update: 0x1234, absolute: None });
//!     e.packet(&PacketKind::Data { width: DataWidth::W32, value: w.into(), marker: last, ts })?;
//! }
//! let bytes = e.finish().into_bytes();
//!
//! let dict = Dictionary::new();
//! let mut report = Report::new(ReportConfig::new(Framing::Raw, 0), &NoImages, &dict);
//! let mut texts = Vec::new();
//! let mut sink = |event: &ReportEvent<'_>| -> Result<(), std::convert::Infallible> {
//!     if let ReportEvent::Message { message, .. } = event {
//!         texts.push(message.text.to_owned());
//!     }
//!     Ok(())
//! };
//! report.feed(&bytes, &mut sink)?;
//! let stats = report.finish(&mut sink)?;
//! assert_eq!(texts, ["hello"]);
//! assert_eq!(stats.masters[0].messages, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use alloc::collections::BTreeMap;
use alloc::string::ToString;
use alloc::vec::Vec;

use crate::cptracer::Layout;
use crate::decoder::{Event, StpDecoder};
use crate::deformat::{Deformatter, FrameMode, FRAME_LEN};
use crate::dict::Dictionary;
use crate::dump::Framing;
use crate::element::{Element, ElementDecoder, ElementKind};
use crate::error::{DecodeError, FrameErrorAt, StpError};
use crate::keystone::{MasterName, Masters};
use crate::message::{
    Assembled, Assembler, AssemblerConfig, FormatStrings, Message, MessageDecoder, MessageKind,
    RawMessage, TearCause, Torn,
};
use crate::packet::{DataWidth, PacketKind};
use crate::span::SpanSpec;
use crate::stats::{
    ChannelStats, ClockSource, ClockStats, CpTracerMaster, CpTracerStats, Histogram, LayoutStats,
    MasterIdStats, MasterStats, SpanStats, Stats, StreamStats, TornStats,
};

/// How to read the buffer and what to look for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReportConfig {
    /// How the buffer carries the STP stream.
    pub framing: Framing,
    /// The STM's trace ID, for formatted buffers (KeyStone II's STM: 0x40).
    pub trace_id: u8,
    /// Master names and the hardware (CP Tracer) masters.
    pub masters: Masters,
    /// Message assembly.
    pub assembler: AssemblerConfig,
    /// The STM timestamp clock in Hz, when known (else a FREQ packet's, else ticks).
    pub stm_clock_hz: Option<u64>,
    /// Spans to measure.
    pub spans: Vec<SpanSpec>,
    /// The user's layout of CP Tracer words.
    pub cptracer_layout: Option<Layout>,
    /// The window CP Tracer throughput is given per, in the report's time unit.
    pub window: Option<u64>,
    /// The buffer starts in the middle of the stream (a wrapped buffer): the first data of each channel
    /// may be a message's tail.
    pub starts_mid_stream: bool,
    /// Bytes at the start to skip and count, not decode (the end of a frame whose start was overwritten).
    pub partial_frame_bytes: usize,
}

impl ReportConfig {
    /// A report of the STP stream carried by `framing` (on `trace_id` when formatted), nothing else set.
    pub fn new(framing: Framing, trace_id: u8) -> Self {
        ReportConfig {
            framing,
            trace_id,
            masters: Masters::default(),
            assembler: AssemblerConfig::default(),
            stm_clock_hz: None,
            spans: Vec::new(),
            cptracer_layout: None,
            window: None,
            starts_mid_stream: false,
            partial_frame_bytes: 0,
        }
    }
}

#[cfg(feature = "serde")]
mod serialize;
#[cfg(feature = "serde")]
pub use serialize::EventFields;

/// Where trace was lost; with the `serde` feature it serializes as a map (`kind` and the members of its
/// kind, listed in the `serialize` module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Loss {
    /// Nibbles skipped while unsynchronised.
    Unsynced {
        /// How many.
        nibbles: u64,
    },
    /// A packet that could not be decoded.
    Decode(DecodeError),
    /// A formatter frame that could not be demultiplexed.
    Frame(FrameErrorAt),
    /// MERR: a master's trace was dropped (`None`: before any master was known).
    MasterOverflow {
        /// The master.
        master: Option<u16>,
        /// The error value.
        value: u8,
    },
    /// GERR: trace of any master may have been dropped.
    GlobalOverflow {
        /// The error value.
        value: u8,
    },
}

impl Loss {
    /// A short name: `unsynced`, `decode`, `frame`, `master_overflow`, `global_overflow`.
    pub const fn name(&self) -> &'static str {
        match self {
            Loss::Unsynced { .. } => "unsynced",
            Loss::Decode(_) => "decode",
            Loss::Frame(_) => "frame",
            Loss::MasterOverflow { .. } => "master_overflow",
            Loss::GlobalOverflow { .. } => "global_overflow",
        }
    }
}

/// Something the report found, in stream order (times in the report's unit, see the module documentation).
/// With the `serde` feature it serializes as a map: `event` ([`ReportEvent::name`]) and its fields
/// ([`ReportEvent::fields`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum ReportEvent<'a> {
    /// A whole message, decoded (or raw, with the reason).
    Message {
        /// When its last packet was written.
        time: u64,
        /// The message.
        message: &'a Message<'a>,
    },
    /// Data that did not make a whole message.
    Torn {
        /// When it was found torn.
        time: u64,
        /// What and why.
        torn: Torn,
    },
    /// A span measured on a master.
    Span {
        /// Its position among the configured spans.
        span: usize,
        /// Its name.
        name: &'a str,
        /// The master.
        master: u16,
        /// When the start message was written.
        begin: u64,
        /// When the end message was written.
        end: u64,
    },
    /// A CP Tracer word (a 32-bit data packet of a hardware master).
    CpTracer {
        /// When.
        time: u64,
        /// The hardware master.
        master: u16,
        /// The channel.
        channel: u16,
        /// The word.
        word: u32,
    },
    /// The bytes of the CP Tracer transactions of one window (with a layout and a window).
    Window {
        /// The window's start.
        begin: u64,
        /// Its end.
        end: u64,
        /// Bytes of its transactions.
        bytes: u64,
    },
    /// Trace was lost.
    Loss {
        /// When.
        time: u64,
        /// What.
        loss: Loss,
    },
}

impl ReportEvent<'_> {
    /// A short name: `message`, `torn`, `span`, `cptracer`, `window`, `loss`.
    pub const fn name(&self) -> &'static str {
        match self {
            ReportEvent::Message { .. } => "message",
            ReportEvent::Torn { .. } => "torn",
            ReportEvent::Span { .. } => "span",
            ReportEvent::CpTracer { .. } => "cptracer",
            ReportEvent::Window { .. } => "window",
            ReportEvent::Loss { .. } => "loss",
        }
    }
}

/// Takes a report's events.
pub trait ReportSink {
    /// What a failed write gives.
    type Error;

    /// Takes one event.
    fn event(&mut self, event: &ReportEvent<'_>) -> Result<(), Self::Error>;
}

impl<E, F: FnMut(&ReportEvent<'_>) -> Result<(), E>> ReportSink for F {
    type Error = E;

    fn event(&mut self, event: &ReportEvent<'_>) -> Result<(), E> {
        self(event)
    }
}

/// A sink that drops every event (statistics only).
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl ReportSink for Discard {
    type Error = core::convert::Infallible;

    fn event(&mut self, _: &ReportEvent<'_>) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The trace ID's bytes gathered before they are decoded.
const DECODE_BATCH: usize = 4096;
/// Master ids counted apart at most (CP Tracer layout).
const MAX_MASTER_IDS: usize = 4096;

/// The STM clock and the trace's time.
#[derive(Debug, Clone)]
struct Clock {
    given: Option<u64>,
    freq: Option<u64>,
    resolved: Option<(Option<u64>, ClockSource)>,
    origin: Option<u64>,
    last: Option<u64>,
}

impl Clock {
    fn see(&mut self, ts: u64) {
        if self.origin.is_none() {
            self.origin = Some(ts);
        }
        self.last = Some(ts);
    }

    fn resolve(&mut self) -> (Option<u64>, ClockSource) {
        if self.resolved.is_none() {
            self.resolved = Some(match (self.given, self.freq) {
                (Some(hz), _) => (Some(hz), ClockSource::Given),
                (None, Some(hz)) => (Some(hz), ClockSource::FreqPacket),
                (None, None) => (None, ClockSource::None),
            });
        }
        self.resolved.unwrap_or((None, ClockSource::None))
    }

    /// `ts` in the report's time unit.
    fn time(&mut self, ts: u64) -> u64 {
        let ticks = ts.saturating_sub(self.origin.unwrap_or(ts));
        match self.resolve().0 {
            Some(hz) if hz > 0 => (u128::from(ticks) * 1_000_000_000 / u128::from(hz))
                .try_into()
                .unwrap_or(u64::MAX),
            _ => ticks,
        }
    }

    fn now(&mut self) -> u64 {
        match self.last {
            Some(ts) => self.time(ts),
            None => 0,
        }
    }
}

fn add_torn(stats: &mut TornStats, torn: &Torn) {
    stats.messages += 1;
    stats.packets += u64::from(torn.packets);
    stats.bytes += torn.bytes;
    *stats.by_cause.entry(torn.cause.name()).or_default() += 1;
}

/// Slots of [`MasterTable`]'s cache.
const CHANNEL_SLOTS: usize = 128;

/// The cache slot of `(master, channel)`: the channel's low bits mixed with the master's, so that the
/// channels of masters that interleave (every DSP writing its channel 1) keep their own slots.
#[inline]
fn channel_slot(master: u16, channel: u16) -> usize {
    (usize::from(channel) ^ usize::from(master) << 3) % CHANNEL_SLOTS
}

/// Per-master and per-channel counters, found through a cache of recent channels.
#[derive(Debug, Clone)]
struct MasterTable {
    list: Vec<(MasterStats, BTreeMap<u16, usize>)>,
    index: BTreeMap<u16, usize>,
    /// By [`channel_slot`]: `(master << 16 | channel, master's position, channel's position)`, the key
    /// `u32::MAX` when empty (channel 0xffff of master 0xffff is never cached).
    cache: [(u32, u32, u32); CHANNEL_SLOTS],
}

impl Default for MasterTable {
    fn default() -> Self {
        MasterTable {
            list: Vec::new(),
            index: BTreeMap::new(),
            cache: [(u32::MAX, 0, 0); CHANNEL_SLOTS],
        }
    }
}

impl MasterTable {
    fn master(&mut self, names: &Masters, master: u16) -> &mut MasterStats {
        let at = match self.index.get(&master) {
            Some(&at) => at,
            None => {
                let at = self.list.len();
                let name = names.name(master);
                self.list.push((
                    MasterStats {
                        master,
                        name: name.to_string(),
                        hardware: matches!(name, MasterName::Hardware(_)),
                        ..MasterStats::default()
                    },
                    BTreeMap::new(),
                ));
                self.index.insert(master, at);
                at
            }
        };
        &mut self.list[at].0
    }

    /// The master's counters and the position of the channel's among them.
    #[inline]
    fn channel(
        &mut self,
        names: &Masters,
        dict: &Dictionary,
        master: u16,
        channel: u16,
    ) -> (&mut MasterStats, usize) {
        let key = u32::from(master) << 16 | u32::from(channel);
        let slot = channel_slot(master, channel);
        let (cached, mi, ci) = self.cache[slot];
        if cached == key {
            return (&mut self.list[mi as usize].0, ci as usize);
        }
        self.master(names, master);
        let mi = self.index[&master];
        let (stats, channels) = &mut self.list[mi];
        let ci = *channels.entry(channel).or_insert_with(|| {
            stats.channels.push(ChannelStats {
                channel,
                name: dict.channel_name(master, channel).map(ToString::to_string),
                ..ChannelStats::default()
            });
            stats.channels.len() - 1
        });
        if let (Ok(m), Ok(c)) = (u32::try_from(mi), u32::try_from(ci)) {
            if key != u32::MAX {
                self.cache[slot] = (key, m, c);
            }
        }
        (&mut self.list[mi].0, ci)
    }
}

/// A span's counters.
#[derive(Debug, Clone)]
struct SpanAcc {
    spec: SpanSpec,
    durations: Histogram,
    unmatched_ends: u64,
    restarts: u64,
    /// Open starts by master.
    open: BTreeMap<u16, u64>,
}

/// CP Tracer words read with the user's layout.
#[derive(Debug, Clone)]
struct LayoutAcc {
    layout: Layout,
    window: Option<u64>,
    transactions: u64,
    bytes: u64,
    ids: BTreeMap<u32, (u64, u64)>,
    other_ids: u64,
    /// The open window (its index) and its bytes.
    current: Option<(u64, u64)>,
    windows: u64,
    per_window: Histogram,
    first: Option<u64>,
    last: u64,
}

impl LayoutAcc {
    fn word<S: ReportSink>(&mut self, time: u64, word: u32, sink: &mut S) -> Result<(), S::Error> {
        let bytes = u64::from(self.layout.bytes(word));
        let id = self.layout.master_id(word);
        self.transactions += 1;
        self.bytes += bytes;
        self.first.get_or_insert(time);
        self.last = self.last.max(time);
        if self.ids.len() < MAX_MASTER_IDS || self.ids.contains_key(&id) {
            let entry = self.ids.entry(id).or_default();
            entry.0 += 1;
            entry.1 += bytes;
        } else {
            self.other_ids += 1;
        }
        let Some(window) = self.window.filter(|&w| w > 0) else {
            return Ok(());
        };
        let index = time / window;
        match self.current {
            None => self.current = Some((index, bytes)),
            Some((open, sum)) if index <= open => self.current = Some((open, sum + bytes)),
            Some((open, sum)) => {
                self.close(open, sum, sink)?;
                let empty = index - open - 1;
                if empty > 0 {
                    self.per_window.record_n(0, empty);
                    self.windows += empty;
                    sink.event(&ReportEvent::Window {
                        begin: (open + 1).saturating_mul(window),
                        end: index.saturating_mul(window),
                        bytes: 0,
                    })?;
                }
                self.current = Some((index, bytes));
            }
        }
        Ok(())
    }

    fn close<S: ReportSink>(
        &mut self,
        index: u64,
        bytes: u64,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let window = self.window.unwrap_or(1);
        self.per_window.record(bytes);
        self.windows += 1;
        sink.event(&ReportEvent::Window {
            begin: index.saturating_mul(window),
            end: index.saturating_add(1).saturating_mul(window),
            bytes,
        })
    }
}

/// The trace ID's bytes on their way to the STP decoder.
#[derive(Debug, Clone)]
struct Input {
    framing: Framing,
    trace_id: u8,
    deformatter: Deformatter,
    decoder: StpDecoder,
    batch: Vec<u8>,
    skip: usize,
}

/// A trace buffer's report; see the module documentation.
pub struct Report<'r> {
    input: Input,
    assembler: Assembler,
    core: Core<'r>,
}

impl core::fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Report")
            .field("stream", &self.core.stream)
            .finish_non_exhaustive()
    }
}

/// Everything after the STP decoder.
struct Core<'r> {
    strings: &'r dyn FormatStrings,
    dict: &'r Dictionary,
    names: Masters,
    elements: ElementDecoder,
    decoder: MessageDecoder,
    clock: Clock,
    ever_synced: bool,
    lost: bool,
    stream: StreamStats,
    masters: MasterTable,
    spans: Vec<SpanAcc>,
    cpt: Vec<CpTracerMaster>,
    layout: Option<LayoutAcc>,
    torn: Vec<Torn>,
}

impl<'r> Report<'r> {
    /// A report with `config`; printf format strings come from `strings`, names of values from `dict`.
    pub fn new(config: ReportConfig, strings: &'r dyn FormatStrings, dict: &'r Dictionary) -> Self {
        let mode = match config.framing {
            Framing::Formatted(mode) => mode,
            Framing::Raw => FrameMode::Memory,
        };
        let mut assembler = Assembler::new(config.assembler);
        if config.starts_mid_stream {
            assembler.lose(None, TearCause::SyncLost, &mut |_| {});
        }
        Report {
            input: Input {
                framing: config.framing,
                trace_id: config.trace_id,
                deformatter: Deformatter::new(mode),
                decoder: StpDecoder::new(),
                batch: Vec::with_capacity(DECODE_BATCH + FRAME_LEN),
                skip: config.partial_frame_bytes,
            },
            assembler,
            core: Core {
                strings,
                dict,
                names: config.masters,
                elements: ElementDecoder::new(),
                decoder: MessageDecoder::new(),
                clock: Clock {
                    given: config.stm_clock_hz,
                    freq: None,
                    resolved: None,
                    origin: None,
                    last: None,
                },
                ever_synced: false,
                lost: false,
                stream: StreamStats::default(),
                masters: MasterTable::default(),
                spans: config
                    .spans
                    .into_iter()
                    .map(|spec| SpanAcc {
                        spec,
                        durations: Histogram::new(),
                        unmatched_ends: 0,
                        restarts: 0,
                        open: BTreeMap::new(),
                    })
                    .collect(),
                cpt: Vec::new(),
                layout: config.cptracer_layout.map(|layout| LayoutAcc {
                    layout,
                    window: config.window,
                    transactions: 0,
                    bytes: 0,
                    ids: BTreeMap::new(),
                    other_ids: 0,
                    current: None,
                    windows: 0,
                    per_window: Histogram::new(),
                    first: None,
                    last: 0,
                }),
                torn: Vec::new(),
            },
        }
    }

    /// Takes the next chunk of the buffer.
    pub fn feed<S: ReportSink>(&mut self, chunk: &[u8], sink: &mut S) -> Result<(), S::Error> {
        let core = &mut self.core;
        let input = &mut self.input;
        let asm = &mut self.assembler;
        core.stream.input_bytes += chunk.len() as u64;
        let skipped = input.skip.min(chunk.len());
        input.skip -= skipped;
        core.stream.partial_frame_bytes += skipped as u64;
        let chunk = &chunk[skipped..];
        if input.framing == Framing::Raw {
            core.stream.stream_bytes += chunk.len() as u64;
            for event in input.decoder.feed(chunk) {
                core.on_event(event, asm, sink)?;
            }
            return Ok(());
        }
        let mut pos = 0;
        while pos < chunk.len() {
            while let Some(run) = input.deformatter.next_run(&chunk[pos..]) {
                pos += FRAME_LEN;
                core.stream.frames += 1;
                if run.id == input.trace_id {
                    input.batch.extend_from_slice(&run.bytes);
                    if input.batch.len() >= DECODE_BATCH {
                        flush(input, asm, core, sink)?;
                    }
                }
            }
            let mut frames = input.deformatter.feed(&chunk[pos..]);
            let frame = frames.next();
            pos += frames.consumed();
            match frame {
                None => break,
                Some(Ok(frame)) => {
                    core.stream.frames += 1;
                    input.batch.extend(
                        frame
                            .bytes
                            .iter()
                            .filter(|b| b.id == input.trace_id)
                            .map(|b| b.byte),
                    )
                }
                Some(Err(error)) => {
                    core.stream.frames += 1;
                    flush(input, asm, core, sink)?;
                    core.frame_error(error, asm, sink)?;
                }
            }
        }
        flush(input, asm, core, sink)
    }

    /// Ends the buffer: a packet cut short, messages in progress, open spans and windows are accounted
    /// for; returns the statistics.
    pub fn finish<S: ReportSink>(&mut self, sink: &mut S) -> Result<Stats, S::Error> {
        flush(&mut self.input, &mut self.assembler, &mut self.core, sink)?;
        for event in self.input.decoder.finish() {
            self.core.on_event(event, &mut self.assembler, sink)?;
        }
        self.core.finish(&mut self.assembler, sink)?;
        Ok(self.stats())
    }

    /// The statistics so far.
    pub fn stats(&self) -> Stats {
        self.core.stats()
    }
}

fn flush<S: ReportSink>(
    input: &mut Input,
    asm: &mut Assembler,
    core: &mut Core<'_>,
    sink: &mut S,
) -> Result<(), S::Error> {
    if input.batch.is_empty() {
        return Ok(());
    }
    core.stream.stream_bytes += input.batch.len() as u64;
    let result = (|| {
        for event in input.decoder.feed(&input.batch) {
            core.on_event(event, asm, sink)?;
        }
        Ok(())
    })();
    input.batch.clear();
    result
}

fn error_kind(error: &StpError) -> &'static str {
    match error {
        StpError::ReservedOpcode { .. } => "reserved_opcode",
        StpError::InvalidAsync => "invalid_async",
        StpError::BadTimestampLength { .. } => "bad_timestamp_length",
        StpError::TimestampBeforeVersion { .. } => "timestamp_before_version",
        StpError::UnsupportedVersion { .. } => "unsupported_version",
        StpError::Truncated { .. } => "truncated",
    }
}

impl Core<'_> {
    fn loss<S: ReportSink>(&mut self, loss: Loss, sink: &mut S) -> Result<(), S::Error> {
        let time = self.clock.now();
        sink.event(&ReportEvent::Loss { time, loss })
    }

    /// Trace may have been lost for `master` (`None`: all): tears messages in progress.
    fn lose<S: ReportSink>(
        &mut self,
        master: Option<u16>,
        cause: TearCause,
        asm: &mut Assembler,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let torn = &mut self.torn;
        asm.lose(master, cause, &mut |t| torn.push(t));
        self.flush_torn(sink)
    }

    fn flush_torn<S: ReportSink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        if self.torn.is_empty() {
            return Ok(());
        }
        let time = self.clock.now();
        let torn = core::mem::take(&mut self.torn);
        for t in &torn {
            self.count_torn(t);
        }
        let result = torn
            .iter()
            .try_for_each(|t| sink.event(&ReportEvent::Torn { time, torn: *t }));
        self.torn = torn;
        self.torn.clear();
        result
    }

    fn count_torn(&mut self, t: &Torn) {
        add_torn(&mut self.stream.torn, t);
        let (m, ci) = self
            .masters
            .channel(&self.names, self.dict, t.master, t.channel);
        add_torn(&mut m.torn, t);
        add_torn(&mut m.channels[ci].torn, t);
    }

    fn frame_error<S: ReportSink>(
        &mut self,
        error: FrameErrorAt,
        asm: &mut Assembler,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.stream.frame_errors += 1;
        self.lose(None, TearCause::SyncLost, asm, sink)?;
        self.loss(Loss::Frame(error), sink)
    }

    #[inline]
    fn on_event<S: ReportSink>(
        &mut self,
        event: Event,
        asm: &mut Assembler,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        match event {
            Event::Packet(p) => {
                if p.kind == PacketKind::Async {
                    self.stream.asyncs += 1;
                    if self.ever_synced && self.lost {
                        self.stream.resyncs += 1;
                    }
                    self.ever_synced = true;
                    self.lost = false;
                }
                if let Some(element) = self.elements.on_packet(p.offset, &p.kind) {
                    self.on_element(element, asm, sink)?;
                }
                Ok(())
            }
            Event::Error(error) => {
                self.elements.on_event(&event);
                self.stream.decode_errors += 1;
                *self
                    .stream
                    .decode_errors_by_kind
                    .entry(error_kind(&error.error))
                    .or_default() += 1;
                self.lost = true;
                self.lose(None, TearCause::SyncLost, asm, sink)?;
                self.loss(Loss::Decode(error), sink)
            }
            Event::Unsynced(u) => {
                self.stream.unsynced_nibbles += u.nibbles;
                if !self.ever_synced {
                    self.stream.nibbles_before_first_sync += u.nibbles;
                }
                self.lost = true;
                self.lose(None, TearCause::SyncLost, asm, sink)?;
                self.loss(Loss::Unsynced { nibbles: u.nibbles }, sink)
            }
        }
    }

    #[inline]
    fn on_element<S: ReportSink>(
        &mut self,
        element: Element,
        asm: &mut Assembler,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        if let Some(abs) = element.kind.timestamp().and_then(|ts| ts.absolute) {
            self.clock.see(abs);
        }
        match element.kind {
            ElementKind::Data {
                width,
                value,
                marker,
                ts,
            } => {
                self.stream.data_packets += 1;
                let (Some(master), Some(channel)) = (element.master, element.channel) else {
                    self.stream.unattributed_packets += 1;
                    return Ok(());
                };
                if self.names.hardware.contains(master) {
                    return self.cptracer(master, channel, width, value, sink);
                }
                let (m, ci) = self
                    .masters
                    .channel(&self.names, self.dict, master, channel);
                m.data_packets += 1;
                m.channels[ci].data_packets += 1;
                let assembled = asm.packet(
                    element.offset,
                    master,
                    channel,
                    width,
                    value,
                    marker,
                    ts.is_some(),
                    ts.and_then(|t| t.absolute),
                );
                self.assembled(assembled, sink)
            }
            ElementKind::Flag { .. } => {
                self.stream.flags += 1;
                let (Some(master), Some(channel)) = (element.master, element.channel) else {
                    return Ok(());
                };
                if self.names.hardware.contains(master) {
                    return Ok(());
                }
                let assembled = asm.flag(master, channel);
                self.assembled(assembled, sink)
            }
            ElementKind::MasterError { value } => {
                match element.master {
                    Some(master) => {
                        self.masters.master(&self.names, master).overflows += 1;
                    }
                    None => self.stream.master_errors_unattributed += 1,
                }
                self.lose(element.master, TearCause::Overflow, asm, sink)?;
                self.loss(
                    Loss::MasterOverflow {
                        master: element.master,
                        value,
                    },
                    sink,
                )
            }
            ElementKind::GlobalError { value } => {
                self.stream.global_errors += 1;
                self.lose(None, TearCause::Overflow, asm, sink)?;
                self.loss(Loss::GlobalOverflow { value }, sink)
            }
            ElementKind::Frequency { hz, .. } => {
                self.stream.other_elements += 1;
                if hz != 0 && self.clock.freq.is_none() {
                    self.clock.freq = Some(hz);
                }
                Ok(())
            }
            _ => {
                self.stream.other_elements += 1;
                Ok(())
            }
        }
    }

    fn cptracer<S: ReportSink>(
        &mut self,
        master: u16,
        channel: u16,
        width: DataWidth,
        value: u64,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.masters
            .channel(&self.names, self.dict, master, channel)
            .0
            .data_packets += 1;
        let at = match self.cpt.iter().position(|c| c.master == master) {
            Some(at) => at,
            None => {
                self.cpt.push(CpTracerMaster {
                    master,
                    ..CpTracerMaster::default()
                });
                self.cpt.len() - 1
            }
        };
        if width != DataWidth::W32 {
            self.cpt[at].other_packets += 1;
            return Ok(());
        }
        self.cpt[at].words += 1;
        let time = self.clock.now();
        let word = value as u32;
        if let Some(layout) = &mut self.layout {
            layout.word(time, word, sink)?;
        }
        sink.event(&ReportEvent::CpTracer {
            time,
            master,
            channel,
            word,
        })
    }

    #[inline]
    fn assembled<S: ReportSink>(
        &mut self,
        assembled: Option<Assembled<'_>>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        match assembled {
            None => Ok(()),
            Some(Assembled::Torn(t)) => {
                self.torn.push(t);
                self.flush_torn(sink)
            }
            Some(Assembled::Message(raw)) => {
                // `raw` borrows the assembler: decode and count through the other fields only.
                let raw: RawMessage<'_> = raw;
                let time = match raw.timestamp {
                    Some(ts) => self.clock.time(ts),
                    None => self.clock.now(),
                };
                let message = self.decoder.decode(&raw, self.strings, self.dict);
                let stream = &mut self.stream;
                stream.messages += 1;
                stream.message_bytes += message.bytes.len() as u64;
                let (m, ci) =
                    self.masters
                        .channel(&self.names, self.dict, message.master, message.channel);
                m.messages += 1;
                m.bytes += message.bytes.len() as u64;
                let c = &mut m.channels[ci];
                c.messages += 1;
                c.bytes += message.bytes.len() as u64;
                if let MessageKind::Undecodable { reason, .. } = message.kind {
                    stream.undecodable += 1;
                    m.undecodable += 1;
                    m.channels[ci].undecodable += 1;
                    *m.undecodable_by_reason.entry(reason.name()).or_default() += 1;
                }
                sink.event(&ReportEvent::Message {
                    time,
                    message: &message,
                })?;
                for (index, span) in self.spans.iter_mut().enumerate() {
                    let master = message.master;
                    // The end is tried once per message: it closes an open span, or is unmatched.
                    let ends = span.spec.ends(&message);
                    if ends && span.open.contains_key(&master) {
                        let begin = span.open.remove(&master).unwrap_or(time);
                        let end = time.max(begin);
                        span.durations.record(end - begin);
                        sink.event(&ReportEvent::Span {
                            span: index,
                            name: &span.spec.name,
                            master,
                            begin,
                            end,
                        })?;
                    } else if span.spec.starts(&message) {
                        if span.open.insert(master, time).is_some() {
                            span.restarts += 1;
                        }
                    } else if ends {
                        span.unmatched_ends += 1;
                    }
                }
                Ok(())
            }
        }
    }

    fn finish<S: ReportSink>(&mut self, asm: &mut Assembler, sink: &mut S) -> Result<(), S::Error> {
        let torn = &mut self.torn;
        asm.finish(&mut |t| torn.push(t));
        self.flush_torn(sink)?;
        if let Some(layout) = &mut self.layout {
            if let Some((index, bytes)) = layout.current.take() {
                layout.close(index, bytes, sink)?;
            }
        }
        Ok(())
    }

    fn stats(&self) -> Stats {
        let mut clock = self.clock.clone();
        let (hz, source) = clock.resolve();
        let duration = match (clock.origin, clock.last) {
            (Some(_), Some(last)) => clock.time(last),
            _ => 0,
        };
        let seconds = match hz {
            Some(hz) if hz > 0 && duration > 0 => Some(duration as f64 / 1e9),
            _ => None,
        };
        let per_s = |n: u64| seconds.map(|s| n as f64 / s);
        let masters = self
            .masters
            .list
            .iter()
            .map(|(m, _)| {
                let mut m = m.clone();
                m.messages_per_s = per_s(m.messages);
                m.bytes_per_s = per_s(m.bytes);
                for c in &mut m.channels {
                    c.messages_per_s = per_s(c.messages);
                    c.bytes_per_s = per_s(c.bytes);
                }
                m
            })
            .collect();
        let spans = self
            .spans
            .iter()
            .map(|s| SpanStats {
                name: s.spec.name.clone(),
                count: s.durations.count(),
                min: s.durations.min(),
                median: s.durations.quantile(0.5),
                p99: s.durations.quantile(0.99),
                max: s.durations.max(),
                mean: s.durations.mean(),
                unmatched_ends: s.unmatched_ends,
                restarts: s.restarts,
                unfinished: s.open.len() as u64,
                histogram: s.durations.bins(),
            })
            .collect();
        let clocked = hz.is_some_and(|hz| hz > 0);
        let layout = self.layout.as_ref().map(|l| {
            // Bytes per window of `window` ns as MB/s: bytes * 1000 / window.
            let mbs = |bytes: u64, span: u64| {
                (clocked && span > 0).then(|| bytes as f64 * 1_000.0 / span as f64)
            };
            let window = l.window.filter(|&w| w > 0);
            let windowed = |q: Option<u64>| q.and_then(|b| mbs(b, window.unwrap_or(0)));
            let open = l.current.map_or(0, |_| 1);
            let mut per_window = l.per_window.clone();
            if let Some((_, bytes)) = l.current {
                per_window.record(bytes);
            }
            LayoutStats {
                transactions: l.transactions,
                bytes: l.bytes,
                mb_per_s: l.first.and_then(|first| mbs(l.bytes, l.last - first)),
                window,
                windows: l.windows + open,
                window_mb_per_s_min: windowed(per_window.min()),
                window_mb_per_s_median: windowed(per_window.quantile(0.5)),
                window_mb_per_s_max: windowed(per_window.max()),
                per_master_id: l
                    .ids
                    .iter()
                    .map(|(&id, &(transactions, bytes))| MasterIdStats {
                        id,
                        transactions,
                        bytes,
                    })
                    .collect(),
                other_ids: l.other_ids,
            }
        });
        Stats {
            clock: ClockStats { hz, source },
            time_unit: if clocked { "ns" } else { "ticks" },
            duration,
            stream: self.stream.clone(),
            masters,
            spans,
            cptracer: CpTracerStats {
                masters: self.cpt.clone(),
                layout,
            },
        }
    }
}
