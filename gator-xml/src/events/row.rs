//! [`EventRow`]: one event of an events document as a flat row, with its category and the class and
//! multiplier gatord applies ([`Events::rows`]); with the `serde` feature, a row serializes (units and class
//! as their text).

use crate::events::Events;
use crate::{EventClass, Units};

/// One event of an events document, flattened with its category.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EventRow<'e> {
    /// The category's name.
    pub category: &'e str,
    /// The category's counter set, for programmable events.
    pub counter_set: Option<&'e str>,
    /// The fixed counter name.
    pub counter: Option<&'e str>,
    /// The event code.
    pub event: Option<u64>,
    /// The event's title.
    pub title: Option<&'e str>,
    /// The event's name.
    pub name: &'e str,
    /// The event's description.
    pub description: Option<&'e str>,
    /// The event's units.
    #[cfg_attr(feature = "serde", serde(serialize_with = "optional_text"))]
    pub units: Option<&'e Units>,
    /// The class gatord applies ([`Event::effective_class`](crate::events::Event::effective_class)).
    #[cfg_attr(feature = "serde", serde(serialize_with = "text"))]
    pub class: EventClass,
    /// The multiplier gatord applies
    /// ([`Event::effective_multiplier`](crate::events::Event::effective_multiplier)).
    pub multiplier: f64,
}

#[cfg(feature = "serde")]
fn text<T: std::fmt::Display, S: serde::Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

#[cfg(feature = "serde")]
fn optional_text<T: std::fmt::Display, S: serde::Serializer>(
    value: &Option<&T>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => s.collect_str(value),
        None => s.serialize_none(),
    }
}

impl Events {
    /// Every event as an [`EventRow`], category by category in document order.
    pub fn rows(&self) -> impl Iterator<Item = EventRow<'_>> + '_ {
        self.events().map(|(category, event)| EventRow {
            category: &category.name,
            counter_set: category.counter_set.as_deref(),
            counter: event.counter.as_deref(),
            event: event.event,
            title: event.title.as_deref(),
            name: event.name.as_str(),
            description: event.description.as_deref(),
            units: event.units.as_ref(),
            class: event.effective_class(),
            multiplier: event.effective_multiplier(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_apply_gatords_defaults() {
        let xml = br#"<events><counter_set name="X_cnt" count="2"/>
            <category name="Cpu" counter_set="X_cnt">
              <event event="0x8" title="Instructions" name="All" units="instructions"/>
              <event counter="X_ccnt" name="Cycles" class="absolute" multiplier="2"/>
            </category></events>"#;
        let events = Events::from_bytes(xml).unwrap();
        let rows: Vec<EventRow<'_>> = events.rows().collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].category, rows[0].counter_set, rows[0].event),
            ("Cpu", Some("X_cnt"), Some(8))
        );
        assert_eq!(
            (rows[0].class.clone(), rows[0].multiplier),
            (EventClass::Delta, 1.0)
        );
        assert_eq!(
            rows[0].units.map(ToString::to_string).as_deref(),
            Some("instructions")
        );
        assert_eq!((rows[1].counter, rows[1].title), (Some("X_ccnt"), None));
        assert_eq!(
            (rows[1].class.clone(), rows[1].multiplier),
            (EventClass::Absolute, 2.0)
        );
    }
}
