//! Reads the XML replies recorded from gatord 9.7.2 (`shared/data/gatord-9.7.2/live-session/resp-*.xml`),
//! the shipped `defaults.xml` and `pmus.xml`, and compares the documents this crate writes with the bytes the
//! recorded client sent (`live-session/c2s.bin`) and with Lizard's documented bytes.

mod common;

use gator_xml::{
    Captured, Configurations, CounterConfiguration, Counters, EventClass, Pmus, Request,
    RequestType, SampleRate, Session, Units,
};

/// The command payloads in the client-to-daemon recording: after `STREAMLINE\n`, 1 type byte, a u32 LE
/// length and the payload.
fn client_commands() -> Vec<(u8, Vec<u8>)> {
    let bytes = common::read("live-session/c2s.bin");
    let mut at = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut out = Vec::new();
    while at + 5 <= bytes.len() {
        let len = u32::from_le_bytes(bytes[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push((bytes[at], bytes[at + 5..at + 5 + len].to_vec()));
        at += 5 + len;
    }
    out
}

#[test]
fn captured_reply_maps_hex_keys_and_resolves_them_to_events() {
    if !common::present() {
        return;
    }
    let captured = Captured::from_bytes(&common::read("live-session/resp-captured.xml")).unwrap();
    assert_eq!(captured.version, Some(1));
    assert_eq!(captured.protocol, Some(950));
    assert_eq!(captured.product, Some(972));
    assert_eq!(captured.product_tag.as_deref(), Some("main"));
    assert_eq!(captured.kind.as_deref(), Some("Perf"));
    let target = captured.target.as_ref().unwrap();
    assert_eq!(target.sample_rate, Some(101));
    assert_eq!(target.cores, Some(2));
    assert_eq!(target.cpuid, Some(0xfffff));
    assert_eq!(target.supports_live, Some(true));
    assert_eq!(target.os.as_deref(), Some("linux"));
    assert_eq!(captured.counters.len(), 6);
    assert_eq!(
        captured.counter_by_key(0x5e).unwrap().counter,
        "Linux_meminfo_memfree"
    );
    assert_eq!(
        captured.counter_by_key(0x5c).unwrap().counter,
        "Linux_meminfo_memused2"
    );
    assert_eq!(
        captured.counter_by_key(0x66).unwrap().counter,
        "Linux_net_rx"
    );
    let constant = captured.counter_by_key(0x8).unwrap();
    assert_eq!(constant.counter, "ARM_Mali-CONST_SHADER_CORE_COUNT");
    assert_eq!(constant.class, Some(EventClass::Constant));
    assert_eq!(constant.mode.as_deref(), Some("per-core"));

    let events = common::merged_events();
    let free = captured.describe(0x5e, events).unwrap();
    assert_eq!(free.event.units, Some(Units::Bytes));
    assert_eq!(free.event.effective_class(), EventClass::Absolute);
    let rx = captured.describe(0x66, events).unwrap();
    assert_eq!(rx.category.name, "Linux");
    assert_eq!(rx.event.label(), "Network: Receive");
    assert!(captured.describe(0x99, events).is_none());
    // Every enabled counter of the recorded session has a description.
    for c in captured.counters.iter().filter(|c| c.class.is_none()) {
        assert!(events.resolve_captured(c).is_some(), "{}", c.counter);
    }

    let after = Captured::from_bytes(&common::read(
        "live-session/resp-captured-after-session.xml",
    ))
    .unwrap();
    assert_eq!(after, captured);
}

#[test]
fn counters_reply_lists_names_clusters_and_cpus() {
    if !common::present() {
        return;
    }
    let counters = Counters::from_bytes(&common::read("live-session/resp-counters.xml")).unwrap();
    assert_eq!(counters.supports_multiple_ebs, Some(true));
    let text = String::from_utf8(common::read("live-session/resp-counters.xml")).unwrap();
    assert_eq!(
        counters.counters.len(),
        text.matches("<counter name=").count()
    );
    assert!(counters.contains("Perf_Hardware_ccnt"));
    assert!(counters.contains("Linux_meminfo_memfree"));
    assert_eq!(counters.clusters.len(), 1);
    assert_eq!(counters.clusters[0].name, "Perf_Hardware");
    assert_eq!(counters.cpus.len(), 2);
    let warnings = counters.setup_warning_items();
    assert!(warnings.contains(&"CPU is not recognized"));
    assert!(warnings.contains(&"Unable to write to \"/sys/kernel/tracing/events/enable\""));

    // Every available counter is described by the merged events document except run-time-only ones.
    let events = common::merged_events();
    let index = events.index();
    let described = counters
        .names()
        .filter(|n| index.resolve(n, None).is_some() || events.slot(n).is_some())
        .count();
    assert!(described * 2 > counters.counters.len(), "{described}");
}

#[test]
fn configuration_replies_and_defaults_parse() {
    if !common::present() {
        return;
    }
    let conf =
        Configurations::from_bytes(&common::read("live-session/resp-configuration.xml")).unwrap();
    assert_eq!(conf.revision, Some(3));
    let names: Vec<&str> = conf.counters.iter().map(|c| c.counter.as_str()).collect();
    assert_eq!(
        names,
        [
            "Linux_meminfo_memused2",
            "Linux_meminfo_memfree",
            "Linux_net_rx"
        ]
    );
    // Written back, the reply differs from gatord's bytes only by gatord's trailing newline.
    let text = String::from_utf8(common::read("live-session/resp-configuration.xml")).unwrap();
    assert_eq!(format!("{}\n", conf.to_xml()), text);

    for file in ["live-session/resp-defaults.xml", "defaults.xml"] {
        let text = String::from_utf8(common::read(file)).unwrap();
        let defaults = Configurations::parse(&text).unwrap();
        assert_eq!(defaults.revision, Some(3));
        assert_eq!(defaults.counters.len(), 515, "{file}");
        let cnt0 = defaults.counter("ARM_ARM11_cnt0").unwrap();
        assert_eq!(cnt0.event, Some(0x7));
        assert_eq!(Configurations::parse(&defaults.to_xml()).unwrap(), defaults);
    }
}

#[test]
fn pmus_map_cpuids_to_counter_sets_in_the_events_document() {
    if !common::present() {
        return;
    }
    let pmus = Pmus::from_bytes(&common::read("pmus.xml")).unwrap();
    assert_eq!(pmus.version, Some(2));
    assert_eq!(pmus.pmus.len(), 88);
    assert_eq!(pmus.uncore_pmus.len(), 10);
    assert_eq!(pmus.smmuv3.len(), 6);
    let a53 = pmus.by_cpuid(0x41d03).unwrap();
    assert_eq!(a53.core_name, "Cortex-A53");
    assert_eq!(a53.profile.as_deref(), Some("8a"));
    let n2 = pmus.by_cpuid(0x6dd49).unwrap();
    assert_eq!(n2.id, "ARMv8_Neoverse_N2");
    assert!(n2.cpuids.contains(&0x41d49));

    let events = common::merged_events();
    let set = events.counter_set(&a53.counter_set_name()).unwrap();
    assert_eq!(set.count, 6);
}

#[test]
fn requests_are_the_bytes_the_recorded_client_sent() {
    if !common::present() {
        return;
    }
    let requests: Vec<Vec<u8>> = client_commands()
        .into_iter()
        .filter(|(kind, _)| *kind == 0)
        .map(|(_, payload)| payload)
        .collect();
    assert_eq!(requests.len(), 7);
    for payload in &requests {
        let request = Request::from_bytes(payload).unwrap();
        assert_eq!(&request.to_bytes(), payload);
    }
    assert_eq!(
        Request::new(RequestType::Events).to_bytes(),
        requests[0],
        "events request"
    );
    assert_eq!(
        Request::from_bytes(&requests[5]).unwrap().kind,
        RequestType::Other("bogus".into())
    );
}

#[test]
fn the_recorded_session_document_is_read() {
    if !common::present() {
        return;
    }
    let (_, payload) = client_commands()
        .into_iter()
        .find(|(kind, p)| *kind == 1 && p.windows(8).any(|w| w == b"<session"))
        .unwrap();
    let session = Session::from_bytes(&payload).unwrap();
    assert_eq!(session.version, 1);
    assert_eq!(session.sample_rate, Some(SampleRate::Low));
    assert_eq!(session.live_rate, Some(100));
    assert_eq!(session.call_stack_unwinding, Some(false));
    assert_eq!(Session::parse(&session.to_xml()).unwrap(), session);
}

#[test]
fn lizard_documents_are_reproduced_byte_for_byte() {
    // docs/lizard.md §5.6: 362 bytes, DELIVER_XML header 01 6A 01 00 00.
    let session = Session::builder().build().to_bytes();
    assert_eq!(session.len(), 0x16a);
    // §5.5: names only, no event attributes, no trailing newline.
    let conf = Configurations::from_counters([CounterConfiguration::new("Linux_net_rx")]).to_xml();
    assert_eq!(
        conf,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configurations revision=\"3\">\n<configuration counter=\"Linux_net_rx\" />\n</configurations>"
    );
}

#[test]
fn recorded_counters_and_captured_documents_are_written_back_equal() {
    if !common::present() {
        return;
    }
    for name in [
        "live-session/resp-counters.xml",
        "perf-session/resp-counters.xml",
        "arm64-vm-local.apc/counters.xml",
    ] {
        let doc = Counters::from_bytes(&common::read(name)).unwrap();
        assert!(!doc.counters.is_empty(), "{name}");
        assert_eq!(Counters::parse(&doc.to_xml()).unwrap(), doc, "{name}");
    }
    for name in [
        "live-session/resp-captured.xml",
        "live-session/resp-captured-after-session.xml",
        "perf-session/resp-captured.xml",
        "arm64-vm-local.apc/captured.xml",
    ] {
        let doc = Captured::from_bytes(&common::read(name)).unwrap();
        assert!(!doc.counters.is_empty(), "{name}");
        assert_eq!(Captured::parse(&doc.to_xml()).unwrap(), doc, "{name}");
    }
}
