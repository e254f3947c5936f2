//! The HTML report end to end: `lizard capture --format json` of `lizard gatord-sim` serving counters from
//! an events file written here (one of them named with markup, as a hostile daemon could name it, one
//! never sent), with application trace records, made into a page by `lizard report` and rendered by
//! headless Chromium (Debian's `chromium`). Without Chromium the browser test is a printed skip, except
//! when `CI` is set: then it fails.

mod common;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::gatord_capture;

/// The longest any program started here may run.
const DEADLINE: Duration = Duration::from_secs(60);

/// Counters as gatord's events XML describes them; the second has a name only a hostile daemon would use.
const EVENTS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<events>
  <category name="Sim CPU">
    <event counter="Sim_ccnt" title="Sim CPU" name="Cycles" class="delta" units="cycles" description="Cycles"/>
    <event counter="Evil_&lt;script&gt;document.title='pwned'&lt;/script&gt;" title="&lt;b&gt;Evil&lt;/b&gt;"
           name="Evil" class="absolute" units="B" description="A name with markup"/>
    <event counter="Sim_freq" title="Clock" name="Frequency" class="absolute" units="MHz" description="Clock"/>
    <event counter="Sim_idle" title="Idle" name="Never sent" class="delta" units="cycles" description="Idle"/>
  </category>
</events>
"#;

/// The counters of `EVENTS` that get samples (Sim_idle is served for counting only: never sent).
const SERIES: usize = 3;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lizard-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn lizard(args: &[&str]) -> Output {
    finish(
        Command::new(env!("CARGO_BIN_EXE_lizard"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run lizard"),
    )
}

/// Waits for `child` until `DEADLINE`, killing it then, and returns its output.
fn finish(mut child: Child) -> Output {
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > DEADLINE {
            child.kill().ok();
            panic!("still running after {DEADLINE:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `lizard gatord-sim`, killed when dropped.
struct Simulator(Child);

impl Drop for Simulator {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

/// Starts `lizard gatord-sim` on a free port with `args`; returns it and the address its banner names.
fn simulator(args: &[&str]) -> (Simulator, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(["gatord-sim", "--port", "0", "--duration", "60s"])
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn gatord-sim");
    let stderr = child.stderr.take().expect("stderr");
    let simulator = Simulator(child);
    let (lines, banner) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let line = banner.recv_timeout(DEADLINE).expect("gatord-sim banner");
    let address = line
        .split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no address in {line}"))
        .to_owned();
    (simulator, address)
}

/// Debian's Chromium, or `None` after saying why the test skips; a skip of [`Fixture::Chromium`](test_data::Fixture::Chromium).
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|dir| dir.join(name))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        test_data::skip!(
            test_data::Fixture::Chromium,
            "chromium is not installed (apt-get install chromium)"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args` (after `--headless`), its standard output into `stdout`.
fn run_chromium(chromium: &Path, profile: &Path, args: &[&str], page: &Path, stdout: &Path) {
    let output = finish(
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .arg(format!("file://{}", page.display()))
            .stdout(File::create(stdout).expect("chromium output file"))
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium"),
    );
    assert!(
        output.status.success(),
        "chromium: {}",
        text(&output.stderr)
    );
}

/// Captures `lizard gatord-sim` for 1.5 s with three trace records sent during it; returns the JSON file.
fn capture_with_trace_records(dir: &Path) -> PathBuf {
    let events = dir.join("events.xml");
    std::fs::write(&events, EVENTS).expect("events file");
    let (_simulator, address) = simulator(&[
        "--events",
        events.to_str().expect("utf-8"),
        "--counting-only",
        "Sim_idle",
    ]);
    let json = dir.join("capture.json");
    let socket = format!("@lizard-report-{}", std::process::id());
    let capture = Command::new(env!("CARGO_BIN_EXE_lizard"))
        .args(gatord_capture(&address, "1500ms", &[]))
        .args(["--format", "json", "--trace", &socket, "-o"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn capture");
    let name: lizard_trace::SocketName = socket.parse().expect("socket name");
    let started = Instant::now();
    let mut client = loop {
        match lizard_trace::TraceClient::connect(&name) {
            Ok(client) => break client,
            Err(_) if started.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(10))
            }
            Err(e) => panic!("the capture's trace server accepts no client: {e}"),
        }
    };
    for module in ["frame<1>", "frame<2>", "frame<3>"] {
        std::thread::sleep(Duration::from_millis(250));
        let delivery = client.record(module, b"payload").expect("record");
        assert_eq!(delivery, lizard_trace::Delivery::Sent);
    }
    let output = finish(capture);
    assert!(output.status.success(), "{}", text(&output.stderr));
    json
}

#[test]
fn report_of_a_simulated_capture_renders_its_charts_in_chromium() {
    let Some(chromium) = chromium() else {
        return;
    };
    let dir = scratch("chromium");
    let json = capture_with_trace_records(&dir);
    let page = dir.join("report.html");
    let made = lizard(&[
        "report",
        json.to_str().expect("utf-8"),
        "-o",
        page.to_str().expect("utf-8"),
    ]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let html = std::fs::read_to_string(&page).expect("report");
    assert!(
        html.contains("Evil_&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;"),
        "the daemon's counter name is escaped"
    );

    let dom_file = dir.join("dom.html");
    run_chromium(
        &chromium,
        &dir.join("profile"),
        &["--dump-dom"],
        &page,
        &dom_file,
    );
    let dom = std::fs::read_to_string(&dom_file).expect("dumped DOM");
    assert!(dom.contains("</html>"), "a whole document: {dom:.300}");
    assert!(
        !dom.contains("id=\"script-error\""),
        "a script failed: {dom}"
    );
    assert_eq!(
        dom.matches("<script").count(),
        2,
        "only the page's own scripts are elements"
    );
    assert!(dom.contains("<title>lizard capture: 4 counters</title>"));
    // The last script ran and found every series laid out with a non-empty box.
    assert!(
        dom.contains(&format!("data-series-drawn=\"{SERIES}\"")),
        "{}",
        dom.split("<body")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
    );
    assert_eq!(dom.matches("<polyline class=\"series\"").count(), SERIES);
    for label in [
        ">cycles per sample</text>",
        ">B</text>",
        ">Hz</text>",
        ">time since the first sample (ms)</text>",
    ] {
        assert!(dom.contains(label), "axis label {label}");
    }
    assert_eq!(
        dom.matches("<g class=\"marker\">").count(),
        3 * SERIES,
        "each trace record is marked on every chart"
    );
    assert!(dom.contains("frame&lt;2&gt;"));
    assert!(dom.contains("<td class=\"reason\">no value: unavailable here"));

    let shot = dir.join("report.png");
    let shot_arg = format!("--screenshot={}", shot.display());
    run_chromium(
        &chromium,
        &dir.join("profile"),
        &[&shot_arg, "--window-size=1100,2000"],
        &page,
        &dir.join("screenshot.log"),
    );
    let png = std::fs::read(&shot).expect("screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000);
    eprintln!("report: {}, screenshot: {}", page.display(), shot.display());
}

#[test]
fn capture_writes_the_report_itself() {
    let (_simulator, address) = simulator(&[]);
    let dir = scratch("direct");
    let page = dir.join("capture.html");
    let output = lizard(&gatord_capture(
        &address,
        "300ms",
        &["--format", "html", "-o", page.to_str().expect("utf-8")],
    ));
    assert!(output.status.success(), "{}", text(&output.stderr));
    let html = std::fs::read_to_string(&page).expect("report");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    // The simulator's six built-in counters (five fixed ones and the programmable event of its counter set),
    // each with samples and its unit on the value axis.
    assert_eq!(html.matches("<polyline class=\"series\"").count(), 6);
    for label in [
        "cycles per sample",
        "instructions per sample",
        "B",
        "Hz",
        "W",
    ] {
        assert!(html.contains(&format!(">{label}</text>")), "{label}");
    }
}

#[test]
fn report_refuses_what_is_not_a_capture_with_one_line_and_status_4() {
    let dir = scratch("refused");
    let missing = dir.join("missing.json");
    let not_json = dir.join("capture.csv");
    std::fs::write(&not_json, "timestamp_ns,id,counter,value\n1,1,a,2\n").expect("csv");
    let no_reason = dir.join("no-reason.json");
    std::fs::write(
        &no_reason,
        r#"{"window_ns": null, "counters": [{"id": 4, "counter": "Quiet", "class": "delta",
            "value": null, "samples": []}]}"#,
    )
    .expect("json");
    let not_text = dir.join("binary.json");
    std::fs::write(&not_text, [0xff, 0xfe, 0x00]).expect("bytes");
    for (file, expected) in [
        (&missing, "No such file"),
        (
            &not_json,
            "not a capture document as `lizard capture --format json` writes it",
        ),
        (
            &no_reason,
            "counter 4 (Quiet) has no value and no reason why",
        ),
        (&not_text, "is not UTF-8"),
    ] {
        let output = lizard(&["report", file.to_str().expect("utf-8")]);
        let message = text(&output.stderr);
        assert_eq!(output.status.code(), Some(4), "{message}");
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(
            message.starts_with(&format!("lizard: {}", file.display()))
                && message.contains(expected),
            "{message}"
        );
        assert!(output.stdout.is_empty());
    }
}
