//! Offsets of the external (memory-mapped) PMU interface of a PE (FEAT_PMUv3_EXT / EXT32), a 4 KiB
//! block.
//!
//! This is the PE PMU map of Armv8 and later (64-bit counter spacing, PMCCNTR at 0x0F8). It is not the
//! Armv7 map (4-byte spacing, PMCCNTR at 0x07C) and not the CoreSight PMU architecture used by
//! system (uncore) PMUs, whose PMCFGR.N means "counters − 1".
//!
//! ```
//! use pmu_regs::external;
//! assert_eq!(external::pmevcntr(2), Ok(0x010));
//! assert_eq!(external::pmevtyper(30), Ok(0x478));
//! assert_eq!(external::PMCR, 0xE04);
//! ```

use crate::encoding::IndexOutOfRange;

/// Size of the PMU block in bytes.
pub const BLOCK_SIZE: usize = 0x1000;

/// PMEVCNTR0_EL0; counter n is at `PMEVCNTR_BASE + 8n` (EXT32: low word, high word at +4).
pub const PMEVCNTR_BASE: usize = 0x000;
/// `PMCCNTR_EL0[31:0]`.
pub const PMCCNTR_LO: usize = 0x0F8;
/// `PMCCNTR_EL0[63:32]`.
pub const PMCCNTR_HI: usize = 0x0FC;
/// PMICNTR_EL0 (FEAT_PMUv3_ICNTR).
pub const PMICNTR: usize = 0x100;
/// `PMPCSR[31:0]` (FEAT_PCSRv8p2 PC sample).
pub const PMPCSR_LO: usize = 0x200;
/// `PMPCSR[63:32]`.
pub const PMPCSR_HI: usize = 0x204;
/// `PMEVTYPER0_EL0[31:0]`; type n is at `PMEVTYPER_BASE + 4n`.
pub const PMEVTYPER_BASE: usize = 0x400;
/// `PMCCFILTR_EL0[31:0]`, the "PMEVTYPER31" slot.
pub const PMCCFILTR: usize = 0x47C;
/// PMEVCNTSVR0_EL1 (FEAT_PMUv3_SS snapshots); n at +8n.
pub const PMEVCNTSVR_BASE: usize = 0x600;
/// PMCNTENSET_EL0.
pub const PMCNTENSET: usize = 0xC00;
/// PMCNTENCLR_EL0.
pub const PMCNTENCLR: usize = 0xC20;
/// PMINTENSET_EL1.
pub const PMINTENSET: usize = 0xC40;
/// PMINTENCLR_EL1.
pub const PMINTENCLR: usize = 0xC60;
/// PMOVSCLR_EL0.
pub const PMOVSCLR: usize = 0xC80;
/// PMSWINC_EL0: optional and deprecated, EXT32 without PMUv3p9 only (PMZR_EL0 here with EXT64 and
/// PMUv3p9).
pub const PMSWINC: usize = 0xCA0;
/// PMOVSSET_EL0.
pub const PMOVSSET: usize = 0xCC0;
/// PMCFGR.
pub const PMCFGR: usize = 0xE00;
/// PMCR_EL0, external view: bits `[10:0]` only, no N/IDCODE/IMP (N is in PMCFGR).
pub const PMCR: usize = 0xE04;
/// PMIIDR.
pub const PMIIDR: usize = 0xE08;
/// PMCEID0 = `PMCEID0_EL0[31:0]`.
pub const PMCEID0: usize = 0xE20;
/// PMCEID1 = `PMCEID1_EL0[31:0]`.
pub const PMCEID1: usize = 0xE24;
/// PMCEID2 = `PMCEID0_EL0[63:32]` (PMUv3p1).
pub const PMCEID2: usize = 0xE28;
/// PMCEID3 = `PMCEID1_EL0[63:32]` (PMUv3p1).
pub const PMCEID3: usize = 0xE2C;
/// PMMIR (PMUv3p4).
pub const PMMIR: usize = 0xE40;
/// PMITCTRL, integration mode control.
pub const PMITCTRL: usize = 0xF00;
/// PMCLAIMSET.
pub const PMCLAIMSET: usize = 0xFA0;
/// PMCLAIMCLR.
pub const PMCLAIMCLR: usize = 0xFA4;
/// PMDEVAFF0.
pub const PMDEVAFF0: usize = 0xFA8;
/// PMDEVAFF1.
pub const PMDEVAFF1: usize = 0xFAC;
/// PMLAR, write-only software lock: write [`PMLAR_UNLOCK`] to unlock. Absent with FEAT_Debugv8p4.
pub const PMLAR: usize = 0xFB0;
/// PMLSR, software lock status: bit 0 SLI (lock implemented), bit 1 SLK (locked).
pub const PMLSR: usize = 0xFB4;
/// PMAUTHSTATUS.
pub const PMAUTHSTATUS: usize = 0xFB8;
/// PMDEVARCH.
pub const PMDEVARCH: usize = 0xFBC;
/// PMDEVID.
pub const PMDEVID: usize = 0xFC8;
/// PMDEVTYPE: 0x16 (performance monitor, component within a PE).
pub const PMDEVTYPE: usize = 0xFCC;
/// PMPIDR4.
pub const PMPIDR4: usize = 0xFD0;
/// PMPIDR0.
pub const PMPIDR0: usize = 0xFE0;
/// PMPIDR1.
pub const PMPIDR1: usize = 0xFE4;
/// PMPIDR2.
pub const PMPIDR2: usize = 0xFE8;
/// PMPIDR3.
pub const PMPIDR3: usize = 0xFEC;
/// PMCIDR0.
pub const PMCIDR0: usize = 0xFF0;
/// PMCIDR1.
pub const PMCIDR1: usize = 0xFF4;
/// PMCIDR2.
pub const PMCIDR2: usize = 0xFF8;
/// PMCIDR3.
pub const PMCIDR3: usize = 0xFFC;

/// The key that unlocks the software lock when written to PMLAR.
pub const PMLAR_UNLOCK: u32 = 0xC5AC_CE55;
/// PMDEVTYPE value of a PE performance monitor (SUB 0x1, MAJOR 0x6).
pub const PMDEVTYPE_VALUE: u32 = 0x16;
/// PMDEVARCH.ARCHITECT (bits `[31:21]`): Arm, JEP106 continuation 0x4, code 0x3B.
pub const PMDEVARCH_ARCHITECT_ARM: u32 = 0x23B;
/// PMDEVARCH.ARCHPART (bits `[11:0]`) of a PMUv3 PE PMU.
pub const PMDEVARCH_ARCHPART_PMUV3: u32 = 0xA16;

/// Bits of the system PMCR_EL0 that the external PMCR view at 0xE04 shows (bits `[10:0]`).
pub const PMCR_EXTERNAL_MASK: u64 = 0x7FF;

/// Offsets in the external debug component of the same PE (a separate 4 KiB block), for the registers
/// the external PMU interface depends on.
pub mod debug {
    /// OSLAR_EL1, external view: write 1 to lock the OS Lock, 0 to unlock it.
    pub const OSLAR: usize = 0x300;
    /// EDPRSR, the External Debug Processor Status Register: power, reset and lock state.
    pub const EDPRSR: usize = 0x314;
}

/// Offsets in the ETE trace unit's external register block (FEAT_ETE with FEAT_TRC_EXT).
pub mod ete {
    /// TRCEVENTCTL0R.
    pub const TRCEVENTCTL0R: usize = 0x020;
    /// TRCEVENTCTL1R.
    pub const TRCEVENTCTL1R: usize = 0x024;
    /// TRCEXTINSELR0; `TRCEXTINSELR<n>` is at `TRCEXTINSELR_BASE + 4n`, n = 0..=3.
    pub const TRCEXTINSELR_BASE: usize = 0x120;
    /// Where `TRCRSCTLR<n>` would be for n = 0: `TRCRSCTLR<n>` is at `TRCRSCTLR_BASE + 4n`, n = 2..=31.
    pub const TRCRSCTLR_BASE: usize = 0x200;
}

/// Offset of `PMEVCNTR<n>_EL0` (its low word).
pub const fn pmevcntr(n: u8) -> Result<usize, IndexOutOfRange> {
    if n > 30 {
        return Err(IndexOutOfRange(n));
    }
    Ok(PMEVCNTR_BASE + 8 * n as usize)
}

/// Offset of `PMEVTYPER<n>_EL0``[31:0]`.
pub const fn pmevtyper(n: u8) -> Result<usize, IndexOutOfRange> {
    if n > 30 {
        return Err(IndexOutOfRange(n));
    }
    Ok(PMEVTYPER_BASE + 4 * n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_and_type_slots_line_up() {
        assert_eq!(pmevcntr(30), Ok(0x0F0));
        assert_eq!(PMCCNTR_LO, PMEVCNTR_BASE + 8 * 31);
        assert_eq!(PMCCFILTR, PMEVTYPER_BASE + 4 * 31);
        assert_eq!(pmevcntr(31), Err(IndexOutOfRange(31)));
        assert_eq!(pmevtyper(31), Err(IndexOutOfRange(31)));
    }

    #[test]
    fn article_offsets_hold() {
        // The seed article's memory-mapped offsets are right.
        assert_eq!((PMCFGR, PMCR, PMCEID0), (0xE00, 0xE04, 0xE20));
    }

    #[test]
    fn devarch_composes_to_the_documented_value() {
        let devarch = PMDEVARCH_ARCHITECT_ARM << 21 | 1 << 20 | 2 << 12 | PMDEVARCH_ARCHPART_PMUV3;
        assert_eq!(devarch, 0x4770_2A16);
    }
}
