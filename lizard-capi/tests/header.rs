//! The committed C headers and the Rust definitions must agree: a C program compiled against
//! `include/lizard/lizard_api.h` and `include/lizard/lizard_trace.h` (as C99 and as C++11,
//! `-Wall -Wextra -Werror -pedantic`) prints every size, offset and enum value, and each must equal what
//! `lizard::abi` and `lizard::trace_abi` say. `TARGET_CC` / `TARGET_CXX` name the
//! compilers when the tests run for another architecture, so the probe sees that architecture's layout.

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use lizard::abi::*;
use lizard::trace_abi::*;

#[path = "support/prebuilt.rs"]
mod prebuilt;

/// The C program that prints the header's layout.
fn probe_source() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/c/header_probe.c")
}

fn expected() -> BTreeMap<String, i64> {
    type D = LizardCounterDescription;
    type A = LizardApi;
    type S = LizardSampling;
    type SD = LizardSamplingDetail;
    type G = LizardGpuSampling;
    type TO = LizardTraceOptions;
    let pairs: Vec<(&str, usize)> = vec![
        ("sizeof.LizardCounterDescription", size_of::<D>()),
        ("sizeof.LizardApi", size_of::<A>()),
        ("sizeof.LizardCounterId", size_of::<LizardCounterId>()),
        ("sizeof.LizardInstance", size_of::<LizardInstance>()),
        ("LizardCounterDescription.id", offset_of!(D, id)),
        (
            "LizardCounterDescription.short_name",
            offset_of!(D, short_name),
        ),
        ("LizardCounterDescription.name", offset_of!(D, name)),
        ("LizardCounterDescription.title", offset_of!(D, title)),
        (
            "LizardCounterDescription.description",
            offset_of!(D, description),
        ),
        ("LizardCounterDescription.category", offset_of!(D, category)),
        (
            "LizardCounterDescription.multiplier",
            offset_of!(D, multiplier),
        ),
        ("LizardCounterDescription.units", offset_of!(D, units)),
        (
            "LizardCounterDescription.class_type",
            offset_of!(D, class_type),
        ),
        (
            "LizardCounterDescription.result_type",
            offset_of!(D, result_type),
        ),
        ("struct LizardApi.struct_size", offset_of!(A, struct_size)),
        ("struct LizardApi.version", offset_of!(A, version)),
        ("struct LizardApi.Init", offset_of!(A, init)),
        ("struct LizardApi.Destroy", offset_of!(A, destroy)),
        (
            "struct LizardApi.GetAvailableCountersCount",
            offset_of!(A, get_available_counters_count),
        ),
        (
            "struct LizardApi.GetCounterDescription",
            offset_of!(A, get_counter_description),
        ),
        (
            "struct LizardApi.EnableCounter",
            offset_of!(A, enable_counter),
        ),
        (
            "struct LizardApi.DisableCounter",
            offset_of!(A, disable_counter),
        ),
        (
            "struct LizardApi.DisableAllCounters",
            offset_of!(A, disable_all_counters),
        ),
        (
            "struct LizardApi.StartCapture",
            offset_of!(A, start_capture),
        ),
        ("struct LizardApi.StopCapture", offset_of!(A, stop_capture)),
        (
            "struct LizardApi.ReadCounterInt",
            offset_of!(A, read_counter_int),
        ),
        (
            "struct LizardApi.ReadCounterDouble",
            offset_of!(A, read_counter_double),
        ),
        ("sizeof.LZD_Result", size_of::<LzdResult>()),
        ("sizeof.LizardSampling", size_of::<S>()),
        ("LizardSampling.interval_ns", offset_of!(S, interval_ns)),
        ("LizardSampling.window_ns", offset_of!(S, window_ns)),
        ("LizardSampling.expected", offset_of!(S, expected)),
        ("LizardSampling.delivered", offset_of!(S, delivered)),
        ("LizardSampling.missed", offset_of!(S, missed)),
        (
            "LizardSampling.largest_gap_ns",
            offset_of!(S, largest_gap_ns),
        ),
        ("sizeof.LizardSamplingDetail", size_of::<SD>()),
        ("LizardSamplingDetail.method", offset_of!(SD, method)),
        ("LizardSamplingDetail.rings", offset_of!(SD, rings)),
        (
            "LizardSamplingDetail.lost_records",
            offset_of!(SD, lost_records),
        ),
        ("LizardSamplingDetail.throttled", offset_of!(SD, throttled)),
        (
            "LizardSamplingDetail.throttled_ns",
            offset_of!(SD, throttled_ns),
        ),
        (
            "LizardSamplingDetail.idle_periods",
            offset_of!(SD, idle_periods),
        ),
        ("sizeof.LizardGpuSampling", size_of::<G>()),
        ("LizardGpuSampling.struct_size", offset_of!(G, struct_size)),
        ("LizardGpuSampling.pace", offset_of!(G, pace)),
        ("LizardGpuSampling.interval_ns", offset_of!(G, interval_ns)),
        ("LizardGpuSampling.window_ns", offset_of!(G, window_ns)),
        ("LizardGpuSampling.expected", offset_of!(G, expected)),
        ("LizardGpuSampling.delivered", offset_of!(G, delivered)),
        ("LizardGpuSampling.folded", offset_of!(G, folded)),
        ("LizardGpuSampling.missed", offset_of!(G, missed)),
        (
            "LizardGpuSampling.not_counting",
            offset_of!(G, not_counting),
        ),
        (
            "LizardGpuSampling.largest_gap_ns",
            offset_of!(G, largest_gap_ns),
        ),
        ("sizeof.LizardTraceResult", size_of::<LizardTraceResult>()),
        (
            "sizeof.LizardTraceClient*",
            size_of::<LizardTraceClientHandle>(),
        ),
        ("sizeof.LizardTraceOptions", size_of::<TO>()),
        ("LizardTraceOptions.size", offset_of!(TO, size)),
        (
            "LizardTraceOptions.device_mode",
            offset_of!(TO, device_mode),
        ),
        (
            "LizardTraceOptions.deadline_ms",
            offset_of!(TO, deadline_ms),
        ),
        ("LizardTraceOptions.block_ms", offset_of!(TO, block_ms)),
    ];
    let values: Vec<(&str, i64)> = vec![
        ("LIZARD_VERSION_0_1", LIZARD_VERSION_0_1.into()),
        ("LZD_OK", LZD_OK.into()),
        ("LZD_FAILURE", LZD_FAILURE.into()),
        ("LZD_ABSOLUTE", LZD_ABSOLUTE.into()),
        ("LZD_DELTA", LZD_DELTA.into()),
        ("LZD_UNITS_UNKNOWN", LZD_UNITS_UNKNOWN.into()),
        ("LZD_UNITS_BYTE", LZD_UNITS_BYTE.into()),
        ("LZD_UNITS_CELSIUS", LZD_UNITS_CELSIUS.into()),
        ("LZD_UNITS_HZ", LZD_UNITS_HZ.into()),
        ("LZD_UNITS_PAGES", LZD_UNITS_PAGES.into()),
        ("LZD_UNITS_RPM", LZD_UNITS_RPM.into()),
        ("LZD_UNITS_S", LZD_UNITS_S.into()),
        ("LZD_UNITS_V", LZD_UNITS_V.into()),
        ("LZD_TYPE_INT", LZD_TYPE_INT.into()),
        ("LZD_TYPE_DOUBLE", LZD_TYPE_DOUBLE.into()),
        ("LZD_SAMPLING_THREAD", LZD_SAMPLING_THREAD.into()),
        ("LZD_SAMPLING_KERNEL", LZD_SAMPLING_KERNEL.into()),
        ("LZD_SAMPLING_GPU_ONLY", LZD_SAMPLING_GPU_ONLY.into()),
        ("LZD_GPU_PACE_PERIODIC", LZD_GPU_PACE_PERIODIC.into()),
        ("LZD_GPU_PACE_MANUAL", LZD_GPU_PACE_MANUAL.into()),
        ("LZT_OK", LZT_OK.into()),
        ("LZT_DROPPED", LZT_DROPPED.into()),
        ("LZT_ERR_NULL", LZT_ERR_NULL.into()),
        ("LZT_ERR_NOT_A_CLIENT", LZT_ERR_NOT_A_CLIENT.into()),
        ("LZT_ERR_ARGUMENT", LZT_ERR_ARGUMENT.into()),
        ("LZT_ERR_CONNECT", LZT_ERR_CONNECT.into()),
        ("LZT_ERR_DISCONNECTED", LZT_ERR_DISCONNECTED.into()),
        ("LZT_ERR_SOCKET", LZT_ERR_SOCKET.into()),
        ("LZT_ERR_NO_CUDA", LZT_ERR_NO_CUDA.into()),
        (
            "LZT_ERR_NOT_DEVICE_MEMORY",
            LZT_ERR_NOT_DEVICE_MEMORY.into(),
        ),
        ("LZT_ERR_OUT_OF_RANGE", LZT_ERR_OUT_OF_RANGE.into()),
        ("LZT_ERR_CUDA", LZT_ERR_CUDA.into()),
        ("LZT_ERR_REFUSED", LZT_ERR_REFUSED.into()),
        ("LZT_ERR_TIMEOUT", LZT_ERR_TIMEOUT.into()),
        ("LZT_ERR_PROTOCOL", LZT_ERR_PROTOCOL.into()),
        ("LZT_ERR_INTERNAL", LZT_ERR_INTERNAL.into()),
        ("LZT_DEVICE_SYNC", LZT_DEVICE_SYNC.into()),
        ("LZT_DEVICE_ASYNC", LZT_DEVICE_ASYNC.into()),
    ];
    pairs
        .into_iter()
        .map(|(k, v)| (k.to_owned(), i64::try_from(v).expect("small")))
        .chain(values.into_iter().map(|(k, v)| (k.to_owned(), v)))
        .collect()
}

/// The compiler named by `var` (a cross compiler), else the native `default`.
fn target_compiler(var: &str, default: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| default.to_owned())
}

fn compile_and_run(compiler: &str, std: &str, lang: &str, dir: &Path) -> BTreeMap<String, i64> {
    let source = probe_source();
    let binary = match prebuilt::program(&source, lang) {
        Some(binary) => binary,
        None => compile(compiler, std, lang, &source, dir),
    };
    let output = Command::new(&binary).output().expect("run probe");
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .expect("utf-8")
        .lines()
        .map(|line| {
            let (name, value) = line.rsplit_once(' ').expect("name value");
            (name.to_owned(), value.parse().expect("number"))
        })
        .collect()
}

/// Compiles the probe `source` as `lang` into `dir`.
fn compile(compiler: &str, std: &str, lang: &str, source: &Path, dir: &Path) -> PathBuf {
    let binary = dir.join(format!("probe-{lang}"));
    let include = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include");
    let status = Command::new(compiler)
        .args([
            &format!("-std={std}"),
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-x",
            lang,
        ])
        .arg(source)
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&binary)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        status.success(),
        "{compiler} failed to compile the header probe"
    );
    binary
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-header-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn header_compiled_as_c99_agrees_with_rust() {
    let dir = scratch("c");
    assert_eq!(
        compile_and_run(&target_compiler("TARGET_CC", "gcc"), "c99", "c", &dir),
        expected()
    );
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn header_compiled_as_cxx11_agrees_with_rust() {
    let dir = scratch("cxx");
    assert_eq!(
        compile_and_run(&target_compiler("TARGET_CXX", "g++"), "c++11", "c++", &dir),
        expected()
    );
    std::fs::remove_dir_all(dir).ok();
}
