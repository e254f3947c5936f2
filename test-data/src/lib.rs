#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The environment variable that, when set, names the data folder instead of `../shared/data`.
pub const DIR_VARIABLE: &str = "LIZARD_TEST_DATA";

/// The folder of gatord 9.7.2's recordings, below [`root`].
pub const GATORD: &str = "gatord-9.7.2";

/// The data folder: `$LIZARD_TEST_DATA` when set, else `shared/data` beside the repository
/// (`<repository>/../shared/data`). It may not exist; [`path`] says so.
pub fn root() -> PathBuf {
    match std::env::var_os(DIR_VARIABLE) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    }
}

/// The path of `relative` (e.g. `gatord-9.7.2/live-session/d2c.bin`) inside [`root`], or `None` after a
/// [`Fixture::Data`] skip when it is not there. The skip names the package cargo runs the test of
/// (`$CARGO_PKG_NAME` at run time).
///
/// # Panics
///
/// When the file is missing and `$LIZARD_REQUIRE_FIXTURES` requires [`Fixture::Data`].
pub fn path(relative: &str) -> Option<PathBuf> {
    path_with(relative, &Policy::from_env())
}

fn path_with(relative: &str, policy: &Policy) -> Option<PathBuf> {
    let full = root().join(relative);
    if full.exists() {
        return Some(full);
    }
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let reason = format!(
        "{} missing (the recordings live in ../shared/data beside the repository, or in ${DIR_VARIABLE})",
        full.display()
    );
    policy.skip(&package, &test_binary(), Fixture::Data, &reason);
    None
}

/// The bytes of `relative` inside [`root`], or `None` with a [`Fixture::Data`] skip when it is not there
/// ([`path`]).
///
/// # Panics
///
/// When the file is there but cannot be read: a broken data folder is a test failure, not a skip.
pub fn bytes(relative: &str) -> Option<Vec<u8>> {
    let full = path(relative)?;
    Some(std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display())))
}

/// The text of `relative` inside [`root`], or `None` with a [`Fixture::Data`] skip when it is not there
/// ([`path`]).
///
/// # Panics
///
/// When the file is there but cannot be read as UTF-8 text.
pub fn text(relative: &str) -> Option<String> {
    let bytes = bytes(relative)?;
    Some(String::from_utf8(bytes).unwrap_or_else(|e| panic!("{relative}: {e}")))
}

/// [`path`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord(relative: &str) -> Option<PathBuf> {
    path(&format!("{GATORD}/{relative}"))
}

/// [`bytes`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord_bytes(relative: &str) -> Option<Vec<u8>> {
    bytes(&format!("{GATORD}/{relative}"))
}

/// [`text`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord_text(relative: &str) -> Option<String> {
    text(&format!("{GATORD}/{relative}"))
}

/// The environment variable naming the fixtures whose absence fails a test instead of skipping it: a
/// comma-separated list of [`Fixture::name`]s, or `1` for [`Fixture::CI_HOST`].
pub const REQUIRE_VARIABLE: &str = "LIZARD_REQUIRE_FIXTURES";

/// The environment variable naming a file each skip appends a line to: `package<TAB>test binary<TAB>fixture<TAB>reason`.
pub const SKIP_LOG_VARIABLE: &str = "LIZARD_SKIP_LOG";

/// What a test needs from the machine it runs on and skips without. [`skip!`] names one.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fixture {
    /// The recordings in `../shared/data` ([`root`]).
    Data,
    /// A native C compiler (`cc`, `gcc`).
    Cc,
    /// Valgrind, over a native build.
    Valgrind,
    /// AddressSanitizer, over a native build.
    Asan,
    /// Perfetto's Python module (`perfetto.protos…perfetto_trace_pb2`).
    PerfettoPython,
    /// The `prometheus` binary.
    Prometheus,
    /// `python3`.
    Python3,
    /// `chromium`, headless.
    Chromium,
    /// `script` (util-linux), to give a program a terminal.
    Script,
    /// An IPv6 loopback address (`::1`).
    Ipv6,
    /// `perf_event_open` with a counter or sampling event this kernel offers.
    PerfEvents,
    /// CPU-wide perf counting (a low enough `perf_event_paranoid`).
    PerfCpuWide,
    /// A `perf_event_paranoid` above 0, so that CPU-wide counting is refused to others than root.
    PerfParanoid,
    /// `/proc/PID/schedstat` (`CONFIG_SCHED_INFO`).
    Schedstat,
    /// The Arm CPU PMU of an aarch64 kernel (the emulated Arm system of `.ci/arm-tests`).
    ArmPmu,
    /// Exact instruction counts: the emulated Arm system under `-icount`.
    ArmIcount,
    /// `kernel.perf_user_access=1`, user-space PMU reads on aarch64.
    PerfUserAccess,
    /// Two CPUs or more.
    TwoCpus,
    /// Arm's kbase driver over its dummy GPU (`/dev/mali0`, `.ci/kbase-tests`).
    Kbase,
    /// The long kbase soak, asked for with `LIZARD_KBASE_SOAK_SECONDS`.
    KbaseSoak,
    /// The real gatord and the C demo of the emulated Arm system (`.ci/gatord-tests`).
    Gatord,
    /// Root, or what root may do (another uid, `/proc/sys` writes, device modes).
    Root,
    /// A CUDA driver with a GPU (and `nvcc` for the C client).
    Cuda,
    /// No device-memory copies: the refusals a machine without CUDA gives.
    NoCuda,
    /// The release `lizard` binary, built before a bench.
    ReleaseBinary,
    /// A Vulkan driver with `vkcube` and `vkcubepp` (vulkan-tools) and an X server to show them on
    /// (`xvfb-run`): Mesa's lavapipe on a machine without a GPU.
    Vulkan,
    /// The Khronos validation layer (`VK_LAYER_KHRONOS_validation`).
    VulkanValidation,
    /// MangoHud's Vulkan layer.
    MangoHud,
}

impl Fixture {
    /// Every fixture, in declaration order.
    pub const ALL: &'static [Fixture] = &[
        Fixture::Data,
        Fixture::Cc,
        Fixture::Valgrind,
        Fixture::Asan,
        Fixture::PerfettoPython,
        Fixture::Prometheus,
        Fixture::Python3,
        Fixture::Chromium,
        Fixture::Script,
        Fixture::Ipv6,
        Fixture::PerfEvents,
        Fixture::PerfCpuWide,
        Fixture::PerfParanoid,
        Fixture::Schedstat,
        Fixture::ArmPmu,
        Fixture::ArmIcount,
        Fixture::PerfUserAccess,
        Fixture::TwoCpus,
        Fixture::Kbase,
        Fixture::KbaseSoak,
        Fixture::Gatord,
        Fixture::Root,
        Fixture::Cuda,
        Fixture::NoCuda,
        Fixture::ReleaseBinary,
        Fixture::Vulkan,
        Fixture::VulkanValidation,
        Fixture::MangoHud,
    ];

    /// What every CI host provides, and what `LIZARD_REQUIRE_FIXTURES=1` requires.
    pub const CI_HOST: &'static [Fixture] = &[
        Fixture::Data,
        Fixture::Cc,
        Fixture::Valgrind,
        Fixture::PerfettoPython,
        Fixture::Prometheus,
        Fixture::Python3,
    ];

    /// The name `LIZARD_REQUIRE_FIXTURES` and the skip log use (`perfetto-python`).
    pub fn name(self) -> &'static str {
        match self {
            Fixture::Data => "data",
            Fixture::Cc => "cc",
            Fixture::Valgrind => "valgrind",
            Fixture::Asan => "asan",
            Fixture::PerfettoPython => "perfetto-python",
            Fixture::Prometheus => "prometheus",
            Fixture::Python3 => "python3",
            Fixture::Chromium => "chromium",
            Fixture::Script => "script",
            Fixture::Ipv6 => "ipv6",
            Fixture::PerfEvents => "perf-events",
            Fixture::PerfCpuWide => "perf-cpu-wide",
            Fixture::PerfParanoid => "perf-paranoid",
            Fixture::Schedstat => "schedstat",
            Fixture::ArmPmu => "arm-pmu",
            Fixture::ArmIcount => "arm-icount",
            Fixture::PerfUserAccess => "perf-user-access",
            Fixture::TwoCpus => "two-cpus",
            Fixture::Kbase => "kbase",
            Fixture::KbaseSoak => "kbase-soak",
            Fixture::Gatord => "gatord",
            Fixture::Root => "root",
            Fixture::Cuda => "cuda",
            Fixture::NoCuda => "no-cuda",
            Fixture::ReleaseBinary => "release-binary",
            Fixture::Vulkan => "vulkan",
            Fixture::VulkanValidation => "vulkan-validation",
            Fixture::MangoHud => "mangohud",
        }
    }

    /// The fixture called `name` ([`Fixture::name`]).
    pub fn from_name(name: &str) -> Option<Fixture> {
        Fixture::ALL.iter().copied().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Skips the rest of a test for want of a fixture: prints `skipped: REASON [fixture]` to standard error and
/// appends a line to `$LIZARD_SKIP_LOG`, or panics when `$LIZARD_REQUIRE_FIXTURES` requires the fixture. The
/// caller then returns.
///
/// ```
/// use test_data::Fixture;
///
/// if std::env::var_os("LIZARD_EXAMPLE_NEVER_SET").is_none() {
///     test_data::skip!(Fixture::Gatord, "LIZARD_EXAMPLE_NEVER_SET does not name a gatord binary");
/// }
/// ```
///
/// # Panics
///
/// When the fixture is required, or `$LIZARD_REQUIRE_FIXTURES` names an unknown fixture.
#[macro_export]
macro_rules! skip {
    ($fixture:expr, $($reason:tt)+) => {
        $crate::skip_in(env!("CARGO_PKG_NAME"), $fixture, &format!($($reason)+))
    };
}

/// [`skip!`] with the package named: the skip of `package`'s test for want of `fixture`.
///
/// # Panics
///
/// When the fixture is required, or `$LIZARD_REQUIRE_FIXTURES` names an unknown fixture.
pub fn skip_in(package: &str, fixture: Fixture, reason: &str) {
    let policy = Policy::from_env();
    policy.skip(package, &test_binary(), fixture, reason);
}

/// The running test binary's name, without the hash cargo appends (`live_session`).
fn test_binary() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(|p| p.file_stem())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name.to_owned()
        }
        _ => stem,
    }
}

/// What a skip does: which fixtures are required, and where skips are logged.
#[derive(Debug, Default)]
struct Policy {
    required: Vec<Fixture>,
    log: Option<PathBuf>,
}

impl Policy {
    /// From `$LIZARD_REQUIRE_FIXTURES` and `$LIZARD_SKIP_LOG`.
    fn from_env() -> Policy {
        Policy {
            required: required(&std::env::var(REQUIRE_VARIABLE).unwrap_or_default()),
            log: std::env::var_os(SKIP_LOG_VARIABLE)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }

    fn skip(&self, package: &str, binary: &str, fixture: Fixture, reason: &str) {
        if self.required.contains(&fixture) {
            panic!("a skip is a failure here: {reason} [{fixture}] ({fixture} is required by {REQUIRE_VARIABLE})");
        }
        eprintln!("skipped: {reason} [{fixture}]");
        if let Some(log) = &self.log {
            use std::io::Write;
            let line = format!(
                "{package}\t{binary}\t{fixture}\t{}\n",
                reason.replace(['\t', '\n'], " ")
            );
            // One write per line: concurrent tests append whole lines.
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
                .and_then(|mut f| f.write_all(line.as_bytes()))
                .unwrap_or_else(|e| panic!("{SKIP_LOG_VARIABLE} {}: {e}", log.display()));
        }
    }
}

/// The fixtures a `LIZARD_REQUIRE_FIXTURES` value names; panics on an unknown name, listing the valid ones.
fn required(value: &str) -> Vec<Fixture> {
    parse_required(value).unwrap_or_else(|unknown| {
        let valid: Vec<&str> = Fixture::ALL.iter().map(|f| f.name()).collect();
        panic!(
            "{REQUIRE_VARIABLE} names an unknown fixture {unknown:?}; valid names: 1, {}",
            valid.join(", ")
        )
    })
}

/// The fixtures a `LIZARD_REQUIRE_FIXTURES` value names, or the first unknown name.
fn parse_required(value: &str) -> Result<Vec<Fixture>, String> {
    let mut required = Vec::new();
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "1" {
            required.extend_from_slice(Fixture::CI_HOST);
        } else {
            required.push(Fixture::from_name(name).ok_or_else(|| name.to_owned())?);
        }
    }
    Ok(required)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn optional_policy(log: Option<PathBuf>) -> Policy {
        Policy {
            required: Vec::new(),
            log,
        }
    }

    #[test]
    fn a_missing_file_is_a_skip_not_a_failure() {
        let policy = optional_policy(None);
        assert_eq!(path_with("no-such-folder/no-such-file", &policy), None);
    }

    #[test]
    fn present_files_are_read() {
        // The data folder's own README: read when the folder is there, a skip (None) when it is not.
        let present = root().join("README.md").is_file();
        match text("README.md") {
            Some(text) => {
                assert!(present);
                assert!(!text.is_empty());
                assert_eq!(bytes("README.md").map(|b| b.len()), Some(text.len()));
            }
            None => assert!(
                !present,
                "the data folder's README is there but was not read"
            ),
        }
    }

    #[test]
    #[should_panic(expected = "a skip is a failure here: no gcc [cc]")]
    fn a_required_fixture_fails() {
        let policy = Policy {
            required: parse_required("data,cc").unwrap(),
            log: None,
        };
        policy.skip("pkg", "bin", Fixture::Cc, "no gcc");
    }

    #[test]
    fn an_optional_fixture_skips_and_writes_the_log_line() {
        let log = std::env::temp_dir().join(format!("test-data-skip-log-{}", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let policy = Policy {
            required: parse_required("1").unwrap(),
            log: Some(log.clone()),
        };
        policy.skip(
            "gator-proto",
            "live_session",
            Fixture::Chromium,
            "no chromium\there",
        );
        let written = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_file(&log).unwrap();
        assert_eq!(
            written,
            "gator-proto\tlive_session\tchromium\tno chromium here\n"
        );
    }

    #[test]
    fn an_unknown_name_is_refused() {
        assert_eq!(parse_required("data,gpu"), Err("gpu".to_owned()));
        assert_eq!(
            parse_required(" data , cc ,"),
            Ok(vec![Fixture::Data, Fixture::Cc])
        );
        assert_eq!(parse_required(""), Ok(vec![]));
        assert_eq!(parse_required("1"), Ok(Fixture::CI_HOST.to_vec()));
    }

    #[test]
    #[should_panic(
        expected = "LIZARD_REQUIRE_FIXTURES names an unknown fixture \"gpu\"; valid names: 1, data, cc"
    )]
    fn an_unknown_name_panics_with_the_valid_ones() {
        required("data,gpu");
    }

    #[test]
    fn names_round_trip() {
        for &fixture in Fixture::ALL {
            assert_eq!(Fixture::from_name(fixture.name()), Some(fixture));
        }
    }

    #[test]
    fn the_test_binary_is_named_without_its_hash() {
        assert_eq!(test_binary(), "test_data");
    }
}
