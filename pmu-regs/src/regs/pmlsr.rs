//! PMLSR and PMLAR, the Software Lock of the memory-mapped PMU interface.

use crate::regs::field::register;

register! {
    /// PMLSR, the Performance Monitors Lock Status Register, at 0xFB4 of the PMU block
    /// ([`external::PMLSR`](crate::external::PMLSR)); read-only, memory-mapped interface only.
    ///
    /// The Software Lock is optional and absent from FEAT_Debugv8p4 (and with FEAT_DoPD): then SLI
    /// reads 0. While SLK is 1, memory-mapped writes to the PMU registers are ignored (reads still
    /// work); an external debugger's accesses are not affected. Unlock it by writing
    /// [`Pmlar::UNLOCK`] to PMLAR.
    ///
    /// ```
    /// use pmu_regs::Pmlsr;
    /// let locked = Pmlsr::from_bits(0b011); // SLI, SLK
    /// assert!(locked.writes_ignored());
    /// assert!(!Pmlsr::from_bits(0b010).writes_ignored()); // no lock implemented: SLK means nothing
    /// ```
    ///
    /// ```compile_fail,E0599
    /// // PMLSR is read-only: the lock is opened by writing the key to PMLAR.
    /// let _ = pmu_regs::Pmlsr::default().with_slk(false);
    /// ```
    pub struct Pmlsr = "PMLSR" {
        /// SLI, bit 0: the Software Lock is implemented.
        get_flag sli [0], ReadOnly, V3;
        /// SLK, bit 1: the Software Lock is locked.
        get_flag slk [1], ReadOnly, V3;
        /// nTT, bit 2: RAZ (a 32-bit access writes the key).
        get_flag ntt [2], ReadOnly, V3;
    }
}

impl Pmlsr {
    /// Whether memory-mapped writes to the PMU registers are ignored: the lock is implemented and locked.
    pub const fn writes_ignored(self) -> bool {
        self.sli() && self.slk()
    }
}

/// PMLAR, the Performance Monitors Lock Access Register, at 0xFB0 of the PMU block
/// ([`external::PMLAR`](crate::external::PMLAR)): write-only, 32 bits. Writing the key 0xC5ACCE55
/// unlocks the Software Lock; writing anything else locks it.
///
/// ```
/// use pmu_regs::Pmlar;
/// assert_eq!(Pmlar::UNLOCK.bits(), 0xC5AC_CE55);
/// assert_eq!(Pmlar::UNLOCK.bits(), pmu_regs::external::PMLAR_UNLOCK);
/// ```
///
/// ```compile_fail,E0599
/// // PMLAR is write-only: it has no value to read back (read PMLSR).
/// let _ = pmu_regs::Pmlar::UNLOCK.key();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pmlar(u32);

impl Pmlar {
    /// The key that unlocks the Software Lock.
    pub const UNLOCK: Pmlar = Pmlar(crate::external::PMLAR_UNLOCK);
    /// A value that locks it (any value but the key does).
    pub const LOCK: Pmlar = Pmlar(0);

    /// The 32-bit value to write.
    pub const fn bits(self) -> u32 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn lock_status() {
        assert_eq!(Pmlsr::res0_mask(PmuVersion::V3), !0b111);
        assert!(!Pmlsr::from_bits(0b001).writes_ignored());
        assert_ne!(Pmlar::LOCK.bits(), Pmlar::UNLOCK.bits());
    }
}
