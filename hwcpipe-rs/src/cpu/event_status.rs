//! [`EventStatus`]: what a profiler made of each Arm PMU event it was given — on which PMUs it is
//! counted, and why not on the others.

use super::pmu_event::{EventUnavailable, PmuEvent};

/// One event on one of its PMUs, after opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartStatus {
    /// Counted: its readings are part `part` of the samples.
    Counted {
        /// The part's position among the profiler's parts.
        part: usize,
    },
    /// Not counted, and why.
    Unavailable(EventUnavailable),
    /// A CPU-wide profiler of a CPU this PMU does not serve: the CPU's own PMU counts the event there.
    OtherCpus,
}

/// An event given to a profiler, and what became of it on each of its PMUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventStatus {
    /// The event as resolved.
    pub event: PmuEvent,
    /// One per placement of the event, in the same order.
    pub parts: Vec<PartStatus>,
}

impl EventStatus {
    /// Whether some PMU counts it.
    pub fn is_counted(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, PartStatus::Counted { .. }))
    }

    /// Why it is counted nowhere: the first PMU's reason (an event with no PMU at all: the system has no
    /// Arm PMU; a CPU-wide counting of a CPU whose PMU is not among the event's: not on this CPU); `None`
    /// when some PMU counts it.
    pub fn unavailable(&self) -> Option<EventUnavailable> {
        if self.is_counted() {
            return None;
        }
        let reason = self.parts.iter().find_map(|p| match p {
            PartStatus::Unavailable(why) => Some(why.clone()),
            _ => None,
        });
        Some(match reason {
            Some(reason) => reason,
            None if self.parts.is_empty() => EventUnavailable::NoArmPmu,
            None => EventUnavailable::NotOnThisCpu,
        })
    }

    /// Each PMU that does not count it, with its name and why.
    pub fn not_counted(&self) -> impl Iterator<Item = (&str, &EventUnavailable)> + '_ {
        self.event
            .placements
            .iter()
            .zip(&self.parts)
            .filter_map(|(placement, part)| match part {
                PartStatus::Unavailable(why) => Some((placement.pmu_name.as_str(), why)),
                _ => None,
            })
    }
}
