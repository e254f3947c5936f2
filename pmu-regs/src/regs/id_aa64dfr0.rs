//! ID_AA64DFR0_EL1: the debug feature register fields that describe the PMU.

use core::fmt;

use crate::version::{PmuSupport, PmuVersion, ReservedPmuVer};

/// ID_AA64DFR0_EL1, read-only. Only the PMU fields are decoded; the other bits describe debug
/// features and are kept untouched.
///
/// ```
/// use pmu_regs::{IdAa64Dfr0, PmuSupport, PmuVersion};
/// let id = IdAa64Dfr0::from_bits(0x0000_0000_0000_0706); // PMUVer = 0b0111
/// assert_eq!(id.pmu_ver(), 0b0111);
/// assert_eq!(id.pmu_support(), Ok(PmuSupport::Pmuv3(PmuVersion::V3p7)));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct IdAa64Dfr0(u64);

impl IdAa64Dfr0 {
    /// A value from raw bits.
    pub const fn from_bits(bits: u64) -> Self {
        Self(bits)
    }

    /// The raw value.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// PMUVer, bits `[11:8]`.
    pub const fn pmu_ver(self) -> u8 {
        ((self.0 >> 8) & 0xF) as u8
    }

    /// PMSS, bits `[19:16]`: FEAT_PMUv3_SS (snapshots).
    pub const fn pmss(self) -> u8 {
        ((self.0 >> 16) & 0xF) as u8
    }

    /// MTPMU, bits `[51:48]`: FEAT_MTPMU (multithreaded PMU events).
    pub const fn mtpmu(self) -> u8 {
        ((self.0 >> 48) & 0xF) as u8
    }

    /// HPMN0, bits `[63:60]`: MDCR_EL2.HPMN may be zero.
    pub const fn hpmn0(self) -> u8 {
        ((self.0 >> 60) & 0xF) as u8
    }

    /// What PMUVer says about the PMU.
    pub const fn pmu_support(self) -> Result<PmuSupport, ReservedPmuVer> {
        PmuVersion::from_pmuver(self.pmu_ver())
    }

    /// The PMUv3 version, or `None` when there is no PMUv3 (absent or IMPLEMENTATION DEFINED).
    pub const fn pmu_version(self) -> Result<Option<PmuVersion>, ReservedPmuVer> {
        match self.pmu_support() {
            Ok(PmuSupport::Pmuv3(v)) => Ok(Some(v)),
            Ok(_) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

impl fmt::Debug for IdAa64Dfr0 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdAa64Dfr0")
            .field("bits", &format_args!("{:#x}", self.0))
            .field("pmu_ver", &format_args!("{:#x}", self.pmu_ver()))
            .field("pmss", &self.pmss())
            .field("mtpmu", &self.mtpmu())
            .field("hpmn0", &self.hpmn0())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmuver_cases() {
        let id = |v: u64| IdAa64Dfr0::from_bits(v << 8);
        assert_eq!(id(0xF).pmu_version(), Ok(None));
        assert_eq!(id(0).pmu_version(), Ok(None));
        assert_eq!(id(1).pmu_version(), Ok(Some(PmuVersion::V3)));
        assert_eq!(id(3).pmu_version(), Err(ReservedPmuVer(3)));
    }
}
