//! The `lizard` command over Arm's real kbase driver: r35p0 over its dummy GPU model, loaded in
//! the emulated Arm system of `.ci/kbase-tests` once per GPU of the model's table
//! (`LIZARD_KBASE_GPU` names it). Every dummy counter is set to 1000 with `KBASE_IOCTL_HWCNT_SET`;
//! the commands must show the GPU counters, or say why the GPU cannot be read. Elsewhere every test
//! skips, saying why.

#[path = "support/arm_equations.rs"]
mod arm_equations;
mod common;
#[path = "../../hwcpipe-rs/tests/support/kbase_dummy.rs"]
mod kbase_dummy;

use std::collections::HashMap;

use arm_equations::{evaluate, Database, Failure};
use common::{json, lizard, stderr, stdout};
use kbase_dummy::{distinct, loaded_gpu, set_counters};

/// Serializes the tests: they share the model's counter values.
static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn capture_gives_the_gpu_counters_with_values_from_the_driver() {
    let Some(gpu) = loaded_gpu() else { return };
    let _guard = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    set_counters(&|_, _| 1000).expect("KBASE_IOCTL_HWCNT_SET");
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--duration",
        "1s",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    if gpu == "tDUx" {
        // The summary on stderr says why there are no GPU counters.
        let err = stderr(&out);
        assert!(
            err.contains("unsupported Mali GPU tDUx") && err.contains("/dev/mali0"),
            "{err}"
        );
        println!(
            "lizard capture on {gpu}: no GPU counters, and why: {}",
            err.trim()
        );
        return;
    }
    let doc = json(&out);
    let gpu_counters: Vec<&serde_json::Value> = doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .filter(|c| c["source"] == "gpu")
        .collect();
    let with_values = gpu_counters
        .iter()
        .filter(|c| c["value"].is_number())
        .count();
    assert!(
        with_values >= 20,
        "{gpu}: {with_values} GPU counters with values: {doc}"
    );
    let cycles = gpu_counters
        .iter()
        .find(|c| c["counter"] == "GpuCycles")
        .and_then(|c| c["value"].as_f64())
        .expect("GpuCycles has a value");
    assert!(
        cycles > 0.0 && cycles % 1000.0 == 0.0,
        "{gpu}: GpuCycles {cycles}"
    );
    // The run document names the GPU the driver identified and the driver's interface version.
    let product = doc["run"]["gpu"].as_str().expect("run.gpu");
    let driver = doc["run"]["gpu_driver"].as_str().expect("run.gpu_driver");
    assert!(product.starts_with("Mali-"), "{gpu}: {product}");
    assert!(
        driver.starts_with("JM ") || driver.starts_with("CSF "),
        "{gpu}: {driver}"
    );
    println!(
        "lizard capture on {gpu}: {product} (kbase {driver}), {with_values} GPU counters with values, \
         GpuCycles {cycles}"
    );
}

/// The GPU is sampled at the driver's pace, on its own, while the CPUs keep the kernel's sampling: the
/// driver dumps every period by itself and each dump is one sample, every period accounted for.
#[test]
fn capture_samples_the_gpu_at_the_drivers_pace_beside_the_kernels_cpu_sampling() {
    let Some(gpu) = loaded_gpu() else { return };
    if gpu == "tDUx" {
        test_data::skip!(
            test_data::Fixture::Kbase,
            "{gpu} is a GPU the readers do not support (the capture test checks why)"
        );
        return;
    }
    let _guard = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    set_counters(&|_, _| 1000).expect("KBASE_IOCTL_HWCNT_SET");
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--system-wide",
        "--duration",
        "2s",
        "--interval",
        "1ms",
        "--counters",
        "GpuCycles,CpuClock",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{gpu}: {}", stderr(&out));
    let doc = json(&out);
    let sampling = &doc["sampling"];
    assert_eq!(
        sampling["method"], "kernel",
        "{gpu}: the CPUs keep the kernel's sampling: {sampling}"
    );
    let account = &sampling["gpu"];
    assert_eq!(account["pace"], "periodic", "{gpu}: {account}");
    let n = |key: &str| {
        account[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key}: {account}"))
    };
    let (expected, delivered, folded, missed, not_counting) = (
        n("expected"),
        n("delivered"),
        n("folded"),
        n("missed"),
        n("not_counting"),
    );
    assert!(expected >= 1900, "{gpu}: {account}");
    // A dump's span is rounded to whole periods, so the last may reach into the period under way.
    let handled = delivered + folded + missed + not_counting;
    assert!(
        expected <= handled && handled <= expected + 2,
        "{gpu}: every period accounted for: {account}"
    );
    // The driver's own dumps lose no counts: where the emulated system is slow, periods are folded into
    // the next dump, and only those at the stop can be missed.
    assert!(missed * 10 <= expected, "{gpu}: {account}");
    let cycles = doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .find(|c| c["counter"] == "GpuCycles")
        .expect("GpuCycles");
    let samples = cycles["samples"].as_array().map_or(0, Vec::len) as u64;
    assert_eq!(samples, delivered, "{gpu}: one sample per dump: {account}");
    println!(
        "lizard capture on {gpu}, GPU at the driver's 1 ms pace for 2 s beside the kernel's CPU sampling: \
         {delivered} of {expected} periods delivered, {folded} folded, {missed} missed, {not_counting} \
         not counting yet, largest gap {:.3} ms",
        n("largest_gap_ns") as f64 / 1e6
    );
}

#[test]
fn list_and_stat_show_the_gpu_counters_or_why_not() {
    let Some(gpu) = loaded_gpu() else { return };
    let _guard = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    set_counters(&|_, _| 1000).expect("KBASE_IOCTL_HWCNT_SET");
    let list = lizard(&["list", "--no-gatord"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = format!("{}{}", stdout(&list), stderr(&list));
    let stat = lizard(&["stat", "--", "true"]);
    let stat_text = format!("{}{}", stdout(&stat), stderr(&stat));
    if gpu == "tDUx" {
        for t in [&text, &stat_text] {
            assert!(t.contains("unsupported Mali GPU tDUx"), "{t}");
        }
        return;
    }
    assert!(
        text.contains("GpuCycles"),
        "{gpu}: lizard list shows no GpuCycles: {text}"
    );
    assert!(!text.contains(" 0 GPU counters"), "{text}");
    assert!(stat.status.success(), "{stat_text}");
    assert!(
        stat_text.contains("GpuCycles"),
        "{gpu}: lizard stat shows no GpuCycles: {stat_text}"
    );
    // JSON: a GPU row per counter; one sample covers the command, a whole number of dumps (none
    // where the CSF backend had not started counting yet, see docs/kbase.md).
    let stat_json = lizard(&["stat", "--format", "json", "--", "true"]);
    let doc = json(&stat_json);
    let rows = doc["counters"].as_array().expect("rows");
    let cycles = rows
        .iter()
        .find(|r| r["counter"] == "GpuCycles" && r["source"] == "gpu")
        .and_then(|r| r["value"].as_f64())
        .unwrap_or_else(|| panic!("{gpu}: no GpuCycles row: {doc}"));
    assert!(cycles % 1000.0 == 0.0, "{gpu}: GpuCycles {cycles}");
    assert!(doc["gpu_unavailable"].is_null(), "{doc}");

    // Every counter of Arm's database the GPU has: listed (the rest named with the reason) and counted
    // by name.
    let listed = json(&lizard(&["list", "--no-gatord", "--format", "json"]));
    let database: Vec<&serde_json::Value> = listed["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .filter(|c| {
            c["category"]
                .as_str()
                .is_some_and(|c| c.ends_with("(Arm's database)"))
        })
        .collect();
    let unreadable = listed["unreadable"].as_array().expect("unreadable").len();
    assert!(
        database.len() > 100,
        "{gpu}: {} database counters",
        database.len()
    );
    let derived = database.iter().filter(|c| c["class"] == "absolute").count();
    let stat_json = lizard(&[
        "stat",
        "--counters",
        "MaliGPUActiveCy",
        "--format",
        "json",
        "--",
        "true",
    ]);
    assert!(stat_json.status.success(), "{}", stderr(&stat_json));
    let doc = json(&stat_json);
    let active = doc["counters"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["counter"] == "MaliGPUActiveCy")
        .and_then(|r| r["value"].as_f64())
        .unwrap_or_else(|| panic!("{gpu}: no MaliGPUActiveCy: {doc}"));
    assert!(active % 1000.0 == 0.0, "{gpu}: MaliGPUActiveCy {active}");
    println!(
        "lizard list and stat on {gpu}: GPU counters listed and counted; {} counters of Arm's database \
         listed ({derived} percentages or rates), {unreadable} not readable here; MaliGPUActiveCy {active}",
        database.len()
    );
}

/// A derived counter's reading over a capture of many samples is its equation over the capture's totals,
/// checked against Arm's database evaluated here from its XML: constants read as constants, ratios as ratios
/// of the totals, rates as totals over the capture's length, and nothing clamped.
#[test]
fn derived_counters_over_many_samples_are_their_equations_over_the_totals() {
    let Some(gpu) = loaded_gpu() else { return };
    if gpu == "tDUx" {
        test_data::skip!(
            test_data::Fixture::Kbase,
            "{gpu} is a GPU the readers do not support (the capture test checks why)"
        );
        return;
    }
    let _guard = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    // Distinct values in every block and counter, so differences and ratios are not trivial.
    set_counters(&distinct).expect("KBASE_IOCTL_HWCNT_SET");
    let out = lizard(&[
        "capture",
        "--no-gatord",
        "--all",
        "--duration",
        "1s",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let product = doc["run"]["gpu"].as_str().expect("run.gpu").to_owned();
    let Some(database) = Database::for_gpu(&product) else {
        return;
    };
    let constants = hwcpipe::gpu::GpuProfiler::open()
        .expect("the GPU")
        .mali_constants();
    let counters: Vec<&serde_json::Value> = doc["counters"]
        .as_array()
        .expect("counters")
        .iter()
        .filter(|c| {
            c["category"]
                .as_str()
                .is_some_and(|c| c.ends_with("(Arm's database)"))
        })
        .collect();
    let by_name: HashMap<&str, &serde_json::Value> = counters
        .iter()
        .map(|c| (c["counter"].as_str().expect("name"), *c))
        .collect();
    // The local counters count from the capture's start: the totals cover the time from there to the last
    // sample.
    // The GPU is sampled apart from the CPU: the GPU's counters' totals end with its last dump.
    let started = doc["started_ns"].as_u64().expect("started_ns");
    let last = counters
        .iter()
        .filter_map(|c| c["samples"].as_array()?.last()?[0].as_u64())
        .max()
        .expect("GPU samples");
    let duration = (last - started) as f64 / 1e9;
    let samples = counters
        .iter()
        .map(|c| c["samples"].as_array().map_or(0, Vec::len))
        .max()
        .unwrap_or(0);
    assert!(
        samples >= 10,
        "{gpu}: {samples} samples: not a multi-sample window"
    );

    // Evaluates `name` over the capture's totals: a hardware counter is its reading, a derived one its
    // database equation, recursively; `time` records whether the time span was read.
    fn value(
        name: &str,
        database: &Database,
        by_name: &HashMap<&str, &serde_json::Value>,
        constants: &hwcpipe::gpu::MaliConstants,
        duration: f64,
        time: &mut bool,
    ) -> Result<f64, Failure> {
        match name {
            "MALI_CONFIG_SHADER_CORE_COUNT" => return Ok(f64::from(constants.shader_cores)),
            "MALI_CONFIG_L2_CACHE_COUNT" => return Ok(f64::from(constants.l2_slices)),
            "MALI_CONFIG_EXT_BUS_BYTE_SIZE" => return Ok(f64::from(constants.ext_bus_bytes)),
            "MALI_CONFIG_TIME_SPAN" => {
                *time = true;
                return Ok(duration);
            }
            _ => {}
        }
        match database.equations.get(name) {
            Some(Some(equation)) => evaluate(equation, &mut |input| {
                value(input, database, by_name, constants, duration, time)
            }),
            _ => by_name
                .get(name)
                .and_then(|c| c["value"].as_f64())
                .ok_or_else(|| Failure::Missing(name.to_owned())),
        }
    }

    let mut checked = 0;
    let mut negative = 0;
    let mut no_value = 0;
    for c in counters.iter().filter(|c| c["class"] == "derived") {
        let name = c["counter"].as_str().expect("name");
        let mut time = false;
        let want = value(name, &database, &by_name, &constants, duration, &mut time);
        match want {
            Ok(want) => {
                let got = c["value"]
                    .as_f64()
                    .unwrap_or_else(|| panic!("{gpu}: {name} has no value: {}", c["no_value"]));
                let tolerance = if time { 1e-6 } else { 1e-9 };
                assert!(
                    (got - want).abs() <= tolerance * want.abs().max(1e-12),
                    "{gpu}: {name} reads {got}, its equation over the totals gives {want}"
                );
                if want < 0.0 {
                    negative += 1;
                    assert!(
                        c["implausible"]
                            .as_str()
                            .is_some_and(|w| w.contains("negative")),
                        "{gpu}: {name} = {got} is not marked implausible"
                    );
                }
                checked += 1;
            }
            Err(Failure::DivisionByZero) => {
                let why = c["no_value"].as_str().unwrap_or_default();
                assert!(
                    c["value"].is_null() && why.ends_with(" is 0"),
                    "{gpu}: {name} divides by zero over the totals but reads {} ({why})",
                    c["value"]
                );
                no_value += 1;
            }
            Err(Failure::Missing(input)) => {
                panic!("{gpu}: {name} needs {input}, which the capture lacks")
            }
        }
    }
    let cores = by_name["MaliConfigCoreCount"]["value"].as_f64();
    assert_eq!(cores, Some(f64::from(constants.shader_cores)), "{gpu}");
    assert!(
        checked > 50,
        "{gpu}: only {checked} derived counters checked"
    );
    println!(
        "kbase {gpu}: derived counters of {product} over {samples} samples: {checked} equal their equations over \
         the totals ({negative} negative, marked implausible), {no_value} without value (a divisor of 0)"
    );
}

/// `lizard doctor` with the driver loaded: the GPU works (or, for the one GPU the readers do not support,
/// says why); a user the device node does not admit is told the fix.
#[test]
fn doctor_sees_the_gpu_and_tells_a_user_the_node_refuses_how_to_allow_it() {
    let Some(gpu) = loaded_gpu() else { return };
    let _guard = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    let out = lizard(&["doctor", "--source", "gpu", "--format", "json"]);
    let doc = json(&out);
    let source = &doc["sources"][0];
    if gpu == "tDUx" {
        assert_eq!(out.status.code(), Some(3), "{doc}");
        assert!(doc.to_string().contains("unsupported Mali GPU"), "{doc}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{gpu}: {doc}");
    assert_eq!(source["works"], true);
    let checks = source["checks"].as_array().expect("checks");
    let driver = checks
        .iter()
        .find(|c| c["name"] == "kbase driver")
        .expect("driver check");
    assert!(
        driver["found"]
            .as_str()
            .is_some_and(|f| f.contains("JM ") || f.contains("CSF ")),
        "{driver}"
    );
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        test_data::skip!(
            test_data::Fixture::Root,
            "changing /dev/mali0's mode needs root"
        );
        return;
    }
    // A copy of the command a user without rights on the repository's folder may run.
    let copy = std::env::temp_dir().join(format!("lizard-doctor-{}", std::process::id()));
    std::fs::copy(env!("CARGO_BIN_EXE_lizard"), &copy).expect("copy lizard");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod copy");
    let node = std::path::Path::new("/dev/mali0");
    let mode = std::fs::metadata(node).expect("/dev/mali0").permissions();
    std::fs::set_permissions(node, std::fs::Permissions::from_mode(0o600)).expect("chmod 0600");
    use std::os::unix::process::CommandExt;
    let refused = std::process::Command::new(&copy)
        .args(["doctor", "--source", "gpu", "--format", "json"])
        .uid(65534)
        .gid(65534)
        .output();
    std::fs::set_permissions(node, mode).expect("restore the mode");
    let _ = std::fs::remove_file(&copy);
    let refused = refused.expect("run lizard as nobody");
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    let doc = json(&refused);
    let failed = doc["sources"][0]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["status"] == "failed")
        .cloned()
        .unwrap_or_else(|| panic!("{gpu}: no failed check as nobody: {doc}"));
    assert!(
        failed["fix"]
            .as_str()
            .is_some_and(|f| f.contains("chmod 0666 /dev/mali0")),
        "{failed}"
    );
    println!(
        "lizard doctor on {gpu}: the GPU works; mode 0600 as nobody: {}",
        failed["found"]
    );
}
