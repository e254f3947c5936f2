//! Finding counters by the names users type: a counter's key, a counter-set event's `<set>:<code>` or
//! `<set>:<mnemonic>`, a counter's name, or a counter counted per CPU by its counter's name (all its CPUs'
//! series), ignoring ASCII case.

use crate::counter::Counter;

/// A name that matches no counter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown counter '{name}'")]
pub struct UnknownName {
    /// The name given (trimmed).
    pub name: String,
    /// Every key and name of the counters, for a "did you mean" hint.
    pub candidates: Vec<String>,
}

/// Why [`select_in`] found no counter for a name.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelectError {
    /// No counter has the name.
    #[error(transparent)]
    Unknown(#[from] UnknownName),
    /// A counter the local source knows of but cannot count here (an Arm PMU event this CPU lacks, a Mali
    /// database counter this GPU cannot give).
    #[error("{name} cannot be counted here: {reason}")]
    NotCountable {
        /// Its name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A name spelled as an Arm PMU event that could not be resolved.
    #[error(transparent)]
    Events(#[from] crate::hwc::CpuEventsError),
}

/// The counters of `lizard` named in `names` ([`select`]), an Arm PMU event also by the kernel's name or
/// number (`inst_retired`, `r8` find the counter `INST_RETIRED`); a name of a counter the local source knows
/// of but cannot count here is [`SelectError::NotCountable`] with the reason.
pub fn select_in<'a>(
    lizard: &'a crate::Lizard,
    names: &[String],
) -> Result<Vec<&'a Counter>, SelectError> {
    let events = crate::hwc::event_counter_names(names)?;
    let names: Vec<String> = names
        .iter()
        .map(|name| {
            events
                .iter()
                .find(|(asked, _)| asked == name.trim())
                .map_or_else(|| name.clone(), |(_, counter)| counter.clone())
        })
        .collect();
    select(lizard.counters(), &names).map_err(|unknown| {
        match lizard
            .unreadable()
            .iter()
            .find(|u| u.name.eq_ignore_ascii_case(&unknown.name))
        {
            Some(u) => SelectError::NotCountable {
                name: u.name.clone(),
                reason: u.reason.clone(),
            },
            None => SelectError::Unknown(unknown),
        }
    })
}

/// The counters named in `names`, each once, in the order named; every counter when `names` is empty.
/// A name is matched against the keys, then counter-set events, then names, then per-CPU series; the
/// first kind with a match gives all its matches. Blank names are skipped.
pub fn select<'a>(
    counters: &'a [Counter],
    names: &[String],
) -> Result<Vec<&'a Counter>, UnknownName> {
    if names.is_empty() {
        return Ok(counters.iter().collect());
    }
    let mut chosen: Vec<&Counter> = Vec::new();
    for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let found = matching(counters, name);
        if found.is_empty() {
            return Err(UnknownName {
                name: name.to_owned(),
                candidates: counters
                    .iter()
                    .flat_map(|c| [c.key.clone(), c.name.clone()])
                    .collect(),
            });
        }
        for counter in found {
            if !chosen.iter().any(|c| c.id == counter.id) {
                chosen.push(counter);
            }
        }
    }
    Ok(chosen)
}

/// The kinds of match, in the order they are tried.
#[derive(Clone, Copy)]
enum Kind {
    Key,
    /// A counter-set event also by its code: `ARMv8_Cortex_A72:0x08` (its key is `…:INST_RETIRED`).
    SetEvent,
    Name,
    /// A counter counted per CPU is one series per CPU (`TaskClock@cpu0`, …): its name picks them all.
    PerCpu,
}

impl Kind {
    fn matches(self, counter: &Counter, name: &str) -> bool {
        match self {
            Kind::Key => counter.key.eq_ignore_ascii_case(name),
            Kind::SetEvent => counter.set_event.as_ref().is_some_and(|e| e.is_named(name)),
            Kind::Name => counter.name.eq_ignore_ascii_case(name),
            Kind::PerCpu => counter
                .cpu_series
                .as_ref()
                .is_some_and(|series| series.counter.eq_ignore_ascii_case(name)),
        }
    }
}

/// The counters `name` names, by the first kind of match that has any.
fn matching<'a>(counters: &'a [Counter], name: &str) -> Vec<&'a Counter> {
    [Kind::Key, Kind::SetEvent, Kind::Name, Kind::PerCpu]
        .into_iter()
        .map(|kind| {
            counters
                .iter()
                .filter(|c| kind.matches(c, name))
                .collect::<Vec<_>>()
        })
        .find(|found| !found.is_empty())
        .unwrap_or_default()
}

/// The edit distance between `a` and `b`, ignoring ASCII case.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            current.push(
                (previous[j] + cost)
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1),
            );
        }
        previous = current;
    }
    previous[b.len()]
}

/// Up to three of `candidates` closest to `name` (containing it, or within a third of its length in
/// edits), closest first.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let d = if candidate.to_ascii_lowercase().contains(&lower) {
                0
            } else {
                distance(name, candidate)
            };
            (d <= limit).then_some((d, candidate))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

/// "did you mean 'A'?": the names of `candidates` closest to `name` ([`closest`]), each quoted and joined by
/// `between`; `None` when none is close. The one text of the hint after an unknown counter name: the
/// `lizard` command writes it after a comma with `" or "` between names, `lizard_rs` after a semicolon with
/// `", "`.
///
/// ```
/// use lizard_core::counter_names::did_you_mean;
/// let names = ["Cycles", "Instructions", "TaskClock", "CPUCycles"];
/// assert_eq!(did_you_mean("Cycle", names, " or ").as_deref(), Some("did you mean 'CPUCycles' or 'Cycles'?"));
/// assert_eq!(did_you_mean("Cycle", names, ", ").as_deref(), Some("did you mean 'CPUCycles', 'Cycles'?"));
/// assert_eq!(did_you_mean("qqqqqq", names, " or "), None);
/// ```
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    between: &str,
) -> Option<String> {
    let names = closest(name, candidates);
    if names.is_empty() {
        return None;
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    Some(format!("did you mean {}?", quoted.join(between)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_suggested() {
        let names = ["Cycles", "Instructions", "TaskClock", "PageFaults"];
        assert_eq!(closest("cycels", names), vec!["Cycles"]);
        assert_eq!(closest("clock", names), vec!["TaskClock"]);
        assert!(closest("zzzzzz", names).is_empty());
        assert_eq!(distance("abc", "ABD"), 1);
    }
    use crate::counter::{Counter, CounterId, CpuScope, CpuSeries, Scope, Source};

    fn counter(id: CounterId, key: &str, name: &str, cpu: Option<u32>) -> Counter {
        Counter {
            name: name.into(),
            source: Source::HwcPipeCpu,
            scope: Scope::Cpus(CpuScope::ThisProcess),
            cpu_series: cpu.map(|cpu| CpuSeries {
                counter: "TaskClock".into(),
                cpu,
            }),
            ..Counter::gatord_delta(id, key)
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn counters() -> Vec<Counter> {
        vec![
            counter(1, "ARM_ccnt", "Cycles", None),
            counter(2, "TaskClock@cpu0", "TaskClock@cpu0", Some(0)),
            counter(3, "TaskClock@cpu1", "TaskClock@cpu1", Some(1)),
        ]
    }

    fn ids(found: &[&Counter]) -> Vec<CounterId> {
        found.iter().map(|c| c.id).collect()
    }

    #[test]
    fn no_names_is_every_counter() {
        let all = counters();
        assert_eq!(ids(&select(&all, &[]).unwrap()), [1, 2, 3]);
    }

    #[test]
    fn a_key_or_name_picks_its_counter_once_ignoring_case() {
        let all = counters();
        let found = select(&all, &names(&["arm_CCNT", " cycles ", ""])).unwrap();
        assert_eq!(ids(&found), [1]);
    }

    #[test]
    fn a_per_cpu_counters_name_picks_every_cpus_series() {
        let all = counters();
        assert_eq!(ids(&select(&all, &names(&["taskclock"])).unwrap()), [2, 3]);
    }

    #[test]
    fn a_counter_set_event_is_named_by_its_code() {
        let mut event = counter(4, "ARMv8_Cortex_A72_cnt:INST_RETIRED", "", None);
        event.set_event = Some(crate::counter::SetEvent {
            set: "ARMv8_Cortex_A72_cnt".into(),
            code: 0x08,
        });
        let all = [event];
        let found = select(&all, &names(&["ARMv8_Cortex_A72:0x08"])).unwrap();
        assert_eq!(ids(&found), [4]);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_candidates() {
        let all = counters();
        let error = select(&all, &names(&["Cycles", "Cylces"])).unwrap_err();
        assert_eq!(error.name, "Cylces");
        assert!(error.candidates.iter().any(|c| c == "Cycles"));
        assert_eq!(error.to_string(), "unknown counter 'Cylces'");
    }
}
