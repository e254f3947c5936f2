//! [`Configurations`]: the `<configurations revision="3">` document (read and write).
//!
//! Clients deliver it with COMMAND_DELIVER_XML to choose counters; gatord also serves it for
//! `<request type="configuration"/>` and `<request type="defaults"/>`, and ships it as `defaults.xml`.

use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::write::{push_attr, DECLARATION};
use crate::Attributes;
use std::collections::HashSet;

/// The revision this crate writes; gatord discards configurations with a lower or missing revision.
pub const CONFIGURATION_REVISION: u32 = 3;

/// `<configuration counter event count cores/>`: one enabled counter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterConfiguration {
    /// `counter`: a fixed counter name or a slot name `<set>N`. Unique within a document.
    pub counter: String,
    /// `event`: the event code for a slot. gatord reads it as hexadecimal even without `0x`, and so does this
    /// reader; the writer always writes `0x`.
    pub event: Option<u64>,
    /// `count`: the event-based-sampling period (decimal).
    pub count: Option<u64>,
    /// `cores`: the number of cores, for uncore counters (decimal).
    pub cores: Option<u32>,
    /// Attributes not modelled above (written back after the modelled ones).
    pub extra: Attributes,
}

impl CounterConfiguration {
    /// A configuration of the fixed counter (or slot) `counter`, with no event code.
    pub fn new(counter: impl Into<String>) -> Self {
        Self {
            counter: counter.into(),
            ..Self::default()
        }
    }

    /// A configuration of slot `counter` programmed with event code `event`.
    pub fn with_event(counter: impl Into<String>, event: u64) -> Self {
        Self {
            event: Some(event),
            ..Self::new(counter)
        }
    }
}

/// `<spe id event-filter load-filter store-filter branch-filter min-latency inverse-event-filter/>`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpeConfiguration {
    /// `id`.
    pub id: String,
    /// `event-filter`: a mask (decimal, or hexadecimal with `0x`).
    pub event_filter: Option<u64>,
    /// `load-filter`.
    pub load_filter: Option<bool>,
    /// `store-filter`.
    pub store_filter: Option<bool>,
    /// `branch-filter`.
    pub branch_filter: Option<bool>,
    /// `min-latency` (decimal).
    pub min_latency: Option<u32>,
    /// `inverse-event-filter`.
    pub inverse_event_filter: Option<bool>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// The `<configurations>` document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Configurations {
    /// `revision` (gatord requires at least 3).
    pub revision: Option<u32>,
    /// `gpu_public_name`, added by the daemon when it recognises a Mali GPU.
    pub gpu_public_name: Option<String>,
    /// The `<configuration>` elements in document order.
    pub counters: Vec<CounterConfiguration>,
    /// The `<spe>` elements in document order.
    pub spes: Vec<SpeConfiguration>,
    /// Other elements (`<template>` and anything newer), kept verbatim; not written back.
    pub other: Vec<RawElement>,
    /// Attributes of the root not modelled above.
    pub extra: Attributes,
}

impl Default for Configurations {
    fn default() -> Self {
        Self {
            revision: Some(CONFIGURATION_REVISION),
            gpu_public_name: None,
            counters: Vec::new(),
            spes: Vec::new(),
            other: Vec::new(),
            extra: Attributes::new(),
        }
    }
}

impl Configurations {
    /// An empty revision-3 document.
    pub fn new() -> Self {
        Self::default()
    }

    /// A revision-3 document enabling `counters`, in order.
    pub fn from_counters(counters: impl IntoIterator<Item = CounterConfiguration>) -> Self {
        Self {
            counters: counters.into_iter().collect(),
            ..Self::default()
        }
    }

    /// The configuration of `counter`.
    pub fn counter(&self, counter: &str) -> Option<&CounterConfiguration> {
        self.counters.iter().find(|c| c.counter == counter)
    }

    /// Reads a configurations document; a counter configured twice is [`XmlError::Duplicate`], as in gatord.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "configurations", 0)?;
        let mut out = Configurations {
            revision: root.int("revision")?,
            gpu_public_name: root.string("gpu_public_name"),
            counters: Vec::new(),
            spes: Vec::new(),
            other: Vec::new(),
            extra: root.extra(&["revision", "gpu_public_name"]),
        };
        let mut seen = HashSet::new();
        for child in root.children() {
            match child.tag_name().name() {
                "configuration" => {
                    let c = root.child(child, "configuration");
                    let counter = read_counter(c)?;
                    if !seen.insert(counter.counter.clone()) {
                        return Err(XmlError::Duplicate {
                            element: "configuration",
                            attribute: "counter",
                            value: counter.counter,
                            position: c.position(),
                        });
                    }
                    out.counters.push(counter);
                }
                "spe" => out.spes.push(read_spe(root.child(child, "spe"))?),
                _ => out.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(out)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }

    /// The document text.
    ///
    /// With counters that carry only a name, the bytes are those Lizard delivers:
    /// declaration, `\n<configurations revision="3">\n`, one `<configuration counter="…" />\n` per counter,
    /// then `</configurations>` with no trailing newline. Every value is escaped.
    pub fn to_xml(&self) -> String {
        let mut out = String::with_capacity(64 + 48 * self.counters.len());
        out.push_str(DECLARATION);
        out.push_str("\n<configurations");
        if let Some(r) = self.revision {
            push_attr(&mut out, "revision", &r.to_string());
        }
        if let Some(name) = &self.gpu_public_name {
            push_attr(&mut out, "gpu_public_name", name);
        }
        for (k, v) in &self.extra {
            push_attr(&mut out, k, v);
        }
        out.push_str(">\n");
        for c in &self.counters {
            out.push_str("<configuration");
            push_attr(&mut out, "counter", &c.counter);
            if let Some(e) = c.event {
                push_attr(&mut out, "event", &format!("0x{e:x}"));
            }
            if let Some(n) = c.count {
                push_attr(&mut out, "count", &n.to_string());
            }
            if let Some(n) = c.cores {
                push_attr(&mut out, "cores", &n.to_string());
            }
            for (k, v) in &c.extra {
                push_attr(&mut out, k, v);
            }
            out.push_str(" />\n");
        }
        for s in &self.spes {
            out.push_str("<spe");
            push_attr(&mut out, "id", &s.id);
            if let Some(f) = s.event_filter {
                push_attr(&mut out, "event-filter", &format!("0x{f:x}"));
            }
            let flag = |b: bool| if b { "true" } else { "false" };
            for (name, value) in [
                ("load-filter", s.load_filter),
                ("store-filter", s.store_filter),
                ("branch-filter", s.branch_filter),
            ] {
                if let Some(b) = value {
                    push_attr(&mut out, name, flag(b));
                }
            }
            if let Some(l) = s.min_latency {
                push_attr(&mut out, "min-latency", &l.to_string());
            }
            if let Some(b) = s.inverse_event_filter {
                push_attr(&mut out, "inverse-event-filter", flag(b));
            }
            for (k, v) in &s.extra {
                push_attr(&mut out, k, v);
            }
            out.push_str(" />\n");
        }
        out.push_str("</configurations>");
        out
    }

    /// The document bytes, ready to be framed as a COMMAND_DELIVER_XML payload.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.to_xml().into_bytes()
    }
}

fn read_counter(c: Element<'_, '_>) -> Result<CounterConfiguration, XmlError> {
    Ok(CounterConfiguration {
        counter: c.required("counter")?.to_owned(),
        event: c.hex("event")?,
        count: c.int("count")?,
        cores: c.int("cores")?,
        extra: c.extra(&["counter", "event", "count", "cores"]),
    })
}

fn read_spe(c: Element<'_, '_>) -> Result<SpeConfiguration, XmlError> {
    Ok(SpeConfiguration {
        id: c.required("id")?.to_owned(),
        event_filter: c.int("event-filter")?,
        load_filter: c.boolean("load-filter")?,
        store_filter: c.boolean("store-filter")?,
        branch_filter: c.boolean("branch-filter")?,
        min_latency: c.int("min-latency")?,
        inverse_event_filter: c.boolean("inverse-event-filter")?,
        extra: c.extra(&[
            "id",
            "event-filter",
            "load-filter",
            "store-filter",
            "branch-filter",
            "min-latency",
            "inverse-event-filter",
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_only_gives_lizards_bytes() {
        let doc = Configurations::from_counters([
            CounterConfiguration::new("Linux_meminfo_memfree"),
            CounterConfiguration::new("Linux_net_rx"),
        ]);
        assert_eq!(
            doc.to_xml(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configurations revision=\"3\">\n\
             <configuration counter=\"Linux_meminfo_memfree\" />\n\
             <configuration counter=\"Linux_net_rx\" />\n</configurations>"
        );
    }

    #[test]
    fn event_is_read_as_hexadecimal_even_without_prefix() {
        let doc = Configurations::parse(
            "<configurations revision=\"3\"><configuration counter=\"A_cnt0\" event=\"10\" count=\"10\" cores=\"4\"/></configurations>",
        )
        .unwrap();
        let c = &doc.counters[0];
        assert_eq!((c.event, c.count, c.cores), (Some(0x10), Some(10), Some(4)));
    }

    #[test]
    fn escaped_names_and_spe_round_trip() {
        let mut doc = Configurations::from_counters([
            CounterConfiguration::with_event("we&ird \"name\" <x>", 0x1b),
            CounterConfiguration {
                count: Some(1_000_000),
                cores: Some(2),
                ..CounterConfiguration::new("uncore")
            },
        ]);
        doc.gpu_public_name = Some("Mali-G78".into());
        doc.spes.push(SpeConfiguration {
            id: "armv8.2_spe".into(),
            event_filter: Some(0x22),
            load_filter: Some(true),
            store_filter: Some(false),
            branch_filter: Some(true),
            min_latency: Some(7),
            inverse_event_filter: Some(false),
            extra: Attributes::new(),
        });
        assert_eq!(Configurations::parse(&doc.to_xml()).unwrap(), doc);
    }

    #[test]
    fn duplicate_counters_are_refused() {
        let err = Configurations::parse(
            "<configurations revision=\"3\">\n<configuration counter=\"a\"/>\n<configuration counter=\"a\"/></configurations>",
        )
        .unwrap_err();
        assert!(
            matches!(err, XmlError::Duplicate { ref value, position, .. } if value == "a" && position.line == 3),
            "{err:?}"
        );
    }

    #[test]
    fn bad_attributes_are_refused() {
        for (text, attribute) in [
            (
                "<configurations><configuration/></configurations>",
                "counter",
            ),
            (
                "<configurations><configuration counter=\"a\" event=\"0xzz\"/></configurations>",
                "event",
            ),
            (
                "<configurations><configuration counter=\"a\" count=\"ten\"/></configurations>",
                "count",
            ),
            ("<configurations revision=\"three\"/>", "revision"),
            (
                "<configurations><spe id=\"s\" load-filter=\"perhaps\"/></configurations>",
                "load-filter",
            ),
            ("<configurations><spe/></configurations>", "id"),
        ] {
            let err = Configurations::parse(text).unwrap_err();
            let named = match &err {
                XmlError::MissingAttribute { attribute, .. } => attribute.to_string(),
                XmlError::InvalidNumber { attribute, .. }
                | XmlError::InvalidValue { attribute, .. } => attribute.clone(),
                other => panic!("{text}: {other:?}"),
            };
            assert_eq!(named, attribute, "{text}");
        }
    }

    #[test]
    fn templates_are_kept() {
        let doc = Configurations::parse(
            "<configurations revision=\"3\"><template name=\"t\">body</template></configurations>",
        )
        .unwrap();
        assert_eq!(doc.other[0].name, "template");
        assert_eq!(doc.other[0].text, "body");
    }
}
