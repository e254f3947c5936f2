//! PMCCFILTR_EL0, the cycle counter's filter register (the "PMEVTYPER31" slot).

use crate::regs::field::register;

register! {
    /// PMCCFILTR_EL0: which exception levels and security states the cycle counter counts in.
    ///
    /// It has the filter bits of [`Pmevtyper`](crate::Pmevtyper) but no event number and no MT bit: the
    /// cycle counter always counts CPU_CYCLES (0x11).
    ///
    /// ```compile_fail
    /// // The cycle counter has no event number to set.
    /// let _ = pmu_regs::Pmccfiltr::default().with_evt_count(0x11);
    /// ```
    ///
    /// ```
    /// use pmu_regs::{Pmccfiltr, PmuVersion, Register};
    /// let f = Pmccfiltr::default().with_u(true).with_nsh(true);
    /// assert_eq!(f.bits(), 0x4800_0000);
    /// assert_eq!(Pmccfiltr::res0_mask(PmuVersion::V3) & 0xFFFF_FFFF, 0x03FF_FFFF);
    /// ```
    pub struct Pmccfiltr = "PMCCFILTR_EL0" {
        /// RLH, bit 20 (FEAT_RME): Realm EL2 filtering.
        flag rlh / with_rlh [20], ReadWrite, V3p7;
        /// RLU, bit 21 (FEAT_RME): Realm EL0 filtering, with U.
        flag rlu / with_rlu [21], ReadWrite, V3p7;
        /// RLK, bit 22 (FEAT_RME): Realm EL1 filtering, with P.
        flag rlk / with_rlk [22], ReadWrite, V3p7;
        /// T, bit 23: transactional-state filtering.
        flag t / with_t [23], ReadWrite, V3p5;
        /// SH, bit 24 (FEAT_SEL2): Secure EL2 is counted when SH differs from NSH.
        flag sh / with_sh [24], ReadWrite, V3p4;
        /// M, bit 26: EL3 is counted when M equals P.
        flag m / with_m [26], ReadWrite, V3;
        /// NSH, bit 27: 1 = count at EL2.
        flag nsh / with_nsh [27], ReadWrite, V3;
        /// NSU, bit 28: Non-secure EL0 is counted when NSU equals U.
        flag nsu / with_nsu [28], ReadWrite, V3;
        /// NSK, bit 29: Non-secure EL1 is counted when NSK equals P.
        flag nsk / with_nsk [29], ReadWrite, V3;
        /// U, bit 30: 1 = do not count at EL0.
        flag u / with_u [30], ReadWrite, V3;
        /// P, bit 31: 1 = do not count at EL1.
        flag p / with_p [31], ReadWrite, V3;
        /// VS, bits `[57:56]` (FEAT_PMUv3_SME): 0b01 = not in Streaming SVE mode, 0b10 = not in
        /// Non-streaming mode.
        field vs / with_vs [57:56] u8, ReadWrite, V3p7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn no_event_number_and_no_mt() {
        for v in PmuVersion::ALL {
            let res0 = Pmccfiltr::res0_mask(v);
            assert_eq!(res0 & 0xF_FFFF, 0xF_FFFF, "{v}");
            assert_ne!(res0 & (1 << 25), 0, "{v}");
        }
    }
}
