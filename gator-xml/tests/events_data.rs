//! Reads every events file gatord 9.7.2 ships (`shared/data/gatord-9.7.2/events/`) and the merged 3 MB document
//! the daemon served in the recorded live session (`live-session/d2c.bin`), checking counts and attributes
//! against an independent roxmltree walk of the same text.

mod common;

use gator_xml::{EventClass, Events, Units};

/// Normalises an attribute value so that typed and source spellings compare equal.
fn normalise(name: &str, value: &str) -> String {
    let v = value.trim();
    let as_int = |t: &str| -> Option<u64> {
        match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok(),
            None => t.parse().ok(),
        }
    };
    match name {
        "event" | "flag" | "color" | "cores" | "bit" | "filter-bit" | "condition-bit" => as_int(v)
            .map(|n| n.to_string())
            .unwrap_or_else(|| v.to_owned()),
        n if n.starts_with("activity_color") => as_int(v).unwrap().to_string(),
        "multiplier" => v.parse::<f64>().unwrap().to_string(),
        "average_selection" | "average_cores" | "percentage" | "derived" | "per_cpu" | "proc"
        | "advanced" => match v {
            "yes" | "true" => "yes".into(),
            _ => "no".into(),
        },
        _ => value.to_owned(),
    }
}

/// Every `<event>` element of `text` in document order, with its attributes, walked by plain roxmltree.
fn independent_events(text: &str) -> Vec<Vec<(String, String)>> {
    let doc = roxmltree::Document::parse(text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("event"))
        .map(|n| {
            n.attributes()
                .map(|a| (a.name().to_owned(), a.value().to_owned()))
                .collect()
        })
        .collect()
}

/// The events of a parsed document in the same order as `independent_events` (categories then SPE, each in
/// document order, which is also the order of the roxmltree walk when they are interleaved per element).
fn model_events_in_document_order(text: &str, events: &Events) -> Vec<Vec<(String, String)>> {
    // Walk the top-level elements in order and pull the matching model element.
    let doc = roxmltree::Document::parse(text).unwrap();
    let (mut ci, mut si) = (0, 0);
    let mut out = Vec::new();
    for top in doc.root_element().children().filter(|n| n.is_element()) {
        match top.tag_name().name() {
            "category" => {
                out.extend(events.categories[ci].events.iter().map(|e| e.attributes()));
                ci += 1;
            }
            "spe" => {
                out.extend(events.spes[si].events.iter().map(|e| e.attributes()));
                si += 1;
            }
            _ => {}
        }
    }
    out
}

fn check_no_attribute_lost(source: &str, text: &str, events: &Events) {
    let expected = independent_events(text);
    let got = model_events_in_document_order(text, events);
    assert_eq!(got.len(), expected.len(), "{source}: event count");
    assert_eq!(
        events.event_count(),
        expected.len(),
        "{source}: event_count()"
    );
    for (i, (want, have)) in expected.iter().zip(&got).enumerate() {
        for (name, value) in want {
            let typed = have
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{source}: event #{i} lost attribute {name}"));
            assert_eq!(
                normalise(name, &typed.1),
                normalise(name, value),
                "{source}: event #{i} attribute {name}"
            );
        }
        assert_eq!(
            want.len(),
            have.len(),
            "{source}: event #{i} invented attributes"
        );
    }
}

#[test]
fn every_shipped_fragment_parses_with_every_event_and_attribute() {
    if !common::present() {
        return;
    }
    let mut files: Vec<_> = std::fs::read_dir(common::data_dir().join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    assert!(files.len() >= 98, "found {} files", files.len());
    let mut total = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let source = path.file_name().unwrap().to_string_lossy().into_owned();
        let events = Events::from_bytes(&bytes).unwrap_or_else(|e| panic!("{source}: {e}"));
        let text = std::str::from_utf8(&bytes).unwrap();
        let wrapped = format!("<events>{text}</events>");
        check_no_attribute_lost(&source, &wrapped, &events);
        total += events.event_count();
    }
    // 9043 category events and 27 SPE events across the 98 files.
    assert_eq!(total, 9043 + 27);
}

#[test]
fn header_fragments_and_footer_make_one_document() {
    if !common::present() {
        return;
    }
    let dir = common::data_dir();
    let mut files: Vec<_> = std::fs::read_dir(dir.join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut text = String::from_utf8(common::read("events_header.xml")).unwrap();
    let mut merged = Events::default();
    for path in &files {
        let fragment = std::fs::read_to_string(path).unwrap();
        merged.merge(Events::parse_fragment(&fragment).unwrap());
        text.push_str(&fragment);
    }
    text.push_str(&String::from_utf8(common::read("events_footer.xml")).unwrap());
    let whole = Events::parse(&text).unwrap();
    assert_eq!(whole, merged);
}

#[test]
fn the_merged_document_served_by_the_daemon_parses() {
    if !common::present() {
        return;
    }
    let text = common::merged_text();
    assert_eq!(text.len(), 3_089_092);
    let events = common::merged_events();
    assert_eq!(events.categories.len() + events.spes.len(), 207 + 22);
    check_no_attribute_lost("merged", text, events);
    assert_eq!(events.event_count(), 12_742);

    // The x86 host's CPU cluster is Perf_Hardware: its fixed cycle counter and programmable slots resolve.
    let ccnt = events.resolve("Perf_Hardware_ccnt", None).unwrap();
    assert_eq!(ccnt.event.units, Some(Units::Cycles));
    let set = events.counter_set("Perf_Hardware_cnt").unwrap();
    let code = events
        .events_in_counter_set("Perf_Hardware_cnt")
        .find(|e| e.counter.is_none())
        .and_then(|e| e.event)
        .unwrap();
    let slot = events.resolve("Perf_Hardware_cnt0", Some(code)).unwrap();
    assert_eq!(slot.counter_set, Some(set));
    assert_eq!(slot.slot, Some(0));

    // The counters the recorded capture used.
    let free = events.resolve("Linux_meminfo_memfree", None).unwrap();
    assert_eq!(free.event.effective_class(), EventClass::Absolute);
    assert_eq!(free.event.units, Some(Units::Bytes));

    // The index answers exactly like the linear lookups for every fixed counter and every slot code.
    let index = events.index();
    let key = |r: Option<gator_xml::events::Resolved<'_>>| {
        r.map(|r| (r.event as *const gator_xml::Event, r.slot))
    };
    // (Linear lookups are slow in debug builds: compare on every 7th fixed counter.)
    for (_, e) in events.events().step_by(7) {
        if let Some(c) = &e.counter {
            assert_eq!(
                key(index.resolve(c, None)),
                key(events.resolve(c, None)),
                "{c}"
            );
        }
    }
    for set in &events.counter_sets {
        let last = format!("{}{}", set.name, set.count.saturating_sub(1));
        for e in events
            .events_in_counter_set(&set.name)
            .filter(|e| e.counter.is_none())
        {
            let found = key(index.resolve(&last, e.event));
            assert!(found.is_some(), "{last} {:?}", e.event);
            assert_eq!(found, key(events.resolve(&last, e.event)));
        }
    }
}

#[test]
fn entities_and_non_ascii_text_are_decoded() {
    if !common::present() {
        return;
    }
    let events = common::merged_events();
    let descriptions: Vec<&str> = events
        .events()
        .filter_map(|(_, e)| e.description.as_deref())
        .collect();
    assert!(descriptions.iter().any(|d| d.contains('\'')));
    assert!(!descriptions.iter().any(|d| d.contains("&apos;")));
    assert!(descriptions.iter().any(|d| !d.is_ascii()));
}

#[test]
fn a_corrupted_shipped_file_reports_the_line_of_the_damage() {
    if !common::present() {
        return;
    }
    let text = String::from_utf8(common::read("events/events-Cortex-A53.xml")).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("event=\"0x08\""))
        .unwrap() as u32
        + 1;
    let damaged = text.replacen("event=\"0x08\"", "event=\"0xZ8\"", 1);
    match Events::parse(&damaged).unwrap_err() {
        gator_xml::XmlError::InvalidNumber {
            element,
            attribute,
            value,
            position,
            ..
        } => {
            assert_eq!(
                (element, attribute.as_str(), value.as_str()),
                ("event", "event", "0xZ8")
            );
            assert_eq!(position.line, line);
        }
        other => panic!("unexpected {other:?}"),
    }
    let truncated = &text[..text.len() / 2];
    assert!(matches!(
        Events::parse(truncated),
        Err(gator_xml::XmlError::Syntax { .. })
    ));
}
