//! System-register encodings (op0, op1, CRn, CRm, op2) of the AArch64 PMU registers, and the
//! [`PmuRegister`] names that the software PMU and the hardware accessors share.

use core::fmt;

use thiserror::Error;

/// The five-part encoding of an AArch64 system register, as used by MRS and MSR.
///
/// `Display` prints the generic assembler name, e.g. `S3_3_C9_C12_0` for PMCR_EL0.
///
/// ```
/// use pmu_regs::encoding::{PmuRegister, SysRegEncoding};
/// let pmcr = PmuRegister::Pmcr.encoding();
/// assert_eq!(pmcr, SysRegEncoding::new(3, 3, 9, 12, 0));
/// assert_eq!(pmcr.to_string(), "S3_3_C9_C12_0");
/// assert_eq!(pmcr.mrs(0), 0xD53B_9C00); // mrs x0, pmcr_el0
/// assert_eq!(pmcr.msr(0), 0xD51B_9C00); // msr pmcr_el0, x0
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SysRegEncoding {
    /// op0 (2 bits; 3 for every PMU register).
    pub op0: u8,
    /// op1 (3 bits).
    pub op1: u8,
    /// CRn (4 bits).
    pub crn: u8,
    /// CRm (4 bits).
    pub crm: u8,
    /// op2 (3 bits).
    pub op2: u8,
}

impl SysRegEncoding {
    /// An encoding from its parts (each part masked to its width).
    pub const fn new(op0: u8, op1: u8, crn: u8, crm: u8, op2: u8) -> Self {
        Self {
            op0: op0 & 3,
            op1: op1 & 7,
            crn: crn & 0xF,
            crm: crm & 0xF,
            op2: op2 & 7,
        }
    }

    /// The 16-bit system-register field of MRS/MSR instructions (bits `[20:5]` of the instruction,
    /// shifted down): `op0[1:0]`, op1, CRn, CRm, op2.
    pub const fn sysreg_field(self) -> u32 {
        (self.op0 as u32) << 14
            | (self.op1 as u32) << 11
            | (self.crn as u32) << 7
            | (self.crm as u32) << 3
            | self.op2 as u32
    }

    /// The instruction word of `MRS X<rt>, <this register>` (`rt` masked to 0..=31).
    pub const fn mrs(self, rt: u8) -> u32 {
        0xD520_0000 | self.sysreg_field() << 5 | (rt & 31) as u32
    }

    /// The instruction word of `MSR <this register>, X<rt>` (`rt` masked to 0..=31).
    pub const fn msr(self, rt: u8) -> u32 {
        0xD500_0000 | self.sysreg_field() << 5 | (rt & 31) as u32
    }
}

impl fmt::Display for SysRegEncoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "S{}_{}_C{}_C{}_{}",
            self.op0, self.op1, self.crn, self.crm, self.op2
        )
    }
}

/// An event-counter index outside 0..=30 for an `n`-indexed register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("PMU register index {0} is outside 0..=30")]
pub struct IndexOutOfRange(pub u8);

/// An AArch64 PMU system register. The `n`-indexed registers carry their counter index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PmuRegister {
    /// PMCR_EL0.
    Pmcr,
    /// PMCNTENSET_EL0.
    Pmcntenset,
    /// PMCNTENCLR_EL0.
    Pmcntenclr,
    /// PMOVSCLR_EL0.
    Pmovsclr,
    /// PMSWINC_EL0 (write-only).
    Pmswinc,
    /// PMSELR_EL0.
    Pmselr,
    /// PMCEID0_EL0 (read-only).
    Pmceid0,
    /// PMCEID1_EL0 (read-only).
    Pmceid1,
    /// PMCCNTR_EL0.
    Pmccntr,
    /// PMXEVTYPER_EL0 (indirect through PMSELR_EL0).
    Pmxevtyper,
    /// PMXEVCNTR_EL0 (indirect through PMSELR_EL0).
    Pmxevcntr,
    /// PMZR_EL0 (write-only, PMUv3p9).
    Pmzr,
    /// PMUSERENR_EL0.
    Pmuserenr,
    /// PMINTENSET_EL1.
    Pmintenset,
    /// PMINTENCLR_EL1.
    Pmintenclr,
    /// PMOVSSET_EL0.
    Pmovsset,
    /// PMUACR_EL1 (PMUv3p9).
    Pmuacr,
    /// PMMIR_EL1 (read-only, PMUv3p4).
    Pmmir,
    /// `PMEVCNTR<n>_EL0`, n in 0..=30.
    Pmevcntr(u8),
    /// `PMEVTYPER<n>_EL0`, n in 0..=30.
    Pmevtyper(u8),
    /// PMCCFILTR_EL0.
    Pmccfiltr,
    /// PMICNTR_EL0 (FEAT_PMUv3_ICNTR).
    Pmicntr,
    /// PMICFILTR_EL0 (FEAT_PMUv3_ICNTR).
    Pmicfiltr,
}

impl PmuRegister {
    /// Every fixed-encoding register (the indexed ones excluded).
    pub const FIXED: [PmuRegister; 21] = [
        PmuRegister::Pmcr,
        PmuRegister::Pmcntenset,
        PmuRegister::Pmcntenclr,
        PmuRegister::Pmovsclr,
        PmuRegister::Pmswinc,
        PmuRegister::Pmselr,
        PmuRegister::Pmceid0,
        PmuRegister::Pmceid1,
        PmuRegister::Pmccntr,
        PmuRegister::Pmxevtyper,
        PmuRegister::Pmxevcntr,
        PmuRegister::Pmzr,
        PmuRegister::Pmuserenr,
        PmuRegister::Pmintenset,
        PmuRegister::Pmintenclr,
        PmuRegister::Pmovsset,
        PmuRegister::Pmuacr,
        PmuRegister::Pmmir,
        PmuRegister::Pmccfiltr,
        PmuRegister::Pmicntr,
        PmuRegister::Pmicfiltr,
    ];

    /// `PMEVCNTR<n>_EL0`, checking `n`.
    pub const fn pmevcntr(n: u8) -> Result<PmuRegister, IndexOutOfRange> {
        if n > 30 {
            Err(IndexOutOfRange(n))
        } else {
            Ok(PmuRegister::Pmevcntr(n))
        }
    }

    /// `PMEVTYPER<n>_EL0`, checking `n`.
    pub const fn pmevtyper(n: u8) -> Result<PmuRegister, IndexOutOfRange> {
        if n > 30 {
            Err(IndexOutOfRange(n))
        } else {
            Ok(PmuRegister::Pmevtyper(n))
        }
    }

    /// The register's encoding. For the indexed registers CRm = base + `n[4:3]` and op2 = `n[2:0]`
    /// (an index above 30 is masked to five bits; build indexed variants with
    /// [`PmuRegister::pmevcntr`]/[`PmuRegister::pmevtyper`] to have it checked).
    pub const fn encoding(self) -> SysRegEncoding {
        use PmuRegister::*;
        let e = SysRegEncoding::new;
        match self {
            Pmcr => e(3, 3, 9, 12, 0),
            Pmcntenset => e(3, 3, 9, 12, 1),
            Pmcntenclr => e(3, 3, 9, 12, 2),
            Pmovsclr => e(3, 3, 9, 12, 3),
            Pmswinc => e(3, 3, 9, 12, 4),
            Pmselr => e(3, 3, 9, 12, 5),
            Pmceid0 => e(3, 3, 9, 12, 6),
            Pmceid1 => e(3, 3, 9, 12, 7),
            Pmccntr => e(3, 3, 9, 13, 0),
            Pmxevtyper => e(3, 3, 9, 13, 1),
            Pmxevcntr => e(3, 3, 9, 13, 2),
            Pmzr => e(3, 3, 9, 13, 4),
            Pmuserenr => e(3, 3, 9, 14, 0),
            Pmintenset => e(3, 0, 9, 14, 1),
            Pmintenclr => e(3, 0, 9, 14, 2),
            Pmovsset => e(3, 3, 9, 14, 3),
            Pmuacr => e(3, 0, 9, 14, 4),
            Pmmir => e(3, 0, 9, 14, 6),
            Pmevcntr(n) => e(3, 3, 14, 8 + ((n & 31) >> 3), n & 7),
            Pmevtyper(n) => e(3, 3, 14, 12 + ((n & 31) >> 3), n & 7),
            Pmccfiltr => e(3, 3, 14, 15, 7),
            Pmicntr => e(3, 3, 9, 4, 0),
            Pmicfiltr => e(3, 3, 9, 6, 0),
        }
    }

    /// The register an encoding names, if it is a PMU register.
    pub fn from_encoding(enc: SysRegEncoding) -> Option<PmuRegister> {
        if enc.op0 == 3 && enc.op1 == 3 && enc.crn == 14 && enc.crm >= 8 {
            let n = ((enc.crm & 3) << 3) | enc.op2;
            return match (enc.crm >= 12, n) {
                (true, 31) => Some(PmuRegister::Pmccfiltr),
                (true, n) => Some(PmuRegister::Pmevtyper(n)),
                (false, 31) => None,
                (false, n) => Some(PmuRegister::Pmevcntr(n)),
            };
        }
        PmuRegister::FIXED.into_iter().find(|r| r.encoding() == enc)
    }

    /// The architecture's name without the index, e.g. `"PMEVCNTR<n>_EL0"`.
    pub const fn name(self) -> &'static str {
        use PmuRegister::*;
        match self {
            Pmcr => "PMCR_EL0",
            Pmcntenset => "PMCNTENSET_EL0",
            Pmcntenclr => "PMCNTENCLR_EL0",
            Pmovsclr => "PMOVSCLR_EL0",
            Pmswinc => "PMSWINC_EL0",
            Pmselr => "PMSELR_EL0",
            Pmceid0 => "PMCEID0_EL0",
            Pmceid1 => "PMCEID1_EL0",
            Pmccntr => "PMCCNTR_EL0",
            Pmxevtyper => "PMXEVTYPER_EL0",
            Pmxevcntr => "PMXEVCNTR_EL0",
            Pmzr => "PMZR_EL0",
            Pmuserenr => "PMUSERENR_EL0",
            Pmintenset => "PMINTENSET_EL1",
            Pmintenclr => "PMINTENCLR_EL1",
            Pmovsset => "PMOVSSET_EL0",
            Pmuacr => "PMUACR_EL1",
            Pmmir => "PMMIR_EL1",
            Pmevcntr(_) => "PMEVCNTR<n>_EL0",
            Pmevtyper(_) => "PMEVTYPER<n>_EL0",
            Pmccfiltr => "PMCCFILTR_EL0",
            Pmicntr => "PMICNTR_EL0",
            Pmicfiltr => "PMICFILTR_EL0",
        }
    }
}

impl fmt::Display for PmuRegister {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmuRegister::Pmevcntr(n) => write!(f, "PMEVCNTR{n}_EL0"),
            PmuRegister::Pmevtyper(n) => write!(f, "PMEVTYPER{n}_EL0"),
            other => f.write_str(other.name()),
        }
    }
}

/// AArch32 (cp15, opc1 = 0) encodings: (CRn, CRm, opc2).
pub mod aarch32 {
    /// PMCR.
    pub const PMCR: (u8, u8, u8) = (9, 12, 0);
    /// PMCNTENSET.
    pub const PMCNTENSET: (u8, u8, u8) = (9, 12, 1);
    /// PMCNTENCLR.
    pub const PMCNTENCLR: (u8, u8, u8) = (9, 12, 2);
    /// PMOVSR.
    pub const PMOVSR: (u8, u8, u8) = (9, 12, 3);
    /// PMSWINC.
    pub const PMSWINC: (u8, u8, u8) = (9, 12, 4);
    /// PMSELR.
    pub const PMSELR: (u8, u8, u8) = (9, 12, 5);
    /// PMCEID0.
    pub const PMCEID0: (u8, u8, u8) = (9, 12, 6);
    /// PMCEID1.
    pub const PMCEID1: (u8, u8, u8) = (9, 12, 7);
    /// PMCCNTR, 32-bit view (the 64-bit one is MRRC p15, opc1 0, CRm c9).
    pub const PMCCNTR: (u8, u8, u8) = (9, 13, 0);
    /// PMXEVTYPER.
    pub const PMXEVTYPER: (u8, u8, u8) = (9, 13, 1);
    /// PMXEVCNTR.
    pub const PMXEVCNTR: (u8, u8, u8) = (9, 13, 2);
    /// PMUSERENR.
    pub const PMUSERENR: (u8, u8, u8) = (9, 14, 0);
    /// PMINTENSET.
    pub const PMINTENSET: (u8, u8, u8) = (9, 14, 1);
    /// PMINTENCLR.
    pub const PMINTENCLR: (u8, u8, u8) = (9, 14, 2);
    /// PMOVSSET.
    pub const PMOVSSET: (u8, u8, u8) = (9, 14, 3);
    /// PMCEID2 (= `PMCEID0_EL0[63:32]`).
    pub const PMCEID2: (u8, u8, u8) = (9, 14, 4);
    /// PMCEID3 (= `PMCEID1_EL0[63:32]`).
    pub const PMCEID3: (u8, u8, u8) = (9, 14, 5);
    /// PMMIR.
    pub const PMMIR: (u8, u8, u8) = (9, 14, 6);
    /// PMCCFILTR.
    pub const PMCCFILTR: (u8, u8, u8) = (14, 15, 7);

    /// `PMEVCNTR<n>`: (14, 8 + `n[4:3]`, `n[2:0]`); `n` is masked to five bits.
    pub const fn pmevcntr(n: u8) -> (u8, u8, u8) {
        (14, 8 + ((n & 31) >> 3), n & 7)
    }

    /// `PMEVTYPER<n>`: (14, 12 + `n[4:3]`, `n[2:0]`); `n` is masked to five bits.
    pub const fn pmevtyper(n: u8) -> (u8, u8, u8) {
        (14, 12 + ((n & 31) >> 3), n & 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn indexed_encodings() {
        assert_eq!(
            PmuRegister::Pmevcntr(0).encoding(),
            SysRegEncoding::new(3, 3, 14, 8, 0)
        );
        assert_eq!(
            PmuRegister::Pmevcntr(30).encoding(),
            SysRegEncoding::new(3, 3, 14, 11, 6)
        );
        assert_eq!(
            PmuRegister::Pmevtyper(9).encoding(),
            SysRegEncoding::new(3, 3, 14, 13, 1)
        );
        // PMCCFILTR_EL0 is where "PMEVTYPER31" would be.
        assert_eq!(
            PmuRegister::Pmccfiltr.encoding(),
            SysRegEncoding::new(3, 3, 14, 12 + (31 >> 3), 31 & 7)
        );
        assert_eq!(PmuRegister::pmevcntr(31), Err(IndexOutOfRange(31)));
        assert_eq!(PmuRegister::pmevtyper(30), Ok(PmuRegister::Pmevtyper(30)));
    }

    #[test]
    fn every_encoding_decodes_back() {
        let mut all: std::vec::Vec<PmuRegister> = PmuRegister::FIXED.to_vec();
        for n in 0..=30 {
            all.push(PmuRegister::Pmevcntr(n));
            all.push(PmuRegister::Pmevtyper(n));
        }
        for r in &all {
            assert_eq!(PmuRegister::from_encoding(r.encoding()), Some(*r), "{r}");
        }
        // All distinct.
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a.encoding(), b.encoding(), "{a} {b}");
            }
        }
        assert_eq!(
            PmuRegister::from_encoding(SysRegEncoding::new(3, 3, 14, 11, 7)),
            None
        );
        assert_eq!(
            PmuRegister::from_encoding(SysRegEncoding::new(3, 0, 0, 0, 0)),
            None
        );
    }

    #[test]
    fn names_and_instructions() {
        assert_eq!(PmuRegister::Pmuacr.encoding().to_string(), "S3_0_C9_C14_4");
        assert_eq!(PmuRegister::Pmevcntr(7).to_string(), "PMEVCNTR7_EL0");
        // mrs x1, pmccntr_el0 = 0xd53b9d01
        assert_eq!(PmuRegister::Pmccntr.encoding().mrs(1), 0xD53B_9D01);
        assert_eq!(aarch32::pmevtyper(31), aarch32::PMCCFILTR);
    }
}
