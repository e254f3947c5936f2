//! The STP nibble decoder: nibbles in, packets, errors and skipped ranges out.
//!
//! # Call contract
//!
//! [`StpDecoder`] is sans-IO: it owns no buffers of input and never blocks.
//!
//! - **Input**: [`StpDecoder::feed`] (bytes, low nibble first) or [`StpDecoder::feed_nibbles`] (one nibble
//!   per byte). Both return an [`Events`] iterator; drive it to its end to consume the whole slice. Input
//!   may stop anywhere, mid-byte included ([`StpDecoder::feed_nibbles`]) and mid-packet: the partial
//!   packet is kept and completed by the next call. A prefix of a valid stream never yields an error.
//! - **End of trace**: [`StpDecoder::finish`] reports a packet left incomplete ([`StpError::Truncated`])
//!   and data never synchronised ([`Event::Unsynced`]), then waits for an ASYNC again.
//! - **Getters**: [`StpDecoder::is_synced`], [`StpDecoder::ts_format`], [`StpDecoder::running_timestamp`],
//!   [`StpDecoder::offset`], [`StpDecoder::unsynced_start`].
//!
//! Positions are nibble offsets from the first nibble ever fed (or since [`StpDecoder::reset`]).
//!
//! # Synchronisation
//!
//! Nothing is decoded before the first ASYNC. ASYNC detection runs beside the packet state machine on
//! every nibble: up to 21 consecutive `F` nibbles are held back, and a `0` after 21 of them is an ASYNC
//! wherever it falls (an ASYNC inside a packet reports that packet as truncated). Surplus leading `F`s
//! belong to the data before. After any error the decoder is unsynchronised until the next ASYNC.

mod fast;

use crate::error::{DecodeError, StpError, Truncation};
use crate::opcode::{OP1, OP2, OP3, OP4};
use crate::packet::{IdWidth, Packet, PacketKind, PacketType};
use crate::timestamp::{length_from_nibble, Timestamp, TsFormat};

/// Number of `F` nibbles in an ASYNC before its final `0`.
pub const ASYNC_F_NIBBLES: u8 = 21;

/// Something the decoder found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Event {
    /// A complete packet.
    Packet(Packet),
    /// A packet that could not be decoded; the decoder hunts for the next ASYNC.
    Error(DecodeError),
    /// A range of nibbles skipped while unsynchronised (reported when sync is found or at the end).
    Unsynced(Unsynced),
}

/// A range of nibbles that could not be decoded because no ASYNC had been seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Unsynced {
    /// Nibble offset of the first skipped nibble.
    pub offset: u64,
    /// Number of skipped nibbles.
    pub nibbles: u64,
}

/// Where the packet state machine is inside the current packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Opcode,
    Payload,
    UserLen,
    TimeClock,
    TimeVersion,
    TimeLen,
    TimeValue,
    TsLen,
    TsValue,
}

/// What makes up a packet once it is complete, assembled by the state machine ([`Partial`]) or read at
/// once by the fast path.
#[derive(Debug, Clone, Copy)]
struct Fields {
    start: u64,
    read: u8,
    payload: u64,
    payload_nibbles: u8,
    time_clock: u8,
    time_version: u8,
    time_nibbles: u8,
    time: u64,
    ts_nibbles: u8,
    ts: u64,
}

impl Fields {
    const EMPTY: Fields = Fields {
        start: 0,
        read: 0,
        payload: 0,
        payload_nibbles: 0,
        time_clock: 0,
        time_version: 0,
        time_nibbles: 0,
        time: 0,
        ts_nibbles: 0,
        ts: 0,
    };
}

/// The packet being assembled.
#[derive(Debug, Clone, Copy)]
struct Partial {
    active: bool,
    opcode: u16,
    opcode_nibbles: u8,
    ty: Option<PacketType>,
    phase: Phase,
    left: u8,
    f: Fields,
}

impl Partial {
    const IDLE: Partial = Partial {
        active: false,
        opcode: 0,
        opcode_nibbles: 0,
        ty: None,
        phase: Phase::Opcode,
        left: 0,
        f: Fields::EMPTY,
    };
}

const QUEUE: usize = 8;

/// A small fixed ring of events waiting to be handed out (one input nibble yields at most four).
#[derive(Debug, Clone)]
struct Queue {
    slots: [Option<Event>; QUEUE],
    head: usize,
    len: usize,
}

impl Queue {
    const EMPTY: Queue = Queue {
        slots: [None; QUEUE],
        head: 0,
        len: 0,
    };

    fn push(&mut self, event: Event) {
        debug_assert!(self.len < QUEUE, "event queue bound exceeded");
        if self.len < QUEUE {
            self.slots[(self.head + self.len) % QUEUE] = Some(event);
            self.len += 1;
        }
    }

    fn pop(&mut self) -> Option<Event> {
        if self.len == 0 {
            return None;
        }
        let event = self.slots[self.head].take();
        self.head = (self.head + 1) % QUEUE;
        self.len -= 1;
        event
    }
}

/// Sans-IO decoder of a MIPI STPv2 nibble stream (one trace source). See the module documentation for
/// the call contract.
///
/// ```
/// use stp_decode::{Event, PacketKind, StpDecoder};
///
/// let mut dec = StpDecoder::new();
/// // ASYNC (byte-aligned: FF x10, 0F), VERSION 3, M8 0x41.
/// let mut bytes = vec![0xFF; 10];
/// bytes.extend([0x0F, 0x0F, 0x30, 0x41]);
/// let packets: Vec<_> = dec.feed(&bytes).collect();
/// assert_eq!(packets.len(), 2); // ASYNC, VERSION; the M8 (nibbles 1, 4) lacks its last nibble
/// let rest: Vec<_> = dec.feed_nibbles(&[0x1]).collect();
/// assert!(matches!(rest[0], Event::Packet(p) if p.kind == PacketKind::Master {
///     width: stp_decode::IdWidth::W8, master: 0x41 }));
/// ```
#[derive(Debug, Clone)]
pub struct StpDecoder {
    next_offset: u64,
    carry: Option<u8>,
    f_run: u8,
    f_start: u64,
    synced: bool,
    skip_start: u64,
    skipped: u64,
    ts_format: Option<TsFormat>,
    running_ts: u64,
    pkt: Partial,
    queue: Queue,
}

impl Default for StpDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl StpDecoder {
    /// A decoder waiting for its first ASYNC, with no timestamp format until a VERSION packet.
    pub const fn new() -> Self {
        StpDecoder {
            next_offset: 0,
            carry: None,
            f_run: 0,
            f_start: 0,
            synced: false,
            skip_start: 0,
            skipped: 0,
            ts_format: None,
            running_ts: 0,
            pkt: Partial::IDLE,
            queue: Queue::EMPTY,
        }
    }

    /// Forgets everything, as [`StpDecoder::new`]; offsets restart at 0.
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// True between an ASYNC and the next error.
    pub const fn is_synced(&self) -> bool {
        self.synced
    }

    /// The timestamp format selected by the last VERSION packet.
    pub const fn ts_format(&self) -> Option<TsFormat> {
        self.ts_format
    }

    /// The running timestamp after the last timestamped packet (0 before any).
    pub const fn running_timestamp(&self) -> u64 {
        self.running_ts
    }

    /// Number of nibbles taken in so far: the offset the next nibble of input will have.
    pub const fn offset(&self) -> u64 {
        self.next_offset + self.carry.is_some() as u64
    }

    /// While unsynchronised data is being skipped, the nibble offset of its first nibble: the offset the
    /// [`Event::Unsynced`] reporting the range will carry once an ASYNC (or [`StpDecoder::finish`]) ends it.
    pub const fn unsynced_start(&self) -> Option<u64> {
        if !self.synced && self.skipped > 0 {
            Some(self.skip_start)
        } else {
            None
        }
    }

    /// Feeds bytes (bits 3:0 are the first nibble, bits 7:4 the second).
    #[must_use = "input is decoded only as the returned events are iterated"]
    pub fn feed<'d, 'i>(&'d mut self, bytes: &'i [u8]) -> Events<'d, 'i> {
        Events {
            decoder: self,
            input: bytes,
            index: 0,
            bytes: true,
        }
    }

    /// Feeds nibbles, one per element (bits 3:0; the high bits are ignored), for input that stops mid-byte.
    #[must_use = "input is decoded only as the returned events are iterated"]
    pub fn feed_nibbles<'d, 'i>(&'d mut self, nibbles: &'i [u8]) -> Events<'d, 'i> {
        Events {
            decoder: self,
            input: nibbles,
            index: 0,
            bytes: false,
        }
    }

    /// Hands out the next pending event, if any (events left behind by a dropped [`Events`]).
    pub fn poll(&mut self) -> Option<Event> {
        self.queue.pop()
    }

    /// Ends the trace: held `F` nibbles are decoded as data, an incomplete packet is reported as
    /// [`StpError::Truncated`] and unsynchronised data as [`Event::Unsynced`]. The decoder then waits for
    /// an ASYNC; the timestamp format and the running time are kept.
    #[must_use = "input is decoded only as the returned events are iterated"]
    pub fn finish(&mut self) -> Events<'_, 'static> {
        if let Some(high) = self.carry.take() {
            self.push_raw(high);
        }
        self.release_f_run();
        if self.synced && self.pkt.active {
            let error = StpError::Truncated {
                packet: self.pkt.ty,
                nibbles: self.pkt.f.read,
                cause: Truncation::EndOfTrace,
            };
            self.queue.push(Event::Error(DecodeError {
                offset: self.pkt.f.start,
                error,
            }));
        }
        self.flush_unsynced();
        self.synced = false;
        self.pkt = Partial::IDLE;
        Events {
            decoder: self,
            input: &[],
            index: 0,
            bytes: true,
        }
    }

    fn flush_unsynced(&mut self) {
        if !self.synced && self.skipped > 0 {
            self.queue.push(Event::Unsynced(Unsynced {
                offset: self.skip_start,
                nibbles: self.skipped,
            }));
            self.skipped = 0;
        }
    }

    fn release_f_run(&mut self) {
        let (start, run) = (self.f_start, self.f_run);
        self.f_run = 0;
        for i in 0..u64::from(run) {
            self.step(0xF, start + i);
        }
    }

    /// One nibble through the ASYNC detector.
    fn push_raw(&mut self, nibble: u8) {
        let pos = self.next_offset;
        self.next_offset += 1;
        if nibble == 0xF {
            if self.f_run == ASYNC_F_NIBBLES {
                // More than 21 F: the oldest one cannot belong to an ASYNC.
                let oldest = self.f_start;
                self.f_start += 1;
                self.step(0xF, oldest);
            } else {
                if self.f_run == 0 {
                    self.f_start = pos;
                }
                self.f_run += 1;
            }
            return;
        }
        if nibble == 0 && self.f_run == ASYNC_F_NIBBLES {
            self.f_run = 0;
            self.on_async(self.f_start);
            return;
        }
        self.release_f_run();
        self.step(nibble, pos);
    }

    fn on_async(&mut self, start: u64) {
        if self.synced && self.pkt.active {
            let error = StpError::Truncated {
                packet: self.pkt.ty,
                nibbles: self.pkt.f.read,
                cause: Truncation::Async,
            };
            self.queue.push(Event::Error(DecodeError {
                offset: self.pkt.f.start,
                error,
            }));
        }
        self.flush_unsynced();
        self.pkt = Partial::IDLE;
        self.synced = true;
        self.queue.push(Event::Packet(Packet {
            offset: start,
            nibbles: ASYNC_F_NIBBLES + 1,
            kind: PacketKind::Async,
        }));
    }

    fn fail(&mut self, error: StpError) {
        self.fail_at(self.pkt.f.start, error);
    }

    /// Reports `error` for the packet starting at nibble `offset` and hunts for the next ASYNC.
    fn fail_at(&mut self, offset: u64, error: StpError) {
        self.queue.push(Event::Error(DecodeError { offset, error }));
        self.pkt = Partial::IDLE;
        self.synced = false;
        self.skipped = 0;
    }

    /// One nibble through the packet state machine.
    fn step(&mut self, n: u8, pos: u64) {
        if !self.synced {
            if self.skipped == 0 {
                self.skip_start = pos;
            }
            self.skipped += 1;
            return;
        }
        if !self.pkt.active {
            self.pkt = Partial {
                active: true,
                f: Fields {
                    start: pos,
                    ..Fields::EMPTY
                },
                ..Partial::IDLE
            };
        }
        self.pkt.f.read += 1;
        match self.pkt.phase {
            Phase::Opcode => self.step_opcode(n),
            Phase::Payload => {
                self.pkt.f.payload = (self.pkt.f.payload << 4) | u64::from(n);
                self.pkt.f.payload_nibbles += 1;
                self.pkt.left -= 1;
                if self.pkt.left == 0 {
                    self.after_payload();
                }
            }
            Phase::UserLen => {
                self.pkt.phase = Phase::Payload;
                self.pkt.left = n + 1;
            }
            Phase::TimeClock => {
                self.pkt.f.time_clock = n;
                self.pkt.phase = Phase::TimeVersion;
            }
            Phase::TimeVersion => {
                self.pkt.f.time_version = n;
                self.pkt.phase = Phase::TimeLen;
            }
            Phase::TimeLen => match length_from_nibble(n) {
                None => {
                    let packet = self.pkt.ty.unwrap_or(PacketType::Time);
                    self.fail(StpError::BadTimestampLength { packet });
                }
                Some(0) => self.after_payload(),
                Some(len) => {
                    self.pkt.f.time_nibbles = len;
                    self.pkt.left = len;
                    self.pkt.phase = Phase::TimeValue;
                }
            },
            Phase::TimeValue => {
                self.pkt.f.time = (self.pkt.f.time << 4) | u64::from(n);
                self.pkt.left -= 1;
                if self.pkt.left == 0 {
                    self.after_payload();
                }
            }
            Phase::TsLen => match length_from_nibble(n) {
                None => {
                    let packet = self.pkt.ty.unwrap_or(PacketType::FlagTs);
                    self.fail(StpError::BadTimestampLength { packet });
                }
                Some(0) => self.complete(),
                Some(len) => {
                    self.pkt.f.ts_nibbles = len;
                    self.pkt.left = len;
                    self.pkt.phase = Phase::TsValue;
                }
            },
            Phase::TsValue => {
                self.pkt.f.ts = (self.pkt.f.ts << 4) | u64::from(n);
                self.pkt.left -= 1;
                if self.pkt.left == 0 {
                    self.complete();
                }
            }
        }
    }

    fn step_opcode(&mut self, n: u8) {
        let p = &mut self.pkt;
        p.opcode = (p.opcode << 4) | u16::from(n);
        p.opcode_nibbles += 1;
        let entry = match (p.opcode_nibbles, n) {
            (1, 0xF) | (2, 0x0) | (3, 0xF) => return,
            (2, 0xF) => return self.fail(StpError::InvalidAsync),
            (1, _) => OP1[usize::from(n)],
            (2, _) => OP2[usize::from(n)],
            (3, _) => OP3[usize::from(n)],
            _ => OP4[usize::from(n)],
        };
        match entry {
            Some(ty) => self.begin(ty),
            None => {
                let (opcode, nibbles) = (p.opcode, p.opcode_nibbles);
                self.fail(StpError::ReservedOpcode { opcode, nibbles })
            }
        }
    }

    fn begin(&mut self, ty: PacketType) {
        self.pkt.ty = Some(ty);
        let payload = match fast::fixed_payload(ty) {
            Some(n) => n,
            None if matches!(ty, PacketType::User | PacketType::UserTs) => {
                self.pkt.phase = Phase::UserLen;
                return;
            }
            None => {
                self.pkt.phase = Phase::TimeClock;
                return;
            }
        };
        if payload == 0 {
            self.after_payload();
        } else {
            self.pkt.phase = Phase::Payload;
            self.pkt.left = payload;
        }
    }

    /// True where the next nibble starts a packet of a synchronised stream and no `F` is held back.
    fn at_packet_boundary(&self) -> bool {
        self.synced && !self.pkt.active && self.f_run == 0
    }

    /// Decodes a whole packet at the start of `input` (after the carried nibble) through the fast path;
    /// returns the input bytes it consumed and the event made (`None` if it went to the queue), or `None`
    /// when the state machine has to take the packet.
    #[inline]
    fn fast_packet(&mut self, input: &[u8]) -> Option<(usize, Option<Event>)> {
        let window = fast::Window::new(self.carry, input);
        let (ty, packet) = fast::packet(window, self.next_offset, self.ts_format)?;
        let len = u32::from(packet.read);
        let from_input = len - u32::from(self.carry.is_some());
        let consumed = from_input.div_ceil(2) as usize;
        self.carry = (from_input % 2 == 1).then(|| input[consumed - 1] >> 4);
        self.next_offset += u64::from(len);
        Some((consumed, self.packet_event(ty, packet)))
    }

    fn after_payload(&mut self) {
        let Some(ty) = self.pkt.ty else { return };
        if !ty.has_timestamp() {
            return self.complete();
        }
        match self.ts_format {
            None => self.fail(StpError::TimestampBeforeVersion { packet: ty }),
            Some(TsFormat::Legacy) => {
                self.pkt.phase = Phase::TsValue;
                self.pkt.f.ts_nibbles = 2;
                self.pkt.left = 2;
            }
            Some(_) => self.pkt.phase = Phase::TsLen,
        }
    }

    fn complete(&mut self) {
        let Some(ty) = self.pkt.ty else {
            return;
        };
        let fields = self.pkt.f;
        self.pkt = Partial::IDLE;
        if let Some(event) = self.packet_event(ty, fields) {
            self.queue.push(event);
        }
    }

    /// The event a complete packet makes: the packet, or an error for an unsupported VERSION. The packet
    /// state must be idle.
    #[inline(always)]
    fn packet_event(&mut self, ty: PacketType, p: Fields) -> Option<Event> {
        let ts = if ty.has_timestamp() {
            let absolute = self
                .ts_format
                .and_then(|f| f.apply(self.running_ts, p.ts_nibbles, p.ts));
            if let Some(abs) = absolute {
                self.running_ts = abs;
            }
            Some(Timestamp {
                nibbles: p.ts_nibbles,
                update: p.ts,
                absolute,
            })
        } else {
            None
        };
        let v = p.payload;
        let kind = match ty {
            PacketType::Null | PacketType::NullTs => PacketKind::Null { ts },
            PacketType::M8 => PacketKind::Master {
                width: IdWidth::W8,
                master: v as u16,
            },
            PacketType::M16 => PacketKind::Master {
                width: IdWidth::W16,
                master: v as u16,
            },
            PacketType::C8 => PacketKind::Channel {
                width: IdWidth::W8,
                channel: v as u16,
            },
            PacketType::C16 => PacketKind::Channel {
                width: IdWidth::W16,
                channel: v as u16,
            },
            PacketType::Merr => PacketKind::MasterError { value: v as u8 },
            PacketType::Gerr => PacketKind::GlobalError { value: v as u8 },
            PacketType::Data { width, marker, .. } => PacketKind::Data {
                width,
                value: v,
                marker,
                ts,
            },
            PacketType::Flag | PacketType::FlagTs => PacketKind::Flag { ts },
            PacketType::User | PacketType::UserTs => PacketKind::User {
                nibbles: p.payload_nibbles,
                value: v,
                ts,
            },
            PacketType::Time | PacketType::TimeTs => PacketKind::Time {
                clock: p.time_clock,
                version: p.time_version,
                nibbles: p.time_nibbles,
                time: p.time,
                ts,
            },
            PacketType::Trig | PacketType::TrigTs => PacketKind::Trigger { value: v as u8, ts },
            PacketType::Freq | PacketType::FreqTs => PacketKind::Frequency {
                wide: false,
                hz: v,
                ts,
            },
            PacketType::Freq40 | PacketType::Freq40Ts => PacketKind::Frequency {
                wide: true,
                hz: v,
                ts,
            },
            PacketType::Xsync | PacketType::XsyncTs => PacketKind::Xsync { id: v as u8, ts },
            PacketType::Version => {
                let version = v as u8;
                match TsFormat::from_version(version) {
                    Some(format) => self.ts_format = Some(format),
                    None => {
                        self.ts_format = None;
                        self.fail_at(p.start, StpError::UnsupportedVersion { version });
                        return None;
                    }
                }
                PacketKind::Version { version }
            }
            PacketType::Async => PacketKind::Async,
        };
        Some(Event::Packet(Packet {
            offset: p.start,
            nibbles: p.read,
            kind,
        }))
    }
}

/// The events one call to [`StpDecoder::feed`], [`StpDecoder::feed_nibbles`] or [`StpDecoder::finish`]
/// produces. Input is read lazily: only bytes the iterator has reached are consumed, a byte always as a
/// whole (its second nibble is kept in the decoder if an event came out of the first).
#[derive(Debug)]
#[must_use = "input is decoded only as the events are iterated"]
pub struct Events<'d, 'i> {
    decoder: &'d mut StpDecoder,
    input: &'i [u8],
    index: usize,
    bytes: bool,
}

impl Events<'_, '_> {
    /// Number of input elements consumed so far.
    pub fn consumed(&self) -> usize {
        self.index
    }
}

impl Events<'_, '_> {
    /// One nibble through the state machine (the carried one, else the next of the input); false at the
    /// end of the input.
    #[inline(never)]
    fn step_nibble(&mut self) -> bool {
        if let Some(high) = self.decoder.carry.take() {
            self.decoder.push_raw(high);
            return true;
        }
        let Some(&value) = self.input.get(self.index) else {
            return false;
        };
        self.index += 1;
        if self.bytes {
            self.decoder.carry = Some(value >> 4);
        }
        self.decoder.push_raw(value & 0xF);
        true
    }
}

impl Iterator for Events<'_, '_> {
    type Item = Event;

    #[inline(always)]
    fn next(&mut self) -> Option<Event> {
        loop {
            if self.decoder.queue.len != 0 {
                return self.decoder.queue.pop();
            }
            if self.bytes && self.decoder.at_packet_boundary() {
                let rest = &self.input[self.index..];
                if !rest.is_empty() || self.decoder.carry.is_some() {
                    if let Some((consumed, event)) = self.decoder.fast_packet(rest) {
                        self.index += consumed;
                        match event {
                            Some(event) => return Some(event),
                            None => continue,
                        }
                    }
                }
            }
            if !self.step_nibble() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::DataWidth;
    use std::vec::Vec;

    /// ASYNC (byte-aligned) then VERSION `v`: `FF x10 0F`, `0F v0`.
    fn sync_bytes(version: u8) -> Vec<u8> {
        let mut b = std::vec![0xFF; 10];
        b.extend([0x0F, 0x0F, version << 4]);
        b
    }

    fn run(bytes: &[u8]) -> Vec<Event> {
        let mut d = StpDecoder::new();
        let mut out: Vec<Event> = d.feed(bytes).collect();
        out.extend(d.finish());
        out
    }

    fn run_nibbles(nibbles: &[u8]) -> Vec<Event> {
        let mut d = StpDecoder::new();
        let mut out: Vec<Event> = d.feed_nibbles(nibbles).collect();
        out.extend(d.finish());
        out
    }

    /// Packets other than ASYNC, VERSION and NULL.
    fn payload_packets(events: &[Event]) -> Vec<Packet> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Packet(p)
                    if !matches!(
                        p.kind,
                        PacketKind::Async
                            | PacketKind::Version { .. }
                            | PacketKind::Null { ts: None }
                    ) =>
                {
                    Some(*p)
                }
                _ => None,
            })
            .collect()
    }

    fn errors(events: &[Event]) -> Vec<DecodeError> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Error(err) => Some(*err),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn example_version_after_async() {
        let events = run(&sync_bytes(3));
        assert_eq!(events.len(), 2);
        assert!(
            matches!(events[0], Event::Packet(p) if p.kind == PacketKind::Async && p.offset == 0 && p.nibbles == 22)
        );
        assert!(
            matches!(events[1], Event::Packet(p) if p.kind == PacketKind::Version { version: 3 } && p.offset == 22)
        );
    }

    #[test]
    fn example_freq_19_2_mhz_then_m8() {
        // stm-issue-27: `0F 08 21 F4 08 10` = F08 FREQ 0x0124F800; the last `1` starts M8 0x40 (`04`).
        let mut b = sync_bytes(3);
        b.extend([0x0F, 0x08, 0x21, 0xF4, 0x08, 0x10, 0x04]);
        let events = run(&b);
        let p = payload_packets(&events);
        assert_eq!(
            p[0].kind,
            PacketKind::Frequency {
                wide: false,
                hz: 19_200_000,
                ts: None
            }
        );
        assert_eq!((p[0].offset, p[0].nibbles), (26, 11));
        assert_eq!(
            p[1].kind,
            PacketKind::Master {
                width: IdWidth::W8,
                master: 0x40
            }
        );
    }

    #[test]
    fn example_m8_with_f_carried_into_d32m() {
        // stm_only-juno: `41 F1` = M8 0x41, the F starts D32M `1A 00 00 00 30` = 0x10000000.
        let mut b = sync_bytes(3);
        b.extend([0x41, 0xF1, 0x1A, 0x00, 0x00, 0x00, 0x30]);
        let p = payload_packets(&run(&b));
        assert_eq!(
            p[0].kind,
            PacketKind::Master {
                width: IdWidth::W8,
                master: 0x41
            }
        );
        assert_eq!(
            p[1].kind,
            PacketKind::Data {
                width: DataWidth::W32,
                value: 0x1000_0000,
                marker: true,
                ts: None
            }
        );
        assert_eq!(p[1].offset, 26 + 3, "starts on the high nibble of F1");
        assert_eq!(p[1].packet_type().name(), "D32M");
    }

    #[test]
    fn example_c16() {
        let mut b = sync_bytes(3);
        b.extend([0x3F, 0x40, 0x08]);
        let p = payload_packets(&run(&b));
        assert_eq!(
            p[0].kind,
            PacketKind::Channel {
                width: IdWidth::W16,
                channel: 0x0480
            }
        );
    }

    #[test]
    fn example_flag_ts_full_then_partial() {
        // `EE 00 00 00 30 EA 2B 48 9C`: FLAG_TS with 16 nibbles; the next E (carried) with `D2 F6`: L=2, 0xD6.
        let mut b = sync_bytes(3);
        b.extend([0xEE, 0x00, 0x00, 0x00, 0x30, 0xEA, 0x2B, 0x48, 0x9C]);
        b.extend([0xE0, 0xD2, 0xF6]); // NULL, then the carried E
        let p = payload_packets(&run(&b));
        let ts = |p: &Packet| p.kind.timestamp().unwrap();
        assert_eq!(p[0].packet_type(), PacketType::FlagTs);
        assert_eq!(
            ts(&p[0]),
            Timestamp {
                nibbles: 16,
                update: 0x3_AEB2_84C9,
                absolute: Some(0x3_AEB2_84C9)
            }
        );
        assert_eq!(
            ts(&p[1]),
            Timestamp {
                nibbles: 2,
                update: 0xD6,
                absolute: Some(0x3_AEB2_84D6)
            }
        );
        assert_eq!(p[1].offset, 26 + 18 + 1);
    }

    #[test]
    fn example_d32ts_with_full_zero_timestamp() {
        // stm_only: (F carried) `06 30 7D 7A E4` + 8 x 00: D32TS 0x003D7A74, 16-nibble TS 0.
        let mut b = sync_bytes(3);
        b.push(0xF0); // NULL, then the carried F
        b.extend([0x06, 0x30, 0x7D, 0x7A, 0xE4]);
        b.extend([0x00; 8]);
        let p = payload_packets(&run(&b));
        assert_eq!(
            p[0].kind,
            PacketKind::Data {
                width: DataWidth::W32,
                value: 0x003D_7A74,
                marker: false,
                ts: Some(Timestamp {
                    nibbles: 16,
                    update: 0,
                    absolute: Some(0)
                })
            }
        );
        assert_eq!(p[0].packet_type().name(), "D32TS");
    }

    #[test]
    fn example_seed_master_channel_d32mts() {
        // docs/stm.md §1.2: M8(0) C8(1) D32MTS(0xDEADBEEF) TS 0x5A = 01 30 10 DA AE BD EE 2F A5.
        let mut b = sync_bytes(3);
        b.extend([0x01, 0x30, 0x10, 0xDA, 0xAE, 0xBD, 0xEE, 0x2F, 0xA5]);
        let events = run(&b);
        assert!(errors(&events).is_empty(), "{events:?}");
        let p = payload_packets(&events);
        assert_eq!(p.len(), 3);
        assert_eq!(
            p[2].kind,
            PacketKind::Data {
                width: DataWidth::W32,
                value: 0xDEAD_BEEF,
                marker: true,
                ts: Some(Timestamp {
                    nibbles: 2,
                    update: 0x5A,
                    absolute: Some(0x5A)
                })
            }
        );
    }

    #[test]
    fn nothing_before_first_async_is_decoded() {
        let mut n = std::vec![1, 2, 3];
        n.extend([0xF; 21]);
        n.push(0);
        let events = run_nibbles(&n);
        assert_eq!(
            events[0],
            Event::Unsynced(Unsynced {
                offset: 0,
                nibbles: 3
            })
        );
        assert!(
            matches!(events[1], Event::Packet(p) if p.offset == 3 && p.kind == PacketKind::Async)
        );
    }

    #[test]
    fn surplus_f_before_async_belong_to_earlier_data() {
        // OpenCSD issue #27: 22 F before the 0; the first F is not part of the ASYNC.
        let mut n = std::vec![1];
        n.extend([0xF; 22]);
        n.push(0);
        let events = run_nibbles(&n);
        assert_eq!(
            events[0],
            Event::Unsynced(Unsynced {
                offset: 0,
                nibbles: 2
            })
        );
        assert!(
            matches!(events[1], Event::Packet(p) if p.offset == 2 && p.kind == PacketKind::Async)
        );
        // While synced, trailing F of a data payload followed by an ASYNC: D8 0xFF then 21 F + 0.
        let mut n = std::vec![0xF; 21];
        n.extend([0, 0xF, 0, 0, 3, 4]);
        n.extend([0xF; 23]);
        n.push(0);
        let p: Vec<Packet> = run_nibbles(&n)
            .into_iter()
            .map(|e| match e {
                Event::Packet(p) => p,
                _ => panic!("unexpected {e:?}"),
            })
            .collect();
        assert_eq!(
            p[2].kind,
            PacketKind::Data {
                width: DataWidth::W8,
                value: 0xFF,
                marker: false,
                ts: None
            }
        );
        assert_eq!((p[3].kind, p[3].offset), (PacketKind::Async, 26 + 3));
    }

    #[test]
    fn async_on_odd_nibble_and_inside_a_packet() {
        // Synced, a D32 with 3 of 8 nibbles, then an ASYNC starting on an odd nibble.
        let mut n = std::vec![0xF; 21];
        n.extend([0, 0xF, 0, 0, 3, 6, 1, 2]);
        n.extend([0xF; 21]);
        n.push(0);
        n.extend([1, 4, 1]);
        let events = run_nibbles(&n);
        let err = errors(&events);
        assert_eq!(
            err,
            [DecodeError {
                offset: 26,
                error: StpError::Truncated {
                    packet: Some(PacketType::Data {
                        width: DataWidth::W32,
                        marker: false,
                        timestamp: false
                    }),
                    nibbles: 3,
                    cause: Truncation::Async
                }
            }]
        );
        let p = payload_packets(&events);
        assert_eq!(
            p[0].kind,
            PacketKind::Master {
                width: IdWidth::W8,
                master: 0x41
            },
            "decoding goes on after the ASYNC"
        );
    }

    fn expect_error_then_resync(after_sync: &[u8], error: StpError) {
        let mut n = std::vec![0xF; 21];
        n.extend([0, 0xF, 0, 0, 3]);
        n.extend_from_slice(after_sync);
        n.extend([1, 2, 3, 4]); // skipped: no sync
        n.extend([0xF; 21]);
        n.extend([0, 1, 4, 1]);
        let events = run_nibbles(&n);
        assert_eq!(errors(&events).first().map(|e| e.error), Some(error));
        assert_eq!(errors(&events)[0].offset, 26);
        assert!(
            events.iter().any(|e| matches!(e, Event::Unsynced(_))),
            "{events:?}"
        );
        let p = payload_packets(&events);
        assert_eq!(p.len(), 1, "only the M8 after the new ASYNC: {p:?}");
        assert!(matches!(p[0].kind, PacketKind::Master { master: 0x41, .. }));
    }

    #[test]
    fn reserved_opcodes_are_errors() {
        expect_error_then_resync(
            &[0xF, 0, 0xC],
            StpError::ReservedOpcode {
                opcode: 0xF0C,
                nibbles: 3,
            },
        );
        expect_error_then_resync(
            &[0xF, 0, 0xF, 2],
            StpError::ReservedOpcode {
                opcode: 0xF0F2,
                nibbles: 4,
            },
        );
    }

    #[test]
    fn f_f_at_opcode_is_invalid_async() {
        expect_error_then_resync(&[0xF, 0xF, 0xF, 1], StpError::InvalidAsync);
    }

    #[test]
    fn timestamp_length_f_is_an_error() {
        expect_error_then_resync(
            &[0xE, 0xF],
            StpError::BadTimestampLength {
                packet: PacketType::FlagTs,
            },
        );
    }

    #[test]
    fn time_length_f_is_an_error() {
        expect_error_then_resync(
            &[0xF, 0, 4, 1, 2, 0xF],
            StpError::BadTimestampLength {
                packet: PacketType::Time,
            },
        );
    }

    #[test]
    fn unsupported_version_is_an_error() {
        expect_error_then_resync(&[0xF, 0, 0, 5], StpError::UnsupportedVersion { version: 5 });
    }

    #[test]
    fn timestamp_before_version_is_an_error() {
        let mut n = std::vec![0xF; 21];
        n.extend([0, 1, 4, 1, 0xE, 2, 0]);
        let events = run_nibbles(&n);
        assert_eq!(
            errors(&events)[0],
            DecodeError {
                offset: 25,
                error: StpError::TimestampBeforeVersion {
                    packet: PacketType::FlagTs
                }
            }
        );
        // Untimestamped packets decode without VERSION (as OpenCSD does).
        assert!(matches!(
            payload_packets(&events)[0].kind,
            PacketKind::Master { master: 0x41, .. }
        ));
    }

    #[test]
    fn end_of_trace_mid_packet_is_truncated() {
        let mut b = sync_bytes(3);
        b.extend([0x16, 0xE8]); // D32 `6 1 8 E` cut short
        let events = run(&b);
        assert_eq!(
            errors(&events),
            [DecodeError {
                offset: 26,
                error: StpError::Truncated {
                    packet: Some(PacketType::Data {
                        width: DataWidth::W32,
                        marker: false,
                        timestamp: false
                    }),
                    nibbles: 4,
                    cause: Truncation::EndOfTrace
                }
            }]
        );
        // Held F nibbles at the end are data, not an ASYNC: a lone prefix F is a truncated opcode.
        let mut n = std::vec![0xF; 21];
        n.extend([0, 0xF]);
        let events = run_nibbles(&n);
        assert!(matches!(
            errors(&events)[0].error,
            StpError::Truncated {
                packet: None,
                nibbles: 1,
                ..
            }
        ));
    }

    #[test]
    fn never_synced_input_is_reported_at_the_end() {
        let events = run(&[0x12, 0x34]);
        assert_eq!(
            events,
            [Event::Unsynced(Unsynced {
                offset: 0,
                nibbles: 4
            })]
        );
    }

    #[test]
    #[cfg(feature = "alloc")] // the encoder / message_words
    fn legacy_gray_and_delta_timestamps() {
        // VERSION 1: FLAG_TS with a fixed 2-nibble field, no time.
        let mut b = sync_bytes(1);
        b.extend([0x5E, 0x0A]); // E 5 A 0: FLAG_TS 0x5A, then NULL
        let p = payload_packets(&run(&b));
        assert_eq!(
            p[0].kind.timestamp(),
            Some(Timestamp {
                nibbles: 2,
                update: 0x5A,
                absolute: None
            })
        );
        // VERSION 2: deltas add up.
        let mut b = sync_bytes(2);
        b.extend([0x1E, 0xE5, 0x31]); // E 1 5, E 1 3
        let p = payload_packets(&run(&b));
        let abs: Vec<_> = p
            .iter()
            .map(|p| p.kind.timestamp().unwrap().absolute)
            .collect();
        assert_eq!(abs, [Some(5), Some(8)]);
        // VERSION 4: Gray code. Full value gray(0x10), then low nibble gray 0x1 -> binary 0x1e.
        let g = crate::timestamp::binary_to_gray(0x10);
        let mut e = crate::encoder::StpEncoder::new();
        e.async_packet();
        e.packet(&PacketKind::Version { version: 4 }).unwrap();
        for (nibbles, update) in [(16, g), (1, 0x1)] {
            let ts = Some(Timestamp {
                nibbles,
                update,
                absolute: None,
            });
            e.packet(&PacketKind::Flag { ts }).unwrap();
        }
        let p = payload_packets(&run_nibbles(&e.finish().nibbles()));
        assert_eq!(p[0].kind.timestamp().unwrap().absolute, Some(0x10));
        let expected = crate::timestamp::gray_to_binary((g & !0xF) | 1);
        assert_eq!(p[1].kind.timestamp().unwrap().absolute, Some(expected));
    }

    #[test]
    fn input_split_mid_byte_and_mid_packet() {
        let mut b = sync_bytes(3);
        b.extend([0x01, 0x30, 0x10, 0xDA, 0xAE, 0xBD, 0xEE, 0x2F, 0xA5]);
        let whole = run(&b);
        let nibbles: Vec<u8> = b.iter().flat_map(|x| [x & 0xF, x >> 4]).collect();
        for split in 0..nibbles.len() {
            let mut d = StpDecoder::new();
            let mut got: Vec<Event> = d.feed_nibbles(&nibbles[..split]).collect();
            got.extend(d.feed_nibbles(&nibbles[split..]));
            got.extend(d.finish());
            assert_eq!(got, whole, "split at nibble {split}");
        }
    }

    #[test]
    fn dropped_iterator_keeps_pending_events() {
        let b = sync_bytes(3);
        let mut d = StpDecoder::new();
        let (first, consumed) = {
            let mut events = d.feed(&b);
            (events.next(), events.consumed())
        };
        assert!(matches!(first, Some(Event::Packet(p)) if p.kind == PacketKind::Async));
        let mut rest: Vec<Event> = core::iter::from_fn(|| d.poll()).collect();
        rest.extend(d.feed(&b[consumed..]));
        assert!(
            matches!(rest[0], Event::Packet(p) if p.kind == PacketKind::Version { version: 3 })
        );
        assert!(d.is_synced());
        assert_eq!(d.ts_format(), Some(TsFormat::Natural));
        assert_eq!(d.offset(), 26);
    }
}
