//! The Arm PMU events of this CPU in a listing: every event a core type has (the kernel's list, and Arm's
//! per-core list where `LIZARD_PMU_DATA` names a copy of it), as the counters `capture(counters=…)` counts
//! when they are named.

use hwcpipe::cpu::CpuPmus;
use lizard_core::capture::{self as doc, Class, ValueType};
use lizard_core::hwc::{events_of, CpuEventsError, PMU_EVENT_CATEGORY};
use lizard_core::Units;

/// The CPU's Arm PMU events as listed counters, numbered after `listed`, which they join. They are counted
/// by the local CPU counters, so they are listed only beside those (not where gatord alone gives the
/// counters): each takes the source, scope and title of the listing's first local CPU counter. An event
/// several core types have is one counter (counted on each and summed, as a capture counts it); one the
/// core does not have (PMCEID, or Arm's list for the core) is not listed.
pub fn listed(listed: &[doc::CounterInfo]) -> Result<Vec<doc::CounterInfo>, CpuEventsError> {
    let Some(local) = listed
        .iter()
        .find(|c| c.source == doc::Source::Cpu && c.cpu_series.is_none())
    else {
        return Ok(Vec::new());
    };
    let pmus = CpuPmus::discover()?;
    let mut names: Vec<String> = Vec::new();
    for pmu in pmus.pmus() {
        for event in pmu.events() {
            if event.status.is_ok() && !names.contains(&event.name) {
                names.push(event.name);
            }
        }
    }
    let first_id = listed.iter().map(|c| c.id + 1).max().unwrap_or(0);
    Ok(events_of(&pmus, &names)?
        .into_iter()
        .zip(first_id..)
        .map(|(event, id)| doc::CounterInfo {
            id,
            source: local.source.clone(),
            scope: local.scope.clone(),
            counter: event.name.clone(),
            title: local.title.clone(),
            description: event
                .description
                .clone()
                .unwrap_or_else(|| format!("Arm PMU event {}", event.name)),
            category: PMU_EVENT_CATEGORY.to_owned(),
            units: Units::from(event.unit()).of_readings(),
            multiplier: 1.0,
            class: Class::Delta,
            result_type: ValueType::Int,
            event: None,
            cpu_series: None,
            // One counter over every core type that has the event: no single core type's part.
            pmu_event: None,
            name: event.name,
        })
        .collect())
}
