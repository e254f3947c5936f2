//! The outputs of `lizard apc-dump` and `lizard capture` on recorded input, held to the ones committed in
//! `tests/data/golden/` (see its README): the real daemon's own local capture
//! (`gatord-9.7.2/arm64-vm-local.apc`) dumped as JSON and CSV, and the real gatord 9.7.2 live session
//! (`live-session/d2c.bin`) replayed frame by frame through the simulator and captured as JSON and CSV. A
//! restructuring that changes a value, a name or a line fails here; the capture's times (which depend on
//! when the replay ran) are left out.
//!
//! `LIZARD_GOLDEN_WRITE=1` writes the files instead of comparing.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{gatord_capture, gatord_data, lizard, stderr, stdout};
use gator_proto::recorded::RecordedResponses;
use gator_proto::response::ResponseType;
use gatord_sim::{self as sim, SimConfig, Stream};
use serde_json::Value;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden")
}

/// Compares `text` with the golden file `name`, or writes it under `LIZARD_GOLDEN_WRITE=1`.
fn hold(name: &str, text: &str) {
    let path = golden_dir().join(name);
    if std::env::var_os("LIZARD_GOLDEN_WRITE").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let golden =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if golden != text {
        let first = golden
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| golden.lines().count().min(text.lines().count()));
        panic!(
            "{name} differs from the golden file from line {}:\n  golden: {:?}\n  now:    {:?}",
            first + 1,
            golden.lines().nth(first),
            text.lines().nth(first)
        );
    }
}

/// FNV-1a over `bytes`: a fingerprint of an output too large to commit.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A large output held by its size, fingerprint and per-counter sums: enough to say what changed.
fn summary_of_dump(json: &Value, raw: &[u8]) -> String {
    let mut per_counter: BTreeMap<String, (u64, i128)> = BTreeMap::new();
    for sample in json["samples"].as_array().expect("samples") {
        let entry = per_counter
            .entry(sample["counter"].as_str().unwrap_or("?").to_owned())
            .or_default();
        entry.0 += 1;
        entry.1 += i128::from(sample["value"].as_i64().unwrap_or(0));
    }
    let mut out = format!("{} bytes, fnv1a64 {:#018x}\n", raw.len(), fnv1a(raw));
    for (counter, (samples, sum)) in per_counter {
        out.push_str(&format!("{counter}: {samples} samples, sum {sum}\n"));
    }
    let mut rest = json.clone();
    rest.as_object_mut().unwrap().remove("samples");
    out.push_str(&serde_json::to_string_pretty(&rest).unwrap());
    out.push('\n');
    out
}

#[test]
fn apc_dump_of_the_daemons_local_capture_is_unchanged() {
    let Some(capture) = gatord_data("arm64-vm-local.apc") else {
        return;
    };
    let capture = capture.to_str().unwrap().to_owned();
    let json_out = lizard(&["apc-dump", &capture, "--format", "json"]);
    assert!(json_out.status.success(), "{}", stderr(&json_out));
    let json: Value = serde_json::from_slice(&json_out.stdout).expect("JSON");
    hold(
        "apc-dump-arm64-vm-local.json.summary",
        &summary_of_dump(&json, &json_out.stdout),
    );
    let csv_out = lizard(&["apc-dump", &capture, "--format", "csv"]);
    assert!(csv_out.status.success(), "{}", stderr(&csv_out));
    let csv = stdout(&csv_out);
    let mut text = format!(
        "{} bytes, {} lines, fnv1a64 {:#018x}\n",
        csv.len(),
        csv.lines().count(),
        fnv1a(csv.as_bytes())
    );
    for line in csv.lines().take(20) {
        text.push_str(line);
        text.push('\n');
    }
    hold("apc-dump-arm64-vm-local.csv.head", &text);
}

/// The live session's events document, counter names, captured map and APC frames.
fn live_session() -> Option<SimConfig> {
    let d2c = test_data::gatord_bytes("live-session/d2c.bin")?;
    let counters_xml = test_data::gatord_text("live-session/resp-counters.xml")?;
    let captured = test_data::gatord_text("live-session/resp-captured.xml")?;
    let recording = || RecordedResponses::new(&d2c).expect("handshake");
    let events = recording()
        .payloads(ResponseType::Xml)
        .next()
        .map(|xml| String::from_utf8(xml.expect("a whole response").to_vec()).unwrap());
    let frames = recording()
        .apc_frames()
        .map(|frame| frame.expect("a whole response").to_vec())
        .collect();
    let counters = gator_xml::Counters::parse(&counters_xml)
        .expect("counters")
        .names()
        .map(str::to_owned)
        .collect();
    Some(SimConfig {
        events_xml: events,
        counters: Some(counters),
        captured_xml: Some(captured),
        stream: Stream::Raw(frames),
        ..SimConfig::quick()
    })
}

/// A capture document without what depends on when it ran: every key naming a time or a duration, and each
/// series' times made relative to its first sample (the recorded daemon's times, on an engine time base
/// that starts when the replay does).
fn without_times(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, _| {
                !(key.contains("time")
                    || key.contains("duration")
                    || key.ends_with("_ns")
                    || key.ends_with("_s"))
            });
            if let Some(Value::Array(samples)) = map.get_mut("samples") {
                let first = samples.first().and_then(|s| s[0].as_u64()).unwrap_or(0);
                for sample in samples.iter_mut() {
                    if let Some(t) = sample[0].as_u64() {
                        sample[0] = Value::from(t - first);
                    }
                }
            }
            map.values_mut().for_each(without_times);
        }
        Value::Array(items) => items.iter_mut().for_each(without_times),
        _ => {}
    }
}

#[test]
fn capture_of_the_replayed_live_session_is_unchanged() {
    let Some(config) = live_session() else { return };
    let counters = "Linux_meminfo_memfree,Linux_meminfo_memused2,Linux_net_rx";
    for format in ["json", "csv"] {
        let daemon = sim::start(config.clone()).unwrap();
        let address = daemon.local_addr().to_string();
        let out = lizard(&gatord_capture(
            &address,
            "300ms",
            &["--counters", counters, "--format", format],
        ));
        assert!(out.status.success(), "{}", stderr(&out));
        let text = if format == "json" {
            let mut doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            // What ran and where depends on the machine: present, then left out.
            let run = doc
                .as_object_mut()
                .and_then(|d| d.remove("run"))
                .expect("the run's facts");
            assert_eq!(run["lizard_version"], env!("CARGO_PKG_VERSION"), "{run}");
            assert_eq!(run["command"][1], "capture", "{run}");
            without_times(&mut doc);
            serde_json::to_string_pretty(&doc).unwrap() + "\n"
        } else {
            // The first column is the sample's time: keep the rest.
            stdout(&out)
                .lines()
                .map(|line| line.split_once(',').map_or(line, |(_, rest)| rest))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        };
        hold(&format!("capture-live-session.{format}"), &text);
        daemon.shutdown();
    }
}
