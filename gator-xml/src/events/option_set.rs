//! [`OptionSet`]: an `<option_set>` of a category, the variants an event can be qualified with.

use crate::error::XmlError;
use crate::reader::Element;
use crate::Attributes;

/// `<option event_delta name description/>`: one choice of an option set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventOption {
    /// `event_delta`: added to the event code when this option is chosen.
    pub event_delta: u64,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<option_set name>`: named choices that events refer to through their `option_set` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSet {
    /// The set name.
    pub name: String,
    /// The `<option>` children in document order.
    pub options: Vec<EventOption>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

impl OptionSet {
    pub(crate) fn read(el: Element<'_, '_>) -> Result<Self, XmlError> {
        let ([name], extra) = el.known(["name"]);
        let mut set = Self {
            name: name.ok_or_else(|| el.missing("name"))?.to_owned(),
            options: Vec::new(),
            extra,
        };
        for child in el.children() {
            if child.tag_name().name() != "option" {
                continue;
            }
            let o = el.child(child, "option");
            let ([event_delta, name, description], extra) =
                o.known(["event_delta", "name", "description"]);
            let event_delta = o.int_value(
                "event_delta",
                event_delta.ok_or_else(|| o.missing("event_delta"))?,
            )?;
            set.options.push(EventOption {
                event_delta,
                name: name.ok_or_else(|| o.missing("name"))?.to_owned(),
                description: description.map(str::to_owned),
                extra,
            });
        }
        Ok(set)
    }
}
