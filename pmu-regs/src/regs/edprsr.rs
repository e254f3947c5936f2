//! EDPRSR, the External Debug Processor Status Register (external interface only, read-only).

use crate::regs::field::register;

register! {
    /// EDPRSR: the core's power, reset and lock state as an external debugger sees it, at offset
    /// 0x314 of the debug component ([`external::debug::EDPRSR`](crate::external::debug::EDPRSR)).
    /// It has no system-register view.
    ///
    /// The external PMU interface depends on it: an external access to a PMU register is checked
    /// against these conditions in this order, and the first that holds decides
    /// ([`diagnosis`](crate::diagnosis) applies them):
    ///
    /// | condition | bit | access |
    /// |---|---|---|
    /// | core powered down | PU = 0 | error |
    /// | OS Double Lock | DLK = 1 | error |
    /// | OS Lock | OSLK = 1 | error |
    /// | external PMU access disabled (MDCR_EL3.EPMAD, authentication) | EPMAD = 1 | error, SPMAD set |
    /// | Software Lock (memory-mapped interface only) | PMLSR.SLK = 1 | writes ignored |
    ///
    /// Every bit but PU and DLK is UNKNOWN while PU is 0, DLK is 1 or R is 1. SPD, SR, SDAD, SPMAD,
    /// SDR and STAD are sticky and clear when EDPRSR is read.
    ///
    /// ```
    /// use pmu_regs::Edprsr;
    /// let status = Edprsr::from_bits(0x21); // PU and OSLK: powered, OS Lock locked
    /// assert!(status.pu() && status.oslk() && !status.dlk() && !status.epmad());
    /// ```
    ///
    /// ```compile_fail,E0599
    /// // EDPRSR is read-only: powering the core up is the power controller's business.
    /// let _ = pmu_regs::Edprsr::default().with_pu(true);
    /// ```
    pub struct Edprsr = "EDPRSR" {
        /// PU, bit 0: the core power domain is powered up (0: its registers cannot be accessed).
        get_flag pu [0], ReadOnly, V3;
        /// SPD, bit 1 (sticky): the core has been powered down since EDPRSR was last read.
        get_flag spd [1], ReadOnly, V3;
        /// R, bit 2: the core is in Warm reset.
        get_flag r [2], ReadOnly, V3;
        /// SR, bit 3 (sticky): the core has been reset since EDPRSR was last read.
        get_flag sr [3], ReadOnly, V3;
        /// HALTED, bit 4: the PE is in Debug state.
        get_flag halted [4], ReadOnly, V3;
        /// OSLK, bit 5: OSLSR_EL1.OSLK, the OS Lock is locked.
        get_flag oslk [5], ReadOnly, V3;
        /// DLK, bit 6: the OS Double Lock is in force (`DoubleLockStatus()`).
        get_flag dlk [6], ReadOnly, V3;
        /// EDAD, bit 7: external debug access is disabled (`AllowExternalDebugAccess()` is false).
        get_flag edad [7], ReadOnly, V3;
        /// SDAD, bit 8 (sticky): an access failed because of EDAD.
        get_flag sdad [8], ReadOnly, V3;
        /// EPMAD, bit 9: external PMU access is disabled (`AllowExternalPMUAccess()` is false: MDCR_EL3.EPMAD
        /// or the authentication interface). With FEAT_RME it reads together with EPMADE.
        get_flag epmad [9], ReadOnly, V3;
        /// SPMAD, bit 10 (sticky): an external PMU access failed because of EPMAD.
        get_flag spmad [10], ReadOnly, V3;
        /// SDR, bit 11 (sticky): the PE has left Debug state since EDPRSR was last read.
        get_flag sdr [11], ReadOnly, V3;
        /// ETAD, bit 12 (FEAT_TRBE with external trace access): external trace access is disabled.
        get_flag etad [12], ReadOnly, V3;
        /// STAD, bit 13 (sticky): an external trace access failed because of ETAD.
        get_flag stad [13], ReadOnly, V3;
        /// EDADE, bit 14 (FEAT_RME): extends EDAD.
        get_flag edade [14], ReadOnly, V3;
        /// ETADE, bit 15 (FEAT_RME): extends ETAD.
        get_flag etade [15], ReadOnly, V3;
        /// EPMADE, bit 16 (FEAT_RME with FEAT_PMUv3_EXT): extends EPMAD.
        get_flag epmade [16], ReadOnly, V3;
    }
}

impl Edprsr {
    /// The register as read: only bits `[31:0]` exist.
    pub const fn from_u32(value: u32) -> Edprsr {
        Edprsr(value as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn layout() {
        assert_eq!(Edprsr::res0_mask(PmuVersion::V3p9), !0x1_FFFF);
        assert_eq!(Edprsr::writable_mask(PmuVersion::V3p9), 0);
        let all = Edprsr::from_u32(0x1_FFFF);
        assert!(all.pu() && all.epmad() && all.epmade() && all.dlk());
        assert!(!Edprsr::from_u32(1 << 9).pu());
        assert!(Edprsr::from_u32(1 << 9).epmad());
    }
}
