//! The Arm PMU events of a counting: which of the names asked that are no HWCPipe counter are events of this
//! CPU (by Arm's mnemonic, the kernel's name, or number), and the events the metrics' formulas need.

use hwcpipe::cpu::{CpuPmus, EventError, EventSpec, EventSpecError, PmuEvent, METRICS};

use crate::error::StatError;

/// The events of a counting, and the names left for Arm's Mali database.
#[derive(Debug)]
pub(crate) struct EventChoice {
    /// The events, each with its name as given (the metrics' inputs by Arm's mnemonic), for the engine to
    /// count: those asked by name first, then the metrics' inputs not among them.
    pub(crate) events: Vec<(String, PmuEvent)>,
    /// The names that are no Arm PMU event, meant as counters of Arm's Mali database.
    pub(crate) database: Vec<String>,
}

/// Sorts `names` (the names that are no HWCPipe counter) into events of `pmus` and the others, and adds the
/// events the metrics need where the system has an Arm PMU (elsewhere the metrics use HWCPipe's counters
/// only). A name spelled as an event (a number, `PMU/EVENT/`) that is none is an error.
pub(crate) fn choose(
    pmus: &CpuPmus,
    names: &[String],
    metrics: bool,
) -> Result<EventChoice, StatError> {
    let mut events: Vec<(String, PmuEvent)> = Vec::new();
    let mut database = Vec::new();
    for name in names {
        let spec: EventSpec = match name.parse() {
            Ok(spec) => spec,
            // Not spelled as an event at all: perhaps one of the Mali database's.
            Err(EventSpecError::Empty | EventSpecError::BadCharacter { .. }) => {
                database.push(name.clone());
                continue;
            }
            Err(other) => return Err(StatError::Event(other.into())),
        };
        match pmus.resolve(&spec) {
            Ok(event) => {
                if !events.iter().any(|(_, e)| e.name == event.name) {
                    events.push((name.clone(), event));
                }
            }
            Err(EventError::Unknown { .. }) if spec.pmu.is_none() => database.push(name.clone()),
            Err(other) => return Err(StatError::Event(other)),
        }
    }
    if metrics && !pmus.is_empty() {
        for input in METRICS.iter().flat_map(|m| m.event_inputs()) {
            if events.iter().any(|(_, e)| e.name == input) {
                continue;
            }
            let spec: EventSpec = input.parse().map_err(EventError::from)?;
            events.push((input.to_owned(), pmus.resolve(&spec)?));
        }
    }
    Ok(EventChoice { events, database })
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
    fn events_are_sorted_from_database_names() {
        let choice = choose(
            &a72(),
            &names(&["inst_retired", "MaliGPUActiveCy", "r11", "0x8", "Mali-GPU"]),
            false,
        )
        .unwrap();
        let events: Vec<&str> = choice.events.iter().map(|(_, e)| e.name.as_str()).collect();
        assert_eq!(
            events,
            ["INST_RETIRED", "CPU_CYCLES"],
            "0x8 is INST_RETIRED"
        );
        assert_eq!(choice.database, names(&["MaliGPUActiveCy", "Mali-GPU"]));
    }

    #[test]
    fn spelled_as_an_event_but_none_is_an_error() {
        for bad in [
            "0x10000",
            "armv8_pmuv3/no_such_event/",
            "armv8_x/inst_retired/",
        ] {
            let err = choose(&a72(), &names(&[bad]), false).unwrap_err();
            assert!(matches!(err, StatError::Event(_)), "{bad}: {err:?}");
        }
    }

    #[test]
    fn metrics_add_their_events_where_there_is_an_arm_pmu() {
        let choice = choose(&a72(), &names(&["CPU_CYCLES"]), true).unwrap();
        assert_eq!(choice.events[0].1.name, "CPU_CYCLES");
        let count = |name: &str| choice.events.iter().filter(|(_, e)| e.name == name).count();
        assert_eq!(count("CPU_CYCLES"), 1);
        assert_eq!(count("INST_RETIRED"), 1);
        assert_eq!(count("STALL_BACKEND"), 1);
        let none = choose(&CpuPmus::default(), &[], true).unwrap();
        assert!(none.events.is_empty());
    }
}
