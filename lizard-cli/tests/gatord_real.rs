//! The `lizard` command against the real gatord 9.7.2 (Arm's daemon, built for aarch64 and statically
//! linked: `../shared/third-party/gatord-9.7.2`), in the emulated Arm system of `.ci/gatord-tests`
//! booted with `-icount shift=0 -smp 1`, where every instruction takes one cycle. `LIZARD_REAL_GATORD`
//! names the daemon's binary; each test starts its own daemon on its own port with its own
//! configuration. Elsewhere every test skips, saying why.

mod common;
mod recording;

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{counter, gatord_capture, json, lizard, stderr, stdout};

/// The variable naming the daemon's binary.
const GATORD_VAR: &str = "LIZARD_REAL_GATORD";

/// One daemon at a time: the guest has one CPU, and counts are system-wide.
static ONE_DAEMON: Mutex<()> = Mutex::new(());

/// The daemon's binary, or `None` after saying why the test skips.
fn daemon_binary() -> Option<PathBuf> {
    match std::env::var_os(GATORD_VAR) {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            test_data::skip!(
                test_data::Fixture::Gatord,
                "{GATORD_VAR} does not name a gatord binary (these tests run in the emulated \
                 Arm system of .ci/gatord-tests, against the real gatord 9.7.2)"
            );
            None
        }
    }
}

/// The right to run the real daemon, held while a test does ([`ONE_DAEMON`]); `None`, with a printed
/// skip, where the daemon is not here.
fn one_daemon() -> Option<MutexGuard<'static, ()>> {
    daemon_binary()?;
    Some(ONE_DAEMON.lock().unwrap_or_else(|p| p.into_inner()))
}

/// A running gatord, killed when dropped.
struct Daemon {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
}

/// Whether something listens on TCP `port` of this machine (read from `/proc/net/tcp*`, so that no
/// connection disturbs the daemon).
fn listening(port: u16) -> bool {
    let wanted = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|table| {
        fs::read_to_string(table)
            .unwrap_or_default()
            .lines()
            .skip(1)
            .any(|line| {
                let mut fields = line.split_whitespace();
                let local = fields.nth(1).unwrap_or("");
                let state = fields.nth(1).unwrap_or("");
                local.ends_with(&wanted) && state == "0A"
            })
    })
}

impl Daemon {
    /// Starts the daemon on `port` with the counters `counters` configured, and waits (60 s at most)
    /// until it listens.
    fn start(port: u16, counters: &[&str]) -> Daemon {
        let binary = daemon_binary().expect("checked by the caller");
        let dir = PathBuf::from(format!("/tmp/gatord-{port}"));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("daemon folder");
        let mut config = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configurations revision=\"3\">\n",
        );
        for name in counters {
            config.push_str(&format!("<configuration counter=\"{name}\" />\n"));
        }
        config.push_str("</configurations>\n");
        let conf = dir.join("configuration.xml");
        fs::write(&conf, config).expect("configuration");
        let log = fs::File::create(dir.join("gatord.log")).expect("log");
        let child = Command::new(&binary)
            .args(["-p", &port.to_string(), "-c"])
            .arg(&conf)
            .args(["-O", "yes"])
            .current_dir(&dir)
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", binary.display()));
        let mut daemon = Daemon {
            child: Some(child),
            port,
            dir,
        };
        let started = Instant::now();
        while !listening(port) {
            if let Some(status) = daemon
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "gatord exited ({status}) before listening: {}",
                    daemon.log()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "gatord did not listen within 60 s: {}",
                daemon.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        daemon
    }

    fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        fs::read_to_string(self.dir.join("gatord.log")).unwrap_or_default()
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |c| c.id() as i32)
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) with the pid of a child this test started and has not reaped.
        let ret = unsafe { libc::kill(self.pid(), signal) };
        assert_eq!(ret, 0, "kill {signal}");
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A `lizard` process whose output is read when it ends.
fn spawn_lizard(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lizard")
}

/// Waits for `child` (120 s at most): its exit code, standard output and error, and how long it took.
/// The pipes are drained while it runs, so a large output cannot block it.
fn finish(mut child: Child) -> (i32, String, String, Duration) {
    let started = Instant::now();
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > common::DEADLINE {
            let _ = child.kill();
            panic!("lizard ran past {:?}", common::DEADLINE);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    (status.code().unwrap_or(-1), out, err, took)
}

/// The arguments of `lizard capture` from the daemon at `address` alone, for `duration`, of `counters`
/// (comma-separated), as JSON.
fn capture_args<'a>(address: &'a str, duration: &'a str, counters: &'a str) -> Vec<&'a str> {
    gatord_capture(
        address,
        duration,
        &["--counters", counters, "--format", "json"],
    )
}

/// The `arm_loop` example (2 000 005 instructions exactly), built beside this test binary.
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

/// Instructions one `arm_loop` run executes.
const ARM_LOOP_INSTRUCTIONS: u64 = 2_000_005;

#[test]
fn list_shows_the_daemons_counters_and_the_cpus_programmable_events() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8101, &["ARMv8_Cortex_A72_ccnt", "Linux_meminfo_memfree"]);
    let out = lizard(&["list", "--gatord", &daemon.address(), "--no-hwcpipe"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let summary = stderr(&out);
    for name in [
        "ARMv8_Cortex_A72_ccnt",
        "ARMv8_Cortex_A72:INST_RETIRED",
        "Linux_meminfo_memfree",
        "PERF_COUNT_SW_TASK_CLOCK",
    ] {
        assert!(text.contains(name), "lizard list shows no {name}:\n{text}");
    }
    let inst = text
        .lines()
        .find(|l| l.contains("ARMv8_Cortex_A72:INST_RETIRED"))
        .unwrap();
    assert!(inst.contains("0x08"), "INST_RETIRED is event 0x08: {inst}");
    let served: usize = summary
        .split("gatord at ")
        .nth(1)
        .and_then(|s| s.split(" counters").next())
        .and_then(|s| s.rsplit('(').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no counter count in {summary}"));
    assert!(served >= 100, "{served} counters");
    println!(
        "real gatord: lizard list --gatord: {served} counters, the Cortex-A72's counter set with its events (INST_RETIRED 0x08)"
    );
}

#[test]
fn cycles_and_instructions_by_name_match_the_emulated_cpus_truth() {
    let Some(_one) = one_daemon() else { return };
    let local_program = arm_loop();
    // The same workload through the local perf path, before the daemon holds the PMU: lizard stat
    // counts arm_loop exactly.
    let out = lizard(&[
        "stat",
        "--user-only",
        "--counters",
        "Instructions",
        "--format",
        "json",
        "--",
        local_program.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stat = json(&out);
    let local = stat["counters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["counter"] == "Instructions" && c["source"] == "cpu")
        .and_then(|c| c["value"].as_u64())
        .unwrap_or_else(|| panic!("no Instructions value: {stat}"));
    assert_eq!(local, ARM_LOOP_INSTRUCTIONS, "lizard stat of arm_loop");
    println!(
        "real gatord: lizard stat --user-only -- arm_loop: {local} instructions, exactly its own"
    );
    let daemon = Daemon::start(8102, &["ARMv8_Cortex_A72_ccnt"]);
    let address = daemon.address();
    // The CPU never idles during the window: arm_loop runs over and over from before the capture
    // starts until it ends (fork and exec are instructions too).
    let (stop, busy) = keep_busy();
    std::thread::sleep(Duration::from_millis(300));
    let work = Instant::now();
    let capture = spawn_lizard(&capture_args(
        &address,
        "3s",
        "ARMv8_Cortex_A72_ccnt,ARMv8_Cortex_A72:INST_RETIRED",
    ));
    let (code, out, err, _) = finish(capture);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let runs = busy.join().expect("the workload");
    let work = work.elapsed();
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let cycles = counter(&doc, "ARMv8_Cortex_A72_ccnt")["value"]
        .as_u64()
        .unwrap_or_else(|| panic!("no cycles: {doc}"));
    let instructions = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED")["value"]
        .as_u64()
        .unwrap_or_else(|| panic!("no instructions: {doc}"));
    // Under -icount shift=0 every instruction is one cycle; the counters differ only by the
    // instructions between reading one and the other.
    let gap = cycles.abs_diff(instructions);
    assert!(
        gap * 1000 < cycles,
        "cycles {cycles} and instructions {instructions} differ by {gap}"
    );
    println!(
        "real gatord: ARMv8_Cortex_A72_ccnt {cycles} and ARMv8_Cortex_A72:INST_RETIRED {instructions} \
         over the window (one instruction per cycle: they differ by {gap}); arm_loop ran {runs} times in \
         {work:?} around it"
    );
}

#[test]
fn gatords_counter_set_and_the_local_path_give_the_same_inst_retired_for_the_same_loop() {
    let Some(_one) = one_daemon() else { return };
    // The local path alone, by Arm's mnemonic: arm_loop's own instructions, exactly.
    let program = arm_loop();
    let out = lizard(&[
        "stat",
        "--user-only",
        "-e",
        "INST_RETIRED",
        "--format",
        "json",
        "--",
        program.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let alone = counter(&json(&out), "INST_RETIRED")["value"]
        .as_u64()
        .unwrap_or_else(|| panic!("no INST_RETIRED: {}", stdout(&out)));
    assert_eq!(
        alone, ARM_LOOP_INSTRUCTIONS,
        "lizard stat -e INST_RETIRED -- arm_loop"
    );
    // Both paths at the same time on the same loop run over and over, which keeps the only CPU busy: gatord's
    // counter set programs INST_RETIRED into a slot of the Cortex-A72's PMU for its capture, while the local
    // path opens it by name on the PMU's own perf type, CPU-wide, inside gatord's window. Under -icount one
    // instruction takes one virtual nanosecond, so both count about 1e9 per second of a busy CPU; each rate
    // is over its own clock and window, and they must agree.
    let daemon = Daemon::start(8113, &["ARMv8_Cortex_A72_ccnt"]);
    let address = daemon.address();
    let (stop, busy) = keep_busy();
    std::thread::sleep(Duration::from_millis(300));
    let capture = spawn_lizard(&capture_args(
        &address,
        "3s",
        "ARMv8_Cortex_A72:INST_RETIRED",
    ));
    std::thread::sleep(Duration::from_millis(700));
    let local = spawn_lizard(&[
        "stat",
        "--system-wide",
        "-e",
        "INST_RETIRED",
        "--duration",
        "1500ms",
        "--format",
        "json",
    ]);
    let (local_code, local_out, local_err, _) = finish(local);
    let (code, out, err, _) = finish(capture);
    stop.store(true, Ordering::Relaxed);
    let runs = busy.join().expect("the workload");
    assert_eq!(code, 0, "{err}");
    assert_eq!(local_code, 0, "{local_err}");
    let stat: serde_json::Value = serde_json::from_str(&local_out).expect("JSON");
    let local_total = counter(&stat, "INST_RETIRED")["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no local INST_RETIRED: {stat}"));
    let local_rate = local_total / stat["elapsed_s"].as_f64().expect("elapsed_s");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let samples: Vec<(f64, f64)> = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED")["samples"]
        .as_array()
        .unwrap_or_else(|| panic!("no gatord samples: {doc}"))
        .iter()
        .filter_map(|s| Some((s[0].as_f64()?, s[1].as_f64()?)))
        .collect();
    assert!(samples.len() > 10, "{} gatord samples", samples.len());
    // Each sample is the change since the one before: the first one's interval starts before it.
    let span = (samples[samples.len() - 1].0 - samples[0].0) / 1e9;
    let gatord_rate = samples[1..].iter().map(|s| s.1).sum::<f64>() / span;
    let gap = (gatord_rate - local_rate).abs() / gatord_rate;
    assert!(
        gap < 0.02,
        "INST_RETIRED per second: gatord's counter set {gatord_rate}, the local path {local_rate} \
         ({:.3}% apart)",
        gap * 100.0
    );
    println!(
        "real gatord: INST_RETIRED per second of the same busy loop ({runs} runs of arm_loop): gatord's \
         counter set {gatord_rate:.0}, the local path by name {local_rate:.0} ({:.3}% apart); the local \
         path alone counts one run exactly: {alone}",
        gap * 100.0
    );
}

/// Runs the `arm_loop` example from memory over and over until the returned flag is set; the thread's
/// result is the number of runs. The CPU never idles meanwhile.
fn keep_busy() -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<u64>,
) {
    // Run from memory: a program read over the 9p share makes the CPU wait for the host, and an
    // idle CPU's cycle counter goes on while its instruction counter stops.
    let program = PathBuf::from("/tmp/arm_loop");
    fs::copy(arm_loop(), &program).expect("copy arm_loop to /tmp");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut runs = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let status = Command::new(&program).status().expect("arm_loop");
                assert!(status.success());
                runs += 1;
            }
            runs
        })
    };
    (stop, busy)
}

/// gatord's `ARMv8_Cortex_A72_metric_ipc`: the daemon opens INST_RETIRED and CPU_CYCLES for it, each
/// sampled on its own overflows, and links them to the metric (METRIC_EVENT_KEY); the metric computed from
/// them equals INST_RETIRED / CPU_CYCLES of the same capture, read from the daemon's own counters.
#[test]
fn the_daemons_ipc_metric_is_instructions_over_cycles() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8111, &["ARMv8_Cortex_A72_ccnt"]);
    // Through a recording proxy, so that the session can be kept (LIZARD_RECORDING_DIR).
    let proxy = recording::proxy::Proxy::start(daemon.address().parse().expect("an address"));
    let address = proxy.address();
    let (stop, busy) = keep_busy();
    std::thread::sleep(Duration::from_millis(300));
    let capture = spawn_lizard(&capture_args(
        &address,
        "3s",
        "ARMv8_Cortex_A72_metric_ipc,ARMv8_Cortex_A72_ccnt,ARMv8_Cortex_A72:INST_RETIRED",
    ));
    let (code, out, err, _) = finish(capture);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let runs = busy.join().expect("the workload");
    let recorded = proxy.finish();
    if let Some(dir) = std::env::var_os("LIZARD_RECORDING_DIR") {
        if let Some(session) = recorded
            .iter()
            .find(|c| recording::proxy::Connection::started_a_capture(c))
        {
            session
                .save(&PathBuf::from(dir), "metric-ipc")
                .expect("save the recording");
        }
    }
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let metric = counter(&doc, "ARMv8_Cortex_A72_metric_ipc");
    let ipc = metric["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no ipc value: {metric}\n{err}"));
    let cycles = counter(&doc, "ARMv8_Cortex_A72_ccnt")["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no cycles: {doc}"));
    let instructions = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED")["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no instructions: {doc}"));
    let ratio = instructions / cycles;
    // The metric's events are sampled once per ~10^6 events (gatord's period at the normal rate): over
    // three seconds of 10^9 cycles, its counts are the raw ones to within a few periods.
    assert!(
        (ipc - ratio).abs() < 0.01,
        "metric ipc {ipc} against INST_RETIRED / CPU_CYCLES {instructions} / {cycles} = {ratio}"
    );
    println!(
        "real gatord: ARMv8_Cortex_A72_metric_ipc {ipc:.5} against INST_RETIRED / CPU_CYCLES {ratio:.5} \
         ({instructions} / {cycles}) of the same capture; arm_loop ran {runs} times"
    );
}

#[test]
fn a_default_capture_gives_the_ipc_metric_a_value() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8122, &["ARMv8_Cortex_A72_ccnt"]);
    let (stop, busy) = keep_busy();
    std::thread::sleep(Duration::from_millis(300));
    // No --counters: every counter, the event counters' slots left to the daemon's metrics, whose events
    // it programs there itself.
    let capture = spawn_lizard(&gatord_capture(
        &daemon.address(),
        "2s",
        &["--format", "json"],
    ));
    let (code, out, err, _) = finish(capture);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.join().expect("the workload");
    assert_eq!(code, 0, "{err}");
    let chose = err
        .lines()
        .find(|l| l.contains("has 6 slots: by default"))
        .unwrap_or_else(|| panic!("the default choice is said: {err}"))
        .to_owned();
    assert!(
        chose.contains("none of its") && chose.contains("metrics") && !chose.contains("SW_INCR"),
        "{chose}"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ipc = counter(&doc, "ARMv8_Cortex_A72_metric_ipc")["value"]
        .as_f64()
        .unwrap_or_else(|| {
            panic!(
                "no ipc value in a default capture: {}\n{err}",
                counter(&doc, "ARMv8_Cortex_A72_metric_ipc")
            )
        });
    assert!(ipc > 0.0 && ipc.is_finite(), "{ipc}");
    println!("real gatord: a default capture's ARMv8_Cortex_A72_metric_ipc is {ipc:.4}; {chose}");
}

#[test]
fn idle_cycles_are_stated() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8103, &["ARMv8_Cortex_A72_ccnt"]);
    let out = lizard(&capture_args(
        &daemon.address(),
        "2s",
        "ARMv8_Cortex_A72_ccnt,ARMv8_Cortex_A72:INST_RETIRED",
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&out);
    let cycles = counter(&doc, "ARMv8_Cortex_A72_ccnt")["value"]
        .as_u64()
        .unwrap_or(0);
    let instructions = counter(&doc, "ARMv8_Cortex_A72:INST_RETIRED")["value"]
        .as_u64()
        .unwrap_or(0);
    let window = doc["duration_s"].as_f64().unwrap_or(0.0);
    assert!(cycles > 0 && instructions > 0 && window > 0.5, "{doc}");
    // Measured: while the CPU idles in WFI the cycle counter goes on with QEMU's virtual clock
    // (1 GHz under -icount shift=0) and instructions stop.
    let per_second = cycles as f64 / window;
    assert!(
        (0.8e9..1.25e9).contains(&per_second),
        "{cycles} cycles in {window} s"
    );
    assert!(
        instructions * 2 < cycles,
        "an idle CPU retired {instructions} of {cycles}"
    );
    println!(
        "real gatord: idle for {window:.2} s: {cycles} cycles ({:.3} GHz: QEMU's cycle counter under \
         -icount goes on with the virtual clock while the CPU waits), {instructions} instructions \
         (they stop)",
        per_second / 1e9
    );
}

#[test]
fn memfree_follows_the_guests_meminfo() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8104, &["Linux_meminfo_memfree"]);
    let watch = MemWatch::start();
    let out = lizard(&capture_args(
        &daemon.address(),
        "2s",
        "Linux_meminfo_memfree",
    ));
    let (least, most) = watch.stop();
    assert!(out.status.success(), "{}", stderr(&out));
    let truth = mem_free();
    let doc = json(&out);
    let free = counter(&doc, "Linux_meminfo_memfree")["value"]
        .as_f64()
        .unwrap_or_else(|| panic!("no memfree: {doc}"));
    assert!(
        free >= least && free <= most,
        "memfree {free} outside what /proc/meminfo said during the capture ({least:.0}..{most:.0}, 1 % wider)"
    );
    let off = (free - truth).abs() / truth;
    // The run names the daemon as its `<captured>` target does: an open-source build and its checksum.
    let gatord = &doc["run"]["gatord"];
    assert_eq!(gatord["build_id"], "oss", "{gatord}");
    assert_eq!(gatord["os"], "linux", "{gatord}");
    let md5 = gatord["src_md5sum"].as_str().unwrap_or_default();
    assert!(
        md5.len() == 32 && md5.bytes().all(|b| b.is_ascii_hexdigit()),
        "{gatord}"
    );
    println!("real gatord: {gatord}");
    println!(
        "real gatord: Linux_meminfo_memfree {free:.0} B against /proc/meminfo {truth:.0} B ({:.2} % apart)",
        off * 100.0
    );
}

#[test]
fn a_second_client_is_told_the_session_is_busy() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8105, &["Linux_meminfo_memfree"]);
    let address = daemon.address();
    let first = spawn_lizard(&capture_args(&address, "5s", "Linux_meminfo_memfree"));
    std::thread::sleep(Duration::from_millis(2500));
    let second = lizard(&capture_args(&address, "1s", "Linux_meminfo_memfree"));
    let (code, _, err, _) = finish(first);
    assert_eq!(code, 0, "the first capture: {err}");
    assert_eq!(second.status.code(), Some(3), "{}", stderr(&second));
    let told = stderr(&second);
    assert!(
        told.contains("in progress") || told.contains("busy"),
        "{told}"
    );
    println!(
        "real gatord: a second client during a capture: exit 3, {}",
        told.trim()
    );
}

#[test]
fn doctor_tells_a_running_a_busy_and_a_stopped_daemon_apart() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8121, &["Linux_meminfo_memfree"]);
    let address = daemon.address();
    let doctor = |address: &str| {
        lizard(&[
            "doctor", "--gatord", address, "--source", "gatord", "--format", "json",
        ])
    };
    let check = |out: &std::process::Output| json(out)["sources"][0]["checks"][0].clone();
    let running = doctor(&address);
    assert_eq!(running.status.code(), Some(0), "{}", stdout(&running));
    let found = check(&running)["found"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        found.starts_with("protocol ") && found.contains("counters offered"),
        "{found}"
    );
    let capture = spawn_lizard(&capture_args(&address, "5s", "Linux_meminfo_memfree"));
    std::thread::sleep(Duration::from_millis(2500));
    let busy = doctor(&address);
    let (code, _, err, _) = finish(capture);
    assert_eq!(code, 0, "the capture: {err}");
    assert_eq!(busy.status.code(), Some(3), "{}", stdout(&busy));
    assert!(
        check(&busy)["cause"]
            .as_str()
            .unwrap_or_default()
            .contains("busy"),
        "{}",
        stdout(&busy)
    );
    drop(daemon);
    let stopped = doctor(&address);
    assert_eq!(stopped.status.code(), Some(3));
    let fix = check(&stopped)["fix"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        fix.contains("gatord") && fix.contains("adb forward"),
        "{fix}"
    );
    println!("real gatord: lizard doctor: running ({found}), busy during a capture, and not running: each told apart");
}

#[test]
fn a_daemon_killed_mid_capture_is_exit_3_with_its_samples_kept() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8106, &["Linux_meminfo_memfree"]);
    let capture = spawn_lizard(&capture_args(
        &daemon.address(),
        "20s",
        "Linux_meminfo_memfree",
    ));
    std::thread::sleep(Duration::from_millis(3000));
    let killed = Instant::now();
    daemon.signal(libc::SIGKILL);
    let (code, out, err, _) = finish(capture);
    let after = killed.elapsed();
    assert_eq!(code, 3, "{err}");
    assert!(
        after < Duration::from_secs(3),
        "exit {after:?} after the kill"
    );
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let samples = counter(&doc, "Linux_meminfo_memfree")["samples"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(samples > 0, "the samples before the kill are kept: {doc}");
    println!("real gatord: kill -9 mid-capture: exit 3 after {after:?}, {samples} samples kept");
}

#[test]
fn a_daemon_that_stops_answering_ends_the_capture_in_bounded_time() {
    let Some(_one) = one_daemon() else { return };
    let daemon = Daemon::start(8107, &["Linux_meminfo_memfree"]);
    let capture = spawn_lizard(&capture_args(
        &daemon.address(),
        "3s",
        "Linux_meminfo_memfree",
    ));
    std::thread::sleep(Duration::from_millis(1500));
    daemon.signal(libc::SIGSTOP);
    let (code, _, err, took) = finish(capture);
    daemon.signal(libc::SIGCONT);
    assert!(took < Duration::from_secs(20), "{took:?}");
    println!(
        "real gatord: SIGSTOP mid-capture: lizard ended after {took:?} with exit {code}: {}",
        err.lines().last().unwrap_or("")
    );
}

#[test]
fn a_restarted_daemon_serves_the_next_capture() {
    let Some(_one) = one_daemon() else { return };
    let capture = |address: &str| lizard(&capture_args(address, "1s", "Linux_meminfo_memfree"));
    let first = Daemon::start(8108, &["Linux_meminfo_memfree"]);
    let out = capture(&first.address());
    assert!(out.status.success(), "{}", stderr(&out));
    drop(first);
    let again = Daemon::start(8108, &["Linux_meminfo_memfree"]);
    let out = capture(&again.address());
    assert!(out.status.success(), "{}", stderr(&out));
    let samples = counter(&json(&out), "Linux_meminfo_memfree")["samples"]
        .as_array()
        .map_or(0, Vec::len);
    assert!(samples > 0);
    println!("real gatord: restarted between two captures: the second has {samples} samples");
}

#[test]
fn apc_dump_reads_a_capture_the_daemon_wrote_itself() {
    let Some(binary) = daemon_binary() else {
        return;
    };
    let _one = ONE_DAEMON.lock().unwrap_or_else(|p| p.into_inner());
    let dir = PathBuf::from("/tmp/gatord-local");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("configuration.xml");
    fs::write(
        &conf,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configurations revision=\"3\">\n\
         <configuration counter=\"ARMv8_Cortex_A72_ccnt\" />\n\
         <configuration counter=\"Linux_meminfo_memfree\" />\n</configurations>\n",
    )
    .unwrap();
    let apc = dir.join("local.apc");
    let status = Command::new(&binary)
        .arg("-c")
        .arg(&conf)
        .arg("-o")
        .arg(&apc)
        .args(["-t", "2"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("gatord -o");
    assert!(status.success(), "gatord -o DIR.apc -t 2: {status}");
    let out = lizard(&["apc-dump", apc.to_str().unwrap(), "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Linux_meminfo_memfree") || text.contains("memfree"),
        "{text}"
    );
    println!(
        "real gatord: lizard apc-dump of the daemon's own local capture: {} bytes of JSON",
        text.len()
    );
}

/// The C demo (`lizard-capi/examples/c/lizard_demo.c`) and the `liblizard.so` it loads, built for this
/// machine by `.ci/c-demo` and named by `LIZARD_C_DEMO` and `LIZARD_C_LIBRARY`; `None` after saying why
/// the test skips.
fn c_demo() -> Option<(PathBuf, PathBuf)> {
    let named = |var: &str| std::env::var_os(var).map(PathBuf::from);
    match (named("LIZARD_C_DEMO"), named("LIZARD_C_LIBRARY")) {
        (Some(demo), Some(library)) => Some((demo, library)),
        _ => {
            test_data::skip!(
                test_data::Fixture::Gatord,
                "LIZARD_C_DEMO and LIZARD_C_LIBRARY do not name the C demo and liblizard.so \
                 (.ci/gatord-tests builds them with .ci/c-demo)"
            );
            None
        }
    }
}

/// What the C-API tests need: the right to run the daemon ([`one_daemon`]), the C demo and `liblizard.so`
/// ([`c_demo`]); `None`, with a printed skip, without any of them.
fn c_api_fixture() -> Option<(MutexGuard<'static, ()>, PathBuf, PathBuf)> {
    let (demo, library) = c_demo()?;
    Some((one_daemon()?, demo, library))
}

/// `MemFree` of `/proc/meminfo`, in bytes.
fn mem_free() -> f64 {
    fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemFree:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .expect("MemFree in /proc/meminfo")
        * 1024.0
}

/// The least and the most MemFree seen while something runs, read every 10 ms by a thread of its
/// own: free memory dips while the daemon and its client allocate, and comes back after, so what
/// gatord read at its own instants lies within what was seen around them.
struct MemWatch {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(f64, f64)>,
}

impl MemWatch {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut least, mut most) = (f64::MAX, 0.0f64);
            loop {
                let free = mem_free();
                least = least.min(free);
                most = most.max(free);
                if flag.load(Ordering::Relaxed) {
                    return (least, most);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self { stop, thread }
    }

    /// The range seen, widened by 1 % either way for what changed between two readings.
    fn stop(self) -> (f64, f64) {
        self.stop.store(true, Ordering::Relaxed);
        let (least, most) = self.thread.join().expect("the MemFree watcher");
        (least * 0.99, most * 1.01)
    }
}

/// What the C demo printed: counter names by id, each draw's window and readings.
struct DemoRun {
    names: Vec<(u32, String)>,
    /// `(draw, inner ns, outer ns)`: the capture window lies between the two.
    windows: Vec<(u32, u64, u64)>,
    /// `(draw, id, value as printed)`.
    reads: Vec<(u32, u32, String)>,
    took: Duration,
}

impl DemoRun {
    /// Runs the demo against the daemon at `port` for `draws` draws of `work` loop iterations each.
    fn run(demo: &PathBuf, library: &PathBuf, port: u16, draws: u32, work: u64) -> DemoRun {
        let child = Command::new(demo)
            .arg(library)
            .args(["127.0.0.1", &port.to_string(), &draws.to_string()])
            .arg(work.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the C demo");
        let (code, out, err, took) = finish(child);
        assert_eq!(code, 0, "the C demo failed: {err}");
        assert_eq!(out.lines().last(), Some("done"), "{out}\n{err}");
        let mut run = DemoRun {
            names: Vec::new(),
            windows: Vec::new(),
            reads: Vec::new(),
            took,
        };
        for line in out.lines() {
            let words: Vec<&str> = line.splitn(6, ' ').collect();
            let number = |word: &str| word.parse::<u64>().expect("a number");
            match words.as_slice() {
                ["counter", id, _, _, _, names] => run.names.push((
                    number(id) as u32,
                    names.split('|').next().unwrap_or_default().to_owned(),
                )),
                ["window", draw, inner, outer] => {
                    run.windows
                        .push((number(draw) as u32, number(inner), number(outer)))
                }
                ["draw", draw, id, value] => {
                    run.reads
                        .push((number(draw) as u32, number(id) as u32, (*value).to_owned()))
                }
                _ => {}
            }
        }
        assert_eq!(run.windows.len(), draws as usize, "{out}\n{err}");
        run
    }

    /// The readings of the counter called `name`, one per draw, in draw order.
    fn values(&self, name: &str) -> Vec<f64> {
        let id = self
            .names
            .iter()
            .find(|(_, n)| n == name)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("the demo lists no {name}"));
        self.reads
            .iter()
            .filter(|(_, i, _)| *i == id)
            .map(|(_, _, v)| v.parse().expect("a reading"))
            .collect()
    }

    /// Checks the cycle counter of every draw against its window (one cycle a nanosecond: the emulated
    /// CPU's 1 GHz virtual clock): a draw reads 0 (no value) only before gatord's first perf sample, and
    /// every other lies between the window's bounds. Returns how many draws came before that sample.
    fn check_cycles(&self) -> usize {
        let cycles = self.values("ARMv8_Cortex_A72_ccnt");
        assert_eq!(cycles.len(), self.windows.len());
        let before = cycles.iter().take_while(|&&c| c == 0.0).count();
        assert!(
            before < cycles.len(),
            "no draw read the cycle counter: gatord sent no perf sample"
        );
        for (&(draw, inner, outer), &count) in self.windows.iter().zip(&cycles).skip(before) {
            // The window's share of the samples that enclose it: cycles go on at one a nanosecond,
            // so the share is the window's length in nanoseconds, up to 1 % either way.
            assert!(
                count >= inner as f64 * 0.99 && count <= outer as f64 * 1.01,
                "draw {draw}: {count} cycles for a window of {inner}..{outer} ns"
            );
        }
        before
    }
}

#[test]
fn the_c_demo_reads_the_daemons_counters_per_draw() {
    let Some((_one, demo, library)) = c_api_fixture() else {
        return;
    };
    let daemon = Daemon::start(8110, &["ARMv8_Cortex_A72_ccnt"]);
    // The demo as it ships: three draws of 2 000 000 loop iterations, every listed counter enabled
    // (those a counter set has no slot left for are refused).
    let watch = MemWatch::start();
    let run = DemoRun::run(&demo, &library, daemon.port, 3, 2_000_000);
    let (least, most) = watch.stop();
    let before = run.check_cycles();
    // Free memory moves while the demo runs (it and the daemon allocate): each reading lies within
    // what /proc/meminfo said during the run.
    for (draw, free) in run.values("Linux_meminfo_memfree").iter().enumerate() {
        assert!(
            *free >= least && *free <= most,
            "draw {draw}: Linux_meminfo_memfree {free}, /proc/meminfo {least:.0}..{most:.0} during the run (1 % wider)"
        );
    }
    let windows: Vec<String> = run
        .windows
        .iter()
        .map(|(_, inner, _)| format!("{:.1} ms", *inner as f64 / 1e6))
        .collect();
    println!(
        "real gatord: C demo through liblizard.so: {} counters listed, 3 draws ({}) in {:?}; \
         ARMv8_Cortex_A72_ccnt = each window's length at 1 GHz within 1 % ({before} draw(s) before \
         gatord's first perf sample read no value); Linux_meminfo_memfree within what /proc/meminfo said during the run",
        run.names.len(),
        windows.join(", "),
        run.took
    );
}

#[test]
fn two_hundred_per_draw_pairs_through_the_c_api() {
    let Some((_one, demo, library)) = c_api_fixture() else {
        return;
    };
    let daemon = Daemon::start(8111, &["ARMv8_Cortex_A72_ccnt"]);
    // 20 000 iterations: a window of about 0.15 ms, shorter than gatord's 1 ms sample period, so each
    // reading is its window's share of the sample that encloses it.
    let run = DemoRun::run(&demo, &library, daemon.port, 200, 20_000);
    let before = run.check_cycles();
    let mut start_stop: Vec<u64> = run
        .windows
        .iter()
        .map(|(_, inner, outer)| outer - inner)
        .collect();
    start_stop.sort_unstable();
    println!(
        "real gatord: 200 per-draw StartCapture/StopCapture/Read rounds through liblizard.so in {:?} \
         ({:.1} ms a round: the reads of a window wait for gatord to pass on the perf sample after it); \
         Start+Stop alone {:.0} µs (median); the cycle counter was within 1 % of every window after the \
         first {before} draw(s)",
        run.took,
        run.took.as_secs_f64() * 1e3 / 200.0,
        start_stop[start_stop.len() / 2] as f64 / 1e3
    );
}

#[test]
fn the_simulator_streams_as_the_daemon_does() {
    let Some(_one) = one_daemon() else { return };
    let Some(sim_config) = recording::simulated_arm_vm_daemon() else {
        return;
    };
    let mut failures = Vec::new();
    for session in recording::Session::ALL {
        let daemon = Daemon::start(8112, &["ARMv8_Cortex_A72_ccnt"]);
        let real = session.record(daemon.address().parse().expect("an address"));
        drop(daemon);
        if let Some(dir) = std::env::var_os("LIZARD_RECORDING_DIR") {
            real.save(&PathBuf::from(dir), session.name())
                .expect("save the recording");
        }
        let real = recording::profile::Profile::of(&real).expect("the daemon's stream decodes");
        for line in &real.noted {
            println!("real gatord: {} stream noted: {line}", session.name());
        }
        let sim = gatord_sim::start(sim_config.clone()).expect("start the simulator");
        let simulated = session.record(sim.local_addr());
        sim.shutdown();
        let simulated =
            recording::profile::Profile::of(&simulated).expect("the simulator's stream decodes");
        let path = session.committed_profile();
        let committed = fs::read_to_string(&path).unwrap_or_default();
        let drift = recording::profile::held_lines(&committed).differences(&real);
        let apart = real.differences(&simulated);
        if drift.is_empty() && apart.is_empty() {
            println!(
                "real gatord: {}: the simulator's stream has the daemon's profile ({} lines: frame types, \
                 keys, PERF_ATTRS layout, timing classes), and the daemon's is the committed one",
                session.name(),
                real.held.len()
            );
        } else {
            failures.push(format!(
                "{}: the daemon (+) against the committed profile (-, {}):\n{}\n\nthe simulator (+) \
                 against the daemon (-):\n{}\n\nthe daemon's profile:\n{}",
                session.name(),
                path.display(),
                drift.join("\n"),
                apart.join("\n"),
                real.render()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
