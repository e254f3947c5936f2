//! `lizard serve`: scraped over loopback from the simulated gatord and from the local counters, stopped by
//! SIGTERM, refused a busy address, and scraped by a real Prometheus (Debian's `prometheus`, which `.ci/run`
//! installs; elsewhere that test skips and says so) whose `rate()` of a busy loop's task clock is checked
//! against the kernel's own account of the loop's CPU time.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{lizard, stderr, Sim};
use serde_json::Value;

/// A running `lizard serve` and the lines of its standard error.
struct Served {
    child: Child,
    lines: mpsc::Receiver<String>,
    address: SocketAddr,
}

impl Served {
    /// Starts `lizard serve --listen 127.0.0.1:0 ARGS` and reads its address from its banner.
    fn start(args: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lizard"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lizard serve");
        let (tx, lines) = mpsc::channel();
        let err = BufReader::new(child.stderr.take().expect("stderr"));
        std::thread::spawn(move || {
            for line in err.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut seen = Vec::new();
        let address = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(20))
                .unwrap_or_else(|_| panic!("no banner from lizard serve: {seen:?}"));
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().unwrap().parse().unwrap();
            }
            seen.push(line);
        };
        Served {
            child,
            lines,
            address,
        }
    }

    /// Sends SIGTERM and returns the exit status and the rest of standard error (within 10 s).
    fn terminate(mut self) -> (i32, String) {
        // SAFETY: kill(2) with a pid this test spawned and has not reaped.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "lizard serve ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        };
        let rest: Vec<String> = self.lines.try_iter().collect();
        (status.code().unwrap_or(-1), rest.join("\n"))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` over HTTP/1.0; the body of a 200 answer.
fn get(address: SocketAddr, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(2)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| body.to_owned())
        .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_owned()))
}

#[test]
fn serves_gatords_counters_and_stops_cleanly_on_sigterm() {
    let sim = Sim::start(&[]);
    let served = Served::start(&[
        "--gatord",
        &sim.address,
        "--no-hwcpipe",
        "--counters",
        "Sim_ccnt,Sim_memfree",
        "--interval",
        "200ms",
    ]);
    std::thread::sleep(Duration::from_millis(900));
    let text = get(served.address, "/metrics").expect("a scrape");
    let cycles = "lizard_sim_ccnt_total{counter=\"Sim_ccnt\",source=\"gatord\",host=";
    assert!(
        text.lines()
            .any(|l| l.starts_with(cycles) && !l.ends_with(" 0")),
        "{text}"
    );
    assert!(
        text.contains("# TYPE lizard_sim_memfree_bytes gauge\n"),
        "{text}"
    );
    assert!(text.contains("gatord_protocol=\"950\""), "{text}");
    let (code, rest) = served.terminate();
    assert_eq!(code, 0, "{rest}");
    assert!(rest.contains("lizard: served "), "{rest}");
    assert!(rest.contains("1 scrapes"), "{rest}");
}

#[test]
fn a_listen_address_in_use_exits_2_naming_it() {
    let sim = Sim::start(&[]);
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = lizard(&[
        "serve",
        "--gatord",
        &sim.address,
        "--no-hwcpipe",
        "--listen",
        &address,
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains(&format!("cannot listen on {address}: ")),
        "{}",
        stderr(&output)
    );
    let output = lizard(&["serve", "--no-gatord", "--interval", "10ms"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("shortest window"),
        "{}",
        stderr(&output)
    );
}

/// Percent-encodes a query-string value.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus' answer to the instant query `query`: its `data.result` array.
fn query(prometheus: SocketAddr, query: &str) -> Option<Vec<Value>> {
    let body = get(
        prometheus,
        &format!("/api/v1/query?query={}", encode(query)),
    )?;
    let answer: Value = serde_json::from_str(&body).ok()?;
    answer["data"]["result"].as_array().cloned()
}

/// The CPU seconds (user + system) process `pid` has used, from `/proc/PID/stat`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // After the command: state is field 3, utime 14 and stime 15 (1-based), in clock ticks.
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// A port no one listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// How far Prometheus' `rate()` of the task clock may be from the kernel's account of the loop's CPU time:
/// the two cover slightly different spans (Prometheus' samples fall on its scrapes, the kernel's on this
/// test's reads), and the exporter's windows leave microseconds between them.
const RATE_TOLERANCE: f64 = 0.15;

#[test]
fn a_real_prometheus_scrapes_the_exporter_and_rates_a_busy_loop_right() {
    let Some(prometheus) = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and there is no prometheus binary (.ci/run installs Debian's `prometheus`)"
        );
        println!(
            "skipped: no prometheus binary (Debian's `prometheus` package; .ci/run installs it)"
        );
        return;
    };
    let mut busy = Command::new("sh")
        .args(["-c", "while :; do :; done"])
        .spawn()
        .expect("a busy loop");
    let busy_pid = busy.id();
    struct KillOnDrop(Vec<Child>);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            for child in &mut self.0 {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
    let served = Served::start(&[
        "--no-gatord",
        "--pid",
        &busy_pid.to_string(),
        "--counters",
        "TaskClock,ContextSwitches",
        "--interval",
        "500ms",
    ]);
    let dir = std::env::temp_dir().join(format!("lizard-prometheus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: lizard\n    \
             static_configs:\n      - targets: ['{}']\n",
            served.address
        ),
    )
    .unwrap();
    let web = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let prometheus = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .arg("--log.level=warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start prometheus");
    let _children = KillOnDrop(vec![prometheus]);
    let started = Instant::now();
    let cpu_at_start = cpu_seconds(busy_pid);

    // Wait for the series with its labels (Prometheus adds job and instance).
    let series = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Prometheus never stored lizard_task_clock_seconds_total"
        );
        std::thread::sleep(Duration::from_millis(500));
        if let Some(found) = query(web, "lizard_task_clock_seconds_total") {
            if let Some(first) = found.first() {
                break first["metric"].clone();
            }
        }
    };
    assert_eq!(series["counter"], "TaskClock", "{series}");
    assert_eq!(series["source"], "local", "{series}");
    assert_eq!(series["job"], "lizard", "{series}");
    assert_eq!(series["instance"], served.address.to_string(), "{series}");
    assert!(
        series["host"].as_str().is_some_and(|h| !h.is_empty()),
        "{series}"
    );
    let info = query(web, "lizard_device_info").expect("the device info");
    assert!(info[0]["metric"]["arch"].is_string(), "{info:?}");

    // Eight more scrapes, then the rate over the last six seconds against the kernel's account.
    std::thread::sleep(Duration::from_secs(8));
    let span = 6.0;
    let cpu_before = cpu_seconds(busy_pid);
    let rate = query(
        web,
        &format!("rate(lizard_task_clock_seconds_total[{span}s])"),
    )
    .and_then(|r| r.first().cloned())
    .and_then(|r| r["value"][1].as_str().and_then(|v| v.parse::<f64>().ok()))
    .expect("a rate");
    let elapsed = started.elapsed().as_secs_f64();
    let kernel_rate = (cpu_before - cpu_at_start) / elapsed;
    println!(
        "Prometheus rate(task clock) {rate:.3} CPU-s/s; the kernel's account of the loop {kernel_rate:.3} \
         over {elapsed:.1}s; tolerance {RATE_TOLERANCE}"
    );
    assert!(
        (rate - kernel_rate).abs() <= RATE_TOLERANCE * kernel_rate,
        "rate {rate} against {kernel_rate}"
    );
    let (code, rest) = served.terminate();
    assert_eq!(code, 0, "{rest}");
    let _ = busy.kill();
    let _ = busy.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
