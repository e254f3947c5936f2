//! Which counters a capture takes when the user names none: every counter, except that a programmable
//! counter set (an Arm PMU's event counters through gatord: `ARMv8_Cortex_A72_cnt`) with more events than
//! slots gets what makes IPC and the MPKI metrics have values:
//! - where the daemon offers metrics for the set's CPUs (gatord 9.x: `ARMv8_Cortex_A72_metric_ipc`), no
//!   event of the set: the daemon programs each metric's events into the same slots itself, and an event
//!   named here takes a slot a metric needs (measured against gatord 9.7.2: with the six slots filled, no
//!   metric has a value; with none, eleven do, IPC and the MPKIs among them);
//! - elsewhere, the events those metrics need, in its few slots — instructions, branch mispredictions, L1D and
//!   L2 refills — never the events that count only what software writes.

use std::fmt;

use crate::counter::{Counter, CounterId};

/// The common events a default capture programs into a counter set's slots, most useful first: what IPC and
/// the MPKI metrics need (INST_RETIRED; BR_MIS_PRED; L1D_CACHE_REFILL; L2D_CACHE_REFILL), then the accesses
/// that make the refills ratios (L1D_CACHE, L2D_CACHE, BR_PRED), the stalls of the top-down metrics
/// (STALL_FRONTEND, STALL_BACKEND), and the instruction side and TLBs.
pub const PREFERRED_EVENTS: &[u64] = &[
    0x08, 0x10, 0x03, 0x17, 0x04, 0x16, 0x12, 0x23, 0x24, 0x01, 0x14, 0x05, 0x02, 0x2D, 0x2E, 0x13,
    0x1B, 0x11,
];

/// Events a default capture never programs: SW_INCR counts only what software writes to PMSWINC_EL0, CHAIN
/// only links two counters.
pub const NEVER_BY_DEFAULT: &[u64] = &[0x00, 0x1E];

/// What a default capture chose for one counter set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetChoice {
    /// The set (`ARMv8_Cortex_A72_cnt`).
    pub set: String,
    /// Its slots.
    pub slots: usize,
    /// The events chosen, as counter names (`ARMv8_Cortex_A72:INST_RETIRED`), in slot order.
    pub chosen: Vec<String>,
    /// How many of its events were left out.
    pub left_out: usize,
    /// The daemon's metrics of the set's CPUs, which the slots were left to (none chosen then).
    pub metrics: usize,
}

impl fmt::Display for SetChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.chosen.is_empty() && self.metrics > 0 {
            return write!(
                f,
                "counter set {} has {} slots: by default none of its {} events, so that gatord programs the \
                 events of its {} metrics (IPC and the miss rates among them) there itself; name events with \
                 --counters",
                self.set, self.slots, self.left_out, self.metrics
            );
        }
        write!(
            f,
            "counter set {} has {} slots: by default {} (what IPC, the branch and cache miss rates need), {} other events left out; name events with --counters",
            self.set,
            self.slots,
            self.chosen.join(", "),
            self.left_out
        )
    }
}

/// The counters of a default capture, in id order, and what each counter set got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultChoice {
    /// The ids to enable.
    pub ids: Vec<CounterId>,
    /// Per counter set whose events did not all fit its slots, what was chosen.
    pub sets: Vec<SetChoice>,
}

/// A counter set as the default choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetRoom {
    /// Its slots.
    pub slots: usize,
    /// The source's metrics of the set's CPUs among `counters` (they are taken too), whose events the
    /// source programs into the same slots itself.
    pub metrics: usize,
}

/// The default choice among `counters`, given each counter set's room (`room(set)`; `None`: not a set the
/// source knows, every event kept).
pub fn default_choice(
    counters: &[Counter],
    room: &dyn Fn(&str) -> Option<SetRoom>,
) -> DefaultChoice {
    let mut ids: Vec<CounterId> = Vec::new();
    let mut sets: Vec<(String, SetRoom, Vec<&Counter>)> = Vec::new();
    for counter in counters {
        match &counter.set_event {
            Some(event) => match sets.iter_mut().find(|(s, _, _)| *s == event.set) {
                Some((_, _, events)) => events.push(counter),
                None => {
                    let n = room(&event.set).unwrap_or(SetRoom {
                        slots: usize::MAX,
                        metrics: 0,
                    });
                    sets.push((event.set.clone(), n, vec![counter]));
                }
            },
            None => ids.push(counter.id),
        }
    }
    let mut choices = Vec::new();
    for (set, room, mut events) in sets {
        let n = room.slots;
        let rank = |c: &&Counter| {
            let code = c.set_event.as_ref().map_or(u64::MAX, |e| e.code);
            PREFERRED_EVENTS
                .iter()
                .position(|&p| p == code)
                .unwrap_or(PREFERRED_EVENTS.len() + code.min(0xFFFF) as usize)
        };
        let total = events.len();
        events.retain(|c| {
            c.set_event
                .as_ref()
                .is_some_and(|e| !NEVER_BY_DEFAULT.contains(&e.code))
        });
        events.sort_by_key(rank);
        // The slots are left to the source's metrics, where it has them and the events do not all fit.
        let metrics = if total > n { room.metrics } else { 0 };
        events.truncate(if metrics > 0 { 0 } else { n });
        if total > events.len() {
            choices.push(SetChoice {
                set,
                slots: n,
                chosen: events.iter().map(|c| c.key.clone()).collect(),
                left_out: total - events.len(),
                metrics,
            });
        }
        ids.extend(events.iter().map(|c| c.id));
    }
    ids.sort_unstable();
    DefaultChoice { ids, sets: choices }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::SetEvent;

    fn counter(id: CounterId, event: Option<u64>) -> Counter {
        let set_event = event.map(|code| SetEvent {
            set: "ARMv8_Cortex_A72_cnt".into(),
            code,
        });
        let key = set_event
            .as_ref()
            .map_or(format!("fixed{id}"), SetEvent::key);
        Counter {
            set_event,
            ..Counter::gatord_delta(id, key)
        }
    }

    #[test]
    fn the_slots_get_what_ipc_and_the_miss_rates_need_never_sw_incr() {
        // The events as a daemon lists them, by code: SW_INCR first.
        let mut counters = vec![counter(1, None)];
        for (i, code) in [
            0x00u64, 0x01, 0x02, 0x03, 0x04, 0x05, 0x08, 0x10, 0x16, 0x17, 0x1E,
        ]
        .iter()
        .enumerate()
        {
            counters.push(counter(i as u32 + 2, Some(*code)));
        }
        let choice = default_choice(&counters, &|set| {
            (set == "ARMv8_Cortex_A72_cnt").then_some(SetRoom {
                slots: 6,
                metrics: 0,
            })
        });
        let chosen: Vec<u64> = choice
            .ids
            .iter()
            .filter_map(|&id| counters[id as usize - 1].set_event.as_ref().map(|e| e.code))
            .collect();
        let mut want = vec![0x08, 0x10, 0x03, 0x17, 0x04, 0x16];
        want.sort_unstable_by_key(|code| {
            counters
                .iter()
                .position(|c| c.set_event.as_ref().is_some_and(|e| e.code == *code))
        });
        assert_eq!(chosen, want);
        assert!(choice.ids.contains(&1), "fixed counters stay");
        assert_eq!(choice.sets.len(), 1);
        let line = choice.sets[0].to_string();
        assert!(
            line.contains("ARMv8_Cortex_A72:INST_RETIRED")
                && line.contains("5 other events left out"),
            "{line}"
        );
        assert!(!line.contains("SW_INCR"));
    }

    #[test]
    fn a_set_whose_events_fit_keeps_them_all_and_says_nothing() {
        let counters = vec![counter(1, Some(0x08)), counter(2, Some(0x11))];
        let room = SetRoom {
            slots: 6,
            metrics: 31,
        };
        let choice = default_choice(&counters, &|_| Some(room));
        assert_eq!(choice.ids, [1, 2]);
        assert!(choice.sets.is_empty());
    }

    #[test]
    fn a_set_whose_cpus_have_metrics_leaves_its_slots_to_them() {
        let mut counters = vec![counter(1, None)];
        for (i, code) in (0x01u64..=0x10).enumerate() {
            counters.push(counter(i as u32 + 2, Some(code)));
        }
        let choice = default_choice(&counters, &|_| {
            Some(SetRoom {
                slots: 6,
                metrics: 11,
            })
        });
        assert_eq!(choice.ids, [1], "only the counters outside the set");
        let line = choice.sets[0].to_string();
        assert!(
            line.contains("by default none of its 16 events") && line.contains("its 11 metrics"),
            "{line}"
        );
    }
}
