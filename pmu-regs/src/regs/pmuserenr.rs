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
