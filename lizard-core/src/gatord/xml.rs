//! The gatord XML documents the engine reads and writes, in one place, all through `gator-xml`.
//!
//! Malformed documents are typed errors, never silently empty lists.

use gator_xml::{
    Captured, Configurations, CounterConfiguration, Counters, EventClass, SampleRate, Session,
};

use super::counter_sets::Configured;
use crate::error::{Error, ProtocolFault};
use crate::GatordError;

/// The `<configurations revision="3">` document enabling `counters` (names escaped by the writer): a fixed
/// counter by name, a counter-set slot with the event programmed into it (`event="0x8"`).
pub(crate) fn configurations(counters: &[Configured]) -> String {
    Configurations::from_counters(counters.iter().map(|c| match c.event {
        Some(code) => CounterConfiguration::with_event(c.counter.as_str(), code),
        None => CounterConfiguration::new(c.counter.as_str()),
    }))
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
    let counters = Counters::parse(text).map_err(|source| {
        Error::Gatord(GatordError::Xml {
            document: "counters",
            source,
        })
    })?;
    Ok(counters.names().map(str::to_owned).collect())
}

/// The daemon and the machine it runs on, as gatord describes them in the `<target>` of its `<captured>`
/// document at every capture's start. gatord sends no product version over the protocol: its build id and
/// the checksum of its sources are what identify the daemon (with the protocol version of the handshake).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GatordDevice {
    /// `gatord_build_id` (`oss` for a build from Arm's open sources).
    pub build_id: Option<String>,
    /// `gatord_src_md5sum`: the checksum of the daemon's sources.
    pub src_md5sum: Option<String>,
    /// `name`: the machine's model (`unknown` on x86).
    pub model: Option<String>,
    /// `os` (`linux`, `android`).
    pub os: Option<String>,
    /// `os_version`.
    pub os_version: Option<String>,
    /// `cpuid`: `(implementer << 12) | part number` of the highest core; `0xfffff` for "other".
    pub cpuid: Option<u32>,
    /// `cores`: the CPU count.
    pub cores: Option<u32>,
    /// `gpu_public_name`, when gatord sees a Mali GPU.
    pub gpu: Option<String>,
}

/// The `<target>` of a `<captured>` document; `None` when the document has none or does not parse (the keys
/// are read by [`captured_keys`], which reports a malformed document).
pub(crate) fn captured_target(text: &str) -> Option<GatordDevice> {
    let target = Captured::parse(text).ok()?.target?;
    Some(GatordDevice {
        build_id: target.gatord_build_id,
        src_md5sum: target.gatord_src_md5sum,
        model: target.name,
        os: target.os,
        os_version: target.os_version,
        cpuid: target.cpuid,
        cores: target.cores,
        gpu: target.gpu_public_name,
    })
}

/// One enabled counter of a `<captured>` document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CapturedKey {
    /// The capture key its values carry.
    pub(crate) key: i32,
    /// The gatord counter name (a slot name for a programmable event).
    pub(crate) counter: String,
    /// The event code programmed into a slot.
    pub(crate) event: Option<u64>,
}

/// Every enabled counter of a `<captured>` document (constants are skipped). A key that does not fit
/// gatord's 32-bit keys is an error.
pub(crate) fn captured_keys(text: &str) -> Result<Vec<CapturedKey>, Error> {
    let captured = Captured::parse(text).map_err(|source| {
        Error::Gatord(GatordError::Xml {
            document: "captured",
            source,
        })
    })?;
    captured
        .counters
        .iter()
        .filter(|c| c.class != Some(EventClass::Constant))
        .map(|c| {
            let key = i32::try_from(c.key).map_err(|_| {
                Error::Gatord(GatordError::Protocol {
                    what: "reading the captured key map",
                    source: ProtocolFault::KeyOutOfRange {
                        counter: c.counter.clone(),
                        key: c.key,
                    },
                })
            })?;
            Ok(CapturedKey {
                key,
                counter: c.counter.clone(),
                event: c.event,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_captured_target_names_the_daemon() {
        let Some(captured) = test_data::gatord_text("live-session/resp-captured.xml") else {
            return;
        };
        let target = captured_target(&captured).expect("a target");
        assert_eq!(target.build_id.as_deref(), Some("oss"));
        assert_eq!(
            target.src_md5sum.as_deref(),
            Some("be1ca66ced80517b878f8f70509aab66")
        );
        assert_eq!(
            (target.os.as_deref(), target.cpuid),
            (Some("linux"), Some(0xfffff))
        );
        assert_eq!(captured_target("<captured"), None);
        assert_eq!(captured_target("<captured version=\"1\"/>"), None);
    }

    #[test]
    fn real_captured_key_map() {
        let Some(captured) = test_data::gatord_text("live-session/resp-captured.xml") else {
            return;
        };
        let keys: Vec<_> = captured_keys(&captured)
            .unwrap()
            .into_iter()
            .map(|c| (c.key, c.counter))
            .collect();
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
    fn real_captured_slot_with_its_event() {
        // gatord 9.7.2's own local capture of the Arm PMU: ../shared/data/gatord-9.7.2/arm64-vm-local.apc/.
        let Some(text) = test_data::gatord_text("arm64-vm-local.apc/captured.xml") else {
            return;
        };
        let keys = captured_keys(&text).unwrap();
        assert!(keys.contains(&CapturedKey {
            key: 0xc,
            counter: "ARMv8_Cortex_A72_cnt0".into(),
            event: Some(0x8),
        }));
        assert!(keys.contains(&CapturedKey {
            key: 0xa,
            counter: "ARMv8_Cortex_A72_ccnt".into(),
            event: Some(0x11),
        }));
    }

    #[test]
    fn real_counters_list() {
        let Some(counters) = test_data::gatord_text("live-session/resp-counters.xml") else {
            return;
        };
        let names = counter_names(&counters).unwrap();
        assert_eq!(names[0], "PERF_COUNT_SW_EMULATION_FAULTS");
        assert!(names.iter().any(|n| n == "Linux_meminfo_memfree"));
    }

    #[test]
    fn malformed_documents_are_errors() {
        assert!(matches!(
            counter_names("<counters>"),
            Err(Error::Gatord(GatordError::Xml { .. }))
        ));
        assert!(matches!(
            counter_names("<captured/>"),
            Err(Error::Gatord(GatordError::Xml { .. }))
        ));
        assert!(matches!(
            captured_keys(
                "<captured><counters><counter key=\"zz\" type=\"a\"/></counters></captured>"
            ),
            Err(Error::Gatord(GatordError::Xml { .. }))
        ));
        assert!(matches!(
            captured_keys(
                "<captured><counters><counter key=\"0x1ffffffff\" type=\"a\"/></counters></captured>"
            ),
            Err(Error::Gatord(GatordError::Protocol {
                source: ProtocolFault::KeyOutOfRange {
                    key: 0x1_ffff_ffff,
                    ..
                },
                ..
            }))
        ));
        assert!(matches!(
            captured_keys("<!DOCTYPE x [<!ENTITY a \"b\">]><captured/>"),
            Err(Error::Gatord(GatordError::Xml { .. }))
        ));
    }

    #[test]
    fn written_documents_parse_and_escape() {
        let configured = |counter: &str, event| Configured {
            id: 1,
            counter: counter.into(),
            event,
        };
        let xml = configurations(&[
            configured("a\"b", None),
            configured("c<d", None),
            configured("ARMv8_Cortex_A72_cnt0", Some(0x8)),
        ]);
        let doc = gator_xml::roxmltree::Document::parse(&xml).unwrap();
        let names: Vec<_> = doc
            .root_element()
            .children()
            .filter_map(|n| n.attribute("counter"))
            .collect();
        assert_eq!(names, ["a\"b", "c<d", "ARMv8_Cortex_A72_cnt0"]);
        // As gatord's own configuration for a local capture writes it (arm64-vm-local-configuration.xml).
        let slot = doc
            .root_element()
            .children()
            .find(|n| n.attribute("counter") == Some("ARMv8_Cortex_A72_cnt0"))
            .unwrap();
        let event = slot.attribute("event").unwrap();
        assert_eq!(
            u64::from_str_radix(event.trim_start_matches("0x"), 16),
            Ok(8)
        );
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
