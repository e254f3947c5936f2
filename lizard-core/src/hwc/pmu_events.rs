//! The Arm PMU events the local CPU counters count beside HWCPipe's, from the names a user gave
//! ([`Config::cpu_events`](crate::Config::cpu_events)): the names that are events of this CPU (Arm's mnemonic,
//! the kernel's name or a number, resolved against its PMUs with Arm's lists from `LIZARD_PMU_DATA`); the
//! others are left to the other sources. Each counted event is a counter of its own, summed over the core
//! types that count it, and one more per core type where several do (`armv8_cortex_a55/INST_RETIRED/`).

use hwcpipe::cpu::{
    CpuPmus, EventError, EventSpec, EventSpecError, EventStatus, PartStatus, PmuEvent, PmusError,
};

use super::backend::UnreadableCounter;
use crate::counter::PmuPart;

/// Why the events named could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuEventsError {
    /// The CPU's PMUs could not be described (the kernel's sysfs, or Arm's data `LIZARD_PMU_DATA` names).
    #[error("the CPU's PMUs could not be described")]
    Pmus(#[from] PmusError),
    /// A name spelled as an event (a number, `PMU/EVENT/`) that is no event of this CPU.
    #[error("no Arm PMU event of this CPU")]
    Event(#[from] EventError),
}

/// The events of this CPU among `names`; a name that is no event (a counter of gatord, of HWCPipe, of the
/// Mali GPU) is skipped, and nothing is read when `names` is empty.
pub fn resolve_cpu_events(names: &[String]) -> Result<Vec<PmuEvent>, CpuEventsError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    events_of(&CpuPmus::discover()?, names)
}

/// For each of `names` that is an event of this CPU, the name its counter has (`r8` and `inst_retired` →
/// `INST_RETIRED`), for finding the counter by the name the user typed.
pub fn event_counter_names(names: &[String]) -> Result<Vec<(String, String)>, CpuEventsError> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let pmus = CpuPmus::discover()?;
    let mut pairs = Vec::new();
    for name in names {
        if let Some(event) = events_of(&pmus, std::slice::from_ref(name))?.pop() {
            pairs.push((name.trim().to_owned(), event.name));
        }
    }
    Ok(pairs)
}

/// The events of `statuses` not counted at all, and those not counted on some core type (by perf's
/// `PMU/EVENT/` spelling), each with the reason.
pub(crate) fn not_counted(statuses: &[EventStatus]) -> Vec<UnreadableCounter> {
    let mut unreadable = Vec::new();
    for status in statuses {
        if let Some(reason) = status.unavailable() {
            unreadable.push(UnreadableCounter {
                name: status.event.name.clone(),
                reason: reason.to_string(),
                pmu_part: Some(PmuPart {
                    event: status.event.name.clone(),
                    pmu: None,
                    core: None,
                }),
            });
            continue;
        }
        for (placement, part) in status.event.placements.iter().zip(&status.parts) {
            if let PartStatus::Unavailable(reason) = part {
                unreadable.push(UnreadableCounter {
                    name: format!("{}/{}/", placement.pmu_name, status.event.name),
                    reason: reason.to_string(),
                    pmu_part: Some(PmuPart {
                        event: status.event.name.clone(),
                        pmu: Some(placement.pmu_name.clone()),
                        core: Some(placement.label.clone()),
                    }),
                });
            }
        }
    }
    unreadable
}

/// The events of `pmus` among `names` (see [`resolve_cpu_events`]).
pub fn events_of(pmus: &CpuPmus, names: &[String]) -> Result<Vec<PmuEvent>, CpuEventsError> {
    let mut events: Vec<PmuEvent> = Vec::new();
    for name in names.iter().map(|n| n.trim()) {
        // HWCPipe's own counter names are not events.
        if hwcpipe::CpuCounter::ALL
            .iter()
            .any(|c| c.name().eq_ignore_ascii_case(name))
        {
            continue;
        }
        let spec: EventSpec = match name.parse() {
            Ok(spec) => spec,
            Err(EventSpecError::Empty | EventSpecError::BadCharacter { .. }) => continue,
            Err(other) => return Err(EventError::from(other).into()),
        };
        match pmus.resolve(&spec) {
            // Only events this system has a PMU for: on another architecture an Arm mnemonic is left to
            // the other sources (gatord's counter sets name events too).
            Ok(event) if !event.placements.is_empty() => {
                if !events.iter().any(|e| e.name == event.name) {
                    events.push(event);
                }
            }
            Ok(_) => {}
            Err(EventError::Unknown { .. }) if spec.pmu.is_none() => {}
            Err(other) => return Err(other.into()),
        }
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a72() -> CpuPmus {
        CpuPmus::new(vec![hwcpipe::cpu::sim::qemu_a72_pmu(false)])
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_the_names_of_events_are_taken() {
        let events = events_of(
            &a72(),
            &names(&[
                "Cycles",
                "ARMv8_Cortex_A72_ccnt",
                "inst_retired",
                "r11",
                "GpuCycles",
                "x-y",
            ]),
        )
        .unwrap();
        let found: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(found, ["INST_RETIRED", "CPU_CYCLES"]);
        // Without an Arm PMU, an Arm mnemonic is left to the other sources.
        assert!(events_of(&CpuPmus::default(), &names(&["INST_RETIRED"]))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn spelled_as_an_event_but_none_is_an_error() {
        for bad in ["0x10000", "armv8_pmuv3/nothing/", "armv9_x/cpu_cycles/"] {
            assert!(
                matches!(
                    events_of(&a72(), &names(&[bad])),
                    Err(CpuEventsError::Event(_))
                ),
                "{bad}"
            );
        }
        assert!(resolve_cpu_events(&[]).unwrap().is_empty());
    }
}
