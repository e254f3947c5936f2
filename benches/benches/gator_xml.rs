//! Benches the gator-xml events reader on the merged 3 MB events document that gatord 9.7.2 served in the
//! recorded live session (`shared/data/gatord-9.7.2/live-session/d2c.bin`, first RESPONSE_XML), against a bare
//! roxmltree DOM parse of the same text in the same run; also the captured key-map reader on the recorded
//! `resp-captured.xml` against its bare DOM parse.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gator_proto::recorded::RecordedResponses;
use gator_proto::response::ResponseType;
use gator_xml::roxmltree;
use gator_xml::{Captured, Events};
use lizard_benches::Ratios;
use std::hint::black_box;

/// The first RESPONSE_XML payload of the recording.
fn merged_events_document() -> String {
    let bytes = test_data::gatord_bytes("live-session/d2c.bin").expect("d2c.bin recording");
    let mut xml = RecordedResponses::new(&bytes)
        .expect("handshake line")
        .payloads(ResponseType::Xml);
    let first = xml.next().expect("a RESPONSE_XML in d2c.bin");
    String::from_utf8(first.expect("recorded response").to_vec()).expect("UTF-8")
}

fn events_document(c: &mut Criterion) {
    let text = merged_events_document();
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("gator_xml_events_3mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(20);
    group.bench_function("baseline_roxmltree_dom", |b| {
        ratios.iter(b, "baseline_roxmltree_dom", || {
            let doc = roxmltree::Document::parse(black_box(&text)).unwrap();
            doc.descendants().len()
        })
    });
    group.bench_function("gator_xml_events_parse", |b| {
        ratios.iter(b, "gator_xml_events_parse", || {
            Events::parse(black_box(&text)).unwrap().event_count()
        })
    });
    group.finish();
    ratios.print("gator_xml_events_3mb", "baseline_roxmltree_dom", 20);
}

fn captured_document(c: &mut Criterion) {
    let text = std::fs::read_to_string(
        lizard_benches::data_dir().join("gatord-9.7.2/live-session/resp-captured.xml"),
    )
    .expect("resp-captured.xml recording");
    let ratios = Ratios::new();
    let mut group = c.benchmark_group("gator_xml_captured");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("baseline_roxmltree_dom", |b| {
        ratios.iter(b, "baseline_roxmltree_dom", || {
            let doc = roxmltree::Document::parse(black_box(&text)).unwrap();
            doc.descendants().len()
        })
    });
    group.bench_function("gator_xml_captured_parse", |b| {
        ratios.iter(b, "gator_xml_captured_parse", || {
            Captured::parse(black_box(&text)).unwrap().counters.len()
        })
    });
    group.finish();
    ratios.print("gator_xml_captured", "baseline_roxmltree_dom", 100);
}

criterion_group!(benches, events_document, captured_document);
criterion_main!(benches);
