//! PMU architecture versions (`ID_AA64DFR0_EL1.PMUVer`) and what each one enables.

use core::fmt;

use thiserror::Error;

/// A PMUv3 architecture version, ordered oldest to newest.
///
/// Only the versions with a `PMUVer` encoding exist: there is no PMUv3p2, p3 or p6.
/// Comparisons follow the architecture: every feature of a version is present in the newer ones.
///
/// ```
/// use pmu_regs::PmuVersion;
/// assert!(PmuVersion::V3p5 > PmuVersion::V3p1);
/// assert_eq!(PmuVersion::V3.evt_count_bits(), 10);
/// assert_eq!(PmuVersion::V3p1.evt_count_bits(), 16);
/// assert!(PmuVersion::V3p5.has_long_event_counters());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PmuVersion {
    /// PMUv3 (Armv8.0), `PMUVer` = 0b0001: 32-bit event counters, 10-bit event numbers.
    V3,
    /// PMUv3p1 (Armv8.1), `PMUVer` = 0b0100: 16-bit event numbers and the 0x4000 event range in PMCEID.
    V3p1,
    /// PMUv3p4 (Armv8.4), `PMUVer` = 0b0101: PMMIR_EL1.
    V3p4,
    /// PMUv3p5 (Armv8.5), `PMUVer` = 0b0110: 64-bit event counters and PMCR_EL0.LP.
    V3p5,
    /// PMUv3p7 (Armv8.7), `PMUVer` = 0b0111: PMCR_EL0.FZO (freeze on overflow).
    V3p7,
    /// PMUv3p8 (Armv8.8), `PMUVer` = 0b1000: the upper halves of PMEVTYPER/PMCCFILTR visible externally.
    V3p8,
    /// PMUv3p9 (Armv8.9/Armv9.4), `PMUVer` = 0b1001: PMUSERENR_EL0.UEN/TID, PMUACR_EL1, PMZR_EL0.
    V3p9,
}

/// What `ID_AA64DFR0_EL1.PMUVer` says about the PMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PmuSupport {
    /// `PMUVer` = 0b0000: no Performance Monitors extension.
    NotImplemented,
    /// A PMUv3 of the given version.
    Pmuv3(PmuVersion),
    /// `PMUVer` = 0b1111: an IMPLEMENTATION DEFINED PMU that is not PMUv3; treat as absent.
    ImplementationDefined,
}

/// A `PMUVer` field value that the architecture does not define.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("ID_AA64DFR0_EL1.PMUVer value {0:#x} is reserved")]
pub struct ReservedPmuVer(pub u8);

impl PmuVersion {
    /// Every version, oldest first.
    pub const ALL: [PmuVersion; 7] = [
        PmuVersion::V3,
        PmuVersion::V3p1,
        PmuVersion::V3p4,
        PmuVersion::V3p5,
        PmuVersion::V3p7,
        PmuVersion::V3p8,
        PmuVersion::V3p9,
    ];

    /// The `ID_AA64DFR0_EL1.PMUVer` encoding of this version.
    pub const fn pmuver(self) -> u8 {
        match self {
            PmuVersion::V3 => 0b0001,
            PmuVersion::V3p1 => 0b0100,
            PmuVersion::V3p4 => 0b0101,
            PmuVersion::V3p5 => 0b0110,
            PmuVersion::V3p7 => 0b0111,
            PmuVersion::V3p8 => 0b1000,
            PmuVersion::V3p9 => 0b1001,
        }
    }

    /// Width in bits of `PMEVTYPER<n>_EL0.evtCount`: 10 on PMUv3, 16 from PMUv3p1.
    pub const fn evt_count_bits(self) -> u32 {
        match self {
            PmuVersion::V3 => 10,
            _ => 16,
        }
    }

    /// Mask of the event numbers this version can program.
    pub const fn evt_count_mask(self) -> u16 {
        match self {
            PmuVersion::V3 => 0x03FF,
            _ => 0xFFFF,
        }
    }

    /// PMCEID0/1_EL0 bits `[63:32]` describe events 0x4000–0x403F (PMUv3p1 and later).
    pub const fn has_extended_pmceid(self) -> bool {
        !matches!(self, PmuVersion::V3)
    }

    /// PMMIR_EL1 is implemented (PMUv3p4 and later).
    pub const fn has_pmmir(self) -> bool {
        matches!(
            self,
            PmuVersion::V3p4
                | PmuVersion::V3p5
                | PmuVersion::V3p7
                | PmuVersion::V3p8
                | PmuVersion::V3p9
        )
    }

    /// Event counters are 64 bits wide and PMCR_EL0.LP / MDCR_EL2.HLP exist (PMUv3p5 and later).
    pub const fn has_long_event_counters(self) -> bool {
        matches!(
            self,
            PmuVersion::V3p5 | PmuVersion::V3p7 | PmuVersion::V3p8 | PmuVersion::V3p9
        )
    }

    /// PMCR_EL0.FZO (freeze on overflow) exists; from Armv8.7 PMCFGR.FZO must read 1.
    pub const fn has_freeze_on_overflow(self) -> bool {
        matches!(self, PmuVersion::V3p7 | PmuVersion::V3p8 | PmuVersion::V3p9)
    }

    /// PMEVTYPER/PMCCFILTR bits `[63:32]` are visible through the external interface (PMUv3p8 and later).
    pub const fn has_external_upper_filters(self) -> bool {
        matches!(self, PmuVersion::V3p8 | PmuVersion::V3p9)
    }

    /// PMUSERENR_EL0.UEN/TID, PMUACR_EL1 and PMZR_EL0 exist, and the external PMSWINC is gone (PMUv3p9).
    pub const fn has_v3p9_controls(self) -> bool {
        matches!(self, PmuVersion::V3p9)
    }

    /// Decode `ID_AA64DFR0_EL1.PMUVer` (only the low four bits of `pmuver` are used).
    ///
    /// ```
    /// use pmu_regs::{PmuSupport, PmuVersion};
    /// assert_eq!(PmuVersion::from_pmuver(0b0110), Ok(PmuSupport::Pmuv3(PmuVersion::V3p5)));
    /// assert_eq!(PmuVersion::from_pmuver(0), Ok(PmuSupport::NotImplemented));
    /// assert!(PmuVersion::from_pmuver(0b0010).is_err());
    /// ```
    pub const fn from_pmuver(pmuver: u8) -> Result<PmuSupport, ReservedPmuVer> {
        Ok(match pmuver & 0xF {
            0b0000 => PmuSupport::NotImplemented,
            0b0001 => PmuSupport::Pmuv3(PmuVersion::V3),
            0b0100 => PmuSupport::Pmuv3(PmuVersion::V3p1),
            0b0101 => PmuSupport::Pmuv3(PmuVersion::V3p4),
            0b0110 => PmuSupport::Pmuv3(PmuVersion::V3p5),
            0b0111 => PmuSupport::Pmuv3(PmuVersion::V3p7),
            0b1000 => PmuSupport::Pmuv3(PmuVersion::V3p8),
            0b1001 => PmuSupport::Pmuv3(PmuVersion::V3p9),
            0b1111 => PmuSupport::ImplementationDefined,
            other => return Err(ReservedPmuVer(other)),
        })
    }

    /// The architecture's name for this version, e.g. `"PMUv3p5"`.
    pub const fn name(self) -> &'static str {
        match self {
            PmuVersion::V3 => "PMUv3",
            PmuVersion::V3p1 => "PMUv3p1",
            PmuVersion::V3p4 => "PMUv3p4",
            PmuVersion::V3p5 => "PMUv3p5",
            PmuVersion::V3p7 => "PMUv3p7",
            PmuVersion::V3p8 => "PMUv3p8",
            PmuVersion::V3p9 => "PMUv3p9",
        }
    }
}

impl fmt::Display for PmuVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pmuver_round_trips_for_every_version() {
        for v in PmuVersion::ALL {
            assert_eq!(
                PmuVersion::from_pmuver(v.pmuver()),
                Ok(PmuSupport::Pmuv3(v))
            );
        }
    }

    #[test]
    fn reserved_encodings_are_errors() {
        for raw in [2u8, 3, 0xA, 0xB, 0xC, 0xD, 0xE] {
            assert_eq!(PmuVersion::from_pmuver(raw), Err(ReservedPmuVer(raw)));
        }
        assert_eq!(
            PmuVersion::from_pmuver(0xF),
            Ok(PmuSupport::ImplementationDefined)
        );
    }

    #[test]
    fn versions_are_ordered_and_features_monotonic() {
        for pair in PmuVersion::ALL.windows(2) {
            assert!(pair[0] < pair[1]);
            let (a, b) = (pair[0], pair[1]);
            assert!(!a.has_pmmir() || b.has_pmmir());
            assert!(!a.has_long_event_counters() || b.has_long_event_counters());
            assert!(!a.has_freeze_on_overflow() || b.has_freeze_on_overflow());
            assert!(a.evt_count_bits() <= b.evt_count_bits());
        }
    }
}
