//! The events document (`<request type="events"/>`, `events.xml`, the shipped `events-*.xml` fragments).
//!
//! [`Events::parse`] accepts both forms: a whole `<events>` document as the daemon serves it, and a fragment
//! file (sibling `<counter_set>`, `<category>` and `<spe>` elements with no declaration and no root), which is
//! read as if wrapped in `<events>…</events>`. Lookups (by counter, category, counter set and slot) are methods of [`Events`] and [`EventIndex`].

mod category;
mod counter_set;
mod event;
mod lookup;
mod option_set;
mod row;
mod spe;

pub use category::Category;
pub use counter_set::CounterSet;
pub use event::{Activity, Event, FtraceAttributes, SpeEventAttributes, ValidOpType};
pub use lookup::{EventIndex, Resolved};
pub use option_set::{EventOption, OptionSet};
pub use row::EventRow;
pub use spe::{Spe, SpeAddress, SpeCounter, SpeDataSource};

use crate::error::{Position, XmlError};
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::shared_str::DocumentText;
use crate::Attributes;
use std::sync::Arc;

/// A whole events document: counter sets, categories with their events, and SPE descriptions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Events {
    /// `<counter_set>` elements in document order.
    pub counter_sets: Vec<CounterSet>,
    /// `<category>` elements in document order.
    pub categories: Vec<Category>,
    /// `<spe>` elements in document order.
    pub spes: Vec<Spe>,
    /// Other top-level elements, kept verbatim.
    pub other: Vec<RawElement>,
    /// Attributes of the `<events>` root (gatord writes none).
    pub extra: Attributes,
}

/// Which form an events text has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsForm {
    /// A document whose root element is `<events>`.
    Document,
    /// A fragment: top-level `<counter_set>`/`<category>`/`<spe>` elements with no root.
    Fragment,
}

impl EventsForm {
    /// Tells the two forms apart by the first element name (after declaration, comments and whitespace).
    pub fn detect(text: &str) -> Self {
        match first_element_name(text) {
            Some("events") => Self::Document,
            _ => Self::Fragment,
        }
    }
}

/// The name of the first element in `text`, skipping the declaration, processing instructions and comments.
fn first_element_name(text: &str) -> Option<&str> {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("<?") {
            rest = &r[r.find("?>")? + 2..];
        } else if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->")? + 3..];
        } else if let Some(r) = rest.strip_prefix("<!") {
            rest = &r[r.find('>')? + 1..];
        } else if let Some(r) = rest.strip_prefix('<') {
            let end = r
                .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
                .unwrap_or(r.len());
            return Some(&r[..end]);
        } else {
            return None;
        }
    }
}

impl Events {
    /// Reads an events text in either form (see [`EventsForm::detect`]).
    ///
    /// A text whose first element is neither `<events>` nor one a fragment holds (`<counter_set>`,
    /// `<category>`, `<spe>`) is another document: [`XmlError::UnexpectedRoot`]. A text with no element at
    /// all (empty, or not XML) is [`XmlError::NoElement`].
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        match first_element_name(text) {
            Some("events") => Self::parse_document(text),
            Some("counter_set" | "category" | "spe") => Self::parse_fragment(text),
            Some(found) => {
                // The element's `<` is the byte before its name.
                let offset = (found.as_ptr() as usize - text.as_ptr() as usize).saturating_sub(1);
                let before = &text[..offset];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                Err(XmlError::UnexpectedRoot {
                    expected: "events",
                    found: found.to_owned(),
                    position: Position::new(
                        u32::try_from(line).unwrap_or(u32::MAX),
                        u32::try_from(column).unwrap_or(u32::MAX),
                    ),
                })
            }
            // Markup the scan above does not follow (a DTD): the XML parser says what is wrong.
            None if text.contains('<') => Self::parse_document(text),
            None => Err(XmlError::NoElement),
        }
    }

    /// Reads UTF-8 bytes in either form; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }

    /// Reads a whole document whose root must be `<events>`.
    pub fn parse_document(text: &str) -> Result<Self, XmlError> {
        let texts = DocumentText::new(Arc::from(text));
        let doc = reader::parse_document(texts.text(), 0)?;
        Self::read(reader::root(&doc, "events", 0)?, &texts)
    }

    /// Reads a fragment file (no declaration, no root), as gatord does when it concatenates them.
    ///
    /// Error positions refer to the fragment text.
    pub fn parse_fragment(text: &str) -> Result<Self, XmlError> {
        let mut wrapped = String::with_capacity(text.len() + 20);
        wrapped.push_str("<events>\n");
        wrapped.push_str(text);
        wrapped.push_str("\n</events>");
        let texts = DocumentText::new(Arc::from(wrapped));
        let doc = reader::parse_document(texts.text(), 1)?;
        Self::read(reader::root(&doc, "events", 1)?, &texts)
    }

    fn read(root: Element<'_, '_>, texts: &DocumentText) -> Result<Self, XmlError> {
        let mut events = Events {
            extra: root.extra(&[]),
            ..Events::default()
        };
        for child in root.children() {
            match child.tag_name().name() {
                "counter_set" => events
                    .counter_sets
                    .push(CounterSet::read(root.child(child, "counter_set"))?),
                "category" => events
                    .categories
                    .push(Category::read(root.child(child, "category"), texts)?),
                "spe" => events
                    .spes
                    .push(Spe::read(root.child(child, "spe"), texts)?),
                _ => events.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(events)
    }

    /// Every category event with its category, in document order (SPE events are in [`Events::spes`]).
    pub fn events(&self) -> impl Iterator<Item = (&Category, &Event)> + '_ {
        self.categories
            .iter()
            .flat_map(|c| c.events.iter().map(move |e| (c, e)))
    }

    /// The number of `<event>` elements, counting those inside categories and inside `<spe>`.
    pub fn event_count(&self) -> usize {
        self.categories
            .iter()
            .map(|c| c.events.len())
            .sum::<usize>()
            + self.spes.iter().map(|s| s.events.len()).sum::<usize>()
    }

    /// Appends the contents of `other` (for building a merged document out of fragment files).
    pub fn merge(&mut self, other: Events) {
        self.counter_sets.extend(other.counter_sets);
        self.categories.extend(other.categories);
        self.spes.extend(other.spes);
        self.other.extend(other.other);
        self.extra.extend(other.extra);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_detection_skips_declaration_and_comments() {
        let doc = "\u{feff}<?xml version=\"1.0\"?> \n<!-- c --><!DOCTYPE x>\n<events>\n</events>";
        assert_eq!(EventsForm::detect(doc), EventsForm::Document);
        assert_eq!(EventsForm::detect("<events/>"), EventsForm::Document);
        assert_eq!(
            EventsForm::detect("<!-- c -->\n<counter_set name=\"a\" count=\"1\"/>"),
            EventsForm::Fragment
        );
        assert_eq!(EventsForm::detect("<eventsx/>"), EventsForm::Fragment);
        assert_eq!(EventsForm::detect(""), EventsForm::Fragment);
        assert_eq!(
            EventsForm::detect("<!-- unterminated"),
            EventsForm::Fragment
        );
    }

    #[test]
    fn fragment_and_document_read_the_same() {
        let body = r#"<counter_set name="S_cnt" count="2"/>
<category name="C" counter_set="S_cnt" per_cpu="yes">
  <event counter="S_ccnt" event="0x11" title="Cycles" name="CPU Cycles" units="cycles"/>
  <event event="0x08" title="Instructions" name="Executed" description="a &amp; b"/>
</category>"#;
        let frag = Events::parse(body).unwrap();
        let doc =
            Events::parse(&format!("<?xml version=\"1.0\"?>\n<events>{body}</events>")).unwrap();
        assert_eq!(frag, doc);
        assert_eq!(frag.event_count(), 2);
        assert_eq!(
            frag.categories[0].events[1].description.as_deref(),
            Some("a & b")
        );
    }

    #[test]
    fn fragment_error_positions_refer_to_the_fragment_text() {
        let err = Events::parse_fragment(
            "<category name=\"C\">\n  <event name=\"x\" event=\"zz\"/>\n</category>",
        )
        .unwrap_err();
        match err {
            XmlError::InvalidNumber {
                position,
                attribute,
                ..
            } => {
                assert_eq!(attribute, "event");
                assert_eq!(position.line, 2);
                assert_eq!(position.column, 19);
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = Events::parse_fragment("<category name=\"C\">\n<event name=\"x\"></category>")
            .unwrap_err();
        assert!(
            matches!(err, XmlError::Syntax { position, .. } if position.line == 2),
            "{err:?}"
        );
    }

    #[test]
    fn a_document_with_another_root_is_refused() {
        let err = Events::parse_document("<counters/>").unwrap_err();
        assert!(
            matches!(err, XmlError::UnexpectedRoot { expected: "events", ref found, .. } if found == "counters")
        );
    }

    #[test]
    fn text_that_is_not_events_is_refused_with_what_it_is() {
        // Another document, with or without a declaration: its root is named, where it starts.
        let err = Events::parse("<?xml version=\"1.0\"?>\n<pmus>\n<pmu/></pmus>").unwrap_err();
        assert!(
            matches!(&err, XmlError::UnexpectedRoot { expected: "events", found, position }
                if found == "pmus" && *position == Position::new(2, 1)),
            "{err:?}"
        );
        let err = Events::parse("<foo/>").unwrap_err();
        assert!(matches!(&err, XmlError::UnexpectedRoot { found, .. } if found == "foo"));
        // Nothing XML at all: empty, blank, plain text, JSON.
        for text in ["", "  \n", "hello world\n", "{\"counters\": []}"] {
            assert_eq!(Events::parse(text), Err(XmlError::NoElement), "{text:?}");
        }
        // Fragments of each kind are still read.
        for text in [
            "<counter_set name=\"S\" count=\"1\"/>",
            "<!-- c -->\n<category name=\"C\"/>",
            "<spe name=\"SPE\" id=\"armv8.2_spe\"/>",
        ] {
            assert!(Events::parse(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn invalid_utf8_is_a_typed_error() {
        let err = Events::from_bytes(b"<events>\xff</events>").unwrap_err();
        assert!(
            matches!(err, XmlError::Utf8 { valid_up_to: 8, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn an_event_without_a_name_is_refused() {
        let err =
            Events::parse("<category name=\"C\"><event title=\"t\"/></category>").unwrap_err();
        assert!(matches!(
            err,
            XmlError::MissingAttribute {
                element: "event",
                attribute: "name",
                ..
            }
        ));
    }

    #[test]
    fn bad_booleans_and_numbers_are_refused() {
        let err = Events::parse("<category name=\"C\" per_cpu=\"maybe\"/>").unwrap_err();
        assert!(
            matches!(err, XmlError::InvalidValue { ref attribute, .. } if attribute == "per_cpu")
        );
        let err = Events::parse("<counter_set name=\"S\" count=\"-1\"/>").unwrap_err();
        assert!(
            matches!(err, XmlError::InvalidNumber { ref attribute, .. } if attribute == "count")
        );
        let err = Events::parse("<counter_set name=\"S\"/>").unwrap_err();
        assert!(matches!(
            err,
            XmlError::MissingAttribute {
                attribute: "count",
                ..
            }
        ));
        let err =
            Events::parse("<category name=\"C\"><event name=\"n\" multiplier=\"x\"/></category>")
                .unwrap_err();
        assert!(
            matches!(err, XmlError::InvalidNumber { ref attribute, .. } if attribute == "multiplier")
        );
    }

    #[test]
    fn a_dtd_is_refused() {
        let text =
            "<?xml version=\"1.0\"?><!DOCTYPE events [<!ENTITY a \"aaaa\">]><events>&a;</events>";
        assert!(matches!(Events::parse(text), Err(XmlError::Syntax { .. })));
    }

    #[test]
    fn unknown_elements_and_attributes_are_kept() {
        let text = r#"<events><widget a="1"><part/></widget><category name="C" new="x"><event name="n" ddk_version="r1" activity2="B" activity_color2="0x00ff0000"/><note>hi</note></category></events>"#;
        let ev = Events::parse(text).unwrap();
        assert_eq!(ev.other[0].name, "widget");
        assert_eq!(ev.other[0].children[0].name, "part");
        let cat = &ev.categories[0];
        assert_eq!(cat.extra.get("new").map(String::as_str), Some("x"));
        assert_eq!(cat.other[0].text, "hi");
        let e = &cat.events[0];
        assert_eq!(e.extra.get("ddk_version").map(String::as_str), Some("r1"));
        assert_eq!(
            e.activities,
            vec![Activity {
                index: 2,
                name: Some("B".into()),
                color: Some(0xff0000)
            }]
        );
    }

    #[test]
    fn raw_elements_nested_too_deep_are_refused() {
        let depth = crate::MAX_DEPTH + 5;
        let text = format!(
            "<events>{}{}</events>",
            "<a>".repeat(depth),
            "</a>".repeat(depth)
        );
        assert!(matches!(
            Events::parse(&text),
            Err(XmlError::TooDeep { .. })
        ));
    }
}
