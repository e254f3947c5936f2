//! [`Spe`]: an `<spe>` element, the description of a Statistical Profiling Extension implementation.

use super::event::Event;
use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::Element;
use crate::shared_str::DocumentText;
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

/// The required `index` attribute of a packet value.
fn index(el: &Element<'_, '_>, index: Option<&str>) -> Result<u64, XmlError> {
    el.int_value("index", index.ok_or_else(|| el.missing("index"))?)
}

impl Spe {
    pub(crate) fn read(el: Element<'_, '_>, texts: &DocumentText) -> Result<Self, XmlError> {
        let ([id, name, extends, version], extra) = el.known(["id", "name", "extends", "version"]);
        let mut spe = Spe {
            id: id.ok_or_else(|| el.missing("id"))?.to_owned(),
            name: name.map(str::to_owned),
            extends: extends.map(str::to_owned),
            version: version.map(str::to_owned),
            extra,
            ..Spe::default()
        };
        for child in el.children() {
            match child.tag_name().name() {
                "data-source" => {
                    let c = el.child(child, "data-source");
                    let ([i, name], extra) = c.known(["index", "name"]);
                    spe.data_sources.push(SpeDataSource {
                        index: index(&c, i)?,
                        name: name.ok_or_else(|| c.missing("name"))?.to_owned(),
                        extra,
                    });
                }
                "event" => Event::read_into(el.child(child, "event"), texts, &mut spe.events)?,
                "address" => {
                    let c = el.child(child, "address");
                    let ([i, name, description, kind], extra) =
                        c.known(["index", "name", "description", "type"]);
                    spe.addresses.push(SpeAddress {
                        index: index(&c, i)?,
                        name: name.ok_or_else(|| c.missing("name"))?.to_owned(),
                        description: description.map(str::to_owned),
                        kind: kind.map(str::to_owned),
                        extra,
                    });
                }
                "counter" => {
                    let c = el.child(child, "counter");
                    let ([i, kind, unit, name, description], extra) =
                        c.known(["index", "type", "unit", "name", "description"]);
                    spe.counters.push(SpeCounter {
                        index: index(&c, i)?,
                        kind: kind.map(str::to_owned),
                        unit: unit.map(str::to_owned),
                        name: name.ok_or_else(|| c.missing("name"))?.to_owned(),
                        description: description.map(str::to_owned),
                        extra,
                    });
                }
                _ => spe.other.push(el.child(child, "element").raw()?),
            }
        }
        Ok(spe)
    }
}
