//! [`ArmEvent`]: an event number the Arm architecture names, common or recommended.

use core::fmt;

use crate::event::CommonEvent;
use crate::recommended::RecommendedEvent;

/// A PMU event the architecture names: a common event (0x0000–0x003F, 0x4000–0x403F, which
/// PMCEID0/1_EL0 say whether the core implements) or a recommended IMPLEMENTATION DEFINED one
/// (0x0040–0x00BF, which no register describes).
///
/// ```
/// use pmu_regs::{ArmEvent, CommonEvent, RecommendedEvent};
/// assert_eq!(ArmEvent::from_code(0x08), Some(ArmEvent::Common(CommonEvent::InstRetired)));
/// assert_eq!(ArmEvent::from_code(0x60).map(ArmEvent::mnemonic), Some("BUS_ACCESS_RD"));
/// assert!(ArmEvent::Common(CommonEvent::CpuCycles).is_discoverable());
/// assert!(!ArmEvent::Recommended(RecommendedEvent::BusAccessRd).is_discoverable());
/// assert_eq!(ArmEvent::from_code(0x1234), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ArmEvent {
    /// A common architectural or microarchitectural event.
    Common(CommonEvent),
    /// A recommended IMPLEMENTATION DEFINED event.
    Recommended(RecommendedEvent),
}

impl ArmEvent {
    /// The event number programmed into `PMEVTYPER<n>_EL0.evtCount` (and perf's raw `config`).
    pub const fn code(self) -> u16 {
        match self {
            ArmEvent::Common(e) => e.code(),
            ArmEvent::Recommended(e) => e.code(),
        }
    }

    /// Arm's mnemonic, e.g. `"INST_RETIRED"`.
    pub const fn mnemonic(self) -> &'static str {
        match self {
            ArmEvent::Common(e) => e.mnemonic(),
            ArmEvent::Recommended(e) => e.mnemonic(),
        }
    }

    /// The named event with number `code`, if the architecture names one.
    pub const fn from_code(code: u16) -> Option<ArmEvent> {
        if let Some(e) = CommonEvent::from_code(code) {
            return Some(ArmEvent::Common(e));
        }
        match RecommendedEvent::from_code(code) {
            Some(e) => Some(ArmEvent::Recommended(e)),
            None => None,
        }
    }

    /// Whether PMCEID0/1_EL0 (and so the Linux driver's sysfs `events/` list) can say if a core
    /// implements the event: true for common events only.
    pub const fn is_discoverable(self) -> bool {
        matches!(self, ArmEvent::Common(_))
    }
}

impl fmt::Display for ArmEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic())
    }
}
