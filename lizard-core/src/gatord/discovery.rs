//! gatord counter discovery: the events and counters documents on one short connection, then DISCONNECT.
//!
//! The counter list is, first, the events document's events, in document order, that have a fixed `counter`
//! name which the daemon's counters document lists; then the programmable events (no `counter` attribute) of
//! every category whose counter set has a slot in the counters document, in document order (see
//! [`counter_sets`](super::counter_sets)). A fixed name, or a (set, event code) pair, listed twice is taken
//! once (the first occurrence), so every gatord counter has exactly one capture key later. Set events come
//! after the fixed counters so that the ids of the fixed counters do not depend on them.

use std::collections::HashSet;
use std::time::Duration;

use gator_proto::ProtocolVersion;
use gator_xml::{Category, Event, EventClass, Events};

use super::connection::Connection;
use super::counter_sets::{self, SetSlots};
use super::xml;
use crate::counter::{Counter, CounterClass, ResultType, Scope, SetEvent, Source, Units};
use crate::error::Error;
use crate::transport::{GatordAddress, Timeouts};
use crate::GatordError;

/// What discovery found.
#[derive(Debug, Clone)]
pub(crate) struct Discovered {
    /// The counters, ids still 0 (the engine numbers all sources together).
    pub(crate) counters: Vec<Counter>,
    /// The daemon's protocol version.
    pub(crate) version: ProtocolVersion,
    /// The keys of the counters the daemon lists but never sends: `derived="yes"` events, which Streamline
    /// computes from other data.
    pub(crate) derived: Vec<String>,
    /// The counter sets whose events are offered, with the slots the daemon lists.
    pub(crate) sets: Vec<SetSlots>,
}

/// Connects, reads the two documents, disconnects and builds the counter list.
pub(crate) fn discover(
    address: &GatordAddress,
    timeouts: Timeouts,
    max_len: u32,
    busy_retry: Duration,
) -> Result<Discovered, Error> {
    let mut conn = Connection::open_retrying(address, timeouts, max_len, busy_retry)?;
    let version = conn.version();
    let events = conn.request_xml("events")?;
    let counters = conn.request_xml("counters")?;
    conn.disconnect();
    counters_and_derived(&events, &counters, version)
}

/// What a gatord offers, read on one short connection: [`gatord_offer`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GatordOffer {
    /// The protocol version the daemon speaks.
    pub version: ProtocolVersion,
    /// The counters it offers, as the engine would list them (ids still 0).
    pub counters: Vec<Counter>,
    /// The keys of the offered counters it never sends: `derived="yes"` events, which Streamline computes.
    pub derived: Vec<String>,
}

/// What the gatord at `address` offers: the engine's discovery alone, without a capture session, and no
/// retry while the daemon is busy with another session (that is an answer: [`GatordError::SessionInProgress`]).
/// A message longer than `max_len` bytes is refused.
pub fn gatord_offer(
    address: &GatordAddress,
    timeouts: Timeouts,
    max_len: u32,
) -> Result<GatordOffer, Error> {
    let found = discover(address, timeouts, max_len, Duration::ZERO)?;
    Ok(GatordOffer {
        version: found.version,
        counters: found.counters,
        derived: found.derived,
    })
}

/// The gatord counters described by `events_xml` and available according to `counters_xml`.
#[cfg(test)]
pub(crate) fn counters_from(events_xml: &str, counters_xml: &str) -> Result<Vec<Counter>, Error> {
    Ok(counters_and_derived(events_xml, counters_xml, ProtocolVersion::V950)?.counters)
}

/// [`counters_from`], plus the keys of the derived counters, which gatord never sends, and the counter sets'
/// slots, from a daemon speaking `version`.
fn counters_and_derived(
    events_xml: &str,
    counters_xml: &str,
    version: ProtocolVersion,
) -> Result<Discovered, Error> {
    let mut derived = Vec::new();
    let events = Events::parse(events_xml).map_err(|source| {
        Error::Gatord(GatordError::Xml {
            document: "events",
            source,
        })
    })?;
    let available: HashSet<String> = xml::counter_names(counters_xml)?.into_iter().collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (category, event) in events.events() {
        let Some(key) = event.counter.as_deref() else {
            continue;
        };
        if !available.contains(key) || !seen.insert(key.to_owned()) {
            continue;
        }
        if event.derived == Some(true) {
            derived.push(key.to_owned());
        }
        out.push(counter_of(category, event, key.to_owned(), None));
    }
    let sets = counter_sets::listed_slots(&events, &available);
    let mut seen_events = HashSet::new();
    for (category, event) in events.events() {
        let (None, Some(code), Some(set)) = (&event.counter, event.event, &category.counter_set)
        else {
            continue;
        };
        if !sets.iter().any(|s| &s.set == set) || !seen_events.insert((set.clone(), code)) {
            continue;
        }
        let set_event = SetEvent {
            set: set.clone(),
            code,
        };
        out.push(counter_of(
            category,
            event,
            set_event.key(),
            Some(set_event),
        ));
    }
    Ok(Discovered {
        counters: out,
        version,
        derived,
        sets,
    })
}

/// The engine's description of `event` of `category`, named `key`.
fn counter_of(
    category: &Category,
    event: &Event,
    key: String,
    set_event: Option<SetEvent>,
) -> Counter {
    let multiplier = match event.effective_multiplier() {
        m if m.is_finite() && m != 0.0 => m,
        _ => 1.0,
    };
    // A metric (`metric="yes"`) is a ratio computed per interval: its readings are means, fractional.
    let metric = event.extra.get("metric").is_some_and(|v| v == "yes");
    Counter {
        id: 0,
        key,
        name: event.name.to_string(),
        title: event.title.as_deref().unwrap_or_default().to_owned(),
        description: event.description.as_deref().unwrap_or_default().to_owned(),
        category: category.name.clone(),
        multiplier,
        units: match (&event.units, event.percentage) {
            (None, Some(true)) => Units::Other("%".to_owned()),
            (units, _) => units.as_ref().map_or(Units::Unknown, Units::from),
        },
        // A percentage is a level over the sample's interval (gatord's `activity` percentages too): its
        // readings are means.
        class: match (event.effective_class(), event.percentage) {
            _ if metric => CounterClass::Absolute,
            (EventClass::Absolute, _) | (_, Some(true)) => CounterClass::Absolute,
            _ => CounterClass::Delta,
        },
        source: Source::Gatord,
        scope: Scope::System,
        result_type: if multiplier == 1.0 && !metric {
            ResultType::Integer
        } else {
            ResultType::Floating
        },
        set_event,
        derivation: None,
        cpu_series: None,
        pmu_part: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_by_the_counters_list_in_events_order() {
        let Some(g71) = test_data::gatord_text("events/events-Mali-G71_hw.xml") else {
            return;
        };
        let events = format!("<?xml version=\"1.0\"?>\n<events>\n{g71}\n</events>");
        let counters = "<counters><counter name=\"ARM_Mali-G71_GPU_ACTIVE\"/>\
                        <counter name=\"ARM_Mali-G71_JS0_ACTIVE\"/><counter name=\"NOT_IN_EVENTS\"/></counters>";
        let list = counters_from(&events, counters).unwrap();
        let keys: Vec<_> = list.iter().map(|c| c.key.as_str()).collect();
        let first = g71.find("ARM_Mali-G71_GPU_ACTIVE").unwrap();
        let second = g71.find("ARM_Mali-G71_JS0_ACTIVE").unwrap();
        if first < second {
            assert_eq!(keys, ["ARM_Mali-G71_GPU_ACTIVE", "ARM_Mali-G71_JS0_ACTIVE"]);
        } else {
            assert_eq!(keys, ["ARM_Mali-G71_JS0_ACTIVE", "ARM_Mali-G71_GPU_ACTIVE"]);
        }
        assert!(list
            .iter()
            .all(|c| c.source == Source::Gatord && !c.category.is_empty()));
    }

    #[test]
    fn attributes_map_to_the_counter_model() {
        let events = r#"<events><category name="Memory">
            <event counter="mem" title="Memory" name="Free" class="absolute" units="B" multiplier="0.5" description="d"/>
            <event counter="clk" title="Clock" name="Freq" units="MHz"/>
            <event counter="mem" title="Again" name="Duplicate"/>
            <event event="0x11" title="Prog" name="Programmable"/>
            <event counter="zero" title="Z" name="Z" multiplier="0"/>
        </category></events>"#;
        let counters = r#"<counters><counter name="mem"/><counter name="clk"/><counter name="zero"/></counters>"#;
        let list = counters_from(events, counters).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].class, CounterClass::Absolute);
        assert_eq!(list[0].units, Units::Bytes);
        assert_eq!(list[0].multiplier, 0.5);
        assert_eq!(list[0].result_type, ResultType::Floating);
        assert_eq!(list[0].description, "d");
        assert_eq!(list[1].class, CounterClass::Delta);
        assert_eq!(list[1].units, Units::Megahertz);
        assert_eq!(list[1].result_type, ResultType::Integer);
        assert_eq!(list[2].multiplier, 1.0);
    }

    #[test]
    fn percentages_keep_their_unit_and_average_and_derived_counters_are_unavailable() {
        // As gatord 9.7.2's events-Linux.xml and Mali events describe them.
        let events = r#"<events><category name="CPU">
            <event counter="Linux_cpu_wait_contention" title="CPU Contention" name="Wait" class="activity" derived="yes" percentage="yes" multiplier="0.0001"/>
            <event counter="ARM_Mali-Bifrost_MMU_AS_0" class="absolute" display="average" multiplier="0.01" percentage="yes" title="Mali MMU Address Space" name="MMU Address Space 0"/>
            <event counter="mem" title="Memory" name="Free" class="absolute" units="B"/>
        </category></events>"#;
        let counters = r#"<counters><counter name="Linux_cpu_wait_contention"/><counter name="ARM_Mali-Bifrost_MMU_AS_0"/><counter name="mem"/></counters>"#;
        let found = counters_and_derived(events, counters, ProtocolVersion::V950).unwrap();
        let (list, derived) = (found.counters, found.derived);
        assert_eq!(list[0].units, Units::Other("%".into()));
        assert_eq!(list[0].class, CounterClass::Absolute);
        assert_eq!(list[1].units, Units::Other("%".into()));
        assert_eq!(list[1].class, CounterClass::Absolute);
        assert_eq!(list[2].units, Units::Bytes);
        assert_eq!(derived, vec!["Linux_cpu_wait_contention".to_owned()]);
    }

    #[test]
    fn metrics_read_as_fractional_means() {
        // As gatord 9.7.2 describes a Cortex-A72 metric (`PerfDriver::writeEventsFor`).
        let events = r#"<events><category name="Cortex-A72: Top Down Metrics">
            <event counter="ARMv8_Cortex_A72_metric_ipc" title="General" name="Instructions Per Cycle" display="average" class="delta" units="instructions" average_selection="yes" per_cpu="yes" metric="yes" metric_uses_cycles="yes" metric_num_events="1" metric_cpu_counter_set="ARMv8_Cortex_A72"/>
        </category></events>"#;
        let counters = r#"<counters><counter name="ARMv8_Cortex_A72_metric_ipc"/></counters>"#;
        let list = counters_from(events, counters).unwrap();
        assert_eq!(list[0].class, CounterClass::Absolute);
        assert_eq!(list[0].result_type, ResultType::Floating);
        assert_eq!(list[0].units, Units::Other("instructions".into()));
    }

    #[test]
    fn malformed_events_are_an_error() {
        let err = counters_from("<events><category", "<counters/>").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Gatord(GatordError::Xml {
                    document: "events",
                    ..
                })
            ),
            "{err:?}"
        );
    }
}
