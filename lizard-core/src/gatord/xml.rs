//! The gatord XML documents the engine reads and writes, in one place, all through `gator-xml`.
//!
//! Malformed documents are typed errors, never silently empty lists.

use gator_xml::{
    Captured, Configurations, CounterConfiguration, Counters, EventClass, SampleRate, Session,
};

use crate::error::Error;

/// The `<configurations revision="3">` document enabling `counters` (names escaped by the writer).
pub(crate) fn configurations(counters: &[&str]) -> String {
    Configurations::from_counters(counters.iter().map(|&name| CounterConfiguration::new(name)))
        .to_xml()
}

/// The `<session>` document for a live, streaming, unlimited capture.
pub(crate) fn session(sample_rate: SampleRate, live_rate_ms: u32) -> String {
    Session::builder()
        .sample_rate(sample_rate)
        .live_rate(live_rate_ms)
        .duration(0)
        .build()
        .to_xml()
}

/// The counter names of a `<counters>` document, in document order.
pub(crate) fn counter_names(text: &str) -> Result<Vec<String>, Error> {
    let counters = Counters::parse(text).map_err(|source| Error::Xml {
        document: "counters",
        source,
    })?;
    Ok(counters.names().map(str::to_owned).collect())
}

/// `(key, counter name)` of every enabled counter of a `<captured>` document (constants are skipped). A key
/// that does not fit gatord's 32-bit keys is an error.
pub(crate) fn captured_keys(text: &str) -> Result<Vec<(i32, String)>, Error> {
    let captured = Captured::parse(text).map_err(|source| Error::Xml {
        document: "captured",
        source,
    })?;
    captured
        .counters
        .iter()
        .filter(|c| c.class != Some(EventClass::Constant))
        .map(|c| {
            let key = i32::try_from(c.key).map_err(|_| Error::Protocol {
                what: "reading the captured key map",
                detail: format!(
                    "counter {:?} has the out-of-range key {:#x}",
                    c.counter, c.key
                ),
            })?;
            Ok((key, c.counter.clone()))
        })
        .collect()
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
            Err(Error::Xml { .. })
        ));
        assert!(matches!(
            captured_keys(
                "<captured><counters><counter key=\"0x1ffffffff\" type=\"a\"/></counters></captured>"
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
        let doc = gator_xml::roxmltree::Document::parse(&xml).unwrap();
        let names: Vec<_> = doc
            .root_element()
            .children()
            .filter_map(|n| n.attribute("counter"))
            .collect();
        assert_eq!(names, ["a\"b", "c<d"]);
        let s = session(SampleRate::Normal, 100);
        assert!(s.starts_with("<?xml"));
        let doc = gator_xml::roxmltree::Document::parse(&s).unwrap();
        assert_eq!(doc.root_element().attribute("sample_rate"), Some("normal"));
        assert_eq!(
            doc.root_element().attribute("buffer_mode"),
            Some("streaming")
        );
    }
}
