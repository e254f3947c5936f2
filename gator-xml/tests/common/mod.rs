//! Paths to the recordings in `shared/data/gatord-9.7.2` and extraction of the daemon's first XML reply.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

use gator_proto::recorded::RecordedResponses;
use gator_proto::response::ResponseType;

/// The gatord 9.7.2 data folder (read-only).
pub fn data_dir() -> PathBuf {
    test_data::root().join(test_data::GATORD)
}

/// Whether the gatord 9.7.2 data folder is there (a printed skip when it is not).
pub fn present() -> bool {
    test_data::path(test_data::GATORD).is_some()
}

/// Reads a file below the data folder.
pub fn read(relative: &str) -> Vec<u8> {
    let path = data_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first RESPONSE_XML payload in the daemon-to-client recording: the merged events document.
pub fn merged_events_document() -> String {
    let bytes = read("live-session/d2c.bin");
    let xml = RecordedResponses::new(&bytes)
        .expect("handshake reply")
        .payloads(ResponseType::Xml)
        .next()
        .expect("a RESPONSE_XML in d2c.bin")
        .expect("recorded response");
    String::from_utf8(xml.to_vec()).expect("UTF-8 events document")
}

/// The merged events document text, extracted once per test binary.
pub fn merged_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(merged_events_document)
}

/// The merged events document parsed by this crate, once per test binary.
pub fn merged_events() -> &'static gator_xml::Events {
    static EVENTS: OnceLock<gator_xml::Events> = OnceLock::new();
    EVENTS.get_or_init(|| gator_xml::Events::parse(merged_text()).expect("merged events document"))
}
