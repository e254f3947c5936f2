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
