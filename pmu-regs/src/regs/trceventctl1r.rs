//! TRCEVENTCTL1R, the ETE's event behaviour: which trace events are recorded in the trace.

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;
use crate::regs::trceventctl0r::TraceEvent;

register! {
    /// TRCEVENTCTL1R (FEAT_ETE): what the events TRCEVENTCTL0R selects do. INSTEN bit n puts an Event
    /// element in the instruction trace each time ETE event n fires; ATB makes event 0 an AMBA trace
    /// bus trigger.
    ///
    /// Encoding `S2_1_C0_C9_0` ([`TrcEventCtl1r::ENCODING`]); external offset 0x024 of the ETE component.
    ///
    /// ```
    /// use pmu_regs::regs::trceventctl0r::TraceEvent;
    /// use pmu_regs::TrcEventCtl1r;
    /// let v = TrcEventCtl1r::default().with_instruction_event(TraceEvent::Event2, true);
    /// assert_eq!(v.bits(), 0b100);
    /// assert!(v.instruction_event(TraceEvent::Event2) && !v.instruction_event(TraceEvent::Event0));
    /// assert_eq!(TrcEventCtl1r::ENCODING.to_string(), "S2_1_C0_C9_0");
    /// ```
    pub struct TrcEventCtl1r = "TRCEVENTCTL1R" {
        /// INSTEN, bits `[3:0]`: bit n records ETE event n in the instruction trace.
        field insten / with_insten [3:0] u8, ReadWrite, V3;
        /// ATB, bit 11 (TRCIDR5.ATBTRIG): ETE event 0 is also an ATB trigger.
        flag atb / with_atb [11], ReadWrite, V3;
        /// LPOVERRIDE, bit 12 (TRCIDR5.LPOVERRIDE): entering a low-power state does not stop the trace unit.
        flag lpoverride / with_lpoverride [12], ReadWrite, V3;
        /// OE, bit 13 (TRCIDR5.OE): trace output to an IMPLEMENTATION DEFINED interface is enabled.
        flag oe / with_oe [13], ReadWrite, V3;
    }
}

impl TrcEventCtl1r {
    /// `S2_1_C0_C9_0` (op0 2, op1 1, CRn 0, CRm 9, op2 0).
    pub const ENCODING: SysRegEncoding = SysRegEncoding::new(2, 1, 0, 9, 0);

    /// Whether ETE event `event` is recorded in the instruction trace (its INSTEN bit).
    pub const fn instruction_event(self, event: TraceEvent) -> bool {
        self.0 & (1 << event.index()) != 0
    }

    /// A copy with the INSTEN bit of `event` set to `enabled`.
    #[must_use]
    pub const fn with_instruction_event(self, event: TraceEvent, enabled: bool) -> Self {
        let bit = 1u64 << event.index();
        if enabled {
            Self(self.0 | bit)
        } else {
            Self(self.0 & !bit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn layout() {
        assert_eq!(TrcEventCtl1r::writable_mask(PmuVersion::V3), 0x380F);
        let all = TraceEvent::ALL
            .iter()
            .fold(TrcEventCtl1r::default(), |v, &e| {
                v.with_instruction_event(e, true)
            });
        assert_eq!(all.insten(), 0xF);
        assert_eq!(
            all.with_instruction_event(TraceEvent::Event0, false)
                .insten(),
            0xE
        );
    }
}
