//! Programmable counter sets: which events of the events document are offered as counters, and which slot
//! each enabled event is given in the configuration delivered to gatord.
//!
//! An Arm CPU category names a counter set (`<category counter_set="ARMv8_Cortex_A72_cnt">`) whose N slots
//! (`<counter_set name="ARMv8_Cortex_A72_cnt" count="6"/>`) gatord lists in its counters document as
//! `ARMv8_Cortex_A72_cnt0` … `cnt5`. The category's events without a `counter` attribute are programmable: a
//! client counts one by configuring a slot with its code (`<configuration counter="ARMv8_Cortex_A72_cnt0"
//! event="0x8"/>`, as gatord's own local capture does), and gatord's `captured` document maps a key to the
//! slot (`<counter key="0xc" type="ARMv8_Cortex_A72_cnt0" event="0x8"/>`).
//!
//! The engine offers each such event as a counter of its own ([`SetEvent`], named by
//! [`SetEvent::key`]); at capture start the enabled events of a set get its listed slots in id order, the
//! lowest-numbered slot first. More enabled events than slots is [`GatordError::TooManyEvents`].

use std::collections::HashSet;

use gator_xml::Events;

use crate::counter::{Counter, CounterId, SetEvent};
use crate::error::Error;
use crate::GatordError;

/// The slots of one counter set that the daemon's counters document lists, by ascending slot index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SetSlots {
    /// The set's name (`ARMv8_Cortex_A72_cnt`).
    pub(crate) set: String,
    /// The listed slot names (`ARMv8_Cortex_A72_cnt0`, …).
    pub(crate) slots: Vec<String>,
    /// The daemon's metrics of this set's CPUs (`metric="yes"` events whose `metric_cpu_counter_set` is the
    /// set's CPU: `ARMv8_Cortex_A72_metric_ipc`), which the daemon computes from events it programs into
    /// the same slots itself.
    pub(crate) metrics: Vec<String>,
}

/// What the delivered configuration says about one enabled counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Configured {
    /// The engine counter.
    pub(crate) id: CounterId,
    /// The gatord counter configured: the fixed counter's name, or the slot assigned to a set event.
    pub(crate) counter: String,
    /// The event code programmed into the slot (set events only).
    pub(crate) event: Option<u64>,
}

/// The counter sets used by a category of `events` with at least one slot in `available` (the counters
/// document), in the order the events document declares them.
pub(crate) fn listed_slots(events: &Events, available: &HashSet<String>) -> Vec<SetSlots> {
    let used: HashSet<&str> = events
        .categories
        .iter()
        .filter_map(|c| c.counter_set.as_deref())
        .collect();
    let mut out: Vec<SetSlots> = Vec::new();
    for set in &events.counter_sets {
        if !used.contains(set.name.as_str()) || out.iter().any(|s| s.set == set.name) {
            continue;
        }
        let mut slots: Vec<(u32, &String)> = available
            .iter()
            .filter_map(|name| set.slot_index(name).map(|index| (index, name)))
            .collect();
        slots.sort_unstable();
        if !slots.is_empty() {
            out.push(SetSlots {
                set: set.name.clone(),
                slots: slots.into_iter().map(|(_, name)| name.clone()).collect(),
                metrics: metrics_of(events, available, &set.name),
            });
        }
    }
    out
}

/// The available metrics of counter set `set`'s CPUs: gatord names a metric's CPUs by the set's name less its
/// `_cnt` (`metric_cpu_counter_set="ARMv8_Cortex_A72"` for `ARMv8_Cortex_A72_cnt`).
fn metrics_of(events: &Events, available: &HashSet<String>, set: &str) -> Vec<String> {
    let Some(cpus) = set.strip_suffix("_cnt") else {
        return Vec::new();
    };
    let mut metrics: Vec<String> = events
        .events()
        .filter(|(_, e)| e.extra.get("metric").is_some_and(|v| v == "yes"))
        .filter(|(_, e)| {
            e.extra
                .get("metric_cpu_counter_set")
                .is_some_and(|v| v == cpus)
        })
        .filter_map(|(_, e)| e.counter.clone())
        .filter(|name| available.contains(name))
        .collect();
    metrics.sort_unstable();
    metrics.dedup();
    metrics
}

/// The configuration entries of the enabled gatord counters `enabled` (in id order): a fixed counter as
/// itself; the set events of each set in the set's slots, the lowest id in the lowest listed slot.
///
/// [`GatordError::TooManyEvents`] when a set has more enabled events than listed slots;
/// [`GatordError::NoSlots`] for a set event whose set has no listed slot.
pub(crate) fn assign(enabled: &[&Counter], sets: &[SetSlots]) -> Result<Vec<Configured>, Error> {
    let mut used = vec![0usize; sets.len()];
    let mut out = Vec::with_capacity(enabled.len());
    for counter in enabled {
        let Some(SetEvent { set, code }) = &counter.set_event else {
            out.push(Configured {
                id: counter.id,
                counter: counter.key.clone(),
                event: None,
            });
            continue;
        };
        let index = sets
            .iter()
            .position(|s| &s.set == set)
            .ok_or_else(|| Error::Gatord(GatordError::NoSlots { set: set.clone() }))?;
        let slots = &sets[index].slots;
        let Some(slot) = slots.get(used[index]) else {
            return Err(Error::Gatord(GatordError::TooManyEvents {
                set: set.clone(),
                slots: slots.len(),
                events: enabled
                    .iter()
                    .filter(|c| c.set_event.as_ref().is_some_and(|e| &e.set == set))
                    .map(|c| c.key.clone())
                    .collect(),
            }));
        };
        used[index] += 1;
        out.push(Configured {
            id: counter.id,
            counter: slot.clone(),
            event: Some(*code),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fragment shaped like gatord 9.7.2's events-Cortex-A72.xml, with its 6-slot counter set.
    const EVENTS: &str = r#"<counter_set count="6" name="ARMv8_Cortex_A72_cnt"/>
<counter_set count="4" name="Unused_cnt"/>
<category counter_set="ARMv8_Cortex_A72_cnt" name="Cortex-A72" per_cpu="yes">
  <event counter="ARMv8_Cortex_A72_ccnt" event="0x11" title="Cycles" name="CPU Cycles" units="cycles"/>
  <event event="0x08" title="Instructions (Executed)" name="All" units="instructions"/>
</category>
<category name="Cortex-A72: Top Down Metrics" per_cpu="yes">
  <event counter="ARMv8_Cortex_A72_metric_ipc" title="General" name="Instructions Per Cycle" class="delta" metric="yes" metric_cpu_counter_set="ARMv8_Cortex_A72"/>
  <event counter="ARMv8_Cortex_A72_metric_cpi" title="General" name="Cycles Per Instruction" class="delta" metric="yes" metric_cpu_counter_set="ARMv8_Cortex_A72"/>
  <event counter="ARMv8_Cortex_A53_metric_ipc" title="General" name="Instructions Per Cycle" class="delta" metric="yes" metric_cpu_counter_set="ARMv8_Cortex_A53"/>
</category>"#;

    fn counter(id: CounterId, key: &str, set_event: Option<(&str, u64)>) -> Counter {
        Counter {
            set_event: set_event.map(|(set, code)| SetEvent {
                set: set.into(),
                code,
            }),
            ..Counter::gatord_delta(id, key)
        }
    }

    fn a72_slots(count: usize) -> Vec<SetSlots> {
        vec![SetSlots {
            set: "ARMv8_Cortex_A72_cnt".into(),
            slots: (0..count)
                .map(|i| format!("ARMv8_Cortex_A72_cnt{i}"))
                .collect(),
            metrics: Vec::new(),
        }]
    }

    #[test]
    fn listed_slots_follow_the_counters_document_in_index_order() {
        let events = Events::parse(EVENTS).unwrap();
        // gatord 9.7.2 lists the slots from the highest down (arm64-vm-local.apc/counters.xml).
        let available: HashSet<String> = [
            "ARMv8_Cortex_A72_cnt5",
            "ARMv8_Cortex_A72_cnt1",
            "ARMv8_Cortex_A72_cnt0",
            "ARMv8_Cortex_A72_cnt6",
            "Unused_cnt0",
            "ARMv8_Cortex_A72_metric_ipc",
            "ARMv8_Cortex_A53_metric_ipc",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        let sets = listed_slots(&events, &available);
        assert_eq!(
            sets,
            [SetSlots {
                set: "ARMv8_Cortex_A72_cnt".into(),
                slots: vec![
                    "ARMv8_Cortex_A72_cnt0".into(),
                    "ARMv8_Cortex_A72_cnt1".into(),
                    "ARMv8_Cortex_A72_cnt5".into(),
                ],
                // Its CPUs' metric that the daemon lists, not the one it does not nor another CPU's.
                metrics: vec!["ARMv8_Cortex_A72_metric_ipc".into()],
            }]
        );
        assert!(listed_slots(&events, &HashSet::new()).is_empty());
    }

    #[test]
    fn set_events_get_slots_in_id_order_and_fixed_counters_stay_themselves() {
        let cycles = counter(1, "ARMv8_Cortex_A72_ccnt", None);
        let inst = counter(
            5,
            "ARMv8_Cortex_A72:INST_RETIRED",
            Some(("ARMv8_Cortex_A72_cnt", 0x08)),
        );
        let refill = counter(
            7,
            "ARMv8_Cortex_A72:L1D_CACHE_REFILL",
            Some(("ARMv8_Cortex_A72_cnt", 0x03)),
        );
        let got = assign(&[&cycles, &inst, &refill], &a72_slots(6)).unwrap();
        assert_eq!(
            got,
            [
                Configured {
                    id: 1,
                    counter: "ARMv8_Cortex_A72_ccnt".into(),
                    event: None
                },
                Configured {
                    id: 5,
                    counter: "ARMv8_Cortex_A72_cnt0".into(),
                    event: Some(0x08)
                },
                Configured {
                    id: 7,
                    counter: "ARMv8_Cortex_A72_cnt1".into(),
                    event: Some(0x03)
                },
            ]
        );
    }

    #[test]
    fn more_events_than_slots_is_an_error_naming_them() {
        let events: Vec<Counter> = (0..3)
            .map(|i| {
                counter(
                    i + 1,
                    &format!("ARMv8_Cortex_A72:{i:#04x}"),
                    Some(("ARMv8_Cortex_A72_cnt", u64::from(i))),
                )
            })
            .collect();
        let refs: Vec<&Counter> = events.iter().collect();
        assert!(assign(&refs[..2], &a72_slots(2)).is_ok());
        let err = assign(&refs, &a72_slots(2)).unwrap_err();
        match &err {
            Error::Gatord(GatordError::TooManyEvents { set, slots, events }) => {
                assert_eq!(set, "ARMv8_Cortex_A72_cnt");
                assert_eq!(*slots, 2);
                assert_eq!(events.len(), 3);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("2 slots"), "{err}");
        let other_set = counter(9, "X:0x01", Some(("X_cnt", 1)));
        assert!(matches!(
            assign(&[&other_set], &a72_slots(2)),
            Err(Error::Gatord(GatordError::NoSlots { .. }))
        ));
    }
}
