//! A model of a KeyStone II STM fed by STMLib, for tests: messages written as words to channels (the last
//! one to the channel's timing port, a timestamped D32MTS), M8/C8 sent when the master or channel changes,
//! ASYNC + VERSION + FREQ now and then (after which master and channel are sent again), TWP frames with an ID
//! change every 8 frames (as Arm's ETB formatter writes them), and a trace buffer that wraps.

#![allow(dead_code)]

use stp_decode::encoder::StpEncoder;
use stp_decode::formatter::format_frames;
use stp_decode::{DataWidth, IdWidth, PacketKind, Timestamp};

/// The STM's trace ID on KeyStone II.
pub const STM_ID: u8 = 0x40;
/// The timestamp clock the model's FREQ packets give.
pub const HZ: u64 = 250_000_000;

/// One word a core writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write {
    pub master: u16,
    pub channel: u16,
    pub word: u32,
    /// For the last word of a message: its timestamp (the write goes to the timing port); the model raises
    /// it to 1 tick after the last one sent if it is not later.
    pub end: Option<u64>,
}

/// A message: its words, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    pub master: u16,
    pub channel: u16,
    pub words: Vec<u32>,
    pub ts: u64,
}

impl Msg {
    pub fn writes(&self) -> Vec<Write> {
        let n = self.words.len();
        self.words
            .iter()
            .enumerate()
            .map(|(i, &word)| Write {
                master: self.master,
                channel: self.channel,
                word,
                end: (i + 1 == n).then_some(self.ts),
            })
            .collect()
    }
}

/// Where a message landed in the stream, in nibbles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The nibble its first packet starts at.
    pub first: u64,
    /// The nibble after its last packet.
    pub end: u64,
}

/// The STM.
pub struct Model {
    e: StpEncoder,
    master: Option<u16>,
    channel: Option<u16>,
    since_sync: u64,
    async_every: u64,
    /// Nibble offsets of every ASYNC.
    pub asyncs: Vec<u64>,
    /// The last timestamp sent: a message ending later never gets an earlier one.
    last_ts: Option<u64>,
}

impl Model {
    /// An STM that sends ASYNC, VERSION and FREQ first and again after `async_every` nibbles.
    pub fn new(async_every: u64) -> Model {
        let mut m = Model {
            e: StpEncoder::new(),
            master: None,
            channel: None,
            since_sync: 0,
            async_every,
            asyncs: Vec::new(),
            last_ts: None,
        };
        m.sync();
        m
    }

    fn at(&self) -> u64 {
        self.e.writer().nibble_len()
    }

    fn packet(&mut self, kind: PacketKind) {
        let before = self.at();
        self.e.packet(&kind).expect("valid packet");
        self.since_sync += self.at() - before;
    }

    fn sync(&mut self) {
        self.asyncs.push(self.at());
        self.e.async_packet();
        self.e
            .packet(&PacketKind::Version { version: 3 })
            .expect("valid");
        self.e
            .packet(&PacketKind::Frequency {
                wide: false,
                hz: HZ,
                ts: None,
            })
            .expect("valid");
        self.master = None;
        self.channel = None;
        self.since_sync = 0;
    }

    /// Sends one write; returns the nibble its first packet (M8/C8 included) starts at and the one after it.
    pub fn write(&mut self, w: &Write) -> (u64, u64) {
        if self.since_sync >= self.async_every {
            self.sync();
        }
        let start = self.at();
        if self.master != Some(w.master) {
            let width = if w.master > 0xFF {
                IdWidth::W16
            } else {
                IdWidth::W8
            };
            self.packet(PacketKind::Master {
                width,
                master: w.master,
            });
            self.master = Some(w.master);
            self.channel = None;
        }
        if self.channel != Some(w.channel) {
            let width = if w.channel > 0xFF {
                IdWidth::W16
            } else {
                IdWidth::W8
            };
            self.packet(PacketKind::Channel {
                width,
                channel: w.channel,
            });
            self.channel = Some(w.channel);
        }
        let end = w.end.map(|ts| {
            let ts = self.last_ts.map_or(ts, |last| ts.max(last + 1));
            self.last_ts = Some(ts);
            ts
        });
        self.packet(PacketKind::Data {
            width: DataWidth::W32,
            value: w.word.into(),
            marker: end.is_some(),
            ts: end.map(|ts| Timestamp {
                nibbles: 16,
                update: ts,
                absolute: None,
            }),
        });
        (start, self.at())
    }

    /// Sends messages interleaved by `order`: each entry picks the message (by index) whose next word is
    /// written; a message's words go in order. Returns where each message landed.
    pub fn send(&mut self, messages: &[Msg], order: &[usize]) -> Vec<Placed> {
        let writes: Vec<Vec<Write>> = messages.iter().map(Msg::writes).collect();
        let mut next = vec![0usize; messages.len()];
        let mut placed = vec![Placed { first: 0, end: 0 }; messages.len()];
        for &i in order {
            let k = next[i];
            let (start, end) = self.write(&writes[i][k]);
            if k == 0 {
                placed[i].first = start;
            }
            placed[i].end = end;
            next[i] += 1;
        }
        assert!(
            next.iter().zip(&writes).all(|(n, w)| *n == w.len()),
            "every word sent"
        );
        placed
    }

    /// The STP bytes.
    pub fn bytes(self) -> Vec<u8> {
        self.e.finish().into_bytes()
    }
}

/// An interleaving of `messages` in which one channel's messages never overlap: `picks` chooses, at each
/// step, among the channels with words left (a message goes on until its end before the next of its
/// channel starts).
pub fn interleave(messages: &[Msg], picks: &[usize]) -> Vec<usize> {
    use std::collections::BTreeMap;
    let mut queues: BTreeMap<(u16, u16), std::collections::VecDeque<(usize, usize)>> =
        BTreeMap::new();
    for (i, m) in messages.iter().enumerate() {
        queues
            .entry((m.master, m.channel))
            .or_default()
            .push_back((i, m.words.len()));
    }
    let mut order = Vec::new();
    let mut p = 0;
    loop {
        let live: Vec<(u16, u16)> = queues
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(k, _)| *k)
            .collect();
        if live.is_empty() {
            return order;
        }
        let pick = picks.get(p).copied().unwrap_or(0);
        p += 1;
        let queue = queues.get_mut(&live[pick % live.len()]).unwrap();
        let (i, left) = queue.front_mut().unwrap();
        order.push(*i);
        *left -= 1;
        if *left == 0 {
            queue.pop_front();
        }
    }
}

/// The stream in TWP frames on [`STM_ID`], with an ID change every 8 frames; and for each frame the number
/// of stream bytes before it.
pub fn frames(stream: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut out = Vec::new();
    let mut before = Vec::new();
    let mut taken = 0;
    for piece in stream.chunks(119) {
        let start = out.len();
        format_frames(STM_ID, piece, &mut out).expect("valid ID");
        let frames = (out.len() - start) / 16;
        // 14 bytes in the first frame (after the ID byte), 15 in the others.
        for f in 0..frames {
            before.push(taken + if f == 0 { 0 } else { 14 + (f - 1) * 15 });
        }
        taken += piece.len();
    }
    before.push(taken);
    (out, before)
}

/// A trace buffer of `words` 32-bit words after the STM wrote `formatted` (from its first byte) into it in
/// a circle: the buffer's memory and its write pointer.
pub fn wrap(formatted: &[u8], words: usize) -> (Vec<u8>, u32) {
    let size = words * 4;
    assert!(formatted.len().is_multiple_of(4) && formatted.len() > size);
    let mut memory = vec![0u8; size];
    for (k, &b) in formatted.iter().enumerate().skip(formatted.len() - size) {
        memory[k % size] = b;
    }
    (memory, ((formatted.len() / 4) % words) as u32)
}
