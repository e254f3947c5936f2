//! PMCR_EL0, the Performance Monitors Control Register.

use crate::regs::field::register;

register! {
    /// PMCR_EL0: global enable, counter resets, the cycle-counter divider and overflow points, and the
    /// number of event counters.
    ///
    /// `P` and `C` are actions: writing 1 resets the counters, they read as zero, and neither clears an
    /// overflow flag. `LC` and `LP` choose where overflow is *recorded* (carry out of bit 31 or bit 63);
    /// they never make a counter saturate.
    ///
    /// ```
    /// use pmu_regs::{Pmcr, PmuVersion, Register};
    /// let pmcr = Pmcr::from_bits(0x4130_3041); // Cortex-A76 style: IMP 0x41, N = 6, LC and E set
    /// assert_eq!(pmcr.imp(), 0x41);
    /// assert_eq!(pmcr.n(), 6);
    /// assert!(pmcr.e() && pmcr.lc() && !pmcr.lp());
    /// assert_eq!(Pmcr::writable_mask(PmuVersion::V3), 0x79);
    /// ```
    pub struct Pmcr = "PMCR_EL0" {
        /// E, bit 0: enable for the cycle counter and event counters below MDCR_EL2.HPMN.
        flag e / with_e [0], ReadWrite, V3;
        /// P, bit 1 (write-only action): reset the event counters below HPMN to zero.
        flag p / with_p [1], WriteOnly, V3;
        /// C, bit 2 (write-only action): reset PMCCNTR_EL0 to zero.
        flag c / with_c [2], WriteOnly, V3;
        /// D, bit 3: the cycle counter counts every 64th cycle. No effect when LC is 1.
        flag d / with_d [3], ReadWrite, V3;
        /// X, bit 4: export events to an IMPLEMENTATION DEFINED event bus (RES0 if PMCFGR.EX is 0).
        flag x / with_x [4], ReadWrite, V3;
        /// DP, bit 5: disable the cycle counter where event counting is prohibited.
        flag dp / with_dp [5], ReadWrite, V3;
        /// LC, bit 6: the cycle-counter overflow flag is set on the carry out of bit 63 (1) or bit 31 (0).
        flag lc / with_lc [6], ReadWrite, V3;
        /// LP, bit 7 (PMUv3p5): event counters below HPMN overflow from bit 63 (1) or bit 31 (0).
        flag lp / with_lp [7], ReadWrite, V3p5;
        /// FZO, bit 9 (PMUv3p7): freeze event counters below HPMN while any of their overflow flags is set.
        flag fzo / with_fzo [9], ReadWrite, V3p7;
        /// N, bits `[15:11]` (read-only): the number of event counters; reads as MDCR_EL2.HPMN at EL0/EL1.
        field n / with_n [15:11] u8, ReadOnly, V3;
        /// IDCODE, bits `[23:16]` (read-only): implementation identification code.
        field idcode / with_idcode [23:16] u8, ReadOnly, V3;
        /// IMP, bits `[31:24]` (read-only): implementer code, 0x41 for Arm.
        field imp / with_imp [31:24] u8, ReadOnly, V3;
        /// FZS, bit 32 (FEAT_SPEv1p2, from Armv8.7): freeze event counters on a Statistical Profiling
        /// buffer-management event.
        flag fzs / with_fzs [32], ReadWrite, V3p7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn masks_follow_the_version() {
        // Bits 8 and 10 and [63:33] are RES0 everywhere.
        for v in PmuVersion::ALL {
            let res0 = Pmcr::res0_mask(v);
            assert_eq!(res0 & (1 << 8), 1 << 8);
            assert_eq!(res0 & (1 << 10), 1 << 10);
            assert_eq!(res0 >> 33, u64::MAX >> 33);
        }
        assert_ne!(Pmcr::res0_mask(PmuVersion::V3p1) & (1 << 7), 0);
        assert_eq!(Pmcr::res0_mask(PmuVersion::V3p5) & (1 << 7), 0);
        assert_ne!(Pmcr::res0_mask(PmuVersion::V3p5) & (1 << 9), 0);
        assert_eq!(Pmcr::res0_mask(PmuVersion::V3p7) & (1 << 9), 0);
        // Linux's ARMV8_PMU_PMCR_MASK (0xFF) minus the two action bits, plus FZO and FZS.
        assert_eq!(Pmcr::writable_mask(PmuVersion::V3p5), 0xF9);
        assert_eq!(Pmcr::writable_mask(PmuVersion::V3p7), 0x1_0000_02F9);
    }

    #[test]
    fn res0_check_names_the_bits() {
        let value = Pmcr::from_bits(1 << 7);
        assert!(value.check_res0(PmuVersion::V3p5).is_ok());
        let err = value.check_res0(PmuVersion::V3p4).unwrap_err();
        assert_eq!(err.bits, 1 << 7);
        assert_eq!(err.register, "PMCR_EL0");
        assert_eq!(value.sanitized(PmuVersion::V3p4).bits(), 0);
    }

    #[test]
    fn too_wide_field_is_rejected() {
        let err = Pmcr::default().with_n(32).unwrap_err();
        assert_eq!((err.field, err.width, err.value), ("n", 5, 32));
        assert_eq!(Pmcr::default().with_n(31).map(Pmcr::n), Ok(31));
    }

    #[test]
    fn debug_shows_fields() {
        let text = std::format!("{:?}", Pmcr::from_bits(0x41));
        assert!(text.contains("e: true"), "{text}");
        assert!(text.contains("lc: true"), "{text}");
        assert!(text.contains("n: 0x0"), "{text}");
    }
}
