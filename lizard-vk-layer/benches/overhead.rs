//! What the layer costs an application: vkcube's frame time with the layer against without, interleaved in
//! one run on one X server (Xvfb) and the machine's Vulkan driver.
//!
//! ```sh
//! cargo bench -p lizard-vk-layer --bench overhead            # 9 rounds
//! cargo bench -p lizard-vk-layer --bench overhead -- 3       # rounds
//! ```
//!
//! A frame's time is measured without vkcube's start and exit: each round runs vkcube for `SHORT` and for
//! `LONG` frames in each configuration, and the difference of the two runs' wall times divided by the
//! difference of their frames is the time of one frame. The configurations run one after another within
//! each round, so that a change of the machine's load touches all of them; the figure printed for each is
//! the median over the rounds, and its ratio to the median without the layer (`ratio vkcube_frame/NAME =
//! R x no_layer`; 1.05 reads "5 % slower"), then the median of each round's own ratio (the runs of one
//! round are seconds apart, so a change of load touches both sides of that ratio) and every round's ratio,
//! to show the spread. The machine's load average is printed before and after.
//!
//! The same is done with the CPU time of vkcube's process (its threads, the driver's and the layer's:
//! `ratio vkcube_frame_cpu/NAME`), which a busy machine disturbs less than the wall time: on lavapipe the
//! GPU is the CPU, so what the layer costs the CPU is what it costs the frame when the CPUs are full.
//!
//! Configurations: no layer; the layer passing every call on (no counters, no queries: what a frame
//! boundary and the bookkeeping cost); the layer in `frame` mode reading lizard's counters at each present
//! and recording no queries (`LIZARD_VK_QUERIES=none`); with timestamps around every render pass; with
//! timestamps and pipeline statistics (the default). Each writes its trace and document into a temporary
//! folder, as a user's run would.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SHORT: u64 = 100;
const LONG: u64 = 2000;

/// One way of running vkcube.
struct Config {
    name: &'static str,
    layer: bool,
    queries: &'static str,
    counters: &'static str,
}

const CONFIGS: [Config; 5] = [
    Config {
        name: "no_layer",
        layer: false,
        queries: "",
        counters: "",
    },
    Config {
        name: "layer_passing_calls_on",
        layer: true,
        queries: "none",
        counters: "none",
    },
    Config {
        name: "frame_counters",
        layer: true,
        queries: "none",
        counters: "",
    },
    Config {
        name: "frame_counters_and_timestamps",
        layer: true,
        queries: "timestamps",
        counters: "",
    },
    Config {
        name: "frame_counters_timestamps_and_statistics",
        layer: true,
        queries: "timestamps,pipeline-statistics",
        counters: "",
    },
];

/// An X server of the bench's own, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        let base = 200 + std::process::id() % 300;
        let n = (base..base + 100)
            .find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists())
            .expect("a free X display");
        let child = Command::new("Xvfb")
            .arg(format!(":{n}"))
            .args(["-screen", "0", "1024x768x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (Debian: xvfb)");
        let socket = format!("/tmp/.X11-unix/X{n}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !Path::new(&socket).exists() {
            assert!(Instant::now() < deadline, "Xvfb did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Xvfb {
            child,
            display: format!(":{n}"),
        }
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The CPU time (user and system) of every child process this one has waited for, in seconds: vkcube's
/// threads and the layer's, as `timeout` reaps vkcube and this process reaps `timeout`.
fn children_cpu() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above, with RUSAGE_CHILDREN.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The wall time and CPU time (seconds) of one vkcube run of `frames` frames in `config`.
fn run(config: &Config, frames: u64, display: &str, library: &Path, out: &Path) -> (f64, f64) {
    let mut command = Command::new("timeout");
    command
        .args(["-k", "5", "300", "vkcube", "--c"])
        .arg(frames.to_string())
        .env("DISPLAY", display)
        .env_remove("VK_INSTANCE_LAYERS")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if config.layer {
        command
            .env("VK_LAYER_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("LD_LIBRARY_PATH", library)
            .env("VK_INSTANCE_LAYERS", "VK_LAYER_LIZARD_workloads")
            .env(
                "LIZARD_VK_OUTPUT",
                out.join(format!("{}.pftrace", config.name)),
            )
            .env("LIZARD_VK_QUERIES", config.queries)
            .env("LIZARD_VK_COUNTERS", config.counters)
            .env("LIZARD_VK_GATORD", "off");
    }
    let cpu = children_cpu();
    let started = Instant::now();
    let status = command.status().expect("timeout and vkcube start");
    let elapsed = started.elapsed();
    assert!(status.success(), "vkcube in {}: {status}", config.name);
    (elapsed.as_secs_f64(), children_cpu() - cpu)
}

/// The machine's load averages (`/proc/loadavg`).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a number is the rounds.
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(9);
    let library: PathBuf = std::env::current_exe()
        .expect("the bench's path")
        .parent()
        .expect("its folder")
        .to_path_buf();
    assert!(
        library.join("liblizard_vk_layer.so").exists(),
        "the layer's library beside the bench"
    );
    let out = std::env::temp_dir().join(format!("lizard-vk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("a scratch folder");
    println!("load average before: {}", load());
    let x = Xvfb::start();
    // Warm-up: the driver's shader cache and the page cache.
    for config in &CONFIGS {
        run(config, SHORT, &x.display, &library, &out);
    }
    // Per configuration, per round: the wall time and the CPU time of one frame.
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); CONFIGS.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); CONFIGS.len()];
    for round in 0..rounds {
        let mut line = format!("round {round}:");
        for (i, config) in CONFIGS.iter().enumerate() {
            let short = run(config, SHORT, &x.display, &library, &out);
            let long = run(config, LONG, &x.display, &library, &out);
            let frames = (LONG - SHORT) as f64;
            wall[i].push((long.0 - short.0) / frames);
            cpu[i].push((long.1 - short.1) / frames);
            line.push_str(&format!(
                " {} {:.3} ms ({:.3} ms CPU)",
                config.name,
                wall[i][round] * 1e3,
                cpu[i][round] * 1e3
            ));
        }
        println!("{line}");
    }
    println!("load average after: {}", load());
    for (what, times) in [("vkcube_frame", &wall), ("vkcube_frame_cpu", &cpu)] {
        let base_rounds = times[0].clone();
        let base = median(&mut times[0].clone());
        println!(
            "{what}/no_layer: median {:.3} ms a frame over {rounds} rounds",
            base * 1e3
        );
        for (i, config) in CONFIGS.iter().enumerate().skip(1) {
            let m = median(&mut times[i].clone());
            let mut paired: Vec<f64> = times[i]
                .iter()
                .zip(&base_rounds)
                .map(|(t, b)| t / b)
                .collect();
            let each: Vec<String> = paired.iter().map(|r| format!("{r:.3}")).collect();
            println!(
                "ratio {what}/{} = {:.3} x no_layer (median {:.3} ms a frame; median of the rounds' ratios \
                 {:.3}; each round: {})",
                config.name,
                m / base,
                m * 1e3,
                median(&mut paired),
                each.join(", ")
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
