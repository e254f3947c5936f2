//! PMUSERENR_EL0, the EL0 access enables.

use crate::regs::field::register;

register! {
    /// PMUSERENR_EL0: which PMU registers EL0 may use. Read-only at EL0, written at EL1 or above.
    ///
    /// ```
    /// use pmu_regs::{Pmuserenr, PmuVersion, Register};
    /// // What Linux writes for user-space counter reads: ER | CR.
    /// let v = Pmuserenr::default().with_er(true).with_cr(true);
    /// assert_eq!(v.bits(), 0b1100);
    /// assert_eq!(Pmuserenr::writable_mask(PmuVersion::V3p8), 0xF);
    /// assert_eq!(Pmuserenr::writable_mask(PmuVersion::V3p9), 0x7F);
    /// ```
    pub struct Pmuserenr = "PMUSERENR_EL0" {
        /// EN, bit 0: EL0 may access every EL0-accessible PMU register.
        flag en / with_en [0], ReadWrite, V3;
        /// SW, bit 1: EL0 may write PMSWINC_EL0.
        flag sw / with_sw [1], ReadWrite, V3;
        /// CR, bit 2: EL0 may read PMCCNTR_EL0.
        flag cr / with_cr [2], ReadWrite, V3;
        /// ER, bit 3: EL0 may read the event counters and read/write PMSELR_EL0.
        flag er / with_er [3], ReadWrite, V3;
        /// UEN, bit 4 (PMUv3p9): per-counter EL0 access through PMUACR_EL1.
        flag uen / with_uen [4], ReadWrite, V3p9;
        /// IR, bit 5 (FEAT_PMUv3_ICNTR): with UEN, EL0 writes to PMICNTR_EL0 are ignored.
        flag ir / with_ir [5], ReadWrite, V3p9;
        /// TID, bit 6 (PMUv3p9): trap EL0 reads of `PMCEID<n>_EL0`.
        flag tid / with_tid [6], ReadWrite, V3p9;
    }
}

impl Pmuserenr {
    /// Whether EL0 may read every counter: the cycle counter and the event counters (EN, or both CR
    /// and ER, as Linux grants them together), so that one check serves the reads of a whole group.
    ///
    /// ```
    /// use pmu_regs::Pmuserenr;
    /// assert!(Pmuserenr::from_bits(0b1100).el0_may_read_all_counters()); // CR and ER
    /// assert!(!Pmuserenr::from_bits(0b0100).el0_may_read_all_counters()); // CR alone
    /// assert!(Pmuserenr::from_bits(0b0001).el0_may_read_all_counters()); // EN
    /// ```
    #[inline]
    pub const fn el0_may_read_all_counters(self) -> bool {
        self.en() || (self.cr() && self.er())
    }

    /// Whether EL0 may read `register` with these enables: EN opens every EL0-accessible register;
    /// without it, CR opens PMCCNTR_EL0 and ER opens the event counters (`PMEVCNTR<n>_EL0`,
    /// `PMXEVCNTR_EL0`) and PMSELR_EL0. PMUSERENR_EL0 itself is always readable at EL0. Registers
    /// EL0 can never read (the EL1 ones, write-only ones) give `false`. PMUv3p9's per-counter
    /// PMUACR_EL1 grants (UEN) are not considered.
    ///
    /// ```
    /// use pmu_regs::encoding::PmuRegister;
    /// use pmu_regs::Pmuserenr;
    /// // What Linux grants with kernel.perf_user_access = 1: ER | CR.
    /// let linux = Pmuserenr::from_bits(0b1100);
    /// assert!(linux.el0_may_read(PmuRegister::Pmccntr));
    /// assert!(linux.el0_may_read(PmuRegister::Pmevcntr(3)));
    /// assert!(!linux.el0_may_read(PmuRegister::Pmcr));
    /// assert!(!Pmuserenr::default().el0_may_read(PmuRegister::Pmccntr));
    /// ```
    #[inline]
    pub const fn el0_may_read(self, register: crate::encoding::PmuRegister) -> bool {
        use crate::encoding::PmuRegister as R;
        match register {
            R::Pmuserenr => true,
            R::Pmccntr => self.en() || self.cr(),
            R::Pmevcntr(_) | R::Pmxevcntr | R::Pmselr => self.en() || self.er(),
            R::Pmcr
            | R::Pmcntenset
            | R::Pmcntenclr
            | R::Pmovsclr
            | R::Pmovsset
            | R::Pmceid0
            | R::Pmceid1
            | R::Pmxevtyper
            | R::Pmevtyper(_)
            | R::Pmccfiltr
            | R::Pmicntr
            | R::Pmicfiltr => self.en(),
            R::Pmswinc | R::Pmzr | R::Pmintenset | R::Pmintenclr | R::Pmuacr | R::Pmmir => false,
        }
    }
}
