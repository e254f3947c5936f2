//! [`Listing`]: the counters an engine offers, each with why it is unavailable here if it is, and the
//! counters the direct source knows of but cannot read here — the document `lizard list` writes.

use serde::Serialize;

use lizard_core::capture::{collect, CounterInfo};
use lizard_core::{Error, Lizard, Unavailable, UnreadableCounter};

/// One counter offered: what it is, and why it is unavailable here if it is.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ListedCounter {
    /// What the counter is ([`collect::info`]); its members are the entry's own in JSON.
    #[serde(flatten)]
    pub info: CounterInfo,
    /// Why it has no values here, if so (serialized as its text).
    #[serde(serialize_with = "optional_text")]
    pub unavailable: Option<Unavailable>,
}

fn optional_text<S: serde::Serializer>(
    value: &Option<Unavailable>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => s.collect_str(value),
        None => s.serialize_none(),
    }
}

/// The counters an engine offers, and those known but not readable here.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing<'l> {
    /// Every counter offered, in id order.
    pub counters: Vec<ListedCounter>,
    /// Counters the direct source knows of but cannot read here ([`Lizard::unreadable`]).
    pub unreadable: &'l [UnreadableCounter],
}

impl Listing<'_> {
    /// The listing of `lizard`'s counters.
    pub fn of(lizard: &Lizard) -> Result<Listing<'_>, Error> {
        let counters = lizard
            .counters()
            .iter()
            .map(|c| {
                Ok(ListedCounter {
                    info: collect::info(c),
                    unavailable: lizard.unavailable(c.id)?,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Listing {
            counters,
            unreadable: lizard.unreadable(),
        })
    }
}
