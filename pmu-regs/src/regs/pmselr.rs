//! PMSELR_EL0, the counter selector for PMXEVTYPER_EL0 and PMXEVCNTR_EL0.

use crate::regs::field::register;

register! {
    /// PMSELR_EL0: SEL picks the counter PMXEVTYPER_EL0 and PMXEVCNTR_EL0 reach.
    ///
    /// ```
    /// use pmu_regs::{Pmselr, Selected};
    /// assert_eq!(Pmselr::default().with_sel(31).unwrap().selected(6), Selected::CycleFilter);
    /// assert_eq!(Pmselr::default().with_sel(2).unwrap().selected(6), Selected::EventCounter(2));
    /// assert_eq!(Pmselr::default().with_sel(9).unwrap().selected(6), Selected::Unpredictable(9));
    /// ```
    pub struct Pmselr = "PMSELR_EL0" {
        /// SEL, bits `[4:0]`: counter index, or 31 for PMCCFILTR_EL0 (through PMXEVTYPER only).
        field sel / with_sel [4:0] u8, ReadWrite, V3;
    }
}

/// What a PMSELR_EL0.SEL value reaches, given the number of implemented event counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Selected {
    /// SEL < N: event counter SEL (`PMEVTYPER<SEL>` / `PMEVCNTR<SEL>`).
    EventCounter(u8),
    /// SEL = 31: PMCCFILTR_EL0 through PMXEVTYPER_EL0. PMXEVCNTR_EL0 never reaches PMCCNTR_EL0.
    CycleFilter,
    /// N ≤ SEL < 31: CONSTRAINED UNPREDICTABLE; the value is kept.
    Unpredictable(u8),
}

impl Pmselr {
    /// What SEL reaches on a PMU with `counters` event counters.
    pub const fn selected(self, counters: u8) -> Selected {
        let sel = self.sel();
        if sel == 31 {
            Selected::CycleFilter
        } else if sel < counters {
            Selected::EventCounter(sel)
        } else {
            Selected::Unpredictable(sel)
        }
    }
}
