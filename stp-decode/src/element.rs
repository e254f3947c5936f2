//! Elements: packets resolved against the current master and channel, the stream a user wants.
//!
//! STP data packets carry no IDs; they belong to the master and channel set by earlier M8/M16/C8/C16
//! packets (`docs/stm.md` §6). [`ElementDecoder`] tracks that state and turns every packet that
//! carries information (data, flags, triggers, frequency, errors, timestamps) into an [`Element`].

use core::fmt;

use crate::decoder::Event;
use crate::packet::{DataWidth, IdWidth, PacketKind};
use crate::timestamp::Timestamp;

/// What an element says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// A software (or hardware-event) trace message: one data packet.
    Data {
        /// Payload width.
        width: DataWidth,
        /// The payload.
        value: u64,
        /// Marker set (the packet was a `…M` or `…MTS` variant).
        marker: bool,
        /// Timestamp, if the packet had one.
        ts: Option<Timestamp>,
    },
    /// A flag (FLAG / FLAG_TS), often the end of a message.
    Flag {
        /// Timestamp, for FLAG_TS.
        ts: Option<Timestamp>,
    },
    /// A trigger (TRIG / TRIG_TS).
    Trigger {
        /// Trigger identifier.
        value: u8,
        /// Timestamp, for TRIG_TS.
        ts: Option<Timestamp>,
    },
    /// The timestamp frequency (FREQ, FREQ_TS, FREQ_40, FREQ_40_TS).
    Frequency {
        /// Hz; 0 means unknown.
        hz: u64,
        /// Timestamp, for the `_TS` forms.
        ts: Option<Timestamp>,
    },
    /// MERR: trace of the current master was lost (Arm: the STM buffer was full).
    MasterError {
        /// Error value.
        value: u8,
    },
    /// GERR: trace of any master may have been lost.
    GlobalError {
        /// Error value.
        value: u8,
    },
    /// NULL_TS: a timestamp without data.
    Timestamp {
        /// The timestamp.
        ts: Timestamp,
    },
    /// USER / USER_TS metadata.
    User {
        /// Payload length in nibbles.
        nibbles: u8,
        /// The payload.
        value: u64,
        /// Timestamp, for USER_TS.
        ts: Option<Timestamp>,
    },
    /// TIME / TIME_TS: a time value of another clock domain.
    Time {
        /// Clock domain.
        clock: u8,
        /// Version nibble.
        version: u8,
        /// Time value.
        time: u64,
        /// Timestamp, for TIME_TS.
        ts: Option<Timestamp>,
    },
    /// XSYNC / XSYNC_TS.
    Xsync {
        /// Synchronisation identifier.
        id: u8,
        /// Timestamp, for XSYNC_TS.
        ts: Option<Timestamp>,
    },
}

impl ElementKind {
    /// A short name: `DATA`, `FLAG`, `TRIGGER`, `FREQ`, `MERR`, `GERR`, `TIMESTAMP`, `USER`, `TIME`, `XSYNC`.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Data { .. } => "DATA",
            Self::Flag { .. } => "FLAG",
            Self::Trigger { .. } => "TRIGGER",
            Self::Frequency { .. } => "FREQ",
            Self::MasterError { .. } => "MERR",
            Self::GlobalError { .. } => "GERR",
            Self::Timestamp { .. } => "TIMESTAMP",
            Self::User { .. } => "USER",
            Self::Time { .. } => "TIME",
            Self::Xsync { .. } => "XSYNC",
        }
    }

    /// The timestamp, if any.
    pub const fn timestamp(&self) -> Option<Timestamp> {
        match *self {
            Self::Data { ts, .. }
            | Self::Flag { ts }
            | Self::Trigger { ts, .. }
            | Self::Frequency { ts, .. }
            | Self::User { ts, .. }
            | Self::Time { ts, .. }
            | Self::Xsync { ts, .. } => ts,
            Self::Timestamp { ts } => Some(ts),
            Self::MasterError { .. } | Self::GlobalError { .. } => None,
        }
    }
}

/// A decoded element, attributed to a master and channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Element {
    /// Nibble offset of the packet it came from.
    pub offset: u64,
    /// The current master; `None` when unknown (after an error, or after an ASYNC not followed by
    /// VERSION or a master packet) and for global errors.
    pub master: Option<u16>,
    /// The current channel; `None` when unknown.
    pub channel: Option<u16>,
    /// What it says.
    pub kind: ElementKind,
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        match self.master {
            Some(m) => write!(f, " master=0x{m:02x}")?,
            None => f.write_str(" master=?")?,
        }
        match self.channel {
            Some(c) => write!(f, " channel=0x{c:04x}")?,
            None => f.write_str(" channel=?")?,
        }
        match self.kind {
            ElementKind::Data {
                width,
                value,
                marker,
                ..
            } => {
                let digits = usize::from(width.nibbles());
                write!(f, " D{} 0x{value:0digits$x}", width.bits())?;
                if marker {
                    f.write_str(" +marker")?;
                }
            }
            ElementKind::Flag { .. } | ElementKind::Timestamp { .. } => {}
            ElementKind::Trigger { value, .. } => write!(f, " trigger=0x{value:02x}")?,
            ElementKind::Frequency { hz, .. } => write!(f, " freq={hz}Hz")?,
            ElementKind::MasterError { value } | ElementKind::GlobalError { value } => {
                write!(f, " error=0x{value:02x}")?
            }
            ElementKind::User { value, .. } => write!(f, " user=0x{value:x}")?,
            ElementKind::Time {
                clock,
                version,
                time,
                ..
            } => write!(f, " clock={clock} version={version} time=0x{time:x}")?,
            ElementKind::Xsync { id, .. } => write!(f, " xsync=0x{id:02x}")?,
        }
        if let Some(ts) = self.kind.timestamp() {
            write!(f, " {ts}")?;
        }
        Ok(())
    }
}

/// Tracks master and channel across packets and produces [`Element`]s.
///
/// ```
/// use stp_decode::element::{ElementDecoder, ElementKind};
/// use stp_decode::StpDecoder;
/// // ASYNC, VERSION 3, M8 0x41, C8 0x01, D32M 0x10000001 (stm_only-juno, packed by hand).
/// let mut bytes = vec![0xFF; 10];
/// bytes.extend([0x0F, 0x0F, 0x30, 0x41, 0x31, 0x10, 0xAF, 0x01, 0x00, 0x00, 0x10]);
/// let mut dec = StpDecoder::new();
/// let mut el = ElementDecoder::new();
/// let elements: Vec<_> = dec.feed(&bytes).filter_map(|e| el.on_event(&e)).collect();
/// assert_eq!(elements.len(), 1);
/// assert_eq!((elements[0].master, elements[0].channel), (Some(0x41), Some(0x01)));
/// assert!(matches!(elements[0].kind, ElementKind::Data { value: 0x1000_0001, marker: true, .. }));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ElementDecoder {
    master: Option<u16>,
    channel: Option<u16>,
}

impl ElementDecoder {
    /// A decoder with master and channel unknown.
    pub const fn new() -> Self {
        ElementDecoder {
            master: None,
            channel: None,
        }
    }

    /// The current master.
    pub const fn master(&self) -> Option<u16> {
        self.master
    }

    /// The current channel.
    pub const fn channel(&self) -> Option<u16> {
        self.channel
    }

    /// Takes one decoder event; returns the element it makes, if any. Decode errors make master and
    /// channel unknown.
    #[inline]
    pub fn on_event(&mut self, event: &Event) -> Option<Element> {
        match event {
            Event::Packet(p) => self.on_packet(p.offset, &p.kind),
            Event::Error(_) => {
                self.master = None;
                self.channel = None;
                None
            }
            Event::Unsynced(_) => None,
        }
    }

    /// Takes one packet (at nibble `offset`); returns the element it makes, if any.
    #[inline]
    pub fn on_packet(&mut self, offset: u64, kind: &PacketKind) -> Option<Element> {
        let element = |master, channel, kind| {
            Some(Element {
                offset,
                master,
                channel,
                kind,
            })
        };
        let (m, c) = (self.master, self.channel);
        match *kind {
            PacketKind::Async => None,
            PacketKind::Version { .. } => {
                self.master = Some(0);
                self.channel = Some(0);
                None
            }
            PacketKind::Master { master, .. } => {
                self.master = Some(master);
                self.channel = Some(0);
                None
            }
            PacketKind::Channel { width, channel } => {
                self.channel = Some(match width {
                    IdWidth::W8 => (c.unwrap_or(0) & 0xFF00) | channel,
                    IdWidth::W16 => channel,
                });
                None
            }
            PacketKind::Null { ts } => {
                ts.and_then(|ts| element(m, c, ElementKind::Timestamp { ts }))
            }
            PacketKind::MasterError { value } => {
                self.channel = Some(0);
                element(m, c, ElementKind::MasterError { value })
            }
            PacketKind::GlobalError { value } => {
                self.master = Some(0);
                self.channel = Some(0);
                element(None, None, ElementKind::GlobalError { value })
            }
            PacketKind::Data {
                width,
                value,
                marker,
                ts,
            } => element(
                m,
                c,
                ElementKind::Data {
                    width,
                    value,
                    marker,
                    ts,
                },
            ),
            PacketKind::Flag { ts } => element(m, c, ElementKind::Flag { ts }),
            PacketKind::Trigger { value, ts } => element(m, c, ElementKind::Trigger { value, ts }),
            PacketKind::Frequency { hz, ts, .. } => {
                element(m, c, ElementKind::Frequency { hz, ts })
            }
            PacketKind::User { nibbles, value, ts } => {
                element(m, c, ElementKind::User { nibbles, value, ts })
            }
            PacketKind::Time {
                clock,
                version,
                time,
                ts,
                ..
            } => element(
                m,
                c,
                ElementKind::Time {
                    clock,
                    version,
                    time,
                    ts,
                },
            ),
            PacketKind::Xsync { id, ts } => element(m, c, ElementKind::Xsync { id, ts }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(value: u64) -> PacketKind {
        PacketKind::Data {
            width: DataWidth::W8,
            value,
            marker: false,
            ts: None,
        }
    }

    #[test]
    fn ids_follow_section_6() {
        let mut e = ElementDecoder::new();
        assert_eq!(e.on_packet(0, &data(1)).unwrap().master, None);
        e.on_packet(0, &PacketKind::Version { version: 3 });
        assert_eq!((e.master(), e.channel()), (Some(0), Some(0)));
        e.on_packet(
            0,
            &PacketKind::Master {
                width: IdWidth::W16,
                master: 0x1234,
            },
        );
        e.on_packet(
            0,
            &PacketKind::Channel {
                width: IdWidth::W16,
                channel: 0x0480,
            },
        );
        e.on_packet(
            0,
            &PacketKind::Channel {
                width: IdWidth::W8,
                channel: 0x07,
            },
        );
        assert_eq!(e.channel(), Some(0x0407), "C8 keeps bits 15:8");
        let merr = e
            .on_packet(0, &PacketKind::MasterError { value: 3 })
            .unwrap();
        assert_eq!((merr.master, merr.channel), (Some(0x1234), Some(0x0407)));
        assert_eq!(e.channel(), Some(0), "MERR resets the channel");
        let gerr = e
            .on_packet(0, &PacketKind::GlobalError { value: 1 })
            .unwrap();
        assert_eq!(gerr.master, None);
        assert_eq!((e.master(), e.channel()), (Some(0), Some(0)));
        assert!(e.on_packet(0, &PacketKind::Null { ts: None }).is_none());
    }
}
