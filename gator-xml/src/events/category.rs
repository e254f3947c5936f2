//! [`Category`]: a `<category>` of an events document and the events it groups.

use super::event::Event;
use super::option_set::OptionSet;
use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::Element;
use crate::shared_str::DocumentText;
use crate::Attributes;

/// `<category name counter_set per_cpu supports_event_based_sampling>`: a group of events shown together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Category {
    /// `name`. Not unique: the merged document repeats names such as "Mali Shader Core" once per GPU.
    pub name: String,
    /// `counter_set`: the counter set whose slots the programmable events of this category use.
    pub counter_set: Option<String>,
    /// `per_cpu` (yes|no).
    pub per_cpu: Option<bool>,
    /// `supports_event_based_sampling` (yes|true).
    pub supports_event_based_sampling: Option<bool>,
    /// The `<event>` children in document order.
    pub events: Vec<Event>,
    /// The `<option_set>` children in document order.
    pub option_sets: Vec<OptionSet>,
    /// Other child elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

impl Category {
    /// The option set named `name`.
    pub fn option_set(&self, name: &str) -> Option<&OptionSet> {
        self.option_sets.iter().find(|s| s.name == name)
    }

    /// The programmable event (no `counter` attribute) with event code `code`.
    pub fn programmable_event(&self, code: u64) -> Option<&Event> {
        self.events
            .iter()
            .find(|e| e.counter.is_none() && e.event == Some(code))
    }

    pub(crate) fn read(el: Element<'_, '_>, texts: &DocumentText) -> Result<Self, XmlError> {
        let ([name, counter_set, per_cpu, sampling], extra) = el.known([
            "name",
            "counter_set",
            "per_cpu",
            "supports_event_based_sampling",
        ]);
        let mut cat = Category {
            name: name.ok_or_else(|| el.missing("name"))?.to_owned(),
            counter_set: counter_set.map(str::to_owned),
            per_cpu: per_cpu.map(|v| el.bool_value("per_cpu", v)).transpose()?,
            supports_event_based_sampling: sampling
                .map(|v| el.bool_value("supports_event_based_sampling", v))
                .transpose()?,
            extra,
            ..Category::default()
        };
        cat.events.reserve_exact(el.children().count());
        for child in el.children() {
            match child.tag_name().name() {
                "event" => Event::read_into(el.child(child, "event"), texts, &mut cat.events)?,
                "option_set" => cat
                    .option_sets
                    .push(OptionSet::read(el.child(child, "option_set"))?),
                _ => cat.other.push(el.child(child, "element").raw()?),
            }
        }
        Ok(cat)
    }
}
