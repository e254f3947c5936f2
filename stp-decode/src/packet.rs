//! Decoded STP packets: the packet types of the STPv2 opcode table and their payloads.

use core::fmt;

use crate::timestamp::Timestamp;

/// Width of a data packet's payload (D4, D8, D16, D32 or D64).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataWidth {
    /// 4 bits (one nibble): D4, D4M, D4TS, D4MTS.
    W4,
    /// 8 bits: D8, D8M, D8TS, D8MTS.
    W8,
    /// 16 bits: D16, D16M, D16TS, D16MTS.
    W16,
    /// 32 bits: D32, D32M, D32TS, D32MTS.
    W32,
    /// 64 bits: D64, D64M, D64TS, D64MTS (never emitted by Arm CoreSight STMs).
    W64,
}

impl DataWidth {
    /// All widths, narrowest first.
    pub const ALL: [DataWidth; 5] = [Self::W4, Self::W8, Self::W16, Self::W32, Self::W64];

    /// Payload size in bits.
    pub const fn bits(self) -> u32 {
        match self {
            Self::W4 => 4,
            Self::W8 => 8,
            Self::W16 => 16,
            Self::W32 => 32,
            Self::W64 => 64,
        }
    }

    /// Payload size in nibbles on the wire.
    pub const fn nibbles(self) -> u8 {
        (self.bits() / 4) as u8
    }

    /// Mask of the bits a payload of this width can hold.
    pub const fn mask(self) -> u64 {
        match self {
            Self::W64 => u64::MAX,
            _ => (1u64 << self.bits()) - 1,
        }
    }
}

/// Width of a master or channel packet (M8/C8 or M16/C16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdWidth {
    /// 8-bit value (M8, C8).
    W8,
    /// 16-bit value (M16, C16).
    W16,
}

/// The packet type, one variant per opcode of the STPv2 table (`docs/stm.md` §2).
///
/// Names follow MIPI STPv2 (`D32MTS`, `FLAG_TS`, ...). [`PacketType::opcode`] gives the opcode nibbles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// `0`: filler.
    Null,
    /// `F01`: filler with a timestamp.
    NullTs,
    /// `1`: set the 8-bit master.
    M8,
    /// `F1`: set the 16-bit master.
    M16,
    /// `2`: master error.
    Merr,
    /// `F2`: global error.
    Gerr,
    /// `3`: set channel bits 7:0.
    C8,
    /// `F3`: set the 16-bit channel.
    C16,
    /// A data packet: `4`–`D` and `F4`–`FD` except `FE`.
    Data {
        /// Payload width.
        width: DataWidth,
        /// Marker variant (`…M`, `…MTS`).
        marker: bool,
        /// Timestamped variant (`…TS`, `…MTS`).
        timestamp: bool,
    },
    /// `FE`: flag.
    Flag,
    /// `E`: flag with a timestamp.
    FlagTs,
    /// `F02`: user-defined metadata.
    User,
    /// `F03`: user-defined metadata with a timestamp.
    UserTs,
    /// `F04`: time correlation.
    Time,
    /// `F05`: time correlation with a timestamp.
    TimeTs,
    /// `F06`: trigger.
    Trig,
    /// `F07`: trigger with a timestamp.
    TrigTs,
    /// `F08`: 32-bit timestamp frequency in Hz.
    Freq,
    /// `F09`: 32-bit frequency with a timestamp.
    FreqTs,
    /// `F0F0`: 40-bit frequency in Hz (STPv2.2).
    Freq40,
    /// `F0F1`: 40-bit frequency with a timestamp (STPv2.2).
    Freq40Ts,
    /// `F0A`: cross-synchronisation.
    Xsync,
    /// `F0B`: cross-synchronisation with a timestamp.
    XsyncTs,
    /// `F00`: version; selects the timestamp format.
    Version,
    /// 21 × `F` then `0`: alignment synchronisation.
    Async,
}

impl PacketType {
    /// Every packet type, for tables and tests.
    pub fn all() -> impl Iterator<Item = PacketType> {
        const FIXED: [PacketType; 23] = [
            PacketType::Null,
            PacketType::NullTs,
            PacketType::M8,
            PacketType::M16,
            PacketType::Merr,
            PacketType::Gerr,
            PacketType::C8,
            PacketType::C16,
            PacketType::Flag,
            PacketType::FlagTs,
            PacketType::User,
            PacketType::UserTs,
            PacketType::Time,
            PacketType::TimeTs,
            PacketType::Trig,
            PacketType::TrigTs,
            PacketType::Freq,
            PacketType::FreqTs,
            PacketType::Freq40,
            PacketType::Freq40Ts,
            PacketType::Xsync,
            PacketType::XsyncTs,
            PacketType::Version,
        ];
        let data = DataWidth::ALL.into_iter().flat_map(|width| {
            [(false, false), (true, false), (false, true), (true, true)]
                .into_iter()
                .map(move |(marker, timestamp)| PacketType::Data {
                    width,
                    marker,
                    timestamp,
                })
        });
        FIXED
            .into_iter()
            .chain(data)
            .chain(core::iter::once(PacketType::Async))
    }

    /// The opcode as `(value, nibble count)`: `(0xF0F1, 4)` for FREQ_40_TS, `(0xA, 1)` for D32MTS.
    ///
    /// ASYNC has no opcode; it is reported as `(0xFF, 2)`, its first two nibbles.
    pub const fn opcode(self) -> (u16, u8) {
        match self {
            Self::Null => (0x0, 1),
            Self::M8 => (0x1, 1),
            Self::Merr => (0x2, 1),
            Self::C8 => (0x3, 1),
            Self::FlagTs => (0xE, 1),
            Self::M16 => (0xF1, 2),
            Self::Gerr => (0xF2, 2),
            Self::C16 => (0xF3, 2),
            Self::Flag => (0xFE, 2),
            Self::Async => (0xFF, 2),
            Self::Version => (0xF00, 3),
            Self::NullTs => (0xF01, 3),
            Self::User => (0xF02, 3),
            Self::UserTs => (0xF03, 3),
            Self::Time => (0xF04, 3),
            Self::TimeTs => (0xF05, 3),
            Self::Trig => (0xF06, 3),
            Self::TrigTs => (0xF07, 3),
            Self::Freq => (0xF08, 3),
            Self::FreqTs => (0xF09, 3),
            Self::Xsync => (0xF0A, 3),
            Self::XsyncTs => (0xF0B, 3),
            Self::Freq40 => (0xF0F0, 4),
            Self::Freq40Ts => (0xF0F1, 4),
            Self::Data {
                width,
                marker,
                timestamp,
            } => {
                let w = match width {
                    DataWidth::W8 => 0,
                    DataWidth::W16 => 1,
                    DataWidth::W32 => 2,
                    DataWidth::W64 => 3,
                    DataWidth::W4 => 4,
                };
                match (w, marker, timestamp) {
                    // D4 family: C, D, FC, FD.
                    (4, false, false) => (0xC, 1),
                    (4, true, true) => (0xD, 1),
                    (4, false, true) => (0xFC, 2),
                    (4, true, false) => (0xFD, 2),
                    // D8..D64: 4-7 plain, 8-B marked+TS, F4-F7 TS, F8-FB marked.
                    (w, false, false) => (0x4 + w, 1),
                    (w, true, true) => (0x8 + w, 1),
                    (w, false, true) => (0xF4 + w, 2),
                    (w, true, false) => (0xF8 + w, 2),
                }
            }
        }
    }

    /// Looks up a complete opcode; `None` for a reserved code or an unfinished prefix.
    pub const fn from_opcode(value: u16, nibbles: u8) -> Option<PacketType> {
        crate::opcode::lookup(value, nibbles)
    }

    /// True when a timestamp field follows the payload.
    pub const fn has_timestamp(self) -> bool {
        match self {
            Self::Data { timestamp, .. } => timestamp,
            Self::NullTs
            | Self::FlagTs
            | Self::UserTs
            | Self::TimeTs
            | Self::TrigTs
            | Self::FreqTs
            | Self::Freq40Ts
            | Self::XsyncTs => true,
            _ => false,
        }
    }

    /// The MIPI name, as printed by this crate (`D32MTS`, `FLAG_TS`, `M8`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::NullTs => "NULL_TS",
            Self::M8 => "M8",
            Self::M16 => "M16",
            Self::Merr => "MERR",
            Self::Gerr => "GERR",
            Self::C8 => "C8",
            Self::C16 => "C16",
            Self::Flag => "FLAG",
            Self::FlagTs => "FLAG_TS",
            Self::User => "USER",
            Self::UserTs => "USER_TS",
            Self::Time => "TIME",
            Self::TimeTs => "TIME_TS",
            Self::Trig => "TRIG",
            Self::TrigTs => "TRIG_TS",
            Self::Freq => "FREQ",
            Self::FreqTs => "FREQ_TS",
            Self::Freq40 => "FREQ_40",
            Self::Freq40Ts => "FREQ_40_TS",
            Self::Xsync => "XSYNC",
            Self::XsyncTs => "XSYNC_TS",
            Self::Version => "VERSION",
            Self::Async => "ASYNC",
            Self::Data {
                width,
                marker,
                timestamp,
            } => data_name(width, marker, timestamp),
        }
    }
}

const fn data_name(width: DataWidth, marker: bool, timestamp: bool) -> &'static str {
    const NAMES: [[&str; 4]; 5] = [
        ["D4", "D4M", "D4TS", "D4MTS"],
        ["D8", "D8M", "D8TS", "D8MTS"],
        ["D16", "D16M", "D16TS", "D16MTS"],
        ["D32", "D32M", "D32TS", "D32MTS"],
        ["D64", "D64M", "D64TS", "D64MTS"],
    ];
    let row = match width {
        DataWidth::W4 => 0,
        DataWidth::W8 => 1,
        DataWidth::W16 => 2,
        DataWidth::W32 => 3,
        DataWidth::W64 => 4,
    };
    NAMES[row][(marker as usize) | ((timestamp as usize) << 1)]
}

impl fmt::Display for PacketType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a packet says: its type and decoded payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// NULL or NULL_TS.
    Null {
        /// Present for NULL_TS.
        ts: Option<Timestamp>,
    },
    /// M8 or M16: the current master becomes `master` and the channel becomes 0.
    Master {
        /// 8-bit (M8) or 16-bit (M16) packet.
        width: IdWidth,
        /// The new master.
        master: u16,
    },
    /// C8 or C16: C8 replaces channel bits 7:0, C16 the whole channel.
    Channel {
        /// 8-bit (C8) or 16-bit (C16) packet.
        width: IdWidth,
        /// The value sent.
        channel: u16,
    },
    /// MERR: an error of the current master (Arm: stimulus dropped, buffer full); the channel becomes 0.
    MasterError {
        /// The 8-bit error value.
        value: u8,
    },
    /// GERR: a global error; master and channel become 0.
    GlobalError {
        /// The 8-bit error value.
        value: u8,
    },
    /// A data packet, attributed to the current master and channel.
    Data {
        /// Payload width.
        width: DataWidth,
        /// The payload, right-aligned.
        value: u64,
        /// Marker variant.
        marker: bool,
        /// Timestamp, for the `…TS` variants.
        ts: Option<Timestamp>,
    },
    /// FLAG or FLAG_TS.
    Flag {
        /// Present for FLAG_TS.
        ts: Option<Timestamp>,
    },
    /// USER or USER_TS: implementation-defined metadata of 1 to 16 nibbles.
    User {
        /// Payload length in nibbles (1–16).
        nibbles: u8,
        /// The payload, right-aligned.
        value: u64,
        /// Present for USER_TS.
        ts: Option<Timestamp>,
    },
    /// TIME or TIME_TS: a time value of another clock domain.
    ///
    /// Layout (TI's reading; the MIPI text was not available): clock-ID nibble, version nibble, then a
    /// length-prefixed value coded like a timestamp (length nibble, 0–16 value nibbles).
    Time {
        /// Clock domain identifier.
        clock: u8,
        /// Time format version nibble.
        version: u8,
        /// Number of time nibbles (0–16).
        nibbles: u8,
        /// The time value, right-aligned.
        time: u64,
        /// Present for TIME_TS.
        ts: Option<Timestamp>,
    },
    /// TRIG or TRIG_TS: a trigger event.
    Trigger {
        /// Trigger identifier / data.
        value: u8,
        /// Present for TRIG_TS.
        ts: Option<Timestamp>,
    },
    /// FREQ, FREQ_TS, FREQ_40 or FREQ_40_TS: the timestamp counter frequency.
    Frequency {
        /// True for the 40-bit STPv2.2 forms (`F0F0`, `F0F1`).
        wide: bool,
        /// Frequency in Hz (0 = unknown).
        hz: u64,
        /// Present for the `_TS` forms.
        ts: Option<Timestamp>,
    },
    /// XSYNC or XSYNC_TS: cross-synchronisation between STP sources.
    Xsync {
        /// Synchronisation identifier.
        id: u8,
        /// Present for XSYNC_TS.
        ts: Option<Timestamp>,
    },
    /// VERSION: master and channel become 0; the value selects the timestamp format.
    Version {
        /// The version nibble.
        version: u8,
    },
    /// ASYNC: alignment synchronisation (21 × `F`, `0`).
    Async,
}

impl PacketKind {
    /// The packet type this payload belongs to.
    pub const fn packet_type(&self) -> PacketType {
        match *self {
            Self::Null { ts } => {
                if ts.is_some() {
                    PacketType::NullTs
                } else {
                    PacketType::Null
                }
            }
            Self::Master { width, .. } => match width {
                IdWidth::W8 => PacketType::M8,
                IdWidth::W16 => PacketType::M16,
            },
            Self::Channel { width, .. } => match width {
                IdWidth::W8 => PacketType::C8,
                IdWidth::W16 => PacketType::C16,
            },
            Self::MasterError { .. } => PacketType::Merr,
            Self::GlobalError { .. } => PacketType::Gerr,
            Self::Data {
                width, marker, ts, ..
            } => PacketType::Data {
                width,
                marker,
                timestamp: ts.is_some(),
            },
            Self::Flag { ts } => pick(ts.is_some(), PacketType::FlagTs, PacketType::Flag),
            Self::User { ts, .. } => pick(ts.is_some(), PacketType::UserTs, PacketType::User),
            Self::Time { ts, .. } => pick(ts.is_some(), PacketType::TimeTs, PacketType::Time),
            Self::Trigger { ts, .. } => pick(ts.is_some(), PacketType::TrigTs, PacketType::Trig),
            Self::Frequency { wide, ts, .. } => match (wide, ts.is_some()) {
                (false, false) => PacketType::Freq,
                (false, true) => PacketType::FreqTs,
                (true, false) => PacketType::Freq40,
                (true, true) => PacketType::Freq40Ts,
            },
            Self::Xsync { ts, .. } => pick(ts.is_some(), PacketType::XsyncTs, PacketType::Xsync),
            Self::Version { .. } => PacketType::Version,
            Self::Async => PacketType::Async,
        }
    }

    /// The timestamp field, for the timestamped packet types.
    pub const fn timestamp(&self) -> Option<Timestamp> {
        match *self {
            Self::Null { ts }
            | Self::Data { ts, .. }
            | Self::Flag { ts }
            | Self::User { ts, .. }
            | Self::Time { ts, .. }
            | Self::Trigger { ts, .. }
            | Self::Frequency { ts, .. }
            | Self::Xsync { ts, .. } => ts,
            _ => None,
        }
    }
}

const fn pick(cond: bool, yes: PacketType, no: PacketType) -> PacketType {
    if cond {
        yes
    } else {
        no
    }
}

/// A decoded packet and where it sits in the STP stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Packet {
    /// Offset of the packet's first nibble, counted in nibbles from the start of the stream.
    pub offset: u64,
    /// Length of the packet in nibbles (opcode, payload and timestamp).
    pub nibbles: u8,
    /// Type and payload.
    pub kind: PacketKind,
}

impl Packet {
    /// The packet type.
    pub const fn packet_type(&self) -> PacketType {
        self.kind.packet_type()
    }
}

impl fmt::Display for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.packet_type())?;
        match self.kind {
            PacketKind::Null { .. } | PacketKind::Flag { .. } | PacketKind::Async => {}
            PacketKind::Master { master, .. } => write!(f, " master=0x{master:02x}")?,
            PacketKind::Channel { channel, .. } => write!(f, " channel=0x{channel:04x}")?,
            PacketKind::MasterError { value } | PacketKind::GlobalError { value } => {
                write!(f, " error=0x{value:02x}")?
            }
            PacketKind::Data { width, value, .. } => {
                let digits = usize::from(width.nibbles());
                write!(f, " data=0x{value:0digits$x}")?
            }
            PacketKind::User { nibbles, value, .. } => {
                let digits = usize::from(nibbles);
                write!(f, " user=0x{value:0digits$x}")?
            }
            PacketKind::Time {
                clock,
                version,
                time,
                ..
            } => write!(f, " clock={clock} version={version} time=0x{time:x}")?,
            PacketKind::Trigger { value, .. } => write!(f, " trigger=0x{value:02x}")?,
            PacketKind::Frequency { hz, .. } => write!(f, " freq={hz}Hz")?,
            PacketKind::Xsync { id, .. } => write!(f, " xsync=0x{id:02x}")?,
            PacketKind::Version { version } => write!(f, " version={version}")?,
        }
        if let Some(ts) = self.kind.timestamp() {
            write!(f, " {ts}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcodes_are_unique_and_round_trip() {
        let all: alloc_free::Seen = PacketType::all().collect();
        assert_eq!(all.count, 23 + 20 + 1);
        for t in PacketType::all().filter(|t| *t != PacketType::Async) {
            let (v, n) = t.opcode();
            assert_eq!(PacketType::from_opcode(v, n), Some(t), "{t}");
        }
    }

    #[test]
    fn reserved_opcodes_are_not_types() {
        for (v, n) in [(0xF0C, 3), (0xF0D, 3), (0xF0E, 3), (0xF0F2, 4), (0xF0FF, 4)] {
            assert_eq!(PacketType::from_opcode(v, n), None);
        }
    }

    #[test]
    fn seed_table_opcodes() {
        // The KeyStone article's atoms: MASTER=1, OVRF=2 (MERR), C8=3, D32=6, and 0xA which is D32MTS.
        assert_eq!(PacketType::from_opcode(0x1, 1), Some(PacketType::M8));
        assert_eq!(PacketType::from_opcode(0x2, 1), Some(PacketType::Merr));
        assert_eq!(PacketType::from_opcode(0x3, 1), Some(PacketType::C8));
        assert_eq!(
            PacketType::from_opcode(0x6, 1).map(|t| t.name()),
            Some("D32")
        );
        assert_eq!(
            PacketType::from_opcode(0xA, 1).map(|t| t.name()),
            Some("D32MTS")
        );
        assert_eq!(
            PacketType::from_opcode(0xF6, 2).map(|t| t.name()),
            Some("D32TS")
        );
    }

    mod alloc_free {
        use super::PacketType;

        /// Counts distinct opcodes without an allocator.
        pub struct Seen {
            pub count: usize,
        }

        impl FromIterator<PacketType> for Seen {
            fn from_iter<I: IntoIterator<Item = PacketType>>(iter: I) -> Self {
                let mut seen = [(0u16, 0u8); 64];
                let mut count = 0;
                for t in iter {
                    let op = t.opcode();
                    assert!(!seen[..count].contains(&op), "duplicate opcode for {t}");
                    seen[count] = op;
                    count += 1;
                }
                Seen { count }
            }
        }
    }
}
