//! The gatord XML documents the engine reads and writes, in one place.
//!
//! Reading goes through `gator-xml` (its `roxmltree` parser, DTDs refused); malformed documents are typed
//! errors, never silently empty lists.

use gator_xml::roxmltree::{Document, ParsingOptions};
use gator_xml::XmlError;

use crate::config::SampleRate;
use crate::error::Error;

const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The `<configurations revision="3">` document enabling `counters` (names escaped).
pub(crate) fn configurations(counters: &[&str]) -> String {
    let mut out = format!("{DECLARATION}\n<configurations revision=\"3\">\n");
    for name in counters {
        out.push_str(&format!(
            "  <configuration counter=\"{}\"/>\n",
            escape(name)
        ));
    }
    out.push_str("</configurations>\n");
    out
}

/// The `<session>` document for a live, streaming, unlimited capture.
pub(crate) fn session(sample_rate: SampleRate, live_rate_ms: u32) -> String {
    format!(
        "{DECLARATION}\n<session version=\"1\" call_stack_unwinding=\"no\" parse_debug_info=\"no\" \
         high_resolution=\"no\" buffer_mode=\"streaming\" sample_rate=\"{}\" duration=\"0\" \
         live_rate=\"{live_rate_ms}\" stop_gator=\"no\"/>\n",
        sample_rate.as_str()
    )
}

fn parse<'a>(document: &'static str, text: &'a str) -> Result<Document<'a>, Error> {
    let options = ParsingOptions {
        allow_dtd: false,
        ..ParsingOptions::default()
    };
    Document::parse_with_options(text, options).map_err(|source| {
        let pos = source.pos();
        Error::Xml {
            document,
            source: XmlError::Syntax {
                position: gator_xml::Position::new(pos.row, pos.col),
                source,
            },
        }
    })
}

fn root_named<'a, 'b>(
    document: &'static str,
    doc: &'a Document<'b>,
    expected: &'static str,
) -> Result<gator_xml::roxmltree::Node<'a, 'b>, Error> {
    let root = doc.root_element();
    if root.tag_name().name() != expected {
        let pos = doc.text_pos_at(root.range().start);
        return Err(Error::Xml {
            document,
            source: XmlError::UnexpectedRoot {
                expected,
                found: root.tag_name().name().to_owned(),
                position: gator_xml::Position::new(pos.row, pos.col),
            },
        });
    }
    Ok(root)
}

/// The counter names of a `<counters>` document, in document order.
pub(crate) fn counter_names(text: &str) -> Result<Vec<String>, Error> {
    let doc = parse("counters", text)?;
    let root = root_named("counters", &doc, "counters")?;
    Ok(root
        .children()
        .filter(|n| n.has_tag_name("counter"))
        .filter_map(|n| n.attribute("name").map(str::to_owned))
        .collect())
}

/// `(key, counter name)` of every `<counter key type>` inside `<captured><counters>`; keys are hexadecimal
/// (`0x5e`) or decimal. Entries without a `type` (constants) are skipped; a key that is not a number is an error.
pub(crate) fn captured_keys(text: &str) -> Result<Vec<(i32, String)>, Error> {
    let doc = parse("captured", text)?;
    let root = root_named("captured", &doc, "captured")?;
    let mut out = Vec::new();
    for counters in root.children().filter(|n| n.has_tag_name("counters")) {
        for counter in counters.children().filter(|n| n.has_tag_name("counter")) {
            let (Some(key), Some(name)) = (counter.attribute("key"), counter.attribute("type"))
            else {
                continue;
            };
            let trimmed = key.trim();
            let parsed = match trimmed
                .strip_prefix("0x")
                .or_else(|| trimmed.strip_prefix("0X"))
            {
                Some(hex) => i64::from_str_radix(hex, 16),
                None => trimmed.parse::<i64>(),
            };
            let key = parsed
                .ok()
                .and_then(|k| i32::try_from(k).ok())
                .ok_or_else(|| Error::Protocol {
                    what: "reading the captured key map",
                    detail: format!("counter {name:?} has a key {key:?} that is not a number"),
                })?;
            out.push((key, name.to_owned()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/gatord-9.7.2/live-session/resp-captured.xml"
    ));
    const COUNTERS: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/gatord-9.7.2/live-session/resp-counters.xml"
    ));

    #[test]
    fn real_captured_key_map() {
        let keys = captured_keys(CAPTURED).unwrap();
        assert_eq!(
            &keys[..3],
            &[
                (0x5e, "Linux_meminfo_memfree".to_owned()),
                (0x5c, "Linux_meminfo_memused2".to_owned()),
                (0x66, "Linux_net_rx".to_owned()),
            ]
        );
    }

    #[test]
    fn real_counters_list() {
        let names = counter_names(COUNTERS).unwrap();
        assert_eq!(names[0], "PERF_COUNT_SW_EMULATION_FAULTS");
        assert!(names.iter().any(|n| n == "Linux_meminfo_memfree"));
    }

    #[test]
    fn malformed_documents_are_errors() {
        assert!(matches!(
            counter_names("<counters>"),
            Err(Error::Xml { .. })
        ));
        assert!(matches!(
            counter_names("<captured/>"),
            Err(Error::Xml { .. })
        ));
        assert!(matches!(
            captured_keys(
                "<captured><counters><counter key=\"zz\" type=\"a\"/></counters></captured>"
            ),
            Err(Error::Protocol { .. })
        ));
        assert!(matches!(
            captured_keys("<!DOCTYPE x [<!ENTITY a \"b\">]><captured/>"),
            Err(Error::Xml { .. })
        ));
    }

    #[test]
    fn written_documents_parse_and_escape() {
        let xml = configurations(&["a\"b", "c<d"]);
        let doc = Document::parse(&xml).unwrap();
        let names: Vec<_> = doc
            .root_element()
            .children()
            .filter_map(|n| n.attribute("counter"))
            .collect();
        assert_eq!(names, ["a\"b", "c<d"]);
        let s = session(SampleRate::Normal, 100);
        assert!(s.starts_with(DECLARATION));
        let doc = Document::parse(&s).unwrap();
        assert_eq!(doc.root_element().attribute("sample_rate"), Some("normal"));
        assert_eq!(
            doc.root_element().attribute("buffer_mode"),
            Some("streaming")
        );
    }
}
