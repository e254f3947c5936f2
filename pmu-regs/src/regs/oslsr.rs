//! OSLSR_EL1, the OS Lock Status Register (read-only).

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;

register! {
    /// OSLSR_EL1: whether the OS Lock is implemented (OSLM) and locked (OSLK).
    ///
    /// OSLK resets to 1 on a Cold reset; software unlocks it through OSLAR_EL1 ([`Oslar`](crate::Oslar)).
    /// While it is 1, external accesses to the PMU registers return an error (the condition `OSLK` of
    /// the Arm external access table, checked after the power and Double Lock conditions). External
    /// debuggers read the same bit as EDPRSR.OSLK ([`Edprsr`](crate::Edprsr)).
    ///
    /// Encoding `S2_0_C1_C1_4` ([`Oslsr::ENCODING`], MRS only, EL1 and above); no external view.
    ///
    /// ```
    /// use pmu_regs::regs::oslsr::OsLockModel;
    /// use pmu_regs::Oslsr;
    /// let after_cold_reset = Oslsr::from_bits(0b1010); // OSLM = 0b10, OSLK = 1
    /// assert!(after_cold_reset.oslk());
    /// assert_eq!(after_cold_reset.oslm(), OsLockModel::Implemented);
    /// assert_eq!(Oslsr::ENCODING.mrs(0), 0xD530_1180); // mrs x0, oslsr_el1
    /// ```
    ///
    /// ```compile_fail,E0599
    /// // OSLSR_EL1 is read-only: the lock is changed through OSLAR_EL1.
    /// let _ = pmu_regs::Oslsr::default().with_oslk(false);
    /// ```
    pub struct Oslsr = "OSLSR_EL1" {
        /// `OSLM[0]`, bit 0: the low bit of the OS Lock model (see [`Oslsr::oslm`]).
        get_flag oslm0 [0], ReadOnly, V3;
        /// OSLK, bit 1: the OS Lock is locked.
        get_flag oslk [1], ReadOnly, V3;
        /// nTT, bit 2: RAZ (a 32-bit access writes the OSLAR key).
        get_flag ntt [2], ReadOnly, V3;
        /// `OSLM[1]`, bit 3: the high bit of the OS Lock model.
        get_flag oslm1 [3], ReadOnly, V3;
    }
}

/// OSLSR_EL1.OSLM, the OS Lock model: bits 3 and 0 read together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OsLockModel {
    /// 0b00: no OS Lock (not permitted from Armv8).
    NotImplemented,
    /// 0b10: the OS Lock is implemented, locked and unlocked through OSLAR_EL1.
    Implemented,
    /// 0b01 or 0b11: reserved.
    Reserved(u8),
}

impl Oslsr {
    /// `S2_0_C1_C1_4` (op0 2, op1 0, CRn 1, CRm 1, op2 4).
    pub const ENCODING: SysRegEncoding = SysRegEncoding::new(2, 0, 1, 1, 4);

    /// OSLSR_EL1 of a PE whose OS Lock is implemented, in state `locked`.
    pub const fn implemented(locked: bool) -> Oslsr {
        Oslsr(0b1000 | if locked { 0b10 } else { 0 })
    }

    /// The OS Lock model, `OSLM[1:0]` = bits 3 and 0.
    pub const fn oslm(self) -> OsLockModel {
        match (self.oslm1(), self.oslm0()) {
            (false, false) => OsLockModel::NotImplemented,
            (true, false) => OsLockModel::Implemented,
            (high, low) => OsLockModel::Reserved((high as u8) << 1 | low as u8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn split_model_field() {
        assert_eq!(Oslsr::from_bits(0).oslm(), OsLockModel::NotImplemented);
        assert_eq!(Oslsr::from_bits(0b1000).oslm(), OsLockModel::Implemented);
        assert_eq!(Oslsr::from_bits(0b0001).oslm(), OsLockModel::Reserved(1));
        assert_eq!(Oslsr::from_bits(0b1001).oslm(), OsLockModel::Reserved(3));
        assert_eq!(Oslsr::implemented(true).bits(), 0b1010);
        assert!(!Oslsr::implemented(false).oslk());
    }

    #[test]
    fn read_only_masks() {
        assert_eq!(Oslsr::res0_mask(PmuVersion::V3), !0xF);
        assert_eq!(Oslsr::writable_mask(PmuVersion::V3p9), 0);
    }
}
