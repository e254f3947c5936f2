//! `TRCEXTINSELR<n>`, the ETE's external input selectors: which PMU event drives each of the trace
//! unit's four external inputs.

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;

/// One of the trace unit's four external input selectors, `TRCEXTINSELR0`–`TRCEXTINSELR3`. Each exists
/// when TRCIDR5.NUMEXTINSEL is above its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExternalInput {
    /// External input 0, TRCEXTINSELR0 (also named TRCEXTINSELR).
    In0,
    /// External input 1, TRCEXTINSELR1.
    In1,
    /// External input 2, TRCEXTINSELR2.
    In2,
    /// External input 3, TRCEXTINSELR3.
    In3,
}

impl ExternalInput {
    /// The four inputs in order.
    pub const ALL: [ExternalInput; 4] = [
        ExternalInput::In0,
        ExternalInput::In1,
        ExternalInput::In2,
        ExternalInput::In3,
    ];

    /// The index n of `TRCEXTINSELR<n>` (0..=3).
    pub const fn index(self) -> u8 {
        self as u8
    }
}

register! {
    /// `TRCEXTINSELR<n>` (FEAT_ETE): the PMU event that drives external input n of the trace unit.
    /// A resource selector of group 0b0000 ([`TrcRsctlr::external_inputs`](crate::TrcRsctlr::external_inputs))
    /// then turns the input into a resource, which trace events ([`TrcEventCtl0r`](crate::TrcEventCtl0r))
    /// and the other trace controls can use.
    ///
    /// evtCount takes a PMU event number as `PMEVTYPER<n>_EL0` does (0x0000–0x003F and 0x4000+ common
    /// events, 0x0040–0x00BF recommended, 0x00C0–0x03FF IMPLEMENTATION DEFINED). A common event the PE
    /// does not implement is never active; an unimplemented IMPLEMENTATION DEFINED number selects an
    /// UNPREDICTABLE event. The register must be written while the trace unit is idle.
    ///
    /// Encoding `S2_1_C0_C<8+n>_4` ([`TrcExtInSelR::encoding`]); external offset `0x120 + 4n` of the ETE
    /// component ([`TrcExtInSelR::external_offset`]).
    ///
    /// The Cortex-A720AE article's example writes 0x13 to TRCEXTINSELR0 and calls it "L1D cache
    /// miss". The write is right; the name is not: 0x13 is MEM_ACCESS, every data memory access. An L1D
    /// miss is 0x03 L1D_CACHE_REFILL.
    ///
    /// ```
    /// use pmu_regs::regs::trcextinselr::ExternalInput;
    /// use pmu_regs::{CommonEvent, TrcExtInSelR};
    /// // External input 0 follows PMU event 0x13 (MEM_ACCESS, every data memory access).
    /// let sel = TrcExtInSelR::for_event(CommonEvent::MemAccess.code());
    /// assert_eq!(sel.bits(), 0x13);
    /// let enc = TrcExtInSelR::encoding(ExternalInput::In0);
    /// assert_eq!(enc.to_string(), "S2_1_C0_C8_4");
    /// assert_eq!(enc.msr(0), 0xD511_0880); // msr trcextinselr0, x0
    /// assert_eq!(TrcExtInSelR::external_offset(ExternalInput::In3), 0x12C);
    /// ```
    ///
    /// ```compile_fail
    /// // evtCount is 16 bits: a wider event number does not compile.
    /// let _ = pmu_regs::TrcExtInSelR::for_event(0x1_0013);
    /// ```
    ///
    /// ```compile_fail,E0308
    /// // There are four selectors, named by `ExternalInput`, not by a number that could be 4.
    /// let _ = pmu_regs::TrcExtInSelR::encoding(4);
    /// ```
    pub struct TrcExtInSelR = "TRCEXTINSELR<n>" {
        /// evtCount, bits `[15:0]`: the PMU event number driving the input.
        get_field evt_count [15:0] u16, ReadWrite, V3;
    }
}

impl TrcExtInSelR {
    /// The selector value for PMU event `event`.
    pub const fn for_event(event: u16) -> TrcExtInSelR {
        TrcExtInSelR(event as u64)
    }

    /// A copy with evtCount set to `event`.
    #[must_use]
    pub const fn with_evt_count(self, event: u16) -> TrcExtInSelR {
        TrcExtInSelR((self.0 & !0xFFFF) | event as u64)
    }

    /// `S2_1_C0_C<8+n>_4`.
    pub const fn encoding(input: ExternalInput) -> SysRegEncoding {
        SysRegEncoding::new(2, 1, 0, 8 + input.index(), 4)
    }

    /// Offset in the ETE's external register block: `0x120 + 4n`.
    pub const fn external_offset(input: ExternalInput) -> usize {
        crate::external::ete::TRCEXTINSELR_BASE + 4 * input.index() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn layout_and_addresses() {
        assert_eq!(TrcExtInSelR::res0_mask(PmuVersion::V3p9), !0xFFFF);
        assert_eq!(TrcExtInSelR::writable_mask(PmuVersion::V3), 0xFFFF);
        let v = TrcExtInSelR::from_bits(0xABCD_0000).with_evt_count(0x4010);
        assert_eq!((v.evt_count(), v.bits()), (0x4010, 0xABCD_4010));
        for input in ExternalInput::ALL {
            let n = input.index();
            // The ETMv4/ETE rule: the system register is the external offset / 4 spread over
            // op2 (bits 6:4), CRm (bits 3:0) and CRn (bits 9:7), with op0 2 and op1 1.
            let reg = (TrcExtInSelR::external_offset(input) >> 2) as u8;
            assert_eq!(reg, 0x48 + n);
            assert_eq!(
                TrcExtInSelR::encoding(input),
                SysRegEncoding::new(2, 1, (reg >> 7) & 7, reg & 0xF, (reg >> 4) & 7)
            );
        }
    }
}
