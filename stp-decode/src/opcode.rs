//! The opcode tables: which packet type each 1-, 2-, 3- and 4-nibble opcode names (`docs/stm.md` §2).
//!
//! `F` is a prefix: `F n` are the 2-nibble opcodes, `F 0 n` the 3-nibble ones and `F 0 F n` the 4-nibble
//! ones. `F F` starts an ASYNC and is never an opcode. Entries that are `None` are reserved (or prefixes).

use crate::packet::{DataWidth, PacketType};

const fn data(width: DataWidth, marker: bool, timestamp: bool) -> Option<PacketType> {
    Some(PacketType::Data {
        width,
        marker,
        timestamp,
    })
}

/// One-nibble opcodes `0`–`E` (`F` is the prefix).
pub const OP1: [Option<PacketType>; 16] = [
    Some(PacketType::Null),
    Some(PacketType::M8),
    Some(PacketType::Merr),
    Some(PacketType::C8),
    data(DataWidth::W8, false, false),
    data(DataWidth::W16, false, false),
    data(DataWidth::W32, false, false),
    data(DataWidth::W64, false, false),
    data(DataWidth::W8, true, true),
    data(DataWidth::W16, true, true),
    data(DataWidth::W32, true, true),
    data(DataWidth::W64, true, true),
    data(DataWidth::W4, false, false),
    data(DataWidth::W4, true, true),
    Some(PacketType::FlagTs),
    None,
];

/// Two-nibble opcodes `F n` (`F0` is a prefix, `FF` is ASYNC).
pub const OP2: [Option<PacketType>; 16] = [
    None,
    Some(PacketType::M16),
    Some(PacketType::Gerr),
    Some(PacketType::C16),
    data(DataWidth::W8, false, true),
    data(DataWidth::W16, false, true),
    data(DataWidth::W32, false, true),
    data(DataWidth::W64, false, true),
    data(DataWidth::W8, true, false),
    data(DataWidth::W16, true, false),
    data(DataWidth::W32, true, false),
    data(DataWidth::W64, true, false),
    data(DataWidth::W4, false, true),
    data(DataWidth::W4, true, false),
    Some(PacketType::Flag),
    None,
];

/// Three-nibble opcodes `F 0 n` (`F0C`–`F0E` reserved, `F0F` a prefix).
pub const OP3: [Option<PacketType>; 16] = [
    Some(PacketType::Version),
    Some(PacketType::NullTs),
    Some(PacketType::User),
    Some(PacketType::UserTs),
    Some(PacketType::Time),
    Some(PacketType::TimeTs),
    Some(PacketType::Trig),
    Some(PacketType::TrigTs),
    Some(PacketType::Freq),
    Some(PacketType::FreqTs),
    Some(PacketType::Xsync),
    Some(PacketType::XsyncTs),
    None,
    None,
    None,
    None,
];

/// Four-nibble opcodes `F 0 F n` (STPv2.2: only FREQ_40 and FREQ_40_TS are known; the rest, including
/// DIP `F0F2` whose payload is not documented anywhere available, are reserved).
pub const OP4: [Option<PacketType>; 16] = {
    let mut t = [None; 16];
    t[0] = Some(PacketType::Freq40);
    t[1] = Some(PacketType::Freq40Ts);
    t
};

/// Looks an opcode up: `value` holds `nibbles` nibbles, first on the wire most significant.
pub const fn lookup(value: u16, nibbles: u8) -> Option<PacketType> {
    let last = (value & 0xF) as usize;
    match nibbles {
        1 if value <= 0xF => OP1[last],
        2 if value >> 4 == 0xF => OP2[last],
        3 if value >> 4 == 0xF0 => OP3[last],
        4 if value >> 4 == 0xF0F => OP4[last],
        _ => None,
    }
}
