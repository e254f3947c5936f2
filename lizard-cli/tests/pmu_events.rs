//! Arm PMU events by name through the local path (no gatord), judged by a real Arm kernel and PMU: the
//! emulated Arm system of `.ci/arm-vm --icount` (QEMU's Cortex-A72, whose PMU implements CPU_CYCLES and
//! INST_RETIRED, under `-icount shift=0 -smp 1`, where every instruction is one cycle). The `arm_loop`
//! example executes exactly 2 000 005 instructions at EL0, so `lizard stat --user-only -e INST_RETIRED`
//! must print that number, whichever way the event is named. Arm's per-core event lists are read from
//! `../shared/data/arm-pmu-data` through `LIZARD_PMU_DATA`. Elsewhere every test says why it skips.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::{json, stderr};
use serde_json::Value;

/// Instructions one `arm_loop` run executes at EL0.
const ARM_LOOP_INSTRUCTIONS: u64 = 2_000_005;

/// Whether the counts here are exact: only in the emulated Arm system run with `--icount`.
fn exact() -> bool {
    let exact = std::env::var("LIZARD_ARM_VM").as_deref() == Ok("icount");
    if !exact {
        test_data::skip!(
            test_data::Fixture::ArmIcount,
            "Arm PMU events are judged in the emulated Arm system with -icount (LIZARD_ARM_VM=icount)"
        );
    }
    exact
}

/// The `arm_loop` example, built beside this test binary.
fn arm_loop() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("profile folder");
    let program = profile.join("examples/arm_loop");
    assert!(
        program.is_file(),
        "{} is built with the tests",
        program.display()
    );
    program
}

/// `lizard ARGS` with Arm's PMU data (when the data folder is here).
fn lizard(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_lizard"));
    command.args(args);
    if let Some(data) = test_data::path("arm-pmu-data") {
        command.env("LIZARD_PMU_DATA", data);
    }
    command.output().expect("run lizard")
}

/// `lizard stat --user-only -e EVENTS --format json [--metrics] -- arm_loop`, as JSON.
fn stat(events: &str, metrics: bool) -> Value {
    let program = arm_loop();
    let mut args = vec!["stat", "--user-only", "-e", events, "--format", "json"];
    if metrics {
        args.push("--metrics");
    }
    args.extend(["--", program.to_str().unwrap()]);
    let out = lizard(&args);
    assert!(
        out.status.success(),
        "lizard stat -e {events}: {}",
        stderr(&out)
    );
    json(&out)
}

/// The value of the row named `name`.
fn value(doc: &Value, name: &str) -> u64 {
    doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|row| row["counter"] == name)
        .and_then(|row| row["value"].as_u64())
        .unwrap_or_else(|| panic!("no value for {name}: {doc:#}"))
}

#[test]
fn inst_retired_and_cpu_cycles_count_the_loop_exactly_by_mnemonic_kernel_name_and_number() {
    if !exact() {
        return;
    }
    let mut cycles_seen = Vec::new();
    for spelling in [
        "INST_RETIRED,CPU_CYCLES",
        "inst_retired,cpu_cycles",
        "0x08,0x11",
        "r8,r11",
    ] {
        let doc = stat(spelling, false);
        // Every spelling is the same event, by its Arm mnemonic.
        let instructions = value(&doc, "INST_RETIRED");
        let cycles = value(&doc, "CPU_CYCLES");
        assert_eq!(
            instructions, ARM_LOOP_INSTRUCTIONS,
            "lizard stat -e {spelling} -- arm_loop"
        );
        for row in doc["counters"].as_array().unwrap() {
            if row["counter"] == "INST_RETIRED" {
                assert_eq!(row["multiplexed"], false);
                assert_eq!(row["counted_share"], 1.0);
                assert_eq!(row["unit"], "events");
            }
        }
        cycles_seen.push(cycles);
        println!(
            "arm-vm: lizard stat --user-only -e {spelling} -- arm_loop: INST_RETIRED {instructions}, \
             CPU_CYCLES {cycles}"
        );
    }
    // One instruction is one cycle, and the same run gives the same count every time.
    assert!(
        cycles_seen.iter().all(|&c| c == cycles_seen[0]),
        "{cycles_seen:?}"
    );
    assert!(
        cycles_seen[0].abs_diff(ARM_LOOP_INSTRUCTIONS) < 16,
        "CPU_CYCLES {} for {ARM_LOOP_INSTRUCTIONS} instructions",
        cycles_seen[0]
    );
    // perf's spelling of one PMU: the same count, under that name.
    let doc = stat("armv8_pmuv3/inst_retired/", false);
    assert_eq!(
        value(&doc, "armv8_pmuv3/INST_RETIRED/"),
        ARM_LOOP_INSTRUCTIONS
    );
}

#[test]
fn stall_backend_is_refused_with_its_reason() {
    if !exact() {
        return;
    }
    let doc = stat("INST_RETIRED,STALL_BACKEND", false);
    assert_eq!(value(&doc, "INST_RETIRED"), ARM_LOOP_INSTRUCTIONS);
    let stall = doc["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["counter"] == "STALL_BACKEND")
        .unwrap_or_else(|| panic!("no STALL_BACKEND row: {doc:#}"));
    assert!(stall["value"].is_null());
    let reason = stall["unavailable"].as_str().expect("a reason");
    assert!(
        reason.contains("does not implement event 0x0024") && reason.contains("PMCEID"),
        "{reason}"
    );
    if test_data::path("arm-pmu-data").is_some() {
        // With Arm's lists, the core is named by its MIDR.
        assert!(reason.starts_with("Cortex-A72 "), "{reason}");
    }
    println!("arm-vm: lizard stat -e STALL_BACKEND: not counted: {reason}");
    // The table says the same, in its "not counted" part.
    let program = arm_loop();
    let out = lizard(&[
        "stat",
        "-e",
        "STALL_BACKEND",
        "--",
        program.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("STALL_BACKEND (1): "),
        "{}",
        stderr(&out)
    );
}

#[test]
fn metrics_give_ipc_from_the_arm_events() {
    if !exact() {
        return;
    }
    let doc = stat("INST_RETIRED,CPU_CYCLES", true);
    let instructions = value(&doc, "INST_RETIRED") as f64;
    let cycles = value(&doc, "CPU_CYCLES") as f64;
    let ipc = doc["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == "IPC" && m["pmu"].is_null())
        .unwrap_or_else(|| panic!("no IPC: {doc:#}"));
    assert_eq!(ipc["formula"], "INST_RETIRED / CPU_CYCLES");
    let value = ipc["value"].as_f64().unwrap_or_else(|| panic!("{ipc}"));
    assert!((value - instructions / cycles).abs() < 1e-12, "{ipc}");
    assert!(
        (value - 1.0).abs() < 1e-4,
        "one instruction per cycle: {value}"
    );
    // The top-down metrics need events this core does not implement: unavailable, with the reason.
    let backend = doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "Backend stalled cycles")
        .unwrap();
    assert!(
        backend["unavailable"]
            .as_str()
            .is_some_and(|r| r.contains("STALL_BACKEND")),
        "{backend}"
    );
    println!("arm-vm: lizard stat --metrics -e INST_RETIRED,CPU_CYCLES -- arm_loop: IPC {value}");
}

#[test]
fn list_shows_the_cpus_events_and_capture_counts_one_by_name() {
    if !exact() {
        return;
    }
    let out = lizard(&["list", "--no-gatord"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Arm PMU events of this CPU"), "{text}");
    let inst = text
        .lines()
        .find(|l| l.starts_with("INST_RETIRED"))
        .unwrap_or_else(|| panic!("no INST_RETIRED line: {text}"));
    assert!(inst.contains("0x0008") && inst.contains("yes"), "{inst}");
    if test_data::path("arm-pmu-data").is_some() {
        // Arm's list for the Cortex-A72: its events, those the emulated PMU lacks said so.
        assert!(text.contains("Cortex-A72"), "{text}");
        let refill = text
            .lines()
            .find(|l| l.starts_with("L1D_CACHE_REFILL "))
            .unwrap_or_else(|| panic!("no L1D_CACHE_REFILL line: {text}"));
        assert!(refill.trim_end().ends_with("no (PMCEID)"), "{refill}");
    }
    // capture counts an event named by its number, under its name, beside HWCPipe's counters: here CPU-wide
    // for half a second (more events than QEMU's PMU has counters: the kernel multiplexes them, and over a
    // window that long each is on a counter for a share of it).
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--system-wide",
        "--duration",
        "500ms",
        "--counters",
        "r8,Instructions",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let counter = common::counter(&doc, "INST_RETIRED");
    assert_eq!(counter["units"], "events");
    assert_eq!(counter["category"], "Arm PMU event");
    let total = counter["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no value: {counter:#}"));
    let generic = common::counter(&doc, "Instructions")["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no Instructions: {doc:#}"));
    assert!(total > 0.0 && generic > 0.0, "{counter:#}");
    println!(
        "arm-vm: lizard capture --system-wide --counters r8,Instructions: INST_RETIRED {total}, \
         Instructions {generic}"
    );
}
