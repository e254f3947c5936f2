//! Optional interpreter for TI KeyStone II system trace (the seed article), kept apart from the STP core.
//!
//! On KeyStone II the STM merges CPU software messages and CPTracer (bus monitor) hardware messages.
//! What the article claims, and what could be verified (`docs/stm.md` §9):
//!
//! | Claim | Status |
//! |---|---|
//! | Hardware messages come from master 0x80 | Consistent with TI CT_STM, where bit 7 of the master ID marks a hardware master (0x80–0xFF), but not proven to be exactly 0x80: the set is configuration here ([`HardwareMasters`]). |
//! | A CPTracer message is a 32-bit payload with event type and master ID fields (events A/B/C/E/F/G) | **Unverified**: no public layout was found. [`CpTracerWord`] keeps the raw word and decodes no fields. |
//! | The seed's `D32TS` atom (`1010`, `T[7:0]`) | **Wrong for STPv2**: `0xA` is D32MTS with a variable-length timestamp; the core decoder follows STPv2. |
//! | `OVRF` (`0010`) is an overflow count | Opcode right (MERR), meaning simplified: an error value for the current master. |

use core::fmt;

use crate::element::{Element, ElementKind};

/// The masters that carry hardware (CPTracer) messages, an inclusive range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HardwareMasters {
    /// First hardware master.
    pub first: u16,
    /// Last hardware master.
    pub last: u16,
}

impl Default for HardwareMasters {
    /// TI CT_STM: master IDs with bit 7 set (0x80–0xFF) are hardware masters.
    fn default() -> Self {
        HardwareMasters {
            first: 0x80,
            last: 0xFF,
        }
    }
}

/// A raw CPTracer message word (32-bit payload on a hardware master); its field layout is not verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CpTracerWord {
    /// The hardware master it came from.
    pub master: u16,
    /// The channel it came on.
    pub channel: Option<u16>,
    /// The payload.
    pub raw: u32,
}

/// Where a data element came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A software message (a CPU writing stimulus ports).
    Software,
    /// A 32-bit payload on a hardware master: a CPTracer message.
    CpTracer(CpTracerWord),
    /// A payload on a hardware master that is not 32 bits wide (not a CPTracer message as described).
    OtherHardware,
}

impl HardwareMasters {
    /// True when `master` is in the range.
    pub const fn contains(&self, master: u16) -> bool {
        self.first <= master && master <= self.last
    }

    /// Classifies a data element; `None` for other elements or when the master is unknown.
    ///
    /// ```
    /// use stp_decode::keystone::{HardwareMasters, Origin};
    /// use stp_decode::{DataWidth, Element, ElementKind};
    /// let e = Element { offset: 0, master: Some(0x80), channel: Some(0),
    ///     kind: ElementKind::Data { width: DataWidth::W32, value: 0x1234, marker: false, ts: None } };
    /// assert!(matches!(HardwareMasters::default().classify(&e), Some(Origin::CpTracer(w)) if w.raw == 0x1234));
    /// ```
    pub fn classify(&self, element: &Element) -> Option<Origin> {
        let ElementKind::Data { width, value, .. } = element.kind else {
            return None;
        };
        let master = element.master?;
        if !self.contains(master) {
            return Some(Origin::Software);
        }
        Some(if width == crate::DataWidth::W32 {
            Origin::CpTracer(CpTracerWord {
                master,
                channel: element.channel,
                raw: value as u32,
            })
        } else {
            Origin::OtherHardware
        })
    }
}

/// A KeyStone II device: which STP master numbers its cores write with (`docs/stm.md` §11, from TI's
/// `dsptop`: DSP cores from 0, Arm cores from 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Device {
    /// 66AK2H: DSP0–7 are masters 0–7, Arm0–3 masters 8–11.
    K2h,
    /// 66AK2E: DSP0 is master 0, Arm0–3 masters 8–11.
    K2e,
    /// 66AK2L: DSP0–3 are masters 0–3, Arm0–1 masters 8–9.
    K2l,
}

/// KeyStone II's STM's trace ID in TWP frames (`docs/stm.md`: the `.dcm` sidecar's `TWP_Protocol=1`).
pub const STM_TRACE_ID: u8 = 0x40;

/// First STP master of the Arm cores on every KeyStone II device.
const ARM_FIRST_MASTER: u16 = 8;

impl Device {
    /// Every device.
    pub const ALL: [Device; 3] = [Device::K2h, Device::K2e, Device::K2l];

    /// The device's name as `--device` takes it: `k2h`, `k2e`, `k2l`.
    pub const fn name(self) -> &'static str {
        match self {
            Device::K2h => "k2h",
            Device::K2e => "k2e",
            Device::K2l => "k2l",
        }
    }

    /// The device named `name` (case-insensitive).
    pub fn from_name(name: &str) -> Option<Device> {
        Device::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name))
    }

    /// Number of C66x DSP cores.
    pub const fn dsp_cores(self) -> u16 {
        match self {
            Device::K2h => 8,
            Device::K2e => 1,
            Device::K2l => 4,
        }
    }

    /// Number of Arm Cortex-A15 cores.
    pub const fn arm_cores(self) -> u16 {
        match self {
            Device::K2h | Device::K2e => 4,
            Device::K2l => 2,
        }
    }
}

/// What wrote on an STP master.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MasterName {
    /// DSP core `n`.
    Dsp(u16),
    /// Arm core `n`.
    Arm(u16),
    /// A hardware master (a CP Tracer).
    Hardware(u16),
    /// A master the configuration does not name.
    Other(u16),
}

impl fmt::Display for MasterName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MasterName::Dsp(n) => write!(f, "DSP{n}"),
            MasterName::Arm(n) => write!(f, "Arm{n}"),
            MasterName::Hardware(m) => write!(f, "CPT 0x{m:02x}"),
            MasterName::Other(m) => write!(f, "master 0x{m:02x}"),
        }
    }
}

/// How masters are named and which of them are hardware masters: a device (optional) and the hardware set.
///
/// ```
/// use stp_decode::keystone::{Device, MasterName, Masters};
/// let masters = Masters::for_device(Device::K2l);
/// assert_eq!(masters.name(3), MasterName::Dsp(3));
/// assert_eq!(masters.name(4), MasterName::Other(4)); // K2L has four DSPs
/// assert_eq!(masters.name(9), MasterName::Arm(1));
/// assert_eq!(masters.name(0x8c).to_string(), "CPT 0x8c");
/// assert_eq!(masters.parse("arm1"), Some(9));
/// assert_eq!(masters.parse("0x8c"), Some(0x8c));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Masters {
    /// The device whose cores name the software masters; `None` names them by number.
    pub device: Option<Device>,
    /// The hardware (CP Tracer) masters.
    pub hardware: HardwareMasters,
}

impl Masters {
    /// The masters of `device`, with the default hardware set (0x80–0xFF).
    pub const fn for_device(device: Device) -> Masters {
        Masters {
            device: Some(device),
            hardware: HardwareMasters {
                first: 0x80,
                last: 0xFF,
            },
        }
    }

    /// What wrote on `master`.
    pub fn name(&self, master: u16) -> MasterName {
        if self.hardware.contains(master) {
            return MasterName::Hardware(master);
        }
        if let Some(device) = self.device {
            if master < device.dsp_cores() {
                return MasterName::Dsp(master);
            }
            if (ARM_FIRST_MASTER..ARM_FIRST_MASTER + device.arm_cores()).contains(&master) {
                return MasterName::Arm(master - ARM_FIRST_MASTER);
            }
        }
        MasterName::Other(master)
    }

    /// A master given by number (`12`, `0x8c`) or, with a device, by core name (`DSP3`, `arm0`,
    /// case-insensitive).
    pub fn parse(&self, text: &str) -> Option<u16> {
        if let Some(number) = parse_number(text) {
            return u16::try_from(number).ok();
        }
        let device = self.device?;
        let lower = |prefix: &str| {
            text.get(..prefix.len())
                .filter(|p| p.eq_ignore_ascii_case(prefix))
                .and_then(|_| text[prefix.len()..].parse::<u16>().ok())
        };
        if let Some(n) = lower("dsp").filter(|&n| n < device.dsp_cores()) {
            return Some(n);
        }
        lower("arm")
            .filter(|&n| n < device.arm_cores())
            .map(|n| ARM_FIRST_MASTER + n)
    }
}

/// A number written in decimal or with a `0x` prefix in hexadecimal (`_` separators allowed).
pub(crate) fn parse_number(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_') {
        return None;
    }
    let mut value: u64 = 0;
    let mut any = false;
    for b in digits.bytes().filter(|&b| b != b'_') {
        let d = u64::from((b as char).to_digit(radix)?);
        value = value.checked_mul(u64::from(radix))?.checked_add(d)?;
        any = true;
    }
    any.then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_numbering_per_device() {
        let k2h = Masters::for_device(Device::K2h);
        assert_eq!(k2h.name(7), MasterName::Dsp(7));
        assert_eq!(k2h.name(11), MasterName::Arm(3));
        assert_eq!(k2h.name(12), MasterName::Other(12));
        let k2e = Masters::for_device(Device::K2e);
        assert_eq!(k2e.name(1), MasterName::Other(1));
        assert_eq!(k2e.parse("DSP1"), None);
        assert_eq!(k2e.parse("Arm3"), Some(11));
        assert_eq!(Masters::default().name(3), MasterName::Other(3));
        assert_eq!(Masters::default().parse("dsp3"), None);
        let custom = Masters {
            hardware: HardwareMasters {
                first: 0x8c,
                last: 0x8c,
            },
            ..Masters::default()
        };
        assert_eq!(custom.name(0x8d), MasterName::Other(0x8d));
        assert_eq!(Device::from_name("K2H"), Some(Device::K2h));
        assert_eq!(Device::from_name("k2x"), None);
    }

    #[test]
    fn numbers_in_decimal_and_hex() {
        assert_eq!(parse_number("0x8C"), Some(0x8c));
        assert_eq!(parse_number("1_000"), Some(1000));
        assert_eq!(parse_number("12a"), None);
        assert_eq!(parse_number("0x"), None);
        assert_eq!(parse_number("_"), None);
        assert_eq!(parse_number("0x1_0000_0000_0000_0000"), None);
    }
}
