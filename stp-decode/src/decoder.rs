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
//!   [`StpDecoder::offset`].
//!
//! Positions are nibble offsets from the first nibble ever fed (or since [`StpDecoder::reset`]).
//!
//! # Synchronisation
//!
//! Nothing is decoded before the first ASYNC. ASYNC detection runs beside the packet state machine on
//! every nibble: up to 21 consecutive `F` nibbles are held back, and a `0` after 21 of them is an ASYNC
//! wherever it falls (an ASYNC inside a packet reports that packet as truncated). Surplus leading `F`s
//! belong to the data before. After any error the decoder is unsynchronised until the next ASYNC.

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

/// The packet being assembled.
#[derive(Debug, Clone, Copy)]
struct Partial {
    active: bool,
    start: u64,
    read: u8,
    opcode: u16,
    opcode_nibbles: u8,
    ty: Option<PacketType>,
    phase: Phase,
    left: u8,
    payload: u64,
    payload_nibbles: u8,
    time_clock: u8,
    time_version: u8,
    time_nibbles: u8,
    time: u64,
    ts_nibbles: u8,
    ts: u64,
}

impl Partial {
    const IDLE: Partial = Partial {
        active: false,
        start: 0,
        read: 0,
        opcode: 0,
        opcode_nibbles: 0,
        ty: None,
        phase: Phase::Opcode,
        left: 0,
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

    /// Feeds bytes (bits 3:0 are the first nibble, bits 7:4 the second).
    pub fn feed<'d, 'i>(&'d mut self, bytes: &'i [u8]) -> Events<'d, 'i> {
        Events {
            decoder: self,
            input: bytes,
            index: 0,
            bytes: true,
        }
    }

    /// Feeds nibbles, one per element (bits 3:0; the high bits are ignored), for input that stops mid-byte.
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
    pub fn finish(&mut self) -> Events<'_, 'static> {
        if let Some(high) = self.carry.take() {
            self.push_raw(high);
        }
        self.release_f_run();
        if self.synced && self.pkt.active {
            let error = StpError::Truncated {
                packet: self.pkt.ty,
                nibbles: self.pkt.read,
                cause: Truncation::EndOfTrace,
            };
            self.queue.push(Event::Error(DecodeError {
                offset: self.pkt.start,
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
                nibbles: self.pkt.read,
                cause: Truncation::Async,
            };
            self.queue.push(Event::Error(DecodeError {
                offset: self.pkt.start,
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
        self.queue.push(Event::Error(DecodeError {
            offset: self.pkt.start,
            error,
        }));
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
                start: pos,
                ..Partial::IDLE
            };
        }
        self.pkt.read += 1;
        match self.pkt.phase {
            Phase::Opcode => self.step_opcode(n),
            Phase::Payload => {
                self.pkt.payload = (self.pkt.payload << 4) | u64::from(n);
                self.pkt.payload_nibbles += 1;
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
                self.pkt.time_clock = n;
                self.pkt.phase = Phase::TimeVersion;
            }
            Phase::TimeVersion => {
                self.pkt.time_version = n;
                self.pkt.phase = Phase::TimeLen;
            }
            Phase::TimeLen => match length_from_nibble(n) {
                None => {
                    let packet = self.pkt.ty.unwrap_or(PacketType::Time);
                    self.fail(StpError::BadTimestampLength { packet });
                }
                Some(0) => self.after_payload(),
                Some(len) => {
                    self.pkt.time_nibbles = len;
                    self.pkt.left = len;
                    self.pkt.phase = Phase::TimeValue;
                }
            },
            Phase::TimeValue => {
                self.pkt.time = (self.pkt.time << 4) | u64::from(n);
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
                    self.pkt.ts_nibbles = len;
                    self.pkt.left = len;
                    self.pkt.phase = Phase::TsValue;
                }
            },
            Phase::TsValue => {
                self.pkt.ts = (self.pkt.ts << 4) | u64::from(n);
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
        let payload = match ty {
            PacketType::Data { width, .. } => width.nibbles(),
            PacketType::M8
            | PacketType::Merr
            | PacketType::Gerr
            | PacketType::C8
            | PacketType::Trig
            | PacketType::TrigTs
            | PacketType::Xsync
            | PacketType::XsyncTs => 2,
            PacketType::M16 | PacketType::C16 => 4,
            PacketType::Freq | PacketType::FreqTs => 8,
            PacketType::Freq40 | PacketType::Freq40Ts => 10,
            PacketType::Version => 1,
            PacketType::User | PacketType::UserTs => {
                self.pkt.phase = Phase::UserLen;
                return;
            }
            PacketType::Time | PacketType::TimeTs => {
                self.pkt.phase = Phase::TimeClock;
                return;
            }
            PacketType::Null
            | PacketType::NullTs
            | PacketType::Flag
            | PacketType::FlagTs
            | PacketType::Async => 0,
        };
        if payload == 0 {
            self.after_payload();
        } else {
            self.pkt.phase = Phase::Payload;
            self.pkt.left = payload;
        }
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
                self.pkt.ts_nibbles = 2;
                self.pkt.left = 2;
            }
            Some(_) => self.pkt.phase = Phase::TsLen,
        }
    }

    fn complete(&mut self) {
        let p = self.pkt;
        let Some(ty) = p.ty else { return };
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
                        return self.fail(StpError::UnsupportedVersion { version });
                    }
                }
                PacketKind::Version { version }
            }
            PacketType::Async => PacketKind::Async,
        };
        self.queue.push(Event::Packet(Packet {
            offset: p.start,
            nibbles: p.read,
            kind,
        }));
        self.pkt = Partial::IDLE;
    }
}

/// The events one call to [`StpDecoder::feed`], [`StpDecoder::feed_nibbles`] or [`StpDecoder::finish`]
/// produces. Input is read lazily: only bytes the iterator has reached are consumed, a byte always as a
/// whole (its second nibble is kept in the decoder if an event came out of the first).
#[derive(Debug)]
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

impl Iterator for Events<'_, '_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.decoder.queue.pop() {
                return Some(event);
            }
            if let Some(high) = self.decoder.carry.take() {
                self.decoder.push_raw(high);
                continue;
            }
            let &value = self.input.get(self.index)?;
            self.index += 1;
            if self.bytes {
                self.decoder.carry = Some(value >> 4);
            }
            self.decoder.push_raw(value & 0xF);
        }
    }
}
