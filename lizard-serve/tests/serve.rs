//! The exporter over the simulated gatord on loopback: what a scrape gets, how bad
//! requests are refused and counted, and what a dead daemon, a busy address or an engine that cannot
//! capture do.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use gatord_sim::{self as sim, Faults, SimConfig, SimHandle};
use lizard_core::{CaptureMode, Config, Error, GatordError, Lizard, Timeouts};
use lizard_serve::{Account, DeviceLabels, Exporter, ServeConfig, ServeError};

/// An engine configuration for the simulated daemon, with deadlines short enough for the fault tests.
fn config_for(daemon: &SimHandle) -> Config {
    let mut config = Config::gatord_only(daemon.address());
    config.timeouts = Timeouts::new(Duration::from_secs(2), Duration::from_secs(2));
    config.stop_timeout = Duration::from_secs(2);
    config
}

/// The id of the counter whose gatord name is `key`.
fn id_of(lizard: &Lizard, key: &str) -> u32 {
    let counter = lizard.counters().iter().find(|c| c.key == key);
    counter.unwrap_or_else(|| panic!("no counter {key}")).id
}

/// A persistent-mode engine on `daemon` with the counters `names` enabled.
fn engine(daemon: &SimHandle, names: &[&str]) -> Lizard {
    let mut config = config_for(daemon);
    config.mode = CaptureMode::Persistent;
    config.read_timeout = Duration::from_millis(200);
    let mut lizard = Lizard::configure(config).unwrap();
    for name in names {
        let id = id_of(&lizard, name);
        lizard.enable(id).unwrap();
    }
    lizard
}

/// Serving on any free loopback port, 100 ms windows, a 300 ms request deadline.
fn serve_config() -> ServeConfig {
    let mut config = ServeConfig::new(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        DeviceLabels::new("test-host", vec![("kernel".into(), "Linux test".into())]),
    );
    config.interval = Duration::from_millis(100);
    config.request_deadline = Duration::from_millis(300);
    config
}

/// Sends `request` and returns the whole answer (the exporter closes every connection).
fn send(address: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn scrape(address: SocketAddr) -> String {
    send(address, b"GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n")
}

/// The value of the sample line that starts with `series` (name and labels).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .and_then(|rest| rest.trim().parse().ok())
}

/// Waits (up to 10 s) until `ready` holds for the exporter's account.
fn wait_for(exporter: &Exporter, ready: impl Fn(&Account) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !ready(&exporter.account()) {
        assert!(Instant::now() < deadline, "{:?}", exporter.account());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_scrape_gives_every_enabled_counter_as_a_counter_or_a_gauge_with_its_labels() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let lizard = engine(&daemon, &["Sim_ccnt", "Sim_memfree"]);
    let exporter = Exporter::start(lizard, serve_config()).unwrap();
    let address = exporter.local_addr();
    wait_for(&exporter, |a| a.windows >= 3);

    let first = scrape(address);
    assert!(first.starts_with("HTTP/1.1 200 OK\r\n"), "{first}");
    assert!(first.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
    assert!(
        first.contains("# TYPE lizard_sim_ccnt_total counter\n"),
        "{first}"
    );
    assert!(
        first.contains("# TYPE lizard_sim_memfree_bytes gauge\n"),
        "{first}"
    );
    let cycles = "lizard_sim_ccnt_total{counter=\"Sim_ccnt\",source=\"gatord\",host=\"test-host\"}";
    let memfree =
        "lizard_sim_memfree_bytes{counter=\"Sim_memfree\",source=\"gatord\",host=\"test-host\"}";
    let before = value(&first, cycles).expect("the cycles total");
    assert!(before > 0.0, "{first}");
    // The level of an absolute counter is the window's mean of the simulator's values, which are
    // (k + 1) * 1000 + (sample % 16) for the counter's position k.
    let level = value(&first, memfree).expect("the free-memory level");
    assert!((level % 1000.0) <= 15.0 && level >= 1000.0, "{level}");
    // The given labels, then the daemon as its session described it.
    assert!(
        first.contains(
            "lizard_device_info{host=\"test-host\",kernel=\"Linux test\",gatord_build=\"oss\",\
             gatord_model=\"lizard-sim\",gatord_os=\"linux\"} 1\n"
        ),
        "{first}"
    );

    wait_for(&exporter, |a| a.windows >= 6);
    let second = scrape(address);
    let after = value(&second, cycles).unwrap();
    assert!(
        after > before,
        "a delta counter's total only grows: {before} then {after}"
    );
    // Cycles are whole: an integer counter's total is a whole number, written as one.
    let line = second.lines().find(|l| l.starts_with(cycles)).unwrap();
    assert!(!line.contains('.') && after.fract() == 0.0, "{line}");
    // Every value reads without a float's noise (a sum of window lengths is not 5.0055000000000005).
    for line in second.lines().filter(|l| !l.starts_with('#')) {
        let number = line.rsplit(' ').next().unwrap();
        let digits = number.trim_start_matches('-').replace('.', "");
        assert!(digits.len() <= 17, "{line}");
    }
    // The account counts a window just before its exposition is written: a scrape may still show the one
    // before.
    let windows = value(&second, "lizard_windows_total{host=\"test-host\"}").unwrap();
    assert!(windows >= 5.0, "{second}");

    let open = send(
        address,
        b"GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text; version=1.0.0\r\n\r\n",
    );
    assert!(open.contains("application/openmetrics-text; version=1.0.0"));
    assert!(
        open.contains("# UNIT lizard_sim_memfree_bytes bytes\n"),
        "{open}"
    );
    assert!(open.ends_with("# EOF\n"));

    let account = exporter.account();
    assert_eq!(account.scrapes, 3);
    assert_eq!(account.window_failures, 0);
    let lizard = exporter.stop().expect("the engine back");
    assert!(!lizard.is_capturing());
}

#[test]
fn bad_requests_are_refused_by_reason_and_the_next_scrape_is_answered() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let exporter = Exporter::start(engine(&daemon, &["Sim_ccnt"]), serve_config()).unwrap();
    let address = exporter.local_addr();

    assert!(send(
        address,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"
    )
    .starts_with("HTTP/1.1 400 "));
    let mut huge = b"GET /metrics HTTP/1.1\r\nCookie: ".to_vec();
    huge.resize(64 * 1024, b'x');
    assert!(send(address, &huge).starts_with("HTTP/1.1 431 "));
    assert!(send(address, b"POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
    assert!(send(address, b"GET /../../etc/passwd HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404 "));
    // A peer that says nothing is closed at the deadline; one that stops half-way, at its end of stream.
    let silent = TcpStream::connect(address).unwrap();
    assert_eq!(send(address, b"GET /metr"), "");
    let started = Instant::now();
    assert!(scrape(address).starts_with("HTTP/1.1 200 OK"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "a silent peer holds the exporter at most one request deadline"
    );
    drop(silent);

    let refused = exporter.account().refused;
    assert_eq!(
        (
            refused.malformed,
            refused.too_large,
            refused.method,
            refused.not_found,
            refused.incomplete
        ),
        (1, 1, 1, 1, 2),
        "{refused:?}"
    );
    assert!(send(address, b"HEAD /metrics HTTP/1.0\r\n\r\n").contains("Content-Length: "));
}

#[test]
fn a_daemon_that_dies_fails_windows_that_are_counted_and_the_exporter_keeps_answering() {
    let daemon = sim::start(SimConfig {
        faults: Faults {
            die_after_frames: Some(30),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let exporter = Exporter::start(engine(&daemon, &["Sim_ccnt"]), serve_config()).unwrap();
    wait_for(&exporter, |a| a.window_failures >= 1);
    let (number, error) = exporter.failure().expect("the failure");
    assert!(number >= 1);
    assert!(
        matches!(&*error, Error::Gatord(GatordError::Disconnected)),
        "{error:?}"
    );
    // The exposition is written when the failed window has been closed, just after it is counted.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = scrape(exporter.local_addr());
        let failures = value(&text, "lizard_window_failures_total{host=\"test-host\"}").unwrap();
        if failures >= 1.0 {
            break;
        }
        assert!(Instant::now() < deadline, "{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_busy_address_is_refused_with_the_address() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = serve_config();
    config.listen = taken.local_addr().unwrap();
    let error = Exporter::start(engine(&daemon, &["Sim_ccnt"]), config).unwrap_err();
    assert!(
        matches!(&error, ServeError::Bind { address, source }
            if *address == taken.local_addr().unwrap()
                && source.kind() == std::io::ErrorKind::AddrInUse),
        "{error:?}"
    );
}

#[test]
fn an_engine_with_nothing_enabled_or_no_daemon_cannot_serve() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let error = Exporter::start(engine(&daemon, &[]), serve_config()).unwrap_err();
    assert!(matches!(error, ServeError::NothingEnabled), "{error:?}");

    let lizard = engine(&daemon, &["Sim_ccnt"]);
    daemon.shutdown();
    let error = Exporter::start(lizard, serve_config()).unwrap_err();
    assert!(matches!(error, ServeError::FirstWindow(_)), "{error:?}");
}
