//! Enabling a list of counters at once, where a programmable counter set may have fewer slots than the
//! list has events of it: [`Lizard::enable_fitting`] either fails on the first event that does not fit (the
//! events were named by the user) or leaves out the events past the set's slots and says which
//! ([`LeftOut`]). [`Lizard::enable_counters`] chooses the counters first, by [`Counters`]: the default
//! choice, all, or by name.

use std::fmt;

use crate::counter::CounterId;
use crate::counter_names::SelectError;
use crate::error::{Error, GatordError};
use crate::lizard::Lizard;
use crate::selection::SetChoice;

/// What to do with an event of a counter set whose slots are all taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Overflow {
    /// Fail with [`GatordError::TooManyEvents`]: the events were chosen one by one.
    Fail,
    /// Leave it out and go on: the events were chosen wholesale (every counter, a default choice).
    LeaveOut,
}

/// The events of one counter set left out because its slots were full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The counter set (`ARMv8_Cortex_A72_cnt`).
    pub set: String,
    /// How many slots it has: its first this many events are captured.
    pub slots: usize,
    /// The events left out, by counter name, in the order given.
    pub events: Vec<String>,
}

impl fmt::Display for LeftOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "counter set {} has {} slots: its first {} events are captured, {} left out ({})",
            self.set,
            self.slots,
            self.slots,
            self.events.len(),
            self.events.join(", ")
        )
    }
}

/// The counters [`Lizard::enable_fitting`] enabled, and the events it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enabled {
    /// The counters enabled, in the order given.
    pub ids: Vec<CounterId>,
    /// Per counter set, the events left out (only with [`Overflow::LeaveOut`]).
    pub left_out: Vec<LeftOut>,
}

impl Lizard {
    /// Enables each of `chosen` in turn ([`Lizard::enable`]). An event of a counter set whose slots are all
    /// taken fails the call with `overflow` [`Overflow::Fail`], and is left out with
    /// [`Overflow::LeaveOut`]; any other error fails the call (the counters enabled before it stay enabled).
    pub fn enable_fitting(
        &mut self,
        chosen: &[CounterId],
        overflow: Overflow,
    ) -> Result<Enabled, Error> {
        let mut enabled = Enabled {
            ids: Vec::with_capacity(chosen.len()),
            left_out: Vec::new(),
        };
        for &id in chosen {
            match self.enable(id) {
                Ok(()) => enabled.ids.push(id),
                Err(Error::Gatord(GatordError::TooManyEvents { set, slots, events }))
                    if overflow == Overflow::LeaveOut =>
                {
                    let name = events.last().cloned().unwrap_or_default();
                    match enabled.left_out.iter_mut().find(|l| l.set == set) {
                        Some(left_out) => left_out.events.push(name),
                        None => enabled.left_out.push(LeftOut {
                            set,
                            slots,
                            events: vec![name],
                        }),
                    }
                }
                Err(other) => return Err(other),
            }
        }
        Ok(enabled)
    }
}

/// Which counters a capture takes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Counters {
    /// What a capture takes when the user names none ([`Lizard::default_counters`]): every counter, and in
    /// each counter set's slots what the useful metrics need; events past a set's slots are left out.
    #[default]
    Default,
    /// Every counter; events past a set's slots are left out.
    All,
    /// The counters these names name ([`crate::counter_names::select_in`]: an Arm PMU event also by the
    /// kernel's name or number), in the order named; an event that does not fit its set's slots is an error.
    Named(Vec<String>),
    /// These counters, by id, in order; an event that does not fit its set's slots is an error.
    Ids(Vec<CounterId>),
}

/// The counters [`Lizard::enable_counters`] chose and enabled, and the notes for the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    /// The counters enabled, in order.
    pub ids: Vec<CounterId>,
    /// For a [`Counters::Default`] choice, what each counter set with more events than slots got.
    pub sets: Vec<SetChoice>,
    /// Per counter set, the events left out because its slots were full.
    pub left_out: Vec<LeftOut>,
}

/// Why counters could not be chosen and enabled.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChoiceError {
    /// A name matches no counter, names one the local source cannot count here, or is an Arm PMU event
    /// that could not be resolved ([`crate::counter_names::select_in`]).
    #[error(transparent)]
    Select(#[from] SelectError),
    /// The engine refused to enable one (a named event past its set's slots, an unknown id).
    #[error(transparent)]
    Engine(#[from] Error),
}

impl Lizard {
    /// Chooses `counters` and enables them ([`Lizard::enable_fitting`]).
    pub fn enable_counters(&mut self, counters: &Counters) -> Result<Chosen, ChoiceError> {
        let (ids, sets, overflow) = match counters {
            Counters::Default => {
                let choice = self.default_counters();
                (choice.ids, choice.sets, Overflow::LeaveOut)
            }
            Counters::All => {
                let ids = self.counters().iter().map(|c| c.id).collect();
                (ids, Vec::new(), Overflow::LeaveOut)
            }
            Counters::Named(names) => {
                let named = crate::counter_names::select_in(self, names)?;
                let ids = named.iter().map(|c| c.id).collect();
                (ids, Vec::new(), Overflow::Fail)
            }
            Counters::Ids(ids) => (ids.clone(), Vec::new(), Overflow::Fail),
        };
        let enabled = self.enable_fitting(&ids, overflow)?;
        Ok(Chosen {
            ids: enabled.ids,
            sets,
            left_out: enabled.left_out,
        })
    }
}
