//! The XML documents the simulated gatord serves, built the way gatord builds them.

use gator_xml::{
    AvailableCounter, Captured, CapturedCounter, Configurations, CounterConfiguration, Counters,
    EventClass, Events, Target,
};

use super::config::SimConfig;
use super::workload::DEFAULT_EVENTS_XML;

/// The events document to serve: the configured text (a fragment wrapped in `<events>`) or the default.
pub(crate) fn events_document(config: &SimConfig) -> String {
    match &config.events_xml {
        None => DEFAULT_EVENTS_XML.to_owned(),
        Some(text) if text.trim_start().starts_with("<?xml") || text.contains("<events") => {
            text.clone()
        }
        Some(fragment) => {
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events>\n{fragment}\n</events>\n")
        }
    }
}

/// The counter names the daemon offers: configured, or every fixed counter of the events document followed
/// by the slots (`Sim_cnt0`, …) of every counter set a category uses, as gatord lists its PMU's slots.
pub(crate) fn available_counters(config: &SimConfig, events: &str) -> Vec<String> {
    if let Some(names) = &config.counters {
        return names.clone();
    }
    let Ok(events) = Events::parse(events) else {
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for (_, event) in events.events() {
        if let Some(name) = &event.counter {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    for set in &events.counter_sets {
        if events.categories_in_counter_set(&set.name).next().is_some() {
            let slots: Vec<String> = set
                .slot_names()
                .take(MAX_SLOTS)
                .filter(|slot| !names.contains(slot))
                .collect();
            names.extend(slots);
        }
    }
    names
}

/// The most slots of one counter set the simulator offers (an Armv8 PMU has at most 31 event counters), so
/// that an events file claiming billions does not exhaust memory.
const MAX_SLOTS: usize = 64;

/// Every slot name of every counter set of the events document `events`.
pub(crate) fn slots(events: &str) -> Vec<String> {
    Events::parse(events).map_or_else(
        |_| Vec::new(),
        |events| {
            events
                .counter_sets
                .iter()
                .flat_map(|s| s.slot_names().take(MAX_SLOTS))
                .collect()
        },
    )
}

/// `(counter, event code)` of every event of the events document `events` that names a counter and an event
/// code (a fixed PMU counter such as an Arm cycle counter, event 0x11).
pub(crate) fn fixed_events(events: &str) -> Vec<(String, u64)> {
    Events::parse(events).map_or_else(
        |_| Vec::new(),
        |events| {
            events
                .events()
                .filter_map(|(_, event)| Some((event.counter.clone()?, event.event?)))
                .collect()
        },
    )
}

/// The event code `events` (a slot's programmed events, from the saved configuration) give `counter`.
pub(crate) fn slot_event(events: &[(String, u64)], counter: &str) -> Option<u64> {
    events
        .iter()
        .find(|(slot, _)| slot == counter)
        .map(|&(_, code)| code)
}

/// The `<counters>` document listing `names`.
pub(crate) fn counters_document(names: &[String]) -> String {
    Counters {
        supports_multiple_ebs: Some(true),
        counters: names
            .iter()
            .map(|name| AvailableCounter {
                name: name.clone(),
                extra: Default::default(),
            })
            .collect(),
        ..Counters::default()
    }
    .to_xml()
}

/// The Mali constants gatord 9.7.2 lists in every `captured` document, with or without a Mali GPU:
/// `(key, counter, name)`. They take the first keys.
const CONSTANTS: [(i32, &str, &str); 3] = [
    (0x4, "ARM_Mali-CONST_BUS_WIDTH_BITS", "Bus Width Bits"),
    (0x6, "ARM_Mali-CONST_L2_SLICE_COUNT", "L2 Slice Count"),
    (0x8, "ARM_Mali-CONST_SHADER_CORE_COUNT", "Shader Core Count"),
];

/// The key gatord allocates to the counter at `index` of its counter list at start-up: even, from 0xa (after
/// the constants').
pub(crate) fn key_for(index: usize) -> i32 {
    0xa + 2 * i32::try_from(index).unwrap_or(i32::MAX / 2 - 5)
}

/// The `<configurations>` document of the saved configuration (`events`: the slots' programmed events).
pub(crate) fn configuration_document(names: &[String], events: &[(String, u64)]) -> String {
    Configurations {
        counters: names
            .iter()
            .map(|name| CounterConfiguration {
                counter: name.clone(),
                event: slot_event(events, name),
                count: None,
                cores: None,
                extra: Default::default(),
            })
            .collect(),
        ..Configurations::default()
    }
    .to_xml()
}

/// The `<captured>` document: `(key, name)` per configured counter (key 0 for counters configured on this very
/// connection, which gatord has not bound), with the event it counts (`events`: a slot's programmed event, a
/// fixed counter's own), then gatord's Mali constants.
pub(crate) fn captured_document(
    protocol: i64,
    entries: &[(i32, String)],
    events: &[(String, u64)],
) -> String {
    let counters = entries.iter().map(|(key, name)| CapturedCounter {
        key: u64::try_from(*key).unwrap_or(0),
        counter: name.clone(),
        event: slot_event(events, name),
        ..CapturedCounter::default()
    });
    let constants = CONSTANTS
        .iter()
        .map(|&(key, counter, name)| CapturedCounter {
            key: u64::try_from(key).unwrap_or(0),
            counter: counter.to_owned(),
            title: Some("Mali Constants".to_owned()),
            name: Some(name.to_owned()),
            class: Some(EventClass::Constant),
            mode: Some("per-core".to_owned()),
            ..CapturedCounter::default()
        });
    Captured {
        version: Some(1),
        backtrace_processing: Some("none".to_owned()),
        kind: Some("Perf".to_owned()),
        protocol: u32::try_from(protocol).ok(),
        // As gatord 9.7.2 describes itself (`gatord_build_id="oss"`, `os="linux"`), with a model of its own.
        target: Some(Target {
            sample_rate: Some(1009),
            name: Some("lizard-sim".to_owned()),
            cores: Some(1),
            gatord_build_id: Some("oss".to_owned()),
            supports_live: Some(true),
            os: Some("linux".to_owned()),
            ..Target::default()
        }),
        counters: counters.chain(constants).collect(),
        ..Captured::default()
    }
    .to_xml()
}

/// What a DELIVER_XML document is, as gatord tells them apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delivered {
    /// A `<configurations>` document with these counter names, and the event codes programmed into slots.
    Configurations {
        /// Every configured counter name, in document order.
        names: Vec<String>,
        /// `(counter, event code)` of every entry with an `event` attribute.
        events: Vec<(String, u64)>,
    },
    /// A valid `<session>` document, with the pace it asks for.
    Session(SessionPace),
}

/// What a `<session>` document asks of the capture's pace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SessionPace {
    /// Samples per second of gatord's sampling timer (`sample_rate`: high 10007, normal 1009, low 101; `none`
    /// or absent: `None`).
    pub(crate) sample_hz: Option<u32>,
    /// `live_rate` in milliseconds (absent or 0: `None`).
    pub(crate) live_rate_ms: Option<u32>,
}

/// Reads a delivered document with `gator-xml`; `None` for anything gatord would refuse.
pub(crate) fn delivered(document: &[u8]) -> Option<Delivered> {
    if let Ok(configurations) = gator_xml::Configurations::from_bytes(document) {
        let counters = &configurations.counters;
        return Some(Delivered::Configurations {
            names: counters.iter().map(|c| c.counter.clone()).collect(),
            events: counters
                .iter()
                .filter_map(|c| Some((c.counter.clone(), c.event?)))
                .collect(),
        });
    }
    gator_xml::Session::from_bytes(document)
        .ok()
        .map(|session| {
            use gator_xml::SampleRate;
            Delivered::Session(SessionPace {
                sample_hz: match session.sample_rate {
                    Some(SampleRate::High) => Some(10_007),
                    Some(SampleRate::Normal) => Some(1_009),
                    Some(SampleRate::Low) => Some(101),
                    Some(SampleRate::None) | None => None,
                },
                live_rate_ms: session.live_rate.filter(|&ms| ms > 0),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_documents_are_read_back_by_gator_xml() {
        // The engine reads these documents through gator-xml, as it reads the real daemon's.
        let names = vec!["a&b".to_owned(), "c".to_owned()];
        let counters = gator_xml::Counters::parse(&counters_document(&names)).unwrap();
        assert_eq!(counters.names().collect::<Vec<_>>(), names);
        let events = vec![("c".to_owned(), 0x1b)];
        let captured =
            captured_document(950, &[(key_for(0), "a&b".into()), (0, "c".into())], &events);
        let keys: Vec<_> = gator_xml::Captured::parse(&captured)
            .unwrap()
            .counters
            .into_iter()
            .map(|c| (c.key, c.counter, c.event))
            .collect();
        assert_eq!(
            keys[..2],
            [
                (0xa, "a&b".to_owned(), None),
                (0, "c".to_owned(), Some(0x1b))
            ]
        );
        let constants: Vec<_> = keys[2..].iter().map(|(key, _, _)| *key).collect();
        assert_eq!(constants, [0x4, 0x6, 0x8], "gatord's Mali constants follow");
        assert_eq!(
            delivered(configuration_document(&names, &events).as_bytes()),
            Some(Delivered::Configurations { names, events })
        );
        let session = gator_xml::Session::builder()
            .sample_rate(gator_xml::SampleRate::Low)
            .live_rate(10)
            .duration(0)
            .build()
            .to_xml();
        assert!(matches!(
            delivered(session.as_bytes()),
            Some(Delivered::Session(_))
        ));
        assert_eq!(delivered(b"<request type=\"events\"/>"), None);
    }

    #[test]
    fn default_counters_come_from_the_events() {
        let config = SimConfig::default();
        let names = available_counters(&config, &events_document(&config));
        assert_eq!(
            names,
            [
                "Sim_ccnt",
                "Sim_instructions",
                "Sim_memfree",
                "Sim_freq",
                "Sim_power",
                "Sim_cnt0",
                "Sim_cnt1"
            ]
        );
    }

    #[test]
    fn fragments_are_wrapped() {
        let config = SimConfig {
            events_xml: Some(
                "<category name=\"x\"><event counter=\"k\" name=\"n\"/></category>".into(),
            ),
            ..SimConfig::default()
        };
        let doc = events_document(&config);
        assert!(doc.contains("<events>"));
        assert_eq!(available_counters(&config, &doc), ["k"]);
    }
}
