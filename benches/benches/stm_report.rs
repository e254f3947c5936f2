//! Benches `lizard stm-report`'s work (`stp_decode::report`) on a generated KeyStone II dump of 64 MiB
//! (`lizard_benches::stm::keystone_dump`: DSP printf and Arm putMsg messages in TWP frames), against
//! decoding alone in the same run: the whole-buffer dump handing out elements (deformat, STP decode,
//! master/channel attribution), which every report does first. The report: messages assembled and
//! decoded (printf formatted with its format strings), statistics and a span, with events dropped
//! (`report_statistics`) or written as a Perfetto timeline to a sink (`report_perfetto`). The printed
//! ratios are each report's throughput over decoding's: the goal is 0.5 or more.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lizard_benches::stm::{keystone_dump, keystone_strings, KEYSTONE_ID};
use lizard_benches::Ratios;
use std::hint::black_box;
use std::time::Duration;
use stp_decode::deformat::FrameMode;
use stp_decode::dict::Dictionary;
use stp_decode::dump::{dump, DumpOptions, Framing};
use stp_decode::keystone::{Device, Masters};
use stp_decode::report::{Discard, Report, ReportConfig};
use stp_decode::timeline::PerfettoTimeline;

const SIZE: usize = 64 << 20;
const SAMPLES: usize = 10;
/// Bytes fed to the report at a time, as `lizard stm-report` reads its file.
const CHUNK: usize = 64 << 10;

fn config() -> ReportConfig {
    let mut config = ReportConfig::new(Framing::Formatted(FrameMode::Memory), KEYSTONE_ID);
    config.masters = Masters::for_device(Device::K2h);
    config.spans = vec!["frame=start..end".parse().expect("a span")];
    config
}

fn report(c: &mut Criterion) {
    let buffer = keystone_dump(SIZE);
    let strings = keystone_strings();
    let dict = Dictionary::new();
    // The input decodes into whole messages, none undecodable.
    let mut check = Report::new(config(), &strings, &dict);
    for chunk in buffer.chunks(CHUNK) {
        check.feed(chunk, &mut Discard).expect("no sink error");
    }
    let stats = check.finish(&mut Discard).expect("no sink error");
    assert_eq!(stats.stream.undecodable, 0);
    assert_eq!(stats.stream.decode_errors, 0);
    println!(
        "stm_report input: {} bytes, {} messages, {} data packets, {} spans",
        buffer.len(),
        stats.stream.messages,
        stats.stream.data_packets,
        stats.spans[0].count
    );

    let ratios = Ratios::new();
    let mut group = c.benchmark_group("stm_report_64mib");
    group.sample_size(SAMPLES);
    group.measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Bytes(buffer.len() as u64));
    group.bench_function("decode_elements", |b| {
        ratios.iter(b, "decode_elements", || {
            dump(
                black_box(&buffer),
                DumpOptions::formatted(KEYSTONE_ID).elements(),
            )
            .count()
        })
    });
    group.bench_function("report_statistics", |b| {
        ratios.iter(b, "report_statistics", || {
            let mut r = Report::new(config(), &strings, &dict);
            for chunk in black_box(&buffer).chunks(CHUNK) {
                r.feed(chunk, &mut Discard).expect("no sink error");
            }
            r.finish(&mut Discard)
                .expect("no sink error")
                .stream
                .messages
        })
    });
    group.bench_function("report_perfetto", |b| {
        ratios.iter(b, "report_perfetto", || {
            let mut timeline = PerfettoTimeline::new(
                std::io::sink(),
                Masters::for_device(Device::K2h),
                &dict,
                "bench",
            )
            .expect("a sink");
            let mut r = Report::new(config(), &strings, &dict);
            for chunk in black_box(&buffer).chunks(CHUNK) {
                r.feed(chunk, &mut timeline).expect("a sink");
            }
            let messages = r.finish(&mut timeline).expect("a sink").stream.messages;
            timeline.finish().expect("a sink");
            messages
        })
    });
    group.finish();
    ratios.print("stm_report_64mib", "decode_elements", SAMPLES);
}

criterion_group!(benches, report);
criterion_main!(benches);
