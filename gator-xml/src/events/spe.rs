//! [`Spe`]: an `<spe>` element, the description of a Statistical Profiling Extension implementation.

use super::event::Event;
use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::Element;
use crate::Attributes;

/// `<data-source index name/>`: a value of the SPE data-source packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpeDataSource {
    /// `index`: the packet value.
    pub index: u64,
    /// `name`.
    pub name: String,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<address index name description type/>`: an SPE address packet kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpeAddress {
    /// `index`: the packet index.
    pub index: u64,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// `type` (`instruction`, `virtual`, `physical`).
    pub kind: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<counter index type unit name description/>`: an SPE counter packet kind (latencies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpeCounter {
    /// `index`: the packet index.
    pub index: u64,
    /// `type` (e.g. `latency`).
    pub kind: Option<String>,
    /// `unit` (e.g. `cycles`).
    pub unit: Option<String>,
    /// `name`.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<spe id name extends version>`: one SPE description, its packet values and events.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Spe {
    /// `id`.
    pub id: String,
    /// `name`.
    pub name: Option<String>,
    /// `extends`: the id of the description this one adds to.
    pub extends: Option<String>,
    /// `version` (e.g. `v1p1`).
    pub version: Option<String>,
    /// `<data-source>` children.
    pub data_sources: Vec<SpeDataSource>,
    /// `<event>` children (bits of the events packet).
    pub events: Vec<Event>,
    /// `<address>` children.
    pub addresses: Vec<SpeAddress>,
    /// `<counter>` children.
    pub counters: Vec<SpeCounter>,
    /// Other child elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

fn index(el: &Element<'_, '_>) -> Result<u64, XmlError> {
    match el.int::<u64>("index")? {
        Some(i) => Ok(i),
        None => Err(XmlError::MissingAttribute {
            element: el.name,
            attribute: "index",
            position: el.position(),
        }),
    }
}

impl Spe {
    pub(crate) fn read(el: Element<'_, '_>) -> Result<Self, XmlError> {
        let mut spe = Spe {
            id: el.required("id")?.to_owned(),
            name: el.string("name"),
            extends: el.string("extends"),
            version: el.string("version"),
            extra: el.extra(&["id", "name", "extends", "version"]),
            ..Spe::default()
        };
        for child in el.children() {
            match child.tag_name().name() {
                "data-source" => {
                    let c = el.child(child, "data-source");
                    spe.data_sources.push(SpeDataSource {
                        index: index(&c)?,
                        name: c.required("name")?.to_owned(),
                        extra: c.extra(&["index", "name"]),
                    });
                }
                "event" => spe.events.push(Event::read(el.child(child, "event"))?),
                "address" => {
                    let c = el.child(child, "address");
                    spe.addresses.push(SpeAddress {
                        index: index(&c)?,
                        name: c.required("name")?.to_owned(),
                        description: c.string("description"),
                        kind: c.string("type"),
                        extra: c.extra(&["index", "name", "description", "type"]),
                    });
                }
                "counter" => {
                    let c = el.child(child, "counter");
                    spe.counters.push(SpeCounter {
                        index: index(&c)?,
                        kind: c.string("type"),
                        unit: c.string("unit"),
                        name: c.required("name")?.to_owned(),
                        description: c.string("description"),
                        extra: c.extra(&["index", "type", "unit", "name", "description"]),
                    });
                }
                _ => spe.other.push(el.child(child, "element").raw()?),
            }
        }
        Ok(spe)
    }
}
