//! What the layer's tests share: running a real Vulkan application (vkcube, vkcubepp, the crate's own
//! `workloads` example) on the machine's driver under Xvfb with the layer enabled through `VK_LAYER_PATH`
//! and `VK_INSTANCE_LAYERS`, each run bounded by `timeout`; decoding its trace with Perfetto's own
//! `perfetto_trace_pb2` (perfetto-writer's `tools/decode_trace.py`); and reading its capture document.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use test_data::Fixture;

/// Runs of Vulkan applications one at a time: `xvfb-run -a` picks a free display, and two started
/// together may pick the same one.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The layer's name.
pub const LAYER: &str = "VK_LAYER_LIZARD_workloads";
/// The Khronos validation layer's name.
pub const VALIDATION: &str = "VK_LAYER_KHRONOS_validation";

/// The crate's folder, where the layer's manifest is.
pub fn layer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder of the layer's library as cargo built it for these tests: the test binary's own folder
/// (`target/debug/deps`), where the library's `cdylib` lands beside its `rlib`.
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let dir = exe.parent().expect("its folder").to_path_buf();
    let library = dir.join("liblizard_vk_layer.so");
    assert!(
        library.exists(),
        "{} is missing: cargo builds it with the tests",
        library.display()
    );
    dir
}

/// The `workloads` example, as cargo built it with the tests.
pub fn workloads_example() -> PathBuf {
    let dir = library_dir();
    let exe = dir
        .parent()
        .expect("target/debug")
        .join("examples/workloads");
    assert!(
        exe.exists(),
        "{} is missing: cargo builds the examples with the tests",
        exe.display()
    );
    exe
}

/// Whether `program` is on the `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The lavapipe driver's manifest of this machine, if installed.
pub fn lavapipe() -> Option<PathBuf> {
    let dir = Path::new("/usr/share/vulkan/icd.d");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lvp_icd."))
        })
}

/// Whether vkcube, vkcubepp, xvfb-run and a driver are here; a printed skip otherwise.
pub fn vulkan_ready() -> bool {
    let missing: Vec<&str> = ["vkcube", "vkcubepp", "xvfb-run", "timeout"]
        .into_iter()
        .filter(|p| !on_path(p))
        .collect();
    if !missing.is_empty() {
        test_data::skip!(
            Fixture::Vulkan,
            "{} not installed (Debian: vulkan-tools, xvfb)",
            missing.join(", ")
        );
        return false;
    }
    if lavapipe().is_none() {
        test_data::skip!(
            Fixture::Vulkan,
            "no lavapipe driver (Debian: mesa-vulkan-drivers)"
        );
        return false;
    }
    true
}

/// Whether the Khronos validation layer is installed; a printed skip otherwise.
pub fn validation_ready() -> bool {
    let found = [
        "/usr/share/vulkan/explicit_layer.d",
        "/etc/vulkan/explicit_layer.d",
    ]
    .iter()
    .any(|d| {
        Path::new(d)
            .join("VkLayer_khronos_validation.json")
            .exists()
    });
    if !found {
        test_data::skip!(
            Fixture::VulkanValidation,
            "the Khronos validation layer is not installed (Debian: vulkan-validationlayers)"
        );
    }
    found
}

/// A scratch folder of this test process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-vk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One run of a Vulkan application.
pub struct Run {
    /// Its exit status, output and error output.
    pub output: Output,
    /// The trace's path.
    pub trace: PathBuf,
}

impl Run {
    /// Standard output and error together.
    pub fn text(&self) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&self.output.stdout),
            String::from_utf8_lossy(&self.output.stderr)
        )
    }

    /// Panics unless the application exited 0.
    pub fn assert_success(&self) {
        assert!(
            self.output.status.success(),
            "the application failed ({}): {}",
            self.output.status,
            self.text()
        );
    }

    /// The capture document beside the trace.
    pub fn document(&self) -> lizard_core::capture::Capture {
        let path = self.trace.with_extension("json");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        lizard_core::capture::Capture::from_json(&text).expect("a capture document")
    }
}

/// How to run an application.
pub struct App<'a> {
    /// The program and its arguments.
    pub command: Vec<String>,
    /// `VK_INSTANCE_LAYERS`.
    pub layers: &'a str,
    /// More environment.
    pub env: Vec<(&'a str, String)>,
    /// Under `xvfb-run -a` (it opens a window).
    pub x: bool,
    /// The longest it may run.
    pub limit: Duration,
}

impl<'a> App<'a> {
    /// `program args…` with the layer alone, under Xvfb, for at most two minutes.
    pub fn new(program: impl Into<String>, args: &[&str]) -> App<'a> {
        let mut command = vec![program.into()];
        command.extend(args.iter().map(|a| a.to_string()));
        App {
            command,
            layers: LAYER,
            env: Vec::new(),
            x: true,
            limit: Duration::from_secs(120),
        }
    }

    /// The command line, bounded by `timeout` (and under `xvfb-run -a`), with the layer's environment;
    /// its trace written to `trace`.
    pub fn command(&self, trace: &Path) -> Command {
        let mut command = Command::new("timeout");
        command
            .arg("-k")
            .arg("5")
            .arg(self.limit.as_secs().to_string());
        if self.x {
            command.arg("xvfb-run").arg("-a");
        }
        command.args(&self.command);
        command
            .env("VK_LAYER_PATH", layer_dir())
            .env("LD_LIBRARY_PATH", library_dir())
            .env("VK_INSTANCE_LAYERS", self.layers)
            .env("LIZARD_VK_OUTPUT", trace)
            .env_remove("LIZARD_VK_MODE")
            .env_remove("LIZARD_VK_FRAMES")
            .env_remove("LIZARD_VK_COUNTERS")
            .env_remove("LIZARD_VK_QUERIES")
            .env("LIZARD_VK_GATORD", "off");
        if let Some(icd) = lavapipe() {
            command.env("VK_DRIVER_FILES", icd);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        command
    }

    /// Runs it, its trace at `trace`.
    pub fn run(&self, trace: &Path) -> Run {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let output = self
            .command(trace)
            .output()
            .expect("timeout and the application start");
        assert_ne!(
            output.status.code(),
            Some(124),
            "{:?} ran past {:?}",
            self.command,
            self.limit
        );
        Run {
            output,
            trace: trace.to_path_buf(),
        }
    }
}

/// The trace at `path` as perfetto-writer's `tools/decode_trace.py` reads it; `None` (a printed skip)
/// without Perfetto's module.
pub fn decode(path: &Path) -> Option<Trace> {
    let script = layer_dir().join("../perfetto-writer/tools/decode_trace.py");
    let output = match Command::new("python3").arg(script).arg(path).output() {
        Ok(o) => o,
        Err(e) => {
            test_data::skip!(Fixture::Python3, "no python3 ({e})");
            return None;
        }
    };
    if output.status.code() == Some(3) {
        test_data::skip!(
            Fixture::PerfettoPython,
            "{}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        return None;
    }
    assert!(
        output.status.success(),
        "decode_trace.py {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let value: Value = serde_json::from_slice(&output.stdout).expect("decode_trace.py's JSON");
    assert_eq!(
        value["packets_with_unknown_fields"],
        serde_json::json!([]),
        "fields Perfetto's schema does not know"
    );
    Some(Trace(value))
}

/// A decoded trace.
pub struct Trace(pub Value);

/// One slice.
#[derive(Debug, Clone)]
pub struct Slice {
    /// Its name.
    pub name: String,
    /// Its start and end (ns, the trace's clock).
    pub begin: u64,
    /// See `begin`.
    pub end: u64,
    /// Its arguments.
    pub args: Value,
    /// The name of its track.
    pub track: String,
}

impl Slice {
    /// Argument `name` as a number.
    pub fn uint(&self, name: &str) -> Option<u64> {
        self.args[name].as_u64()
    }

    /// Argument `name` as text.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.args[name].as_str()
    }
}

impl Trace {
    fn track_name(&self, uuid: u64) -> String {
        self.0["tracks"][uuid.to_string()]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Every slice, in the order written.
    pub fn slices(&self) -> Vec<Slice> {
        self.0["slices"]
            .as_array()
            .expect("slices")
            .iter()
            .map(|s| Slice {
                name: s["name"].as_str().unwrap_or_default().to_owned(),
                begin: s["begin"].as_u64().expect("a begin"),
                end: s["end"]
                    .as_u64()
                    .unwrap_or_else(|| panic!("a slice without an end: {s}")),
                args: s["args"].clone(),
                track: self.track_name(s["track"].as_u64().expect("a track")),
            })
            .collect()
    }

    /// The workload slices (those with a `type`), in the order written.
    pub fn workloads(&self) -> Vec<Slice> {
        self.slices()
            .into_iter()
            .filter(|s| s.args["type"].is_string() && s.track.starts_with("VkQueue"))
            .collect()
    }

    /// The frame slices.
    pub fn frames(&self) -> Vec<Slice> {
        self.slices()
            .into_iter()
            .filter(|s| s.track == "frames")
            .collect()
    }

    /// The layer's notes.
    pub fn notes(&self) -> Vec<String> {
        self.0["instants"]
            .as_array()
            .expect("instants")
            .iter()
            .map(|i| i["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// The counter tracks under the track named `group`: name → values (`[ts, value]`).
    pub fn counters_under(&self, group: &str) -> Vec<(String, Vec<(u64, f64)>)> {
        let tracks = self.0["tracks"].as_object().expect("tracks");
        let Some((parent, _)) = tracks.iter().find(|(_, t)| t["name"] == group) else {
            return Vec::new();
        };
        let parent: u64 = parent.parse().unwrap();
        tracks
            .iter()
            .filter(|(_, t)| t["parent"].as_u64() == Some(parent) && t["counter"].is_object())
            .map(|(uuid, t)| {
                let values = self.0["values"][uuid.as_str()]
                    .as_array()
                    .map(|v| {
                        v.iter()
                            .map(|p| (p[0].as_u64().unwrap(), p[1].as_f64().unwrap()))
                            .collect()
                    })
                    .unwrap_or_default();
                (t["name"].as_str().unwrap_or_default().to_owned(), values)
            })
            .collect()
    }
}

/// Whether lizard's counters could run here: their note in the trace, or a printed skip with the engine's
/// reason.
pub fn frame_counters_ran(trace: &Trace) -> bool {
    if let Some(off) = trace
        .notes()
        .into_iter()
        .find(|n| n.starts_with("lizard's counters are off"))
    {
        test_data::skip!(Fixture::PerfEvents, "{off}");
        return false;
    }
    true
}
