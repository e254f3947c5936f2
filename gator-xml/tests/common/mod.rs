//! Paths to the recordings in `shared/data/gatord-9.7.2` and extraction of the daemon's first XML reply.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;

/// The gatord 9.7.2 data folder (read-only).
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/gatord-9.7.2"
    ))
}

/// Reads a file below the data folder.
pub fn read(relative: &str) -> Vec<u8> {
    let path = data_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first RESPONSE_XML payload in the daemon-to-client recording: the merged events document.
///
/// After the `GATOR 950\n` handshake reply, every response is 1 type byte, a u32 little-endian length and the
/// payload; type 1 is RESPONSE_XML.
pub fn merged_events_document() -> String {
    let bytes = read("live-session/d2c.bin");
    let magic = b"GATOR 950\n";
    assert_eq!(&bytes[..magic.len()], magic, "handshake reply");
    let mut at = magic.len();
    while at + 5 <= bytes.len() {
        let kind = bytes[at];
        let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        let payload = &bytes[at + 5..at + 5 + len];
        if kind == 1 {
            return String::from_utf8(payload.to_vec()).expect("UTF-8 events document");
        }
        at += 5 + len;
    }
    panic!("no RESPONSE_XML in d2c.bin");
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
