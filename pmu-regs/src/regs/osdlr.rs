//! OSDLR_EL1, the OS Double Lock Register.

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;

register! {
    /// OSDLR_EL1: the OS Double Lock (FEAT_DoubleLock; RAZ/WI without it).
    ///
    /// Software sets DLK before it powers the core down. The lock is in force (the architecture's
    /// `DoubleLockStatus()`, seen externally as EDPRSR.DLK) while DLK is 1, DBGPRCR_EL1.CORENPDRQ is 0
    /// and the PE is not halted; then every external access to the PMU registers returns an error,
    /// whatever the OS Lock says. It does not affect MRS/MSR of the PMU registers.
    ///
    /// Encoding `S2_0_C1_C3_4` ([`Osdlr::ENCODING`], EL1 and above); no external view.
    ///
    /// ```
    /// use pmu_regs::{Osdlr, PmuVersion, Register};
    /// let before_power_down = Osdlr::default().with_dlk(true);
    /// assert_eq!(before_power_down.bits(), 1);
    /// assert_eq!(Osdlr::writable_mask(PmuVersion::V3), 1);
    /// assert_eq!(Osdlr::ENCODING.mrs(0), 0xD530_1380); // mrs x0, osdlr_el1
    /// ```
    pub struct Osdlr = "OSDLR_EL1" {
        /// DLK, bit 0: the OS Double Lock is requested (in force as described above).
        flag dlk / with_dlk [0], ReadWrite, V3;
    }
}

impl Osdlr {
    /// `S2_0_C1_C3_4` (op0 2, op1 0, CRn 1, CRm 3, op2 4).
    pub const ENCODING: SysRegEncoding = SysRegEncoding::new(2, 0, 1, 3, 4);
}
