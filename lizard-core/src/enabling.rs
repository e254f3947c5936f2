//! Enabling a list of counters at once, where a programmable counter set may have fewer slots than the
//! list has events of it: [`Lizard::enable_fitting`] either fails on the first event that does not fit (the
//! events were named by the user) or leaves out the events past the set's slots and says which
//! ([`LeftOut`]).

use std::fmt;

use crate::counter::CounterId;
use crate::error::{Error, GatordError};
use crate::lizard::Lizard;

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
