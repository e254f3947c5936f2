//! One call from a trace buffer to a listing: deformat, decode and resolve elements for one trace ID.
//!
//! [`dump`] is the entry point for tools such as `lizard stm-dump`: it walks a whole CoreSight trace
//! buffer (or a raw STP stream) and yields [`Record`]s in stream order: each packet, followed by the
//! element it makes; decode errors; skipped unsynchronised ranges; frame errors; and a final
//! [`Item::EndOfTrace`]. Records print as one text line ([`core::fmt::Display`]) and expose their fields
//! as `(name, value)` pairs ([`Record::visit_fields`]) for JSON writers, without any serialisation
//! dependency; with the `serde` feature a record serializes as the map of those pairs.

use core::fmt;

use crate::decoder::{Event, StpDecoder, Unsynced};
use crate::deformat::{Deformatter, FrameMode, FRAME_LEN};
use crate::element::{Element, ElementDecoder, ElementKind};
use crate::error::{DecodeError, FrameErrorAt};
use crate::packet::{Packet, PacketKind};
use crate::timestamp::Timestamp;

/// How the buffer carries the STP stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Framing {
    /// CoreSight formatter frames (ETB/ETF/ETR memory or TPIU capture); only `trace_id` is decoded.
    Formatted(FrameMode),
    /// The buffer is the STP byte stream itself (one source, no frames).
    #[default]
    Raw,
}

/// Options for [`dump`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DumpOptions {
    /// Trace ID of the STM (`STMTCSR[22:16]`); ignored for [`Framing::Raw`].
    pub trace_id: u8,
    /// How the buffer is laid out.
    pub framing: Framing,
    /// Yield only [`Item::Element`] records (what `lizard stm-dump --elements` prints): packets, errors,
    /// skipped ranges, frame errors and the end marker are decoded but not handed out.
    pub elements_only: bool,
}

impl DumpOptions {
    /// A formatted ETB/ETF/ETR buffer with the STM on `trace_id`.
    pub const fn formatted(trace_id: u8) -> Self {
        DumpOptions {
            trace_id,
            framing: Framing::Formatted(FrameMode::Memory),
            elements_only: false,
        }
    }

    /// A raw STP byte stream.
    pub const fn raw() -> Self {
        DumpOptions {
            trace_id: 0,
            framing: Framing::Raw,
            elements_only: false,
        }
    }

    /// The same options, yielding only element records.
    pub const fn elements(self) -> Self {
        DumpOptions {
            elements_only: true,
            ..self
        }
    }
}

/// What a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// A decoded packet.
    Packet(Packet),
    /// The element made by the packet just before.
    Element(Element),
    /// A packet that could not be decoded (the decoder then hunts for an ASYNC).
    DecodeError(DecodeError),
    /// Nibbles skipped while unsynchronised.
    Unsynced(Unsynced),
    /// A formatter frame that could not be demultiplexed (its bytes are lost).
    FrameError(FrameErrorAt),
    /// The end of the buffer.
    EndOfTrace,
}

/// One line of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Byte offset in the buffer of the byte holding the first nibble, when known (it is not known for
    /// the end of the trace). It does not depend on how the buffer was split into chunks.
    pub offset: Option<u64>,
    /// Nibble offset in the trace ID's STP stream (for frame errors: the stream position reached).
    pub nibble: u64,
    /// What it holds.
    pub item: Item,
}

/// A field value for [`Record::visit_fields`]; with the `serde` feature it serializes as the bare value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum Field {
    /// An unsigned number.
    U64(u64),
    /// A flag.
    Bool(bool),
    /// A name.
    Str(&'static str),
}

/// A record as the map of its fields, in the order [`Record::visit_fields`] gives them.
#[cfg(feature = "serde")]
impl serde::Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        let mut result = Ok(());
        self.visit_fields(&mut |name, value| {
            if result.is_ok() {
                result = map.serialize_entry(name, &value);
            }
        });
        result?;
        map.end()
    }
}

fn visit_ts(ts: Option<Timestamp>, f: &mut dyn FnMut(&'static str, Field)) {
    if let Some(ts) = ts {
        if let Some(abs) = ts.absolute {
            f("timestamp", Field::U64(abs));
        }
        f("ts_update", Field::U64(ts.update));
        f("ts_nibbles", Field::U64(u64::from(ts.nibbles)));
    }
}

impl Record {
    /// The record's kind: `packet`, `element`, `decode_error`, `unsynced`, `frame_error`, `end_of_trace`.
    pub const fn kind(&self) -> &'static str {
        match self.item {
            Item::Packet(_) => "packet",
            Item::Element(_) => "element",
            Item::DecodeError(_) => "decode_error",
            Item::Unsynced(_) => "unsynced",
            Item::FrameError(_) => "frame_error",
            Item::EndOfTrace => "end_of_trace",
        }
    }

    /// Calls `f` with each field as `(name, value)`: `record`, `offset` (if known), `nibble`, then
    /// per-kind fields (`type`, `master`, `channel`, `data`, `width`, `marker`, `timestamp`,
    /// `ts_update`, `ts_nibbles`, `error`, ...). Error messages are available through `Display` of the
    /// item's error.
    pub fn visit_fields(&self, f: &mut dyn FnMut(&'static str, Field)) {
        f("record", Field::Str(self.kind()));
        if let Some(offset) = self.offset {
            f("offset", Field::U64(offset));
        }
        f("nibble", Field::U64(self.nibble));
        match self.item {
            Item::Packet(p) => {
                f("type", Field::Str(p.packet_type().name()));
                match p.kind {
                    PacketKind::Master { master, .. } => f("master", Field::U64(master.into())),
                    PacketKind::Channel { channel, .. } => f("channel", Field::U64(channel.into())),
                    PacketKind::MasterError { value } | PacketKind::GlobalError { value } => {
                        f("error", Field::U64(value.into()))
                    }
                    PacketKind::Data { value, .. } => f("data", Field::U64(value)),
                    PacketKind::User { value, .. } => f("data", Field::U64(value)),
                    PacketKind::Time {
                        clock,
                        version,
                        time,
                        ..
                    } => {
                        f("clock", Field::U64(clock.into()));
                        f("time_version", Field::U64(version.into()));
                        f("time", Field::U64(time));
                    }
                    PacketKind::Trigger { value, .. } => f("trigger", Field::U64(value.into())),
                    PacketKind::Frequency { hz, .. } => f("frequency", Field::U64(hz)),
                    PacketKind::Xsync { id, .. } => f("xsync", Field::U64(id.into())),
                    PacketKind::Version { version } => f("version", Field::U64(version.into())),
                    PacketKind::Null { .. } | PacketKind::Flag { .. } | PacketKind::Async => {}
                }
                visit_ts(p.kind.timestamp(), f);
            }
            Item::Element(e) => {
                f("type", Field::Str(e.kind.name()));
                if let Some(m) = e.master {
                    f("master", Field::U64(m.into()));
                }
                if let Some(c) = e.channel {
                    f("channel", Field::U64(c.into()));
                }
                match e.kind {
                    ElementKind::Data {
                        width,
                        value,
                        marker,
                        ..
                    } => {
                        f("width", Field::U64(width.bits().into()));
                        f("data", Field::U64(value));
                        f("marker", Field::Bool(marker));
                    }
                    ElementKind::Trigger { value, .. } => f("trigger", Field::U64(value.into())),
                    ElementKind::Frequency { hz, .. } => f("frequency", Field::U64(hz)),
                    ElementKind::MasterError { value } | ElementKind::GlobalError { value } => {
                        f("error", Field::U64(value.into()))
                    }
                    ElementKind::User { value, .. } => f("data", Field::U64(value)),
                    ElementKind::Time { clock, time, .. } => {
                        f("clock", Field::U64(clock.into()));
                        f("time", Field::U64(time));
                    }
                    ElementKind::Xsync { id, .. } => f("xsync", Field::U64(id.into())),
                    ElementKind::Flag { .. } | ElementKind::Timestamp { .. } => {}
                }
                visit_ts(e.kind.timestamp(), f);
            }
            Item::DecodeError(e) => f("error", Field::Str(error_name(&e))),
            Item::Unsynced(u) => f("nibbles", Field::U64(u.nibbles)),
            Item::FrameError(e) => {
                f("frame_offset", Field::U64(e.offset));
                f(
                    "error",
                    Field::Str(match e.error {
                        crate::FrameError::ReservedId { .. } => "reserved_id",
                        crate::FrameError::LostAlignment { .. } => "lost_alignment",
                    }),
                );
            }
            Item::EndOfTrace => {}
        }
    }
}

fn error_name(e: &DecodeError) -> &'static str {
    use crate::StpError::*;
    match e.error {
        ReservedOpcode { .. } => "reserved_opcode",
        InvalidAsync => "invalid_async",
        BadTimestampLength { .. } => "bad_timestamp_length",
        TimestampBeforeVersion { .. } => "timestamp_before_version",
        UnsupportedVersion { .. } => "unsupported_version",
        Truncated { .. } => "truncated",
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{o:>8}  ")?,
            None => f.write_str("       ?  ")?,
        }
        match &self.item {
            Item::Packet(p) => write!(f, "{p}"),
            Item::Element(e) => write!(f, "  -> {e}"),
            Item::DecodeError(e) => write!(f, "ERROR {}", e.error),
            Item::Unsynced(u) => write!(f, "UNSYNCED {} nibbles skipped", u.nibbles),
            Item::FrameError(e) => write!(f, "FRAME ERROR {}", e.error),
            Item::EndOfTrace => f.write_str("END OF TRACE"),
        }
    }
}

/// Frames (or raw bytes, 16 to a frame) demultiplexed per load, so that the decoder sees long runs.
const LOAD_FRAMES: usize = 16;
/// Stream bytes one load can hold.
const LOAD: usize = LOAD_FRAMES * FRAME_LEN;
/// Buffer offsets kept for the last stream bytes: a load plus the longest packet (20 bytes) before it.
const RING: usize = 512;
const PENDING: usize = 32;

/// Streaming form of [`dump`]: feed a trace buffer in chunks of any size, get the same records.
///
/// Sans-IO like the layers under it: [`Dumper::feed`] takes the next chunk and returns a [`Records`]
/// iterator; drive it to its end to consume the whole chunk (a partial frame is kept for the next call).
/// [`Dumper::finish`] ends the trace (an incomplete packet, unsynchronised data, then
/// [`Item::EndOfTrace`]). Memory use is fixed: records come out as they are decoded.
///
/// ```
/// use stp_decode::dump::{dump, DumpOptions, Dumper};
/// let mut bytes = vec![0xFF; 10];
/// bytes.extend([0x0F, 0x0F, 0x30, 0x41, 0x41, 0xA5]);
/// let mut dumper = Dumper::new(DumpOptions::raw());
/// let mut lines = Vec::new();
/// for chunk in bytes.chunks(3) {
///     lines.extend(dumper.feed(chunk).map(|r| r.to_string()));
/// }
/// lines.extend(dumper.finish().map(|r| r.to_string()));
/// let whole: Vec<String> = dump(&bytes, DumpOptions::raw()).map(|r| r.to_string()).collect();
/// assert_eq!(lines, whole);
/// ```
#[derive(Debug, Clone)]
pub struct Dumper {
    options: DumpOptions,
    deformatter: Deformatter,
    decoder: StpDecoder,
    elements: ElementDecoder,
    /// Buffer offset of each of the last `RING` bytes of the trace ID's stream.
    ring: [u64; RING],
    stream_bytes: u64,
    /// Raw framing: bytes taken so far.
    fed: u64,
    frame: [u8; LOAD],
    frame_len: usize,
    frame_index: usize,
    /// The decoder holds events not yet handed out.
    backlog: bool,
    /// A frame error met by the last load, reported after the bytes loaded before it.
    frame_error: Option<FrameErrorAt>,
    pending: [Option<Record>; PENDING],
    pending_head: usize,
    pending_len: usize,
    ended: bool,
    /// The first nibble of the unsynchronised range being skipped and the buffer offset of its byte, taken
    /// while that byte is still in `ring` (the range may run on far beyond it).
    unsynced_at: Option<(u64, u64)>,
}

/// The records of one [`Dumper::feed`] or [`Dumper::finish`] call.
#[derive(Debug)]
pub struct Records<'d, 'i> {
    dumper: &'d mut Dumper,
    input: &'i [u8],
    pos: usize,
    finishing: bool,
}

impl Records<'_, '_> {
    /// Bytes of the chunk consumed so far.
    pub fn consumed(&self) -> usize {
        self.pos
    }
}

impl Iterator for Records<'_, '_> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if self.finishing {
            self.dumper.next_final()
        } else {
            self.dumper.next_record(self.input, &mut self.pos)
        }
    }
}

/// The iterator [`dump`] returns.
#[derive(Debug, Clone)]
pub struct TraceDump<'a> {
    buffer: &'a [u8],
    pos: usize,
    dumper: Dumper,
    finishing: bool,
}

/// Decodes a whole buffer; see the module documentation.
///
/// ```
/// use stp_decode::dump::{dump, DumpOptions, Item};
/// // A raw STP stream: ASYNC, VERSION 3, M8 0x41, D8 0x5A (nibbles 1 4 1 4 5 A, low nibble first).
/// let mut bytes = vec![0xFF; 10];
/// bytes.extend([0x0F, 0x0F, 0x30, 0x41, 0x41, 0xA5]);
/// let lines: Vec<String> = dump(&bytes, DumpOptions::raw()).map(|r| r.to_string()).collect();
/// assert!(lines[3].ends_with("D8 data=0x5a"), "{lines:?}");
/// assert!(lines[4].contains("DATA master=0x41 channel=0x0000 D8 0x5a"));
/// ```
pub fn dump(buffer: &[u8], options: DumpOptions) -> TraceDump<'_> {
    TraceDump {
        buffer,
        pos: 0,
        dumper: Dumper::new(options),
        finishing: false,
    }
}

impl Iterator for TraceDump<'_> {
    type Item = Record;

    fn next(&mut self) -> Option<Record> {
        if !self.finishing {
            if let Some(record) = self.dumper.next_record(self.buffer, &mut self.pos) {
                return Some(record);
            }
            self.finishing = true;
        }
        self.dumper.next_final()
    }
}

/// A decoder event as a record item, with the nibble offset it starts at.
fn item_of(event: Event) -> (u64, Item) {
    match event {
        Event::Packet(p) => (p.offset, Item::Packet(p)),
        Event::Error(e) => (e.offset, Item::DecodeError(e)),
        Event::Unsynced(u) => (u.offset, Item::Unsynced(u)),
    }
}

/// The buffer offset of the byte holding stream nibble `nibble`, while that byte is among the last
/// [`RING`] of the `stream_bytes` taken so far.
fn offset_in_ring(ring: &[u64; RING], stream_bytes: u64, nibble: u64) -> Option<u64> {
    let byte = nibble / 2;
    (byte < stream_bytes && stream_bytes - byte <= RING as u64)
        .then(|| ring[(byte % RING as u64) as usize])
}

struct Sink<'s> {
    ring: &'s [u64; RING],
    stream_bytes: u64,
    unsynced_at: Option<(u64, u64)>,
    elements: &'s mut ElementDecoder,
    pending: &'s mut [Option<Record>; PENDING],
    head: usize,
    len: &'s mut usize,
}

impl Sink<'_> {
    fn offset_of(&self, nibble: u64) -> Option<u64> {
        offset_in_ring(self.ring, self.stream_bytes, nibble)
    }

    /// The buffer offset of an item starting at `nibble`. An unsynchronised range can start any distance
    /// back, beyond the ring, so its offset is the one taken when it began; anything else starts at most a
    /// packet and an ASYNC back.
    fn item_offset(&self, nibble: u64, item: &Item) -> Option<u64> {
        match (item, self.unsynced_at) {
            (Item::Unsynced(_), Some((start, offset))) if start == nibble => Some(offset),
            _ => self.offset_of(nibble),
        }
    }

    fn push(&mut self, record: Record) {
        debug_assert!(*self.len < PENDING);
        if *self.len < PENDING {
            self.pending[(self.head + *self.len) % PENDING] = Some(record);
            *self.len += 1;
        }
    }

    fn event(&mut self, event: Event) {
        let (nibble, item) = item_of(event);
        let offset = self.item_offset(nibble, &item);
        self.push(Record {
            offset,
            nibble,
            item,
        });
        if let Some(element) = self.elements.on_event(&event) {
            self.push(Record {
                offset,
                nibble,
                item: Item::Element(element),
            });
        }
    }
}

impl Dumper {
    /// A dumper at the start of a trace.
    pub const fn new(options: DumpOptions) -> Self {
        let mode = match options.framing {
            Framing::Formatted(mode) => mode,
            Framing::Raw => FrameMode::Memory,
        };
        Dumper {
            options,
            deformatter: Deformatter::new(mode),
            decoder: StpDecoder::new(),
            elements: ElementDecoder::new(),
            ring: [0; RING],
            stream_bytes: 0,
            fed: 0,
            frame: [0; LOAD],
            frame_len: 0,
            frame_index: 0,
            backlog: false,
            frame_error: None,
            pending: [None; PENDING],
            pending_head: 0,
            pending_len: 0,
            ended: false,
            unsynced_at: None,
        }
    }

    /// Takes the next chunk of the buffer; drive the iterator to its end to consume all of it.
    pub fn feed<'d, 'i>(&'d mut self, chunk: &'i [u8]) -> Records<'d, 'i> {
        if !chunk.is_empty() {
            self.ended = false;
        }
        Records {
            dumper: self,
            input: chunk,
            pos: 0,
            finishing: false,
        }
    }

    /// Ends the trace: records still held, an incomplete packet, unsynchronised data and
    /// [`Item::EndOfTrace`]. Feeding after it continues the offsets; decoding resumes at the next ASYNC.
    pub fn finish(&mut self) -> Records<'_, 'static> {
        Records {
            dumper: self,
            input: &[],
            pos: 0,
            finishing: true,
        }
    }

    fn pop(&mut self) -> Option<Record> {
        while self.pending_len > 0 {
            let r = self.pending[self.pending_head].take();
            self.pending_head = (self.pending_head + 1) % PENDING;
            self.pending_len -= 1;
            if !self.options.elements_only
                || matches!(
                    r,
                    Some(Record {
                        item: Item::Element(_),
                        ..
                    })
                )
            {
                return r;
            }
        }
        None
    }

    fn sink(&mut self) -> (Sink<'_>, &mut StpDecoder) {
        (
            Sink {
                ring: &self.ring,
                stream_bytes: self.stream_bytes,
                unsynced_at: self.unsynced_at,
                elements: &mut self.elements,
                pending: &mut self.pending,
                head: self.pending_head,
                len: &mut self.pending_len,
            },
            &mut self.decoder,
        )
    }

    /// Decodes loaded bytes up to the next event; returns its record (its element, if any, waits in the
    /// queue), or `None` once the loaded bytes are used up.
    #[inline(always)]
    fn decode_loaded(&mut self) -> Option<Record> {
        loop {
            let (start, end) = (self.frame_index, self.frame_len);
            let mut events = self.decoder.feed(&self.frame[start..end]);
            let event = events.next();
            self.frame_index += events.consumed();
            self.backlog = event.is_some();
            let Some(event) = event else {
                self.note_unsynced_start();
                return None;
            };
            let element = self.elements.on_event(&event);
            if self.options.elements_only {
                let Some(element) = element else { continue };
                let (sink, _) = self.sink();
                return Some(Record {
                    offset: sink.offset_of(element.offset),
                    nibble: element.offset,
                    item: Item::Element(element),
                });
            }
            let (nibble, item) = item_of(event);
            let (mut sink, _) = self.sink();
            let offset = sink.item_offset(nibble, &item);
            if let Some(element) = element {
                sink.push(Record {
                    offset,
                    nibble,
                    item: Item::Element(element),
                });
            }
            return Some(Record {
                offset,
                nibble,
                item,
            });
        }
    }

    /// Once the loaded bytes are decoded: takes the buffer offset of an unsynchronised range that began in
    /// them, while its first byte is still in the ring.
    fn note_unsynced_start(&mut self) {
        if let Some(start) = self.decoder.unsynced_start() {
            if self.unsynced_at.map(|(nibble, _)| nibble) != Some(start) {
                if let Some(offset) = offset_in_ring(&self.ring, self.stream_bytes, start) {
                    self.unsynced_at = Some((start, offset));
                }
            }
        }
    }

    /// Loads the trace ID's bytes of the next [`LOAD_FRAMES`] frames (or the next [`LOAD`] bytes of a raw
    /// buffer).
    fn load(&mut self, input: &[u8], pos: &mut usize) {
        let start = *pos;
        self.frame_index = 0;
        self.frame_len = 0;
        if self.options.framing == Framing::Raw {
            let end = (start + LOAD).min(input.len());
            for &b in &input[start..end] {
                self.ring[(self.stream_bytes % RING as u64) as usize] = self.fed;
                self.stream_bytes += 1;
                self.fed += 1;
                self.frame[self.frame_len] = b;
                self.frame_len += 1;
            }
            *pos = end;
            return;
        }
        let trace_id = self.options.trace_id;
        // Frames without ID changes come as 15-byte runs, copied straight in.
        while self.frame_len + (FRAME_LEN - 1) <= LOAD {
            let Some(run) = self.deformatter.next_run(&input[*pos..]) else {
                break;
            };
            *pos += FRAME_LEN;
            if run.id == trace_id {
                let n = run.bytes.len();
                self.frame[self.frame_len..self.frame_len + n].copy_from_slice(&run.bytes);
                self.frame_len += n;
                let first = (self.stream_bytes % RING as u64) as usize;
                // One contiguous slice unless the run wraps round the ring (measured cheaper than one loop of
                // wrapped indices or of two ranges).
                match self.ring.get_mut(first..first + n) {
                    Some(slots) => {
                        for (k, slot) in slots.iter_mut().enumerate() {
                            *slot = run.offset + k as u64;
                        }
                    }
                    None => {
                        for (k, slot) in (first..first + n).enumerate() {
                            self.ring[slot % RING] = run.offset + k as u64;
                        }
                    }
                }
                self.stream_bytes += n as u64;
            }
        }
        if *pos != start {
            return;
        }
        let want = LOAD - self.deformatter.pending();
        let end = (start + want).min(input.len());
        let mut frames = self.deformatter.feed(&input[start..end]);
        for result in frames.by_ref() {
            match result {
                Ok(frame) => {
                    for b in frame.bytes.iter().filter(|b| b.id == trace_id) {
                        if self.frame_len < LOAD {
                            self.ring[(self.stream_bytes % RING as u64) as usize] =
                                frame.offset + u64::from(b.index);
                            self.stream_bytes += 1;
                            self.frame[self.frame_len] = b.byte;
                            self.frame_len += 1;
                        }
                    }
                }
                Err(error) => {
                    // Reported once the bytes of the frames before it are decoded; the load ends here.
                    self.frame_error = Some(error);
                    break;
                }
            }
        }
        // Any bytes the frame iterator did not reach stay for the next call.
        *pos = start + frames.consumed();
    }

    /// The next record from the loaded bytes, or the held frame error once they are decoded.
    #[inline(always)]
    fn decode_step(&mut self) -> Option<Record> {
        if self.backlog || self.frame_index < self.frame_len {
            if let Some(record) = self.decode_loaded() {
                return Some(record);
            }
        }
        let error = self.frame_error.take()?;
        if self.options.elements_only {
            return None;
        }
        Some(Record {
            offset: Some(error.offset),
            nibble: self.decoder.offset(),
            item: Item::FrameError(error),
        })
    }

    #[inline(always)]
    fn next_record(&mut self, input: &[u8], pos: &mut usize) -> Option<Record> {
        loop {
            if let Some(record) = self.pop() {
                return Some(record);
            }
            if let Some(record) = self.decode_step() {
                return Some(record);
            }
            if *pos < input.len() {
                self.load(input, pos);
                continue;
            }
            return None;
        }
    }

    fn next_final(&mut self) -> Option<Record> {
        loop {
            if let Some(record) = self.pop() {
                return Some(record);
            }
            if let Some(record) = self.decode_step() {
                return Some(record);
            }
            if self.ended {
                return None;
            }
            let nibble = self.decoder.offset();
            let (mut sink, decoder) = self.sink();
            for event in decoder.finish() {
                sink.event(event);
            }
            sink.push(Record {
                offset: None,
                nibble,
                item: Item::EndOfTrace,
            });
            self.ended = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// The `cs_deformat` fuzz finding's shape (`fuzz/regressions/cs_deformat/`): an invalid ASYNC, then an
    /// unsynchronised stretch longer than the dumper's window of byte offsets, then an ASYNC. The range's
    /// offset used to be known only when the chunks were small enough for its start to still be in the
    /// window when the ASYNC ended it.
    #[test]
    fn a_long_unsynchronised_range_has_its_offset_however_it_is_fed() {
        let mut bytes = std::vec![0xFF; 10];
        bytes.extend([0x0F, 0x0F, 0x30]); // ASYNC, VERSION 3
        bytes.extend([0xFF, 0x11]); // F F at an opcode (byte 13): invalid ASYNC; skipping starts at byte 14
        bytes.extend(std::iter::repeat_n(0x21, 1500)); // never 21 F in a row
        bytes.extend([0xFF; 10]);
        bytes.extend([0x0F, 0x0F, 0x30]);
        let whole: Vec<Record> = dump(&bytes, DumpOptions::raw()).collect();
        let unsynced = whole
            .iter()
            .find(|r| matches!(r.item, Item::Unsynced(_)))
            .copied();
        assert_eq!(
            unsynced.map(|r| (r.offset, r.nibble)),
            Some((Some(14), 28)),
            "{whole:?}"
        );
        for size in [1, 16, 300, 1000] {
            let mut dumper = Dumper::new(DumpOptions::raw());
            let mut fed = Vec::new();
            for chunk in bytes.chunks(size) {
                fed.extend(dumper.feed(chunk));
            }
            fed.extend(dumper.finish());
            assert_eq!(fed, whole, "chunks of {size}");
        }
    }
}
