//! `--format perfetto`: captures of the simulated gatord and of this machine's own counters written as
//! native Perfetto traces, decoded with Perfetto's own protobuf module (`perfetto_trace_pb2` of the
//! `perfetto` package, through perfetto-writer's `tools/decode_trace.py`) and checked against the JSON
//! document of the same capture: every counter's track, parent, unit, multiplier and every value, the clock, the per-core
//! tracks, the GPU counters and the trace records. Where the module is missing the tests skip and say so
//! (in CI they fail: `.ci/run` installs it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{decode_trace, decode_trace_py, gatord_capture, lizard, stderr, Sim};
use serde_json::{json, Value};

/// A scratch folder of this test process.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-perfetto-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_decoder_refuses_an_interned_name_undefined_or_used_without_the_flag() {
    use perfetto_writer::proto::{
        EventName, InternedData, Trace, TracePacket, TrackEvent, SEQ_INCREMENTAL_STATE_CLEARED,
        SEQ_NEEDS_INCREMENTAL_STATE, TYPE_INSTANT,
    };
    use prost::Message;

    let dir = scratch("interning");
    let clear = TracePacket {
        trusted_packet_sequence_id: Some(1),
        sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
        ..TracePacket::default()
    };
    let instant = |sequence: u32, flags: Option<u32>, defines: bool| TracePacket {
        timestamp: Some(10),
        trusted_packet_sequence_id: Some(sequence),
        sequence_flags: flags,
        interned_data: defines.then(|| InternedData {
            event_names: vec![EventName {
                iid: Some(1),
                name: Some("draw".into()),
            }],
            ..InternedData::default()
        }),
        track_event: Some(TrackEvent {
            r#type: Some(TYPE_INSTANT),
            track_uuid: Some(1),
            name_iid: Some(1),
            ..TrackEvent::default()
        }),
        ..TracePacket::default()
    };
    let needs = Some(SEQ_NEEDS_INCREMENTAL_STATE);
    let cases = [
        (
            "defined",
            vec![clear.clone(), instant(1, needs, true)],
            true,
        ),
        (
            "undefined",
            vec![clear.clone(), instant(1, needs, false)],
            false,
        ),
        (
            "unflagged",
            vec![clear.clone(), instant(1, None, true)],
            false,
        ),
        // Interned strings are the sequence's own: another sequence's are not defined here.
        (
            "other_sequence",
            vec![
                clear.clone(),
                instant(1, needs, true),
                TracePacket {
                    trusted_packet_sequence_id: Some(2),
                    ..clear.clone()
                },
                instant(2, needs, false),
            ],
            false,
        ),
        // A sequence whose state was never cleared has no interned strings.
        ("not_cleared", vec![instant(1, needs, true)], false),
    ];
    for (name, packets, valid) in cases {
        let path = dir.join(format!("{name}.pftrace"));
        std::fs::write(&path, Trace { packet: packets }.encode_to_vec()).unwrap();
        let Some(output) = decode_trace_py(&path) else {
            return;
        };
        assert_eq!(
            output.status.success(),
            valid,
            "{name}: {}",
            stderr(&output)
        );
        if valid {
            let trace: Value = serde_json::from_slice(&output.stdout).unwrap();
            assert_eq!(trace["instants"][0]["name"], "draw");
        } else {
            assert!(
                stderr(&output).contains("interned data"),
                "{name}: {}",
                stderr(&output)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `lizard args` and asserts it exited 0.
fn run(args: &[&str]) {
    let output = lizard(args);
    assert!(output.status.success(), "{args:?}: {}", stderr(&output));
}

/// `lizard capture --no-gatord SELECTION --duration DURATION --format json` saved at `path`, and the
/// document read back.
fn local_capture(path: &Path, selection: &[&str], duration: &str) -> Value {
    let mut args = vec!["capture", "--no-gatord"];
    args.extend_from_slice(selection);
    args.extend_from_slice(&["--duration", duration, "--format", "json", "-o"]);
    args.push(path.to_str().unwrap());
    run(&args);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The document saved at `path`, converted to a Perfetto trace by `lizard report --format perfetto`, decoded.
fn converted(path: &Path) -> Option<Value> {
    let trace = path.with_extension("pftrace");
    run(&[
        "report",
        path.to_str().unwrap(),
        "--format",
        "perfetto",
        "-o",
        trace.to_str().unwrap(),
    ]);
    decode_trace(&trace)
}

/// The track named `name` whose parent is named `parent`: its uuid and descriptor.
fn track<'a>(trace: &'a Value, name: &str, parent: &str) -> (&'a str, &'a Value) {
    let tracks = trace["tracks"].as_object().unwrap();
    tracks
        .iter()
        .find(|(_, t)| {
            t["name"] == name
                && t["parent"]
                    .as_u64()
                    .and_then(|p| tracks.get(&p.to_string()))
                    .is_some_and(|p| p["name"] == parent)
        })
        .map(|(uuid, t)| (uuid.as_str(), t))
        .unwrap_or_else(|| panic!("no track {name} under {parent}: {tracks:?}"))
}

/// The Perfetto unit a document's units string maps to: (`unit`, `unit_name`).
fn expected_unit(units: &str) -> (&str, &str) {
    match units {
        "ns" => ("UNIT_TIME_NS", ""),
        "B" => ("UNIT_SIZE_BYTES", ""),
        "" => ("UNIT_COUNT", ""),
        "MHz" => ("UNIT_UNSPECIFIED", "Hz"),
        other => ("UNIT_UNSPECIFIED", other),
    }
}

/// Whether two numbers are the same reading (exact for integers, to the last bits for floats).
fn same(a: &Value, b: f64) -> bool {
    match a.as_i64() {
        Some(a) => a as f64 == b,
        None => (a.as_f64().unwrap() - b).abs() <= 1e-9 * b.abs().max(1.0),
    }
}

/// Checks `trace` against the capture document `doc`; returns how many values were compared.
fn check(doc: &Value, trace: &Value) -> usize {
    assert_eq!(trace["packets_with_unknown_fields"], json!([]), "{trace}");
    assert_eq!(trace["first_sequence_flags"], 1);
    let zero = doc["boottime_zero_ns"].as_u64().expect("boottime_zero_ns");
    assert_eq!(trace["clock"]["clocks"], json!([[6, zero]]));
    assert_eq!(trace["clock"]["primary"], 6);
    let top = &trace["tracks"]["1"];
    assert_eq!(top["name"], "lizard capture");
    assert!(
        top["description"]
            .as_str()
            .unwrap()
            .contains("CLOCK_BOOTTIME"),
        "{top}"
    );
    let mut compared = 0;
    for c in doc["counters"].as_array().unwrap() {
        let name = c["counter"].as_str().unwrap();
        let served_mali =
            c["source"] == "gatord" && name.starts_with("ARM_Mali-") && !name.contains("-CONST_");
        if c["source"] == "gpu" || served_mali {
            // Perfetto GPU counters, checked by the GPU tests.
            continue;
        }
        let mut parent = match c["source"].as_str().unwrap() {
            "cpu" => format!("cpu ({})", c["scope"].as_str().unwrap()),
            source => source.to_owned(),
        };
        // A counter of one CPU (`TaskClock@cpu1`, its `cpu_series`) is the counter's track under that CPU.
        let mut name = name;
        if let Some(series) = c.get("cpu_series") {
            name = series["counter"].as_str().unwrap();
            parent = format!("CPU {}", series["cpu"]);
        }
        let mut series = vec![(parent, &c["samples"])];
        for part in c["per_core"].as_array().into_iter().flatten() {
            series.push((format!("CPU {}", part["core"]), &part["samples"]));
        }
        for (parent, samples) in series {
            let (uuid, t) = track(trace, name, &parent);
            let (unit, unit_name) = expected_unit(c["units"].as_str().unwrap());
            assert_eq!(t["counter"]["unit"], unit, "{name}: {t}");
            assert_eq!(t["counter"]["unit_name"], unit_name, "{name}: {t}");
            assert_eq!(t["counter"]["incremental"], c["class"] == "delta", "{name}");
            assert_eq!(t["counter"]["categories"], json!([c["source"]]), "{name}");
            let multiplier = t["counter"]["multiplier"].as_f64().unwrap();
            let expected: Vec<(u64, &Value)> = samples
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| !s[1].is_null())
                .map(|s| (zero + s[0].as_u64().unwrap(), &s[1]))
                .collect();
            let empty = Vec::new();
            let got = trace["values"][uuid].as_array().unwrap_or(&empty);
            assert_eq!(got.len(), expected.len(), "{name} on {parent}");
            for ((t, value), point) in expected.iter().zip(got) {
                assert_eq!(point[0].as_u64(), Some(*t), "{name}");
                let written = point[1].as_f64().unwrap() * multiplier;
                assert!(same(value, written), "{name}: {value} written as {point}");
                compared += 1;
            }
        }
        if c["value"].is_null() {
            let mark = format!("{name}: no value");
            let instant = trace["instants"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == mark.as_str())
                .unwrap_or_else(|| panic!("no instant {mark}"));
            assert_eq!(instant["args"]["reason"], c["no_value"]);
            assert_eq!(instant["categories"], json!(["no value"]));
        }
    }
    compared
}

#[test]
fn a_gatord_sim_capture_becomes_a_trace_with_every_counters_track_unit_and_values() {
    // With gatord 9.7.2's Cortex-A72 events where the data folder is: a counter set's events and the cycle
    // counter counted on two cores, each core's part under its CPU.
    let events = common::gatord_data("events/events-Cortex-A72.xml");
    let sim = match &events {
        Some(events) => Sim::start(&[
            "--events",
            events.to_str().unwrap(),
            "--perf-counters",
            "ARMv8_Cortex_A72_ccnt",
            "--cores",
            "2",
        ]),
        None => Sim::start(&[]),
    };
    let dir = scratch("sim");
    let doc_path = dir.join("capture.json");
    let args = gatord_capture(
        &sim.address,
        "1s",
        &[
            "--per-core",
            "--format",
            "json",
            "-o",
            doc_path.to_str().unwrap(),
        ],
    );
    run(&args);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&doc_path).unwrap()).unwrap();
    let Some(trace) = converted(&doc_path) else {
        return;
    };
    let compared = check(&doc, &trace);
    let counters = doc["counters"].as_array().unwrap();
    let per_core = counters.iter().filter(|c| c["per_core"].is_array()).count();
    println!(
        "{} counters of the simulated gatord ({per_core} per core), {compared} values compared",
        counters.len()
    );
    assert!(counters.len() >= 2 && compared >= 10, "{compared} values");
    if events.is_some() {
        assert!(per_core >= 1, "no per-core counter");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_mali_counters_gatord_serves_become_perfetto_gpu_counters() {
    let sim = Sim::start(&["--gpu", "G78"]);
    let dir = scratch("gatord-mali");
    let doc_path = dir.join("capture.json");
    let args = gatord_capture(
        &sim.address,
        "500ms",
        &[
            "--counters",
            "ARM_Mali-G78_GPU_ACTIVE,ARM_Mali-G78_JS0_JOBS",
            "--format",
            "json",
            "-o",
            doc_path.to_str().unwrap(),
        ],
    );
    run(&args);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&doc_path).unwrap()).unwrap();
    let Some(trace) = converted(&doc_path) else {
        return;
    };
    let zero = doc["boottime_zero_ns"].as_u64().unwrap();
    let specs = trace["gpu_specs"].as_array().unwrap();
    let names: Vec<&str> = specs.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ARM_Mali-G78_GPU_ACTIVE", "ARM_Mali-G78_JS0_JOBS"]);
    for (spec, c) in specs.iter().zip(doc["counters"].as_array().unwrap()) {
        let got: Vec<(u64, f64)> = trace["gpu_values"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v[1] == spec["id"])
            .map(|v| (v[0].as_u64().unwrap(), v[2].as_f64().unwrap()))
            .collect();
        let expected: Vec<(u64, f64)> = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s[1].is_null())
            .map(|s| (zero + s[0].as_u64().unwrap(), s[1].as_f64().unwrap()))
            .collect();
        assert!(!expected.is_empty(), "{c}");
        assert_eq!(got, expected, "{}", spec["name"]);
    }
    // Not also counter tracks.
    let tracks = trace["tracks"].as_object().unwrap();
    assert!(tracks
        .values()
        .all(|t| t["name"] != "ARM_Mali-G78_GPU_ACTIVE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_local_per_cpu_capture_becomes_a_trace_with_each_cpus_tracks_under_it() {
    let dir = scratch("local");
    let doc_path = dir.join("capture.json");
    let doc = local_capture(&doc_path, &["--per-cpu"], "300ms");
    let Some(trace) = converted(&doc_path) else {
        return;
    };
    let compared = check(&doc, &trace);
    let cpus = trace["tracks"]
        .as_object()
        .unwrap()
        .values()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("CPU ")))
        .count();
    println!("local capture per CPU: {compared} values compared, {cpus} CPU tracks");
    assert!(
        cpus >= 1 && compared > 0,
        "{cpus} CPU tracks, {compared} values"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn capture_writes_a_perfetto_trace_directly_on_this_hosts_boot_clock() {
    let dir = scratch("direct");
    let trace_path = dir.join("capture.pftrace");
    let boottime = || {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
        assert_eq!(rc, 0);
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let before = boottime();
    run(&[
        "capture",
        "--no-gatord",
        "--counters",
        "TaskClock,PageFaults",
        "--duration",
        "200ms",
        "--format",
        "perfetto",
        "-o",
        trace_path.to_str().unwrap(),
    ]);
    let after = boottime();
    let Some(trace) = decode_trace(&trace_path) else {
        return;
    };
    let zero = trace["clock"]["clocks"][0][1].as_u64().unwrap();
    assert!(
        (before..=after).contains(&zero),
        "{before} ≤ {zero} ≤ {after}"
    );
    for name in ["TaskClock", "PageFaults"] {
        let (uuid, t) = trace["tracks"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(_, t)| t["name"] == name)
            .unwrap_or_else(|| panic!("no track {name}"));
        assert_eq!(t["counter"]["incremental"], true, "{t}");
        let values = trace["values"][uuid].as_array().expect("values");
        assert!(values.len() >= 10, "{name}: {values:?}");
        assert!(values
            .iter()
            .all(|v| (before..=after).contains(&v[0].as_u64().unwrap())));
    }
    let (_, clock) = trace["tracks"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(_, t)| t["name"] == "TaskClock")
        .unwrap();
    assert_eq!(clock["counter"]["unit"], "UNIT_TIME_NS");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mali_counters_become_perfetto_gpu_counters_and_trace_records_instants_of_their_process() {
    // A document as a capture on a Mali device writes it: this machine has no GPU, so a local capture's
    // counters are relabelled as the GPU's (the conversion reads only the document).
    let dir = scratch("gpu");
    let doc_path = dir.join("capture.json");
    let mut doc = local_capture(
        &doc_path,
        &["--counters", "TaskClock,PageFaults,ContextSwitches"],
        "200ms",
    );
    for c in doc["counters"].as_array_mut().unwrap().iter_mut().take(2) {
        c["source"] = json!("gpu");
        c["scope"] = json!("gpu");
        c["units"] = json!("B");
    }
    let start = doc["window_ns"][0].as_u64().unwrap();
    doc["trace_records"] = json!([{
        "timestamp_ns": start + 1_000, "seq": 7, "module": "draw", "file": "app.c", "line": 42,
        "pid": 4242, "bytes": 16
    }]);
    std::fs::write(&doc_path, doc.to_string()).unwrap();
    let Some(trace) = converted(&doc_path) else {
        return;
    };
    check(&doc, &trace);
    let zero = doc["boottime_zero_ns"].as_u64().unwrap();
    let gpu: Vec<&Value> = doc["counters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["source"] == "gpu")
        .collect();
    let specs = trace["gpu_specs"].as_array().unwrap();
    assert_eq!(specs.len(), gpu.len(), "{specs:?}");
    for (spec, c) in specs.iter().zip(&gpu) {
        assert_eq!(spec["name"], c["counter"]);
        assert_eq!(spec["units"], json!(["BYTE"]));
        let id = spec["id"].as_u64().unwrap();
        let got: Vec<(u64, f64)> = trace["gpu_values"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v[1].as_u64() == Some(id))
            .map(|v| (v[0].as_u64().unwrap(), v[2].as_f64().unwrap()))
            .collect();
        let expected: Vec<(u64, &Value)> = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| !s[1].is_null())
            .map(|s| (zero + s[0].as_u64().unwrap(), &s[1]))
            .collect();
        assert_eq!(got.len(), expected.len(), "{}", c["counter"]);
        for ((t, v), (gt, gv)) in expected.iter().zip(&got) {
            assert_eq!(t, gt);
            assert!(same(v, *gv), "{v} written as {gv}");
        }
    }
    let record = trace["instants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "draw")
        .expect("the trace record");
    assert_eq!(record["ts"].as_u64(), Some(zero + start + 1_000));
    assert_eq!(record["args"]["line"], 42);
    assert_eq!(record["args"]["file"], "app.c");
    assert_eq!(record["categories"], json!(["lizard-trace"]));
    let process = &trace["tracks"][record["track"].to_string()];
    assert_eq!(process["pid"], 4242, "{process}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_perfetto_trace_is_not_written_to_a_terminal() {
    // util-linux `script` gives the command a terminal as its standard output.
    if Command::new("script").arg("--version").output().is_err() {
        test_data::skip!(
            test_data::Fixture::Script,
            "no `script` to give lizard a terminal"
        );
        return;
    }
    let dir = scratch("tty");
    let doc_path = dir.join("capture.json");
    local_capture(&doc_path, &["--counters", "TaskClock"], "50ms");
    let command = format!(
        "{} report {} --format perfetto",
        env!("CARGO_BIN_EXE_lizard"),
        doc_path.display()
    );
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("script");
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("a Perfetto trace is binary: write it to a file with --output FILE"),
        "{text}"
    );
    // Through a pipe it is written.
    let piped = lizard(&["report", doc_path.to_str().unwrap(), "--format", "perfetto"]);
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(
        piped.stdout.first(),
        Some(&0x0a),
        "a Trace.packet field first"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
