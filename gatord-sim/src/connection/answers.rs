//! The documents a connection answers requests with, as gatord 9.7.2 picks them.

use gator_proto::ProtocolVersion;

use super::super::documents;
use super::super::server::Shared;

/// The kind of a `<request>` as gatord reads it: gatord 9.1 and later look for `<request>` below the
/// document node, and miss it in a document without an XML declaration.
pub(super) fn request_kind<'k>(
    protocol: ProtocolVersion,
    kind: Option<&'k str>,
    document: &[u8],
) -> Option<&'k str> {
    let declared = document.trim_ascii_start().starts_with(b"<?xml");
    if declared || !protocol.at_least(ProtocolVersion::V910) {
        kind
    } else {
        None
    }
}

/// The document for a request of `kind`, `None` for a kind gatord does not know (answered with a NAK).
/// `bound` are the counters bound when the connection started (`(key, name)`), `late` those configured on
/// it, which `captured` lists with key 0.
pub(super) fn reply(
    shared: &Shared,
    kind: Option<&str>,
    bound: &[(i32, String)],
    late: &[String],
) -> Option<String> {
    Some(match kind? {
        "events" => shared.events.clone(),
        "counters" => documents::counters_document(&shared.counters),
        "captured" => match &shared.config.captured_xml {
            Some(text) => text.clone(),
            None => {
                let mut entries = bound.to_vec();
                entries.extend(
                    late.iter()
                        .filter(|n| !bound.iter().any(|(_, b)| b == *n))
                        .map(|n| (0, n.clone())),
                );
                let mut events = shared.state().slot_events.clone();
                events.extend(shared.fixed_events.iter().cloned());
                documents::captured_document(shared.config.protocol.0, &entries, &events)
            }
        },
        "configuration" | "defaults" => {
            let state = shared.state();
            documents::configuration_document(&state.configuration, &state.slot_events)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimConfig;

    #[test]
    fn a_request_without_a_declaration_is_missed_by_gatord_9() {
        let kind = Some("captured");
        assert_eq!(
            request_kind(
                ProtocolVersion::V950,
                kind,
                b"  <?xml version=\"1.0\"?><request/>"
            ),
            kind
        );
        assert_eq!(
            request_kind(ProtocolVersion::V950, kind, b"<request/>"),
            None
        );
        assert_eq!(
            request_kind(ProtocolVersion(900), kind, b"<request/>"),
            kind
        );
    }

    #[test]
    fn captured_lists_the_bound_counters_then_the_late_ones_with_key_0() {
        let shared = Shared::new(SimConfig::quick());
        let bound = [(0xa, "Sim_ccnt".to_owned())];
        let late = ["Sim_ccnt".to_owned(), "Sim_memfree".to_owned()];
        let xml = reply(&shared, Some("captured"), &bound, &late).unwrap();
        let captured = gator_xml::Captured::parse(&xml).unwrap();
        let keys: Vec<(u64, &str)> = captured
            .counters
            .iter()
            .map(|c| (c.key, c.counter.as_str()))
            .collect();
        assert_eq!(&keys[..2], [(0xa, "Sim_ccnt"), (0, "Sim_memfree")]);
        assert!(reply(&shared, Some("nonsense"), &bound, &late).is_none());
        assert!(reply(&shared, None, &bound, &late).is_none());
        let counters = reply(&shared, Some("counters"), &bound, &late).unwrap();
        assert_eq!(
            gator_xml::Counters::parse(&counters)
                .unwrap()
                .names()
                .count(),
            shared.counters.len()
        );
    }
}
