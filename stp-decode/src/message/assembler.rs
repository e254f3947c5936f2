//! [`Assembler`]: data packets per (master, channel) into messages, with every loss accounted for.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::packet::DataWidth;

/// Which data packets end a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MessageEnd {
    /// A timestamped packet (STMLib's timing port) or a marked one (Arm STM users' convention).
    #[default]
    TimestampOrMarker,
    /// Only a timestamped packet.
    Timestamp,
}

/// Limits and conventions of an [`Assembler`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct AssemblerConfig {
    /// Which packets end a message.
    pub end: MessageEnd,
    /// The most bytes kept of one message; bytes beyond are counted and dropped, and the message is
    /// reported as [`Undecodable::TooLong`](super::Undecodable::TooLong).
    pub max_message_bytes: usize,
}

impl Default for AssemblerConfig {
    fn default() -> Self {
        AssemblerConfig {
            end: MessageEnd::TimestampOrMarker,
            max_message_bytes: 64 << 10,
        }
    }
}

/// Why data did not make a whole message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum TearCause {
    /// The channel's first data after a point where trace may have been lost (the start of a wrapped
    /// buffer, an unsynchronised range, an error): the message's head may be missing, and it is not a
    /// whole STMLib message by its header.
    BeforeFirstMessage,
    /// A message in progress when the decoder lost sync (a decode error) or bytes were lost (a frame error).
    SyncLost,
    /// A message in progress when its master reported dropped trace (MERR, or GERR for every master).
    Overflow,
    /// A message still in progress at the end of the trace.
    EndOfTrace,
}

impl TearCause {
    /// A short name: `before_first_message`, `sync_lost`, `overflow`, `end_of_trace`.
    pub const fn name(self) -> &'static str {
        match self {
            TearCause::BeforeFirstMessage => "before_first_message",
            TearCause::SyncLost => "sync_lost",
            TearCause::Overflow => "overflow",
            TearCause::EndOfTrace => "end_of_trace",
        }
    }
}

/// Data that did not make a whole message; with the `serde` feature it serializes as a map of its fields,
/// `cause` by [`TearCause::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Torn {
    /// The master.
    pub master: u16,
    /// The channel.
    pub channel: u16,
    /// Data packets.
    pub packets: u32,
    /// Bytes of those packets.
    pub bytes: u64,
    /// Nibble offset of the first packet.
    pub offset: u64,
    /// Why.
    pub cause: TearCause,
}

/// A message as assembled, borrowing the assembler's buffer until its next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawMessage<'a> {
    /// The master.
    pub master: u16,
    /// The channel.
    pub channel: u16,
    /// The packets' values as bytes, each in little-endian order (at most the configured limit).
    pub bytes: &'a [u8],
    /// Each packet's width in bytes (1, 2, 4 or 8; a D4 packet counts as 1), in order; their sum is the
    /// length of `bytes` unless bytes were dropped.
    pub widths: &'a [u8],
    /// Bytes dropped beyond the limit.
    pub dropped: u64,
    /// Data packets.
    pub packets: u32,
    /// The absolute timestamp of the packet that ended the message, when it had one.
    pub timestamp: Option<u64>,
    /// Nibble offset of the first packet.
    pub offset: u64,
}

/// What a data packet made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assembled<'a> {
    /// A whole message.
    Message(RawMessage<'a>),
    /// Data that did not make a whole message.
    Torn(Torn),
}

#[derive(Debug, Clone, Default)]
struct Slot {
    bytes: Vec<u8>,
    widths: Vec<u8>,
    packets: u32,
    dropped: u64,
    offset: u64,
    /// The last call handed this slot's message out: clear it before the next packet.
    done: bool,
    /// Trace may have been lost since this channel's last message ended.
    after_loss: bool,
}

impl Slot {
    fn clear(&mut self) {
        self.bytes.clear();
        self.widths.clear();
        self.packets = 0;
        self.dropped = 0;
        self.done = false;
    }

    fn torn(&self, master: u16, channel: u16, cause: TearCause) -> Torn {
        Torn {
            master,
            channel,
            packets: self.packets,
            bytes: self.bytes.len() as u64 + self.dropped,
            offset: self.offset,
            cause,
        }
    }
}

/// Assembles data packets into messages per (master, channel). Memory: one buffer per (master, channel)
/// seen, each at most [`AssemblerConfig::max_message_bytes`].
///
/// Call contract: [`Assembler::data`] and [`Assembler::flag`] for each data and flag element of a known
/// master and channel, in stream order; [`Assembler::lose`] where trace may have been lost (with the
/// masters it concerns); [`Assembler::finish`] at the end of the trace. A returned message borrows the
/// assembler until the next call.
///
/// ```
/// use stp_decode::message::{Assembled, Assembler};
/// use stp_decode::DataWidth;
/// let mut a = Assembler::default();
/// assert!(a.data(0, 3, 1, DataWidth::W32, 0x0101_8104, false, None).is_none());
/// let end = a.data(9, 3, 1, DataWidth::W32, 0x2169_6821, true, Some(0x50));
/// let Some(Assembled::Message(m)) = end else { panic!() };
/// assert_eq!(m.bytes, [0x04, 0x81, 0x01, 0x01, 0x21, 0x68, 0x69, 0x21]);
/// assert_eq!((m.master, m.channel, m.packets, m.timestamp), (3, 1, 2, Some(0x50)));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    config: AssemblerConfig,
    slots: Vec<(u16, u16, Slot)>,
    index: BTreeMap<(u16, u16), usize>,
    last: Option<((u16, u16), usize)>,
    /// Trace of every master may have been lost: channels seen from now on are checked for a missing head.
    unseen_after_loss: bool,
    /// The same for the channels of these masters only.
    unseen_masters_after_loss: Vec<u16>,
}

impl Assembler {
    /// An assembler with `config`; no trace is assumed lost before the first call.
    pub fn new(config: AssemblerConfig) -> Self {
        Assembler {
            config,
            ..Assembler::default()
        }
    }

    /// Number of (master, channel) pairs seen.
    pub fn channels(&self) -> usize {
        self.slots.len()
    }

    /// The (master, channel) pairs seen, in the order first seen.
    pub fn pairs(&self) -> impl Iterator<Item = (u16, u16)> + '_ {
        self.slots.iter().map(|&(m, c, _)| (m, c))
    }

    fn slot(&mut self, master: u16, channel: u16) -> &mut Slot {
        let key = (master, channel);
        let at = match self.last {
            Some((k, at)) if k == key => at,
            _ => {
                let at = match self.index.get(&key) {
                    Some(&at) => at,
                    None => {
                        let at = self.slots.len();
                        let after_loss = self.unseen_after_loss
                            || self.unseen_masters_after_loss.contains(&master);
                        self.slots.push((
                            master,
                            channel,
                            Slot {
                                after_loss,
                                ..Slot::default()
                            },
                        ));
                        self.index.insert(key, at);
                        at
                    }
                };
                self.last = Some((key, at));
                at
            }
        };
        &mut self.slots[at].2
    }

    /// Takes a data packet of `master` and `channel` at nibble `offset`. `timestamp` is the packet's
    /// absolute timestamp if it had one (`has_ts` says whether it had one at all).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn data(
        &mut self,
        offset: u64,
        master: u16,
        channel: u16,
        width: DataWidth,
        value: u64,
        marker: bool,
        timestamp: Option<u64>,
    ) -> Option<Assembled<'_>> {
        self.packet(
            offset,
            master,
            channel,
            width,
            value,
            marker,
            timestamp.is_some(),
            timestamp,
        )
    }

    /// [`Assembler::data`] for a packet whose timestamp is present but whose absolute value is unknown
    /// (`has_ts` true, `timestamp` `None`): it ends a message all the same.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn packet(
        &mut self,
        offset: u64,
        master: u16,
        channel: u16,
        width: DataWidth,
        value: u64,
        marker: bool,
        has_ts: bool,
        timestamp: Option<u64>,
    ) -> Option<Assembled<'_>> {
        let limit = self.config.max_message_bytes;
        let ends = has_ts || (marker && self.config.end == MessageEnd::TimestampOrMarker);
        let slot = self.slot(master, channel);
        if slot.done {
            slot.clear();
        }
        if slot.packets == 0 {
            slot.offset = offset;
        }
        slot.packets = slot.packets.saturating_add(1);
        let n = match width {
            DataWidth::W4 | DataWidth::W8 => 1,
            DataWidth::W16 => 2,
            DataWidth::W32 => 4,
            DataWidth::W64 => 8,
        };
        let le = value.to_le_bytes();
        let room = limit.saturating_sub(slot.bytes.len());
        if room >= n {
            slot.bytes.extend_from_slice(&le[..n]);
            slot.widths.push(n as u8);
        } else {
            slot.dropped += n as u64;
        }
        if !ends {
            return None;
        }
        slot.done = true;
        if slot.after_loss {
            slot.after_loss = false;
            if slot.dropped != 0 || !super::is_whole_stmlib(&slot.bytes) {
                return Some(Assembled::Torn(slot.torn(
                    master,
                    channel,
                    TearCause::BeforeFirstMessage,
                )));
            }
        }
        let slot = &*slot;
        Some(Assembled::Message(RawMessage {
            master,
            channel,
            bytes: &slot.bytes,
            widths: &slot.widths,
            dropped: slot.dropped,
            packets: slot.packets,
            timestamp,
            offset: slot.offset,
        }))
    }

    /// Takes a FLAG of `master` and `channel`: it ends a message in progress there (a flag alone makes
    /// no message).
    pub fn flag(&mut self, master: u16, channel: u16) -> Option<Assembled<'_>> {
        let key = (master, channel);
        let at = *self.index.get(&key)?;
        let slot = &mut self.slots[at].2;
        if slot.done || slot.packets == 0 {
            return None;
        }
        let (offset, master_, channel_) = (slot.offset, master, channel);
        // End it as if its last packet had been the end: reuse the data path's checks.
        slot.done = true;
        if slot.after_loss {
            slot.after_loss = false;
            if slot.dropped != 0 || !super::is_whole_stmlib(&slot.bytes) {
                return Some(Assembled::Torn(slot.torn(
                    master_,
                    channel_,
                    TearCause::BeforeFirstMessage,
                )));
            }
        }
        Some(Assembled::Message(RawMessage {
            master,
            channel,
            bytes: &slot.bytes,
            widths: &slot.widths,
            dropped: slot.dropped,
            packets: slot.packets,
            timestamp: None,
            offset,
        }))
    }

    /// Trace may have been lost here, for `master` (`None`: every master): messages in progress there are
    /// torn (`cause`), and each channel's next message is checked for a missing head.
    pub fn lose(&mut self, master: Option<u16>, cause: TearCause, torn: &mut dyn FnMut(Torn)) {
        for (m, c, slot) in &mut self.slots {
            if master.is_some_and(|only| only != *m) {
                continue;
            }
            if !slot.done && slot.packets > 0 {
                torn(slot.torn(*m, *c, cause));
            }
            slot.clear();
            slot.after_loss = true;
        }
        // Channels not seen yet are checked too: their data may have begun before the loss.
        match master {
            None => self.unseen_after_loss = true,
            Some(m) if !self.unseen_masters_after_loss.contains(&m) => {
                self.unseen_masters_after_loss.push(m)
            }
            Some(_) => {}
        }
    }

    /// Ends the trace: messages still in progress are torn ([`TearCause::EndOfTrace`]).
    pub fn finish(&mut self, torn: &mut dyn FnMut(Torn)) {
        for (m, c, slot) in &mut self.slots {
            if !slot.done && slot.packets > 0 {
                torn(slot.torn(*m, *c, TearCause::EndOfTrace));
            }
            slot.clear();
        }
    }
}
