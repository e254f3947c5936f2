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

#[cfg(test)]
mod tests {
    use super::super::pmu_event::Placement;
    use super::super::pmus::{Checked, NotOnPmu};
    use super::*;

    fn status(placements: Vec<Placement>, parts: Vec<PartStatus>) -> EventStatus {
        EventStatus {
            event: PmuEvent {
                name: "INST_RETIRED".into(),
                description: None,
                placements,
            },
            parts,
        }
    }

    fn placement(pmu: usize, status: Result<(u16, Checked), NotOnPmu>) -> Placement {
        Placement {
            pmu,
            pmu_name: format!("armv8_pmu{pmu}"),
            label: format!("core {pmu}"),
            perf_type: 8 + pmu as u32,
            cpus: vec![pmu as u32],
            counters: Some(6),
            status,
        }
    }

    #[test]
    fn an_event_counted_nowhere_says_why() {
        // No PMU at all: another architecture.
        assert_eq!(
            status(Vec::new(), Vec::new()).unavailable(),
            Some(EventUnavailable::NoArmPmu)
        );
        // Only another CPU's core type has it, for a CPU-wide count of this CPU.
        let other = status(
            vec![placement(0, Ok((0x08, Checked::Pmceid)))],
            vec![PartStatus::OtherCpus],
        );
        assert_eq!(other.unavailable(), Some(EventUnavailable::NotOnThisCpu));
        assert!(EventUnavailable::NotOnThisCpu
            .to_string()
            .contains("other core types"));
        // The first PMU's own reason, and which PMU it is.
        let why = NotOnPmu::NotImplemented {
            core: "core 1".into(),
            code: 0x08,
        };
        let refused = status(
            vec![
                placement(0, Ok((0x08, Checked::Pmceid))),
                placement(1, Err(why.clone())),
            ],
            vec![
                PartStatus::Counted { part: 0 },
                PartStatus::Unavailable(EventUnavailable::NotOnPmu(why.clone())),
            ],
        );
        assert!(refused.is_counted() && refused.unavailable().is_none());
        let not_counted: Vec<_> = refused.not_counted().collect();
        assert_eq!(
            not_counted,
            [("armv8_pmu1", &EventUnavailable::NotOnPmu(why))]
        );
    }
}
