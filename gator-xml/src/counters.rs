//! [`Counters`]: the reply to `<request type="counters"/>` (also `counters.xml` in a local capture).
//!
//! It lists the counter names available on the target, with no keys and no descriptions; descriptions come
//! from the events document.

use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::write::{
    push_attr, push_extra, push_int, push_raw, push_text_element, push_yes_no, DECLARATION,
};
use crate::Attributes;

/// `<counter name/>`: one available counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvailableCounter {
    /// The counter name (a fixed counter or a slot name such as `Perf_Hardware_cnt0`).
    pub name: String,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// `<cluster id name/>`: a CPU cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// `id`.
    pub id: u32,
    /// `name` (the counter-name prefix of the cluster, e.g. `Perf_Hardware`).
    pub name: String,
}

/// `<cpu id cluster/>`: a CPU and its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// `id`.
    pub id: u32,
    /// `cluster`: the id of its [`Cluster`].
    pub cluster: u32,
}

/// The `<counters>` document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Counters {
    /// `supports-multiple-ebs` on the root.
    pub supports_multiple_ebs: Option<bool>,
    /// The `<counter>` elements in document order.
    pub counters: Vec<AvailableCounter>,
    /// The `id` of each `<spe>` element.
    pub spes: Vec<String>,
    /// The text of `<setup_warnings>` (see [`Counters::setup_warning_items`]).
    pub setup_warnings: Option<String>,
    /// The text of `<other_warnings>`.
    pub other_warnings: Option<String>,
    /// The `<cluster>` elements.
    pub clusters: Vec<Cluster>,
    /// The `<cpu>` elements.
    pub cpus: Vec<Cpu>,
    /// Other elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes of the root not modelled above.
    pub extra: Attributes,
}

impl Counters {
    /// Reads a counters document.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "counters", 0)?;
        let mut out = Counters {
            supports_multiple_ebs: root.boolean("supports-multiple-ebs")?,
            extra: root.extra(&["supports-multiple-ebs"]),
            ..Counters::default()
        };
        for child in root.children() {
            let text = || child.text().unwrap_or_default().to_owned();
            match child.tag_name().name() {
                "counter" => {
                    let c = root.child(child, "counter");
                    out.counters.push(AvailableCounter {
                        name: c.required("name")?.to_owned(),
                        extra: c.extra(&["name"]),
                    });
                }
                "spe" => out
                    .spes
                    .push(root.child(child, "spe").required("id")?.to_owned()),
                "setup_warnings" => out.setup_warnings = Some(text()),
                "other_warnings" => out.other_warnings = Some(text()),
                "cluster" => {
                    let c = root.child(child, "cluster");
                    out.clusters.push(Cluster {
                        id: required_int(&c, "id")?,
                        name: c.required("name")?.to_owned(),
                    });
                }
                "cpu" => {
                    let c = root.child(child, "cpu");
                    out.cpus.push(Cpu {
                        id: required_int(&c, "id")?,
                        cluster: required_int(&c, "cluster")?,
                    });
                }
                _ => out.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(out)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }

    /// The document text, as gatord writes it: the root, then one element per line (counters, SPEs, clusters,
    /// CPUs, the warnings, the kept elements). Every value is escaped; [`Counters::parse`] reads it back equal.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(96 + 40 * self.counters.len());
        out.push_str(DECLARATION);
        out.push_str("\n<counters");
        push_yes_no(
            &mut out,
            "supports-multiple-ebs",
            self.supports_multiple_ebs,
        );
        push_extra(&mut out, &self.extra);
        out.push_str(">\n");
        for c in &self.counters {
            out.push_str("<counter");
            push_attr(&mut out, "name", &c.name);
            push_extra(&mut out, &c.extra);
            out.push_str(" />\n");
        }
        for id in &self.spes {
            out.push_str("<spe");
            push_attr(&mut out, "id", id);
            out.push_str(" />\n");
        }
        for c in &self.clusters {
            out.push_str("<cluster");
            push_int(&mut out, "id", Some(c.id));
            push_attr(&mut out, "name", &c.name);
            out.push_str(" />\n");
        }
        for c in &self.cpus {
            out.push_str("<cpu");
            push_int(&mut out, "id", Some(c.id));
            push_int(&mut out, "cluster", Some(c.cluster));
            out.push_str(" />\n");
        }
        if let Some(text) = &self.setup_warnings {
            push_text_element(&mut out, "setup_warnings", text);
        }
        if let Some(text) = &self.other_warnings {
            push_text_element(&mut out, "other_warnings", text);
        }
        for element in &self.other {
            push_raw(&mut out, element);
            out.push('\n');
        }
        out.push_str("</counters>\n");
        out
    }

    /// The counter names, in document order.
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.counters.iter().map(|c| c.name.as_str())
    }

    /// True when `name` is listed.
    pub fn contains(&self, name: &str) -> bool {
        self.names().any(|n| n == name)
    }

    /// The setup warnings split at `|` and line breaks, trimmed, empty pieces dropped.
    pub fn setup_warning_items(&self) -> Vec<&str> {
        self.setup_warnings
            .as_deref()
            .unwrap_or_default()
            .split(['|', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect()
    }
}

pub(crate) fn required_int<T: reader::Integer>(
    el: &Element<'_, '_>,
    attribute: &'static str,
) -> Result<T, XmlError> {
    let value = el.required(attribute)?;
    el.int_value(attribute, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_part() {
        let doc = Counters::parse(
            "<?xml version=\"1.0\"?>\n  <counters supports-multiple-ebs=\"yes\">\n<counter name=\"A\"/><counter name=\"B\"/>\
             <spe id=\"s\"/><setup_warnings>one|two\nthree|</setup_warnings><other_warnings></other_warnings>\
             <cluster id=\"0\" name=\"P\"/><cpu id=\"1\" cluster=\"0\"/><future x=\"1\"/></counters>",
        )
        .unwrap();
        assert_eq!(doc.supports_multiple_ebs, Some(true));
        assert_eq!(doc.names().collect::<Vec<_>>(), ["A", "B"]);
        assert!(doc.contains("B") && !doc.contains("C"));
        assert_eq!(doc.spes, ["s"]);
        assert_eq!(doc.setup_warning_items(), ["one", "two", "three"]);
        assert_eq!(doc.other_warnings.as_deref(), Some(""));
        assert_eq!(
            doc.clusters,
            [Cluster {
                id: 0,
                name: "P".into()
            }]
        );
        assert_eq!(doc.cpus, [Cpu { id: 1, cluster: 0 }]);
        assert_eq!(doc.other[0].name, "future");
    }

    #[test]
    fn bad_elements_are_refused() {
        assert!(matches!(
            Counters::parse("<counters><counter/></counters>"),
            Err(XmlError::MissingAttribute {
                attribute: "name",
                ..
            })
        ));
        assert!(matches!(
            Counters::parse("<counters><cpu id=\"x\" cluster=\"0\"/></counters>"),
            Err(XmlError::InvalidNumber { .. })
        ));
        assert!(matches!(
            Counters::parse("<counters><cpu id=\"1\"/></counters>"),
            Err(XmlError::MissingAttribute {
                attribute: "cluster",
                ..
            })
        ));
        assert!(matches!(
            Counters::parse("<counters supports-multiple-ebs=\"often\"/>"),
            Err(XmlError::InvalidValue { .. })
        ));
        assert!(matches!(
            Counters::parse("<captured/>"),
            Err(XmlError::UnexpectedRoot { .. })
        ));
    }
}
