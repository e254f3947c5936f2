//! The `lizard` binary end to end: every subcommand and output format, against the gatord simulator on
//! loopback, the local Linux software counters, and the real recordings in `../shared/data/` (gatord 9.7.2
//! events files and live session, OpenCSD STM snapshots).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{gatord_capture, json, lizard, spawn_sim, stderr, stdout};
use gator_proto::recorded::RecordedResponses;
use gatord_sim::{self as sim, SimConfig, SimSample, Stream};
use serde_json::Value;

fn data(path: &str) -> PathBuf {
    test_data::root().join(path)
}

/// `data(path)` if it exists; a missing recording is a printed skip.
fn present(path: &str) -> Option<PathBuf> {
    test_data::path(path)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// `false`, after saying so on stderr, where the kernel (or an emulator such as qemu-user) has no
/// `perf_event_open`: tests of the local counters skip there.
fn perf_events_present() -> bool {
    let present = hwcpipe::sys::perf_event_open_implemented();
    if !present {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
    }
    present
}

/// A simulator streaming these samples in every capture.
fn streaming_sim(samples: Vec<SimSample>) -> sim::SimHandle {
    sim::start(SimConfig {
        stream: Stream::Samples(samples),
        ..SimConfig::quick()
    })
    .expect("start simulator")
}

/// A simulator streaming two known samples per capture (ccnt 100 + 300, memfree 4096 and 8192).
fn scripted_sim() -> sim::SimHandle {
    let sample = |t: i64, ccnt: i64, memfree: i64| SimSample {
        timestamp_ns: t,
        values: vec![("Sim_ccnt".into(), ccnt), ("Sim_memfree".into(), memfree)],
    };
    streaming_sim(vec![sample(1_000, 100, 4096), sample(2_000, 300, 8192)])
}

#[test]
fn list_prints_local_counters_as_table_and_json() {
    if !perf_events_present() {
        return;
    }
    let table = lizard(&["list", "--no-gatord"]);
    assert!(table.status.success(), "{}", stderr(&table));
    assert!(stdout(&table).contains("TaskClock"));
    let listed = lizard(&["list", "--no-gatord", "--format", "json"]);
    let doc = json(&listed);
    let counters = doc["counters"].as_array().expect("counters");
    assert!(!counters.is_empty());
    for (index, counter) in counters.iter().enumerate() {
        assert_eq!(counter["id"], index + 1, "ids are positions");
        assert!(stdout(&table).contains(counter["counter"].as_str().expect("name")));
    }
}

#[test]
fn capture_from_gatord_reduces_as_documented_in_every_format() {
    let sim = scripted_sim();
    let address = sim.local_addr().to_string();
    let base = gatord_capture(&address, "100ms", &[]);

    let table = lizard(&[&base[..], &["--counters", "Sim_ccnt,Sim_memfree"]].concat());
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.contains(name))
            .unwrap_or_default()
            .to_owned()
    };
    // The reading is the column after the name: delta counters summed, absolute ones averaged.
    let reading = |name: &str| {
        let line = line(name);
        let mut words = line.split_whitespace().skip_while(|w| *w != name);
        words.nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(reading("Sim_ccnt"), "400", "delta sums: {text}");
    assert_eq!(reading("Sim_memfree"), "6,144", "absolute averages: {text}");
    assert!(
        text.starts_with("Counters of gatord, over "),
        "the source is said once, in the header: {text}"
    );
    assert!(stderr(&table).contains(&format!("gatord at {address}")));

    let doc = json(&lizard(
        &[&base[..], &["--counters", "Sim_ccnt", "--format", "json"]].concat(),
    ));
    assert_eq!(doc["counters"][0]["value"], 400);
    let samples = doc["counters"][0]["samples"].as_array().expect("samples");
    let values: Vec<&Value> = samples.iter().map(|s| &s[1]).collect();
    assert_eq!(values, [100, 300]);
    let times: Vec<i64> = samples
        .iter()
        .map(|s| s[0].as_i64().expect("time"))
        .collect();
    assert_eq!(
        times[1] - times[0],
        1000,
        "gatord's timestamps keep their spacing"
    );

    let csv = stdout(&lizard(
        &[&base[..], &["--counters", "Sim_memfree", "--format", "csv"]].concat(),
    ));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0], "timestamp_ns,id,counter,value");
    assert!(
        rows[1].ends_with(",3,Sim_memfree,4096") && rows[2].ends_with(",3,Sim_memfree,8192"),
        "{csv}"
    );

    let out = scratch("chrome").join("trace.json");
    let written = lizard(
        &[
            &base[..],
            &[
                "--format",
                "chrome-trace",
                "--output",
                out.to_str().expect("utf-8"),
            ],
        ]
        .concat(),
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let doc: Value =
        serde_json::from_slice(&std::fs::read(&out).expect("output file")).expect("JSON");
    let counter_events: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "C")
        .filter(|e| {
            let name = e["name"].as_str().unwrap_or_default();
            name.starts_with("Sim_ccnt ") || name.starts_with("Sim_memfree ")
        })
        .collect();
    assert_eq!(
        counter_events.len(),
        2 * 2,
        "two samples of the two scripted counters"
    );
    assert!(counter_events
        .iter()
        .all(|e| e["args"]["value"].is_number() && e["ts"].is_number()));
    sim.shutdown();
}

/// The simulator's `Sim_freq` is declared in MHz; captures write its values in Hz and say so.
#[test]
fn a_megahertz_counter_is_written_in_hertz_with_unit_and_values_agreeing() {
    let sample = |t: i64, mhz: i64| SimSample {
        timestamp_ns: t,
        values: vec![("Sim_freq".into(), mhz)],
    };
    let sim = streaming_sim(vec![sample(1_000, 1200), sample(2_000, 1800)]);
    let address = sim.local_addr().to_string();
    let base = [
        &gatord_capture(&address, "100ms", &[])[..],
        &["--counters", "Sim_freq"],
    ]
    .concat();
    let out = lizard(&[&base[..], &["--format", "json"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let freq = &doc["counters"][0];
    assert_eq!(freq["units"], "Hz", "{freq}");
    assert_eq!(freq["value"].as_f64(), Some(1.5e9), "{freq}");
    let samples: Vec<f64> = freq["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .map(|s| s[1].as_f64().expect("number"))
        .collect();
    assert_eq!(samples, [1.2e9, 1.8e9]);

    let table = stdout(&lizard(&base));
    let row = table
        .lines()
        .find(|l| l.contains("Sim_freq"))
        .unwrap_or_default();
    assert!(row.contains(" Hz ") && !row.contains("MHz"), "{table}");
    sim.shutdown();
}

#[test]
fn capture_of_local_counters_writes_every_format() {
    if !perf_events_present() {
        return;
    }
    for format in ["table", "csv", "json", "chrome-trace"] {
        let output = lizard(&[
            "capture",
            "--no-gatord",
            "--duration",
            "150ms",
            "--interval",
            "5ms",
            "--format",
            format,
        ]);
        assert!(output.status.success(), "{format}: {}", stderr(&output));
        // Every output says how the local sampling went: periods expected, delivered, missed.
        match format {
            "json" => {
                let sampling = &json(&output)["sampling"];
                assert_eq!(sampling["interval_ns"], 5_000_000, "{sampling}");
                // The default target is the whole system where CPU-wide counting is allowed: the kernel
                // samples each CPU's ring; elsewhere this process is counted, by a thread, which says why.
                let rings = match sampling["method"].as_str() {
                    Some("kernel") => sampling["rings"].as_u64().expect("rings"),
                    Some("thread") => {
                        assert!(
                            sampling["thread_reason"]
                                .as_str()
                                .is_some_and(|r| r.contains("task")),
                            "{sampling}"
                        );
                        1
                    }
                    _ => panic!("{sampling}"),
                };
                let expected = sampling["expected"].as_u64().expect("expected");
                let handled = sampling["delivered"].as_u64().expect("delivered")
                    + sampling["missed"].as_u64().expect("missed");
                assert!(
                    (25 * rings..=31 * rings).contains(&expected)
                        && handled <= expected
                        && expected <= handled + rings,
                    "{sampling}"
                );
                assert!(
                    sampling["largest_gap_ns"].as_u64() >= Some(4_000_000),
                    "{sampling}"
                );
            }
            "chrome-trace" => {
                let doc = json(&output);
                assert!(doc["otherData"]["sampling"]["expected"].is_u64(), "{doc}");
            }
            _ => {
                let text = stdout(&output);
                assert!(
                    text.contains("local sampling every 5 ms by "),
                    "{format}: {text}"
                );
                assert!(text.contains(" periods sampled, "), "{format}: {text}");
            }
        }
    }
    // Shorter than the engine samples at: refused before anything is opened, with the reason.
    for interval in ["0s", "50us"] {
        let output = lizard(&["capture", "--no-gatord", "--interval", interval]);
        assert_eq!(output.status.code(), Some(2), "{interval}");
        assert!(
            stderr(&output).contains("shortest sampling interval, 100us"),
            "{}",
            stderr(&output)
        );
    }
    let doc = json(&lizard(&[
        "capture",
        "--no-gatord",
        "--duration",
        "200ms",
        "--counters",
        "TaskClock",
        "--format",
        "json",
    ]));
    assert!(
        doc["counters"][0]["value"].as_i64().expect("int") > 0,
        "task clock counts: {doc}"
    );
}

#[test]
fn bad_names_and_addresses_fail_with_one_line_and_documented_codes() {
    // Names are checked against the counters a source offers: the local ones need perf events.
    if perf_events_present() {
        let unknown = lizard(&[
            "capture",
            "--no-gatord",
            "--counters",
            "TaskClok",
            "--duration",
            "10ms",
        ]);
        assert_eq!(unknown.status.code(), Some(2));
        assert!(
            stderr(&unknown).contains("did you mean 'TaskClock'"),
            "{}",
            stderr(&unknown)
        );
    }

    let refused = lizard(&["list", "--gatord", "127.0.0.1:1"]);
    assert_eq!(refused.status.code(), Some(3));
    let message = stderr(&refused);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(
        message.starts_with("lizard: cannot use gatord at 127.0.0.1:1"),
        "{message}"
    );

    let bad = lizard(&["list", "--gatord", "host:notaport"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("'host:notaport' is not an address: invalid port"),
        "{}",
        stderr(&bad)
    );

    let usage = lizard(&["capture", "--duration", "soon"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn stat_counts_a_command_and_exits_with_its_status() {
    if !perf_events_present() {
        return;
    }
    let output = lizard(&[
        "stat",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
    ]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let doc = json(&output);
    assert_eq!(doc["exit_status"], 3);
    let task_clock = doc["counters"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["counter"] == "TaskClock")
        .expect("row");
    assert!(task_clock["value"].as_u64().expect("counted") > 0);
    let cycles = doc["counters"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["counter"] == "Cycles")
        .expect("row");
    assert!(
        cycles["value"].is_u64() || cycles["unavailable"].is_string(),
        "counted or says why: {cycles}"
    );

    let table = lizard(&["stat", "--", "true"]);
    assert_eq!(table.status.code(), Some(0));
    assert!(stderr(&table).contains("exit status 0"));

    let missing = lizard(&["stat", "--", "/nonexistent/program"]);
    assert_ne!(missing.status.code(), Some(0));
    assert!(stderr(&missing).contains("/nonexistent/program"));
}

#[test]
fn stat_metrics_are_the_ratios_of_the_counted_rows_or_say_why_not() {
    if !perf_events_present() {
        return;
    }
    let output = lizard(&["stat", "--metrics", "--format", "json", "--", "true"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let row = |name: &str| {
        doc["counters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["counter"] == name && r["cpu"].is_null())
            .and_then(|r| r["value"].as_f64())
    };
    let metrics = doc["metrics"].as_array().expect("metrics");
    // Every metric once over all core types (and once more per core type where events are counted on
    // several, which a system of one core type has not).
    assert_eq!(metrics.len(), hwcpipe::cpu::METRICS.len(), "{doc}");
    for m in metrics {
        assert!(
            m["value"].is_number() != m["unavailable"].is_string(),
            "a value or why not: {m}"
        );
    }
    let ipc = metrics.iter().find(|m| m["metric"] == "IPC").unwrap();
    // Over Arm's events where the CPU has them, else over the generic counters, and it says which.
    let (numerator, denominator) = match ipc["formula"].as_str() {
        Some("INST_RETIRED / CPU_CYCLES") => ("INST_RETIRED", "CPU_CYCLES"),
        _ => ("Instructions", "Cycles"),
    };
    match (row(numerator), row(denominator)) {
        (Some(instructions), Some(cycles)) if cycles > 0.0 => {
            let value = ipc["value"].as_f64().expect("IPC");
            assert!((value - instructions / cycles).abs() < 1e-9, "{ipc}");
        }
        _ => assert!(
            ipc["unavailable"]
                .as_str()
                .is_some_and(|r| r.contains("needs ")),
            "{ipc}"
        ),
    }
    // Events this crate does not count are named.
    let frontend = metrics
        .iter()
        .find(|m| m["metric"] == "Frontend stalled cycles")
        .unwrap();
    assert!(
        frontend["unavailable"]
            .as_str()
            .is_some_and(|r| r.contains("STALL_FRONTEND")),
        "{frontend}"
    );
    // Without --metrics there are none.
    let plain = json(&lizard(&["stat", "--format", "json", "--", "true"]));
    assert!(plain["metrics"].is_null(), "{plain}");
}

#[test]
fn stat_names_an_unknown_counter_and_what_a_database_counter_needs() {
    // A typo: the closest name, exit 2, nothing counted.
    let typo = lizard(&["stat", "--counters", "TaskClok", "--", "true"]);
    assert_eq!(typo.status.code(), Some(2), "{}", stderr(&typo));
    assert!(
        stderr(&typo).contains("unknown counter 'TaskClok', did you mean 'TaskClock'?"),
        "{}",
        stderr(&typo)
    );
    // A counter of Arm's Mali database is read from the GPU: without one it is unknown, and says why.
    if std::path::Path::new("/dev/mali0").exists() {
        return;
    }
    let database = lizard(&["stat", "--counters", "MaliGPUActiveCy", "--", "true"]);
    assert_eq!(database.status.code(), Some(2), "{}", stderr(&database));
    assert!(
        stderr(&database).contains("counters of Arm's Mali database need a Mali GPU: no Mali GPU"),
        "{}",
        stderr(&database)
    );
}

#[test]
fn events_lists_the_shipped_mali_fragments() {
    let Some(file) = present("gatord-9.7.2/events/events-Mali-G78_hw.xml") else {
        return;
    };
    let text = std::fs::read_to_string(&file).expect("events file");
    let expected = text.matches("<event ").count();
    let output = lizard(&["events", file.to_str().expect("utf-8"), "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let events = doc["files"][0]["events"].as_array().expect("events");
    assert_eq!(events.len(), expected);
    assert!(events.iter().any(|e| e["counter"]
        .as_str()
        .is_some_and(|c| c.ends_with("GPU_ACTIVE"))));
    let table = lizard(&["events", file.to_str().expect("utf-8")]);
    assert_eq!(stdout(&table).lines().count(), expected + 1);

    let garbage = scratch("events").join("bad.xml");
    std::fs::write(&garbage, "<category name=\"x\"><event counter=\"a\"").expect("write");
    let bad = lizard(&["events", garbage.to_str().expect("utf-8")]);
    assert_eq!(bad.status.code(), Some(4));
    assert!(stderr(&bad).contains("bad.xml"));
}

/// The APC_DATA payloads (frames) of the recorded daemon stream `live-session/d2c.bin`.
fn recorded_frames() -> Vec<Vec<u8>> {
    let bytes = std::fs::read(data("gatord-9.7.2/live-session/d2c.bin")).expect("recording");
    RecordedResponses::new(&bytes)
        .expect("handshake line")
        .apc_frames()
        .map(|frame| frame.expect("recorded frame").to_vec())
        .collect()
}

#[test]
fn apc_dump_reads_a_capture_built_from_the_live_recording() {
    if present("gatord-9.7.2/live-session").is_none() {
        return;
    }
    let dir = scratch("apc").join("live.apc");
    std::fs::create_dir_all(&dir).expect("apc dir");
    let mut file = Vec::new();
    for frame in recorded_frames() {
        file.extend_from_slice(&u32::try_from(frame.len()).expect("small").to_le_bytes());
        file.extend_from_slice(&frame);
    }
    std::fs::write(dir.join("0000000000"), file).expect("frames");
    std::fs::copy(
        data("gatord-9.7.2/live-session/resp-captured.xml"),
        dir.join("captured.xml"),
    )
    .expect("captured");

    let output = lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    assert_eq!(doc["protocol"], 950);
    assert_eq!(doc["frames"]["Summary"], 1);
    assert_eq!(doc["frames"]["BlockCounter"], 31);
    assert_eq!(doc["frames"]["PerfAttrs"], 188);
    assert_eq!(doc["frames"]["PerfData"], 58);
    let first = doc["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .find(|s| s["perf_total"].is_null())
        .expect("a block counter value");
    assert_eq!(first["timestamp_ns"], 407_871);
    let memfree = doc["samples"]
        .as_array()
        .expect("samples")
        .iter()
        .find(|s| s["key"] == 0x5e)
        .expect("0x5e");
    assert_eq!(memfree["counter"], "Linux_meminfo_memfree");
    assert_eq!(memfree["value"], 24_318_210_048_i64);

    for format in ["table", "csv"] {
        let output = lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", format]);
        assert!(output.status.success());
        assert!(stdout(&output).contains("Linux_meminfo_memfree"));
    }
    let missing = lizard(&["apc-dump", "/nonexistent.apc"]);
    assert_eq!(missing.status.code(), Some(4));
}

#[test]
fn apc_dump_shows_the_arm_pmu_counters_of_gatords_own_capture() {
    // `gatord-9.7.2/arm64-vm-local.apc`: gatord 9.7.2's local capture on an emulated Cortex-A72 (one
    // instruction per cycle at a virtual 1 GHz); read in place, the command only reads.
    let Some(dir) = present("gatord-9.7.2/arm64-vm-local.apc") else {
        return;
    };
    let output = lizard(&["apc-dump", dir.to_str().expect("utf-8"), "--format", "json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let events = doc["perf_events"].as_array().expect("perf events");
    let task_clock = events.iter().find(|e| e["key"] == 0x66).expect("0x66");
    assert_eq!(
        task_clock["values"],
        "never sent (opened for counting only)"
    );
    let sum = |key: i64| -> (usize, i64) {
        let values: Vec<i64> = doc["samples"]
            .as_array()
            .expect("samples")
            .iter()
            .filter(|s| s["key"] == key)
            .map(|s| s["value"].as_i64().expect("value"))
            .collect();
        (values.len(), values.iter().sum())
    };
    let (cycles_n, cycles) = sum(0xa);
    let (inst_n, instructions) = sum(0xc);
    assert_eq!((cycles_n, inst_n), (4150, 4150));
    // Sums of the per-reading increases are the final totals: ≈ 3.005e9 each, 175 apart (first reading).
    assert_eq!(cycles - instructions, 175);
    assert!((3_000_000_000..3_010_000_000).contains(&cycles), "{cycles}");
    let table = lizard(&["apc-dump", dir.to_str().expect("utf-8")]);
    assert!(stdout(&table).contains("ARMv8_Cortex_A72_ccnt (Cycles: CPU Cycles)"));
    // The slot resolves through its counter set and the event captured.xml says it counts (0x8).
    assert!(stdout(&table).contains("ARMv8_Cortex_A72_cnt0 (Instructions (Executed): All)"));
}

#[test]
fn capture_of_the_arm_cycle_counter_through_perf_data_on_loopback() {
    // The Cortex-A72 events file gatord 9.7.2 ships (`gatord-9.7.2/events/events-Cortex-A72.xml`), served by
    // the simulator with the cycle counter as a perf-backed counter (PERF_ATTRS + PERF_DATA on two cores) and
    // the task clock as gatord serves it without a `count` (announced, never sent).
    let Some(events) = present("gatord-9.7.2/events/events-Cortex-A72.xml") else {
        return;
    };
    let software = scratch("perf-sim").join("events.xml");
    std::fs::create_dir_all(software.parent().expect("dir")).expect("scratch");
    let mut text = std::fs::read_to_string(&events).expect("events");
    text.push_str(
        r#"<category name="Clock"><event counter="PERF_COUNT_SW_TASK_CLOCK" title="Clock" name="Task Clock" units="ns"/></category>"#,
    );
    std::fs::write(&software, text).expect("write events");
    let (mut sim, address) = spawn_sim(&[
        "--events",
        software.to_str().expect("utf-8"),
        "--perf-counters",
        "ARMv8_Cortex_A72_ccnt",
        "--counting-only",
        "PERF_COUNT_SW_TASK_CLOCK",
    ]);
    let output = lizard(&gatord_capture(
        &address,
        "300ms",
        &[
            "--format",
            "json",
            "--counters",
            "ARMv8_Cortex_A72_ccnt,PERF_COUNT_SW_TASK_CLOCK",
        ],
    ));
    let _ = sim.kill();
    let _ = sim.wait();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let counters = doc["counters"].as_array().expect("counters");
    let ccnt = counters
        .iter()
        .find(|c| c["counter"] == "ARMv8_Cortex_A72_ccnt")
        .expect("ccnt");
    let samples = ccnt["samples"].as_array().expect("samples");
    assert!(samples.len() >= 20, "{}", samples.len());
    let summed: i64 = samples.iter().map(|s| s[1].as_i64().expect("int")).sum();
    assert!(summed > 0);
    assert_eq!(
        ccnt["value"].as_i64(),
        Some(summed),
        "delta: the per-core samples add up"
    );
    let task = counters
        .iter()
        .find(|c| c["counter"] == "PERF_COUNT_SW_TASK_CLOCK")
        .expect("task clock");
    assert!(task["value"].is_null());
    assert!(task["no_value"]
        .as_str()
        .expect("reason")
        .contains("counting only"));
    assert!(stderr(&output).contains("PERF_COUNT_SW_TASK_CLOCK is unavailable"));
}

#[test]
fn gatord_sim_serves_a_capture_in_both_protocol_generations() {
    for protocol in ["950", "670"] {
        let (mut child, address) = spawn_sim(&["--protocol", protocol]);
        let output = lizard(&gatord_capture(&address, "200ms", &["--format", "json"]));
        child.kill().ok();
        child.wait().ok();
        assert!(
            output.status.success(),
            "protocol {protocol}: {}",
            stderr(&output)
        );
        let doc = json(&output);
        let counters = doc["counters"].as_array().expect("counters");
        // The five fixed counters and the built-in Sim_cnt set's programmable event.
        assert_eq!(counters.len(), 6);
        assert!(
            counters
                .iter()
                .all(|c| !c["samples"].as_array().expect("samples").is_empty()),
            "{doc}"
        );
    }
}

#[test]
fn gatord_sim_serves_a_given_events_file() {
    let Some(file) = present("gatord-9.7.2/events/events-Linux.xml") else {
        return;
    };
    let (mut child, address) = spawn_sim(&["--events", file.to_str().expect("utf-8")]);
    let output = lizard(&[
        "list",
        "--gatord",
        &address,
        "--no-hwcpipe",
        "--format",
        "json",
    ]);
    child.kill().ok();
    child.wait().ok();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    assert!(doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .any(|c| c["counter"] == "Linux_meminfo_memfree"));
}

#[test]
fn stm_dump_decodes_the_opencsd_snapshot() {
    let Some(file) = present("opencsd-stm/stm_only/cstraceitm.bin") else {
        return;
    };
    let output = lizard(&[
        "stm-dump",
        file.to_str().expect("utf-8"),
        "--trace-id",
        "0x20",
        "--format",
        "json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let records = doc["records"].as_array().expect("records");
    assert!(records.iter().any(|r| r["record"] == "packet"));
    let text = lizard(&[
        "stm-dump",
        file.to_str().expect("utf-8"),
        "--trace-id",
        "0x20",
        "--elements",
    ]);
    assert!(text.status.success());
    assert!(!stdout(&text).is_empty());
    let bad = lizard(&[
        "stm-dump",
        file.to_str().expect("utf-8"),
        "--trace-id",
        "0x1000",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn trace_server_keeps_records_that_trace_dump_prints() {
    let dir = scratch("trace");
    let ring = dir.join("ring.bin");
    let socket = format!("@lizard-cli-test-{}", std::process::id());
    let mut server = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args([
            "trace-server",
            "--socket",
            &socket,
            "--capacity",
            "1MiB",
            "--duration",
            "3s",
        ])
        .arg("--output")
        .arg(&ring)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trace-server");
    let mut banner = String::new();
    let mut lines = BufReader::new(server.stderr.take().expect("stderr"));
    lines.read_line(&mut banner).expect("banner");
    let drain =
        std::thread::spawn(move || std::io::Read::read_to_string(&mut lines, &mut String::new()));
    let name: lizard_trace::SocketName = socket.parse().expect("name");
    let mut client = lizard_trace::TraceClient::connect(&name).expect("connect");
    for i in 0..5u8 {
        let delivery = client.record("render", &[i; 32]).expect("record");
        assert_eq!(delivery, lizard_trace::Delivery::Sent);
    }
    std::thread::sleep(Duration::from_millis(200));
    let status = server.wait().expect("server exits");
    drain.join().expect("drain").ok();
    assert!(status.success());
    let doc = json(&lizard(&[
        "trace-dump",
        ring.to_str().expect("utf-8"),
        "--format",
        "json",
    ]));
    let records = doc["records"].as_array().expect("records");
    assert_eq!(records.len(), 5);
    // The ledger: this process stored five, all still held, nothing lost.
    let clients = doc["clients"].as_array().expect("clients");
    assert_eq!(clients.len(), 1, "{clients:?}");
    assert_eq!(clients[0]["pid"], std::process::id());
    let count = |key: &str| clients[0][key].as_u64();
    assert_eq!(
        (count("stored"), count("held"), count("refused")),
        (Some(5), Some(5), Some(0))
    );
    assert!(records
        .iter()
        .all(|r| r["module"] == "render" && r["payload_len"] == 32));
    assert!(records.iter().all(|r| r["origin"]["kind"] == "inline"
        && r["stored_ns"].as_u64() >= r["timestamp_ns"].as_u64()));
    assert_eq!(doc["directory"]["next_seq"], 5);
    let text = lizard(&["trace-dump", ring.to_str().expect("utf-8")]);
    assert!(stdout(&text).contains("render"));
    assert!(stdout(&text).contains("inline"));
    assert!(stdout(&text).contains("clients:"), "{}", stdout(&text));
    let bad = lizard(&[
        "trace-dump",
        Path::new("/nonexistent").to_str().expect("utf-8"),
    ]);
    assert_eq!(bad.status.code(), Some(4));
}

/// Starts `lizard trace-server` with `args`, waits until it listens and gives its first lines and a drain
/// of the rest.
fn trace_server(args: &[&str]) -> (std::process::Child, Vec<String>) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .arg("trace-server")
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn trace-server");
    let mut lines = BufReader::new(server.stderr.take().expect("stderr"));
    let mut banner = Vec::new();
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line).expect("banner") == 0 {
            break;
        }
        let device = line.contains("device memory");
        banner.push(line);
        if device {
            break;
        }
    }
    std::thread::spawn(move || std::io::Read::read_to_string(&mut lines, &mut String::new()));
    (server, banner)
}

#[test]
fn trace_server_load_continues_a_saved_ring_and_says_whether_it_copies_device_memory() {
    let dir = scratch("trace-load");
    let first = dir.join("first.ring");
    let second = dir.join("second.ring");
    let socket = format!("@lizard-cli-load-{}", std::process::id());
    let name: lizard_trace::SocketName = socket.parse().expect("name");
    let record = |n: u8| {
        let mut client = lizard_trace::TraceClient::connect(&name).expect("connect");
        for i in 0..n {
            assert_eq!(
                client.record("load", &[i; 8]).expect("record"),
                lizard_trace::Delivery::Sent
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = |p: &Path| p.to_str().expect("utf-8").to_owned();
    let (mut server, banner) = trace_server(&[
        "--socket",
        &socket,
        "--capacity",
        "1MiB",
        "--duration",
        "2s",
        "--output",
        &out(&first),
    ]);
    // Said at start: whether device records can be copied, and if not why.
    let device_line = banner.last().expect("device line");
    assert!(
        device_line.contains("copies GPU device memory from")
            || device_line.contains("cannot copy GPU device memory: "),
        "{banner:?}"
    );
    record(3);
    assert!(server.wait().expect("exit").success());
    let (mut server, banner) = trace_server(&[
        "--socket",
        &socket,
        "--load",
        &out(&first),
        "--duration",
        "2s",
        "--output",
        &out(&second),
        "--no-device",
    ]);
    assert!(
        banner
            .iter()
            .any(|l| l.contains("continuing") && l.contains("3 records held (sequence 0 to 2)")),
        "{banner:?}"
    );
    assert!(
        banner.last().expect("device").contains("turned off"),
        "{banner:?}"
    );
    record(2);
    assert!(server.wait().expect("exit").success());
    let doc = json(&lizard(&["trace-dump", &out(&second), "--format", "json"]));
    let seqs: Vec<u64> = doc["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| r["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4]);
    assert_eq!(doc["directory"]["capacity"], 1 << 20);
    // A ring that does not load, and a capacity beside --load, are refused with their reasons.
    let bad = lizard(&["trace-server", "--socket", "@x", "--load", "/nonexistent"]);
    assert_eq!(bad.status.code(), Some(4), "{}", stderr(&bad));
    let both = lizard(&["trace-server", "--load", &out(&first), "--capacity", "1MiB"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn trace_server_max_payload_admits_records_larger_than_the_default() {
    let dir = scratch("trace-max-payload");
    let ring = dir.join("ring.bin");
    let out = ring.to_str().expect("utf-8").to_owned();
    let socket = format!("@lizard-cli-payload-{}", std::process::id());
    let (mut server, banner) = trace_server(&[
        "--socket",
        &socket,
        "--capacity",
        "64MiB",
        "--max-payload",
        "20MiB",
        "--duration",
        "3s",
        "--output",
        &out,
    ]);
    assert!(
        banner[0].contains("records of at most 20971520 bytes"),
        "{banner:?}"
    );
    let name: lizard_trace::SocketName = socket.parse().expect("name");
    let mut client = lizard_trace::TraceClient::connect(&name).expect("connect");
    // 17 MiB: above the default bound of 16 MiB, within this server's.
    let payload = vec![0x5au8; 17 << 20];
    assert_eq!(
        client.record("big", &payload).expect("record"),
        lizard_trace::Delivery::Sent
    );
    assert!(server.wait().expect("exit").success());
    let doc = json(&lizard(&["trace-dump", &out, "--format", "json"]));
    let records = doc["records"].as_array().expect("records");
    assert_eq!(records.len(), 1, "{doc}");
    assert_eq!(records[0]["payload_len"], 17 << 20);
    // A bound a record's length cannot hold is refused before the server starts.
    let bad = lizard(&["trace-server", "--socket", "@x", "--max-payload", "4GiB"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("larger than a record can be"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn trace_server_socket_mode_needs_a_path_and_octal_bits() {
    let abstract_name = lizard(&["trace-server", "--socket", "@x", "--socket-mode", "600"]);
    assert_eq!(abstract_name.status.code(), Some(2));
    assert!(
        stderr(&abstract_name).contains("--socket-mode needs a path socket"),
        "{}",
        stderr(&abstract_name)
    );
    let bad_bits = lizard(&["trace-server", "--socket", "/tmp/x", "--socket-mode", "999"]);
    assert_eq!(bad_bits.status.code(), Some(2));
    assert!(stderr(&bad_bits).contains("not permission bits in octal"));
}

#[test]
fn ctrl_c_stops_a_capture_cleanly_and_still_writes_the_output() {
    if !perf_events_present() {
        return;
    }
    let child = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args([
            "capture",
            "--no-gatord",
            "--duration",
            "60s",
            "--format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn capture");
    std::thread::sleep(Duration::from_millis(700));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let output = child.wait_with_output().expect("capture exits");
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("interrupted"));
    let doc = json(&output);
    assert!(doc["duration_s"].as_f64().expect("duration") < 30.0);
    assert!(!doc["counters"].as_array().expect("counters").is_empty());
}

#[test]
fn capture_puts_trace_records_of_the_window_beside_the_counters() {
    if !perf_events_present() {
        return;
    }
    let socket = format!("@lizard-cli-capture-{}", std::process::id());
    let child = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args([
            "capture",
            "--no-gatord",
            "--duration",
            "1500ms",
            "--format",
            "chrome-trace",
            "--trace",
            &socket,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn capture");
    let name: lizard_trace::SocketName = socket.parse().expect("name");
    let mut client = None;
    for _ in 0..100 {
        if let Ok(connected) = lizard_trace::TraceClient::connect(&name) {
            client = Some(connected);
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut client = client.expect("the capture's trace server accepts clients");
    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..3 {
        let delivery = client.record("draw", b"payload").expect("record");
        assert_eq!(delivery, lizard_trace::Delivery::Sent);
    }
    let output = child.wait_with_output().expect("capture exits");
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let instants: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "i")
        .collect();
    assert_eq!(instants.len(), 3, "{doc}");
    assert!(instants
        .iter()
        .all(|e| e["name"] == "draw" && e["args"]["file"].as_str().is_some()));
    let counter_times: Vec<f64> = doc["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "C")
        .map(|e| e["ts"].as_f64().expect("ts"))
        .collect();
    let (first, last) = (
        counter_times.iter().cloned().fold(f64::MAX, f64::min),
        counter_times.iter().cloned().fold(0.0, f64::max),
    );
    let at = instants[0]["ts"].as_f64().expect("ts");
    assert!(
        first <= at && at <= last,
        "record at {at} µs lies within the samples {first}..{last}"
    );
}

#[test]
fn gatord_sim_for_a_mali_gpu_offers_the_counters_a_real_gatord_names() {
    if present("gatord-9.7.2/events").is_none() {
        return;
    }
    for gpu in ["G71", "G78", "G715"] {
        let (mut child, address) = spawn_sim(&["--gpu", gpu]);
        let output = lizard(&[
            "list",
            "--gatord",
            &address,
            "--no-hwcpipe",
            "--format",
            "json",
        ]);
        child.kill().ok();
        child.wait().ok();
        assert!(output.status.success(), "{gpu}: {}", stderr(&output));
        let served: std::collections::BTreeSet<String> = json(&output)["counters"]
            .as_array()
            .expect("counters")
            .iter()
            .map(|c| c["counter"].as_str().expect("name").to_owned())
            .collect();
        let real = std::fs::read_to_string(data(&format!(
            "gatord-9.7.2/events/events-Mali-{gpu}_hw.xml"
        )))
        .expect("events");
        let prefix = format!("counter=\"ARM_Mali-{gpu}_");
        let named: std::collections::BTreeSet<String> = real
            .split(&prefix)
            .skip(1)
            .map(|rest| {
                format!(
                    "ARM_Mali-{gpu}_{}",
                    &rest[..rest.find('"').expect("closing quote")]
                )
            })
            .collect();
        assert!(!served.is_empty());
        let unknown: Vec<&String> = served.difference(&named).collect();
        assert!(
            unknown.is_empty(),
            "{gpu}: names gatord does not use: {unknown:?}"
        );
    }
    let bad = lizard(&[
        "gatord-sim",
        "--port",
        "0",
        "--gpu",
        "G9999",
        "--duration",
        "1s",
    ]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "an unknown GPU is a bad argument"
    );
    assert!(stderr(&bad).contains("Mali-G71"));
    let list = lizard(&["gatord-sim", "--gpu", "list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    assert!(stdout(&list).lines().any(|l| l.trim() == "Mali-G71"));
}

#[test]
fn counters_without_samples_say_so_in_every_format() {
    // The scripted samples carry Sim_ccnt and Sim_memfree only: Sim_instructions gets no sample.
    let sim = scripted_sim();
    let address = sim.local_addr().to_string();
    let base = [
        "capture",
        "--gatord",
        &address,
        "--duration",
        "100ms",
        "--counters",
        "Sim_ccnt,Sim_instructions",
    ];
    let table = lizard(&base);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    let row = text
        .lines()
        .find(|l| l.contains("Sim_instructions"))
        .unwrap_or_default();
    assert!(row.trim_end().ends_with("no samples"), "{text}");

    let doc = json(&lizard(&[&base[..], &["--format", "json"]].concat()));
    let entry = &doc["counters"][1];
    assert_eq!(entry["counter"], "Sim_instructions");
    assert!(entry["value"].is_null(), "{entry}");
    assert_eq!(entry["no_value"], "no samples");
    assert_eq!(doc["counters"][0]["value"], 400);
    assert!(
        (doc["duration_s"].as_f64().expect("duration") - 1e-6).abs() < 1e-12,
        "the samples' window (1 µs apart), not the wall clock: {}",
        doc["duration_s"]
    );
    assert!(doc["wall_s"].as_f64().expect("wall") >= 0.1);

    let csv = stdout(&lizard(&[&base[..], &["--format", "csv"]].concat()));
    assert!(
        csv.lines().any(|l| l.starts_with('#')
            && l.contains("Sim_instructions")
            && l.contains("no samples")),
        "{csv}"
    );

    let trace = json(&lizard(
        &[&base[..], &["--format", "chrome-trace"]].concat(),
    ));
    let missing = trace["otherData"]["counters_without_value"]
        .as_array()
        .expect("metadata");
    assert_eq!(missing.len(), 1, "{trace}");
    assert_eq!(missing[0]["counter"], "Sim_instructions");
    assert_eq!(missing[0]["reason"], "no samples");
    sim.shutdown();
}

#[test]
fn daemon_killed_mid_capture_exits_3_at_once_and_writes_the_samples() {
    let sim = sim::start(SimConfig {
        stream: Stream::Synthetic {
            period: Duration::from_millis(10),
        },
        faults: sim::Faults {
            die_after_frames: Some(5),
            ..sim::Faults::default()
        },
        ..SimConfig::quick()
    })
    .expect("start simulator");
    let address = sim.local_addr().to_string();
    let out = scratch("killed").join("capture.json");
    let started = std::time::Instant::now();
    let output = lizard(&[
        "capture",
        "--gatord",
        &address,
        "--counters",
        "Sim_ccnt",
        "--duration",
        "20s",
        "--format",
        "json",
        "--output",
        out.to_str().expect("utf-8"),
    ]);
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    // The daemon closes ~50 ms into the capture; the whole run (connections included) ends well within a
    // second of that, not at the requested 20 s.
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    let errors = stderr(&output);
    let failure: Vec<&str> = errors
        .lines()
        .filter(|l| l.contains("closed the connection"))
        .collect();
    assert_eq!(failure.len(), 1, "one line saying so: {errors}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).expect("written")).expect("JSON");
    let samples = doc["counters"][0]["samples"].as_array().expect("samples");
    assert_eq!(
        samples.len(),
        5,
        "the five samples sent before dying are written"
    );
    sim.shutdown();
}

#[test]
fn daemon_error_during_capture_is_shown_and_exits_non_zero() {
    const TEXT: &str = "Perf agent failed. Invalid event and/or could not online CPUs";
    let sim = sim::start(SimConfig {
        faults: sim::Faults {
            error_after_frames: Some((2, TEXT.into())),
            ..sim::Faults::default()
        },
        ..SimConfig::quick()
    })
    .expect("start simulator");
    let address = sim.local_addr().to_string();
    let started = std::time::Instant::now();
    let output = lizard(&["capture", "--gatord", &address, "--duration", "20s"]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(started.elapsed() < Duration::from_secs(5), "ended early");
    assert!(stderr(&output).contains(TEXT), "{}", stderr(&output));
    sim.shutdown();
}

#[test]
fn capture_with_no_sample_for_any_counter_exits_non_zero() {
    let sim = sim::start(SimConfig {
        stream: Stream::Samples(Vec::new()),
        ..SimConfig::quick()
    })
    .expect("start simulator");
    let address = sim.local_addr().to_string();
    let output = lizard(&["capture", "--gatord", &address, "--duration", "100ms"]);
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("nothing was measured"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).contains("no samples"));
    sim.shutdown();
}

#[test]
fn local_counters_join_gatord_only_on_request_and_say_what_they_count() {
    if !perf_events_present() {
        return;
    }
    let sim = scripted_sim();
    let address = sim.local_addr().to_string();
    let plain = json(&lizard(&["list", "--gatord", &address, "--format", "json"]));
    let sources: Vec<&str> = plain["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .map(|c| c["source"].as_str().expect("source"))
        .collect();
    assert!(sources.iter().all(|s| *s == "gatord"), "{sources:?}");

    // With a command named, the local counters count it, beside gatord's system-wide ones.
    let doc = json(&lizard(&[
        "list", "--gatord", &address, "--format", "json", "--", "true",
    ]));
    let entry = doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|c| c["counter"] == "TaskClock")
        .expect("TaskClock");
    assert_eq!(entry["scope"], "command 'true' and its children");
    assert_eq!(
        entry["title"],
        "HWCPipe CPU (command 'true' and its children)"
    );
    assert_eq!(doc["counters"][0]["scope"], "system");

    // --local without a target: the whole system where allowed, else a probe labelled so; never
    // silently this process.
    let local = lizard(&["list", "--gatord", &address, "--local"]);
    assert!(local.status.success(), "{}", stderr(&local));
    let text = stdout(&local);
    // The section heading before TaskClock's row says what the local counters count.
    let heading = text
        .lines()
        .take_while(|l| !l.contains("TaskClock"))
        .filter(|l| l.ends_with(':'))
        .last()
        .expect("local counters listed with --local, under a heading");
    assert!(
        heading.contains("cpu (system-wide") || heading.contains("probe"),
        "{heading}"
    );
    assert!(!heading.contains("cpu (this process)"), "{heading}");
    sim.shutdown();
}

/// Instructions `examples/arm_loop.rs` executes at EL0: a loop of 1 000 000 × 2 and 5 around it.
const ARM_LOOP_INSTRUCTIONS: u64 = 2 * 1_000_000 + 5;

/// The `arm_loop` example, built beside this test binary by `cargo test` (`deps/../examples/`).
fn arm_loop_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().expect("test binary path");
    let profile = exe.parent()?.parent()?;
    Some(profile.join("examples/arm_loop")).filter(|p| p.is_file())
}

#[test]
fn stat_counts_every_instruction_of_a_known_program() {
    if std::env::var("LIZARD_ARM_VM").as_deref() != Ok("icount") {
        test_data::skip!(
            test_data::Fixture::ArmIcount,
            "exact counts need the Arm VM with -icount (LIZARD_ARM_VM=icount)"
        );
        return;
    }
    let program = arm_loop_program().expect("the arm_loop example is built with the tests");
    let program = program.to_str().expect("UTF-8 path");
    let output = lizard(&[
        "stat",
        "--user-only",
        "--counters",
        "Instructions,InstrRetired",
        "--format",
        "json",
        "--",
        program,
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    assert_eq!(doc["kernel_excluded"], true);
    for row in doc["counters"].as_array().expect("rows") {
        assert_eq!(
            row["value"].as_u64(),
            Some(ARM_LOOP_INSTRUCTIONS),
            "{row}: every instruction of the loop program, and nothing else"
        );
    }
    // Under -icount shift=0 every instruction takes one cycle: IPC is 1.00.
    let output = lizard(&["stat", "--metrics", "--format", "json", "--", program]);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = json(&output);
    let metrics = doc["metrics"].as_array().expect("metrics");
    let ipc = metrics
        .iter()
        .find(|m| m["metric"] == "IPC")
        .and_then(|m| m["value"].as_f64())
        .unwrap_or_else(|| panic!("no IPC: {doc}"));
    assert!((ipc - 1.0).abs() < 0.02, "IPC {ipc}: {doc}");
    let unavailable: Vec<String> = metrics
        .iter()
        .filter(|m| m["value"].is_null())
        .map(|m| format!("{}: {}", m["metric"], m["unavailable"]))
        .collect();
    println!("lizard stat --metrics of arm_loop under -icount: IPC {ipc:.4}; unavailable: {unavailable:?}");
}

/// `capture --format json` of a simulator streaming ccnt `ccnt` in two samples (and memfree 4096, 8192),
/// saved under `name` in a scratch folder.
fn saved_capture(name: &str, ccnt: [i64; 2]) -> std::path::PathBuf {
    let sample = |t: i64, ccnt: i64, memfree: i64| SimSample {
        timestamp_ns: t,
        values: vec![("Sim_ccnt".into(), ccnt), ("Sim_memfree".into(), memfree)],
    };
    let daemon = streaming_sim(vec![
        sample(1_000, ccnt[0], 4096),
        sample(2_000, ccnt[1], 8192),
    ]);
    let dir = std::env::temp_dir().join(format!("lizard-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    let address = daemon.address().to_string();
    let out = lizard(&gatord_capture(
        &address,
        "200ms",
        &[
            "--counters",
            "Sim_ccnt,Sim_memfree",
            "--format",
            "json",
            "-o",
            path.to_str().expect("utf-8"),
        ],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    daemon.shutdown();
    path
}

#[test]
fn diff_reports_a_known_change_and_its_exit_status_follows_the_limit() {
    // The same two samples, the new run's cycles 20 % more: 400 against 480.
    let base = saved_capture("base.json", [100, 300]);
    let new = saved_capture("new.json", [120, 360]);
    // Each run says what ran and where.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&base).expect("saved")).expect("JSON");
    let run = &saved["run"];
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease");
    assert_eq!(run["kernel"], format!("Linux {}", release.trim()), "{run}");
    assert_eq!(run["lizard_version"], env!("CARGO_PKG_VERSION"), "{run}");
    assert!(run["command"]
        .as_array()
        .is_some_and(|c| c.iter().any(|a| a == "Sim_ccnt,Sim_memfree")));
    assert!(run["gatord_protocol"].as_i64() > Some(0), "{run}");
    // The daemon as its `<captured>` target describes it (the simulator's, as gatord 9.7.2 writes it).
    assert_eq!(run["gatord"]["build_id"], "oss", "{run}");
    assert_eq!(run["gatord"]["model"], "lizard-sim", "{run}");
    assert_eq!(run["gatord"]["os"], "linux", "{run}");
    assert!(
        !run["online_cpus"].as_array().expect("CPUs").is_empty(),
        "{run}"
    );
    let (base, new) = (base.to_str().unwrap(), new.to_str().unwrap());
    let table = lizard(&["diff", base, new]);
    assert!(
        stdout(&table).contains(", gatord build oss on lizard-sim"),
        "{}",
        stdout(&table)
    );
    assert!(
        stdout(&table).contains("base run: lizard "),
        "{}",
        stdout(&table)
    );
    assert_eq!(table.status.code(), Some(0), "{}", stderr(&table));
    let row = stdout(&table)
        .lines()
        .find(|l| l.starts_with("Sim_ccnt"))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{}", stdout(&table)));
    for cell in ["400", "480", "+80", "1.2000"] {
        assert!(row.split_whitespace().any(|c| c == cell), "{cell} in {row}");
    }
    let doc = json(&lizard(&["diff", base, new, "--format", "json"]));
    let ccnt = doc["counters"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["counter"] == "Sim_ccnt"))
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(
        (ccnt["base"].as_f64(), ccnt["new"].as_f64()),
        (Some(400.0), Some(480.0))
    );
    assert!(
        (ccnt["ratio"].as_f64().unwrap() - 1.2).abs() < 1e-12,
        "{ccnt}"
    );
    // memfree is the same in both: within any limit.
    let judged = |limit: &str, counters: &str| {
        lizard(&[
            "diff",
            base,
            new,
            "--max-increase",
            limit,
            "--counters",
            counters,
        ])
    };
    let past = judged("10", "Sim_ccnt");
    assert_eq!(past.status.code(), Some(5));
    assert!(
        stderr(&past).contains("Sim_ccnt grew +20.00% (400 to 480 cycles), past the limit"),
        "{}",
        stderr(&past)
    );
    assert_eq!(judged("25", "Sim_ccnt").status.code(), Some(0));
    assert_eq!(judged("0", "Sim_memfree").status.code(), Some(0));
    // Every counter judged when none is named; a name in neither capture fails the comparison.
    assert_eq!(
        lizard(&["diff", base, new, "--max-increase", "10"])
            .status
            .code(),
        Some(5)
    );
    let missing = judged("50", "Sim_nothing");
    assert_eq!(missing.status.code(), Some(5));
    assert!(
        stderr(&missing).contains("Sim_nothing is in neither capture"),
        "{}",
        stderr(&missing)
    );
    // What is not a capture is refused with one line, exit 4, as `report` does.
    let bad = lizard(&["diff", base, "/dev/null"]);
    assert_eq!(bad.status.code(), Some(4));
    assert!(
        stderr(&bad).starts_with("lizard: /dev/null"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(
        lizard(&["diff", base, new, "--max-increase", "-1"])
            .status
            .code(),
        Some(2)
    );
}

/// The sources' checks of `lizard doctor --format json`, by source name.
fn doctor_sources(out: &std::process::Output) -> Vec<Value> {
    json(out)["sources"].as_array().expect("sources").clone()
}

#[test]
fn doctor_says_whether_gatord_answers_is_busy_or_is_not_running() {
    let sim = sim::start(SimConfig::quick()).expect("start simulator");
    let address = sim.local_addr().to_string();
    let out = lizard(&[
        "doctor", "--gatord", &address, "--source", "gatord", "--format", "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let sources = doctor_sources(&out);
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0]["source"], "gatord");
    assert_eq!(sources[0]["works"], true);
    let found = sources[0]["checks"][0]["found"].as_str().expect("found");
    assert!(
        found.starts_with("protocol ") && found.contains("counters offered"),
        "{found}"
    );
    drop(sim);

    let busy = sim::start(SimConfig {
        faults: sim::Faults {
            busy: true,
            ..sim::Faults::default()
        },
        ..SimConfig::quick()
    })
    .expect("start simulator");
    let out = lizard(&[
        "doctor",
        "--gatord",
        &busy.local_addr().to_string(),
        "--source",
        "gatord",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let check = &doctor_sources(&out)[0]["checks"][0];
    assert_eq!(check["status"], "failed");
    assert!(
        check["cause"].as_str().unwrap_or_default().contains("busy"),
        "{check}"
    );

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = listener.local_addr().expect("addr").to_string();
    drop(listener);
    let out = lizard(&["doctor", "--gatord", &dead, "--source", "gatord"]);
    assert_eq!(out.status.code(), Some(3));
    let text = stdout(&out);
    assert!(
        text.contains("gatord: does NOT work") && text.contains("adb forward tcp:"),
        "{text}"
    );
}

#[test]
fn doctor_checks_this_machines_sources_and_says_why_with_the_fix() {
    let out = lizard(&["doctor", "--format", "json"]);
    let sources = doctor_sources(&out);
    let names: Vec<&str> = sources
        .iter()
        .map(|s| s["source"].as_str().expect("source"))
        .collect();
    assert_eq!(names, ["cpu", "gpu", "trace-server"]);
    // Without --source, only a source this machine has and that does not work fails the run.
    let broken = sources.iter().any(|s| s["verdict"] == "broken");
    assert_eq!(out.status.code(), Some(if broken { 3 } else { 0 }));
    for source in &sources {
        assert_eq!(
            source["works"] == true,
            ["works", "partly"].contains(&source["verdict"].as_str().expect("verdict"))
        );
    }
    // Every failed check says why, or how to fix it.
    for source in &sources {
        for check in source["checks"].as_array().expect("checks") {
            if check["status"] == "failed" {
                assert!(
                    check["cause"].is_string() || check["fix"].is_string(),
                    "{check}"
                );
            }
        }
    }
    // Without a Mali device node, the GPU is not on this machine, and its report says how to load the
    // driver; named with --source, it fails the run.
    if !Path::new("/dev/mali0").exists() {
        assert_eq!(sources[1]["works"], false);
        let named = lizard(&["doctor", "--source", "gpu"]);
        assert_eq!(named.status.code(), Some(3));
        assert!(stdout(&named).starts_with("GPU: not on this machine (no Mali device node)"));
        assert!(sources[1]["checks"][0]["fix"]
            .as_str()
            .unwrap_or_default()
            .contains("mali_kbase"));
    }
    let usage = lizard(&["doctor", "--source", "gatord"]);
    assert_eq!(usage.status.code(), Some(2), "{}", stderr(&usage));
}

/// `lizard ARGS` with `LIZARD_PMU_DATA` set to `data`.
fn lizard_with_pmu_data(data: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(args)
        .env("LIZARD_PMU_DATA", data)
        .output()
        .expect("run lizard")
}

#[test]
fn arm_pmu_data_that_cannot_be_read_is_said_and_exits_4() {
    // A folder that does not exist: every command that names events says so, before counting anything.
    let missing = "/nonexistent/arm-pmu-data";
    for args in [
        &["stat", "-e", "INST_RETIRED", "--", "true"][..],
        &[
            "capture",
            "--no-gatord",
            "-e",
            "INST_RETIRED",
            "--duration",
            "100ms",
            "--",
            "true",
        ][..],
        &["list", "--no-gatord"][..],
    ] {
        let out = lizard_with_pmu_data(missing, args);
        assert_eq!(out.status.code(), Some(4), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("/nonexistent/arm-pmu-data/cpus.json"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // The doctor says it, and what to do, where there is an Arm PMU for the lists to describe (the
    // emulated Arm system runs this test too).
    let out = lizard_with_pmu_data(missing, &["doctor", "--source", "cpu", "--format", "json"]);
    let doc = json(&out);
    let checks = doc["sources"][0]["checks"].as_array().expect("checks");
    let arm = checks.iter().any(|c| {
        c["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("Arm PMU arm"))
    });
    let lists = checks.iter().find(|c| c["name"] == "Arm's PMU event lists");
    match (arm, lists) {
        (true, Some(check)) => {
            assert_eq!(check["status"], "warning", "{check}");
            assert!(check["fix"]
                .as_str()
                .is_some_and(|f| f.contains("ARM-software/data")));
        }
        (false, None) => {}
        _ => panic!("the event lists are checked where there is an Arm PMU: {doc:#}"),
    }
    // A name spelled as an event that is none is a bad argument, whatever the machine.
    let out = lizard(&["stat", "-e", "0x10000", "--", "true"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("does not fit the 16 bits"),
        "{}",
        stderr(&out)
    );
}
