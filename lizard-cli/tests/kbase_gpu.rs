//! The `lizard` command over Arm's real kbase driver: r35p0 over its dummy GPU model, loaded in
//! the emulated Arm system of `.ci/kbase-tests` once per GPU of the model's table
//! (`LIZARD_KBASE_GPU` names it). Every dummy counter is set to 1000 with `KBASE_IOCTL_HWCNT_SET`;
//! the commands must show the GPU counters, or say why the GPU cannot be read. Elsewhere every test
//! skips, saying why.

mod common;
#[path = "../../hwcpipe-rs/tests/support/kbase_dummy.rs"]
mod kbase_dummy;

use common::{json, lizard, stderr, stdout};
use kbase_dummy::{loaded_gpu, set_counters};

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
