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
        let mut set = Self {
            name: el.required("name")?.to_owned(),
            options: Vec::new(),
            extra: el.extra(&["name"]),
        };
        for child in el.children() {
            if child.tag_name().name() != "option" {
                continue;
            }
            let o = el.child(child, "option");
            let event_delta = match o.int::<u64>("event_delta")? {
                Some(d) => d,
                None => {
                    return Err(XmlError::MissingAttribute {
                        element: "option",
                        attribute: "event_delta",
                        position: o.position(),
                    })
                }
            };
            set.options.push(EventOption {
                event_delta,
                name: o.required("name")?.to_owned(),
                description: o.string("description"),
                extra: o.extra(&["event_delta", "name", "description"]),
            });
        }
        Ok(set)
    }
}
