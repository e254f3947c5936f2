//! PMCFGR, the external-interface configuration register (offset 0xE00).

use crate::regs::field::register;

register! {
    /// PMCFGR: what the PMU implements, as seen through the memory-mapped interface. Read-only.
    ///
    /// N here is the number of event counters (not "counters − 1" as in the CoreSight PMU architecture).
    ///
    /// ```
    /// use pmu_regs::Pmcfgr;
    /// // Cortex-A76/A55 TRM value: EX, CCD, CC, SIZE = 0x3F, N = 6.
    /// let p = Pmcfgr::from_bits(0x0001_FF06);
    /// assert_eq!((p.n(), p.counter_bits()), (6, 64));
    /// assert!(p.ex() && p.ccd() && p.cc() && !p.fzo());
    /// ```
    pub struct Pmcfgr = "PMCFGR" {
        /// N, bits `[7:0]`: number of event counters, the cycle counter excluded.
        field n / with_n [7:0] u8, ReadOnly, V3;
        /// SIZE, bits `[13:8]`: counter size − 1 (0b111111, 64 bits, from Armv8).
        field size / with_size [13:8] u8, ReadOnly, V3;
        /// CC, bit 14: a dedicated cycle counter (counter 31) exists.
        flag cc / with_cc [14], ReadOnly, V3;
        /// CCD, bit 15: PMCR.D is implemented (cycle-counter prescale).
        flag ccd / with_ccd [15], ReadOnly, V3;
        /// EX, bit 16: export is supported and PMCR.X is writable.
        flag ex / with_ex [16], ReadOnly, V3;
        /// NA, bit 17: RAZ.
        flag na / with_na [17], ReadOnly, V3;
        /// WT, bit 18: RAZ.
        flag wt / with_wt [18], ReadOnly, V3;
        /// UEN, bit 19: RAZ (PMUSERENR is not visible externally).
        flag uen / with_uen [19], ReadOnly, V3;
        /// FZO, bit 21: freeze-on-overflow supported; must read 1 from Armv8.7.
        flag fzo / with_fzo [21], ReadOnly, V3p7;
        /// SS, bit 22 (FEAT_PMUv3_SS): snapshots supported.
        flag ss / with_ss [22], ReadOnly, V3p9;
        /// NCG, bits `[31:28]`: counter groups − 1 (1 only with FEAT_PMUv3_ICNTR).
        field ncg / with_ncg [31:28] u8, ReadOnly, V3p9;
    }
}

impl Pmcfgr {
    /// Counter width in bits (SIZE + 1).
    pub const fn counter_bits(self) -> u32 {
        self.size() as u32 + 1
    }
}
