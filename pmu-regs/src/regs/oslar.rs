//! OSLAR_EL1, the OS Lock Access Register (write-only).

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;

register! {
    /// OSLAR_EL1: writing OSLK (bit 0) locks (1) or unlocks (0) the OS Lock. The register is
    /// write-only; OSLSR_EL1.OSLK ([`Oslsr`](crate::Oslsr)) reports the lock's state.
    ///
    /// The OS Lock is a debug lock, not a PMU one: while it is locked, every access to the PMU
    /// registers through the external debug or memory-mapped interface returns an error (and the
    /// debug and trace registers are locked the same way). It does not affect MRS/MSR of the PMU
    /// registers. It is *set* by a Cold reset, so an external PMU tool sees errors until software on the
    /// core (Linux does it in `debug_monitors`) writes 0 here.
    ///
    /// Encoding `S2_0_C1_C0_4` ([`Oslar::ENCODING`], MSR only, EL1 and above); external debug
    /// interface offset 0x300 of the debug component ([`external::debug::OSLAR`](crate::external::debug::OSLAR)).
    ///
    /// ```
    /// use pmu_regs::{Oslar, Register};
    /// // Unlock the OS Lock so that an external debugger can reach the PMU registers.
    /// assert_eq!(Oslar::UNLOCK.bits(), 0);
    /// assert_eq!(Oslar::LOCK.bits(), 1);
    /// assert_eq!(Oslar::ENCODING.to_string(), "S2_0_C1_C0_4");
    /// assert_eq!(Oslar::ENCODING.msr(0), 0xD510_1080); // msr oslar_el1, x0
    /// assert_eq!(Oslar::res0_mask(pmu_regs::PmuVersion::V3), !1);
    /// ```
    ///
    /// ```compile_fail,E0599
    /// // OSLAR_EL1 is write-only: there is no lock state to read back from it (read OSLSR_EL1).
    /// let _ = pmu_regs::Oslar::LOCK.oslk();
    /// ```
    pub struct Oslar = "OSLAR_EL1" {
        /// OSLK, bit 0 (write-only): 1 locks the OS Lock, 0 unlocks it.
        set_flag oslk / with_oslk [0], WriteOnly, V3;
    }
}

impl Oslar {
    /// The value that locks the OS Lock.
    pub const LOCK: Oslar = Oslar(1);
    /// The value that unlocks the OS Lock.
    pub const UNLOCK: Oslar = Oslar(0);
    /// `S2_0_C1_C0_4` (op0 2, op1 0, CRn 1, CRm 0, op2 4).
    pub const ENCODING: SysRegEncoding = SysRegEncoding::new(2, 0, 1, 0, 4);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn write_only_layout() {
        assert_eq!(Oslar::default().with_oslk(true), Oslar::LOCK);
        assert_eq!(Oslar::writable_mask(PmuVersion::V3p9), 0);
        assert_eq!(Oslar::FIELDS[0].access, crate::Access::WriteOnly);
        assert!(Oslar::from_bits(2).check_res0(PmuVersion::V3).is_err());
    }
}
