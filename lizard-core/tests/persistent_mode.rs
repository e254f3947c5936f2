//! Persistent capture mode against the simulated gatord (synthetic BLOCK_COUNTER frames every millisecond over
//! loopback TCP): many start/stop pairs on one session, no connection per pair, samples selected by window.

mod common;

use std::time::Duration;

use common::{config_for, id_of};
use gatord_sim::{self as sim, Faults, SimConfig, SimHandle, SimSample, Stream};
use lizard_core::GatordError;
use lizard_core::{CaptureMode, CounterId, Error, Lizard};

/// A persistent-mode engine on `daemon` whose reads wait at most `read_timeout` (`None`: the default).
fn persistent(daemon: &SimHandle, read_timeout: Option<Duration>) -> Lizard {
    let mut config = config_for(daemon);
    config.mode = CaptureMode::Persistent;
    if let Some(timeout) = read_timeout {
        config.read_timeout = timeout;
    }
    Lizard::configure(config).unwrap()
}

/// Enables the counters `names` and returns their ids.
fn enable<const N: usize>(lizard: &mut Lizard, names: [&str; N]) -> [CounterId; N] {
    names.map(|name| {
        let id = id_of(lizard, name);
        lizard.enable(id).unwrap();
        id
    })
}

#[test]
fn many_pairs_share_one_session_and_select_their_window() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = persistent(&daemon, None);
    let [ccnt] = enable(&mut lizard, ["Sim_ccnt"]);

    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(10));
    lizard.stop_capture().unwrap();
    let after_first = daemon.stats();

    let mut previous_end = 0;
    for _ in 0..20 {
        let before = lizard.now_ns();
        lizard.start_capture().unwrap();
        std::thread::sleep(Duration::from_millis(5));
        lizard.stop_capture().unwrap();
        let after = lizard.now_ns();
        // The stop waits for nothing; the read waits for the sample that closes the window, after which
        // every sample inside the window has arrived too.
        let read = lizard.read_double(ccnt).unwrap();
        let samples = lizard.samples(ccnt).unwrap();
        assert!(
            !samples.is_empty(),
            "a 5 ms window holds some of the 1 ms samples"
        );
        for s in &samples {
            assert!(
                s.timestamp_ns >= before && s.timestamp_ns <= after,
                "sample outside its window"
            );
            assert!(
                s.timestamp_ns > previous_end || previous_end == 0,
                "no sample read twice"
            );
        }
        previous_end = samples.last().unwrap().timestamp_ns;
        // The samples inside count in full except the first, whose interval began before the window and
        // counts in proportion; the sample after the window adds its part. Each sample is at most 1015.
        let sum: f64 = samples.iter().map(|s| s.value.as_f64()).sum();
        assert!(
            (read - sum).abs() <= 1015.0,
            "delta: the window's share, {read} against {sum} inside"
        );
    }
    let stats = daemon.stats();
    assert_eq!(
        stats.connections, after_first.connections,
        "no connection per pair"
    );
    assert_eq!(stats.captures, 1, "one gatord capture for all pairs");
    lizard.close_session().unwrap();
    assert_eq!(daemon.stats().end_markers, 1);
}

#[test]
fn changing_the_enabled_set_opens_a_new_session() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = persistent(&daemon, None);
    lizard.enable(1).unwrap();
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    lizard.enable(2).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    lizard.stop_capture().unwrap();
    // The read waits for the samples that enclose the window (the stop does not), so it has a value
    // however late the new session's first samples arrive on a busy machine.
    let read = lizard.read_double(2);
    assert!(read.is_ok(), "counter 2 has a value: {read:?}");
    assert_eq!(daemon.stats().captures, 2);
    drop(lizard);
    assert_eq!(
        daemon.stats().end_markers,
        2,
        "drop closes the open session"
    );
}

#[test]
fn daemon_dying_between_pairs_is_disconnected_then_recovers() {
    let daemon = sim::start(SimConfig {
        faults: Faults {
            die_after_frames: Some(30),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = persistent(&daemon, None);
    lizard.enable(1).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let err = lizard.stop_capture().unwrap_err();
    assert!(
        matches!(err, Error::Gatord(GatordError::Disconnected)),
        "{err:?}"
    );
    assert!(
        !lizard.samples(1).unwrap().is_empty(),
        "samples received before are kept"
    );
    // The next pair opens a fresh session.
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    lizard.stop_capture().unwrap();
    assert_eq!(daemon.stats().captures, 2);
}

/// Scripted samples every 300 ms then one 1.7 s later (timestamps relative to the capture start), as gatord's
/// polled counters arrive: a 5 ms window between two of them holds no sample.
fn sparse_daemon() -> sim::SimHandle {
    let at = |ms: i64, memfree: i64, ccnt: i64| SimSample {
        timestamp_ns: ms * 1_000_000,
        values: vec![("Sim_memfree".into(), memfree), ("Sim_ccnt".into(), ccnt)],
    };
    sim::start(SimConfig {
        stream: Stream::Samples(vec![
            at(0, 4_000, 0),
            at(300, 5_000, 30_000),
            at(2_000, 6_000, 170_000),
        ]),
        ..SimConfig::quick()
    })
    .unwrap()
}

#[test]
fn window_shorter_than_the_sample_period_reads_the_rule_not_zero() {
    let daemon = sparse_daemon();
    let mut lizard = persistent(&daemon, None);
    let [memfree, ccnt] = enable(&mut lizard, ["Sim_memfree", "Sim_ccnt"]);
    // The first pair opens the session; the next pair falls between the samples at 300 ms and 2 s.
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    let opened = lizard.now_ns();
    std::thread::sleep(Duration::from_millis(310));
    let before = lizard.now_ns();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    lizard.stop_capture().unwrap();
    let after = lizard.now_ns();
    assert!(
        lizard.samples(memfree).unwrap().is_empty(),
        "no sample inside"
    );
    // Absolute: the level in force, the sample at 300 ms.
    assert_eq!(lizard.read_int(memfree).unwrap(), 5_000);
    assert_eq!(lizard.read_double(memfree).unwrap(), 5_000.0);
    // Delta: 170 000 events over the 1.7 s interval (100 per ms), the window's share of them.
    let read = lizard.read_double(ccnt).unwrap();
    let longest_ms = (after - before) as f64 / 1e6;
    assert!(
        read > 0.0 && read <= 100.0 * longest_ms,
        "apportioned {read} for a window of at most {longest_ms} ms"
    );
    assert!(
        read >= 100.0 * 4.0,
        "at least the 5 ms slept, less timer slack: {read}"
    );
    assert_eq!(lizard.read_int(ccnt).unwrap(), read as i64);
    assert!(
        after - opened < 2_000_000_000,
        "the window lay before the last sample"
    );
    lizard.close_session().unwrap();
}

#[test]
fn a_delta_window_whose_closing_sample_never_comes_has_no_value_after_the_read_timeout() {
    // Samples at 0 and 300 ms, then nothing: a window after 300 ms has the absolute level in force but
    // no sample closing the delta counter's interval.
    let at = |ms: i64, memfree: i64, ccnt: i64| SimSample {
        timestamp_ns: ms * 1_000_000,
        values: vec![("Sim_memfree".into(), memfree), ("Sim_ccnt".into(), ccnt)],
    };
    let daemon = sim::start(SimConfig {
        stream: Stream::Samples(vec![at(0, 4_000, 0), at(300, 5_000, 30_000)]),
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = persistent(&daemon, Some(Duration::from_millis(150)));
    let [memfree, ccnt] = enable(&mut lizard, ["Sim_memfree", "Sim_ccnt"]);
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    std::thread::sleep(Duration::from_millis(320));
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    // The stop needs no later sample: it succeeds although gatord sends nothing more.
    lizard.stop_capture().unwrap();
    assert_eq!(
        lizard.read_int(memfree).unwrap(),
        5_000,
        "the level in force"
    );
    let err = lizard.read_int(ccnt).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoValue {
                reason: lizard_core::NoValue::NotEnclosed,
                ..
            }
        ),
        "{err:?}"
    );
    lizard.close_session().unwrap();
}

/// Samples at 0 and 300 ms for two delta counters and an absolute one, then nothing.
fn daemon_silent_after_300_ms() -> sim::SimHandle {
    let at = |ms: i64, value: i64| SimSample {
        timestamp_ns: ms * 1_000_000,
        values: vec![
            ("Sim_memfree".into(), 4_000 + value),
            ("Sim_ccnt".into(), value),
            ("Sim_instructions".into(), value / 2),
        ],
    };
    sim::start(SimConfig {
        stream: Stream::Samples(vec![at(0, 0), at(300, 30_000)]),
        ..SimConfig::quick()
    })
    .unwrap()
}

#[test]
fn the_reads_of_one_window_share_one_read_timeout() {
    let daemon = daemon_silent_after_300_ms();
    let mut lizard = persistent(&daemon, Some(Duration::from_secs(2)));
    let [ccnt, instructions] = enable(&mut lizard, ["Sim_ccnt", "Sim_instructions"]);
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    std::thread::sleep(Duration::from_millis(320));
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    let not_enclosed = |err: Error| {
        matches!(
            err,
            Error::NoValue {
                reason: lizard_core::NoValue::NotEnclosed,
                ..
            }
        )
    };
    let started = std::time::Instant::now();
    assert!(not_enclosed(lizard.read_int(ccnt).unwrap_err()));
    let first = started.elapsed();
    assert!(first >= Duration::from_secs(2), "the first read waits");
    // The window's deadline has passed: neither another counter nor a second read waits again.
    assert!(not_enclosed(lizard.read_int(instructions).unwrap_err()));
    assert!(not_enclosed(lizard.read_double(ccnt).unwrap_err()));
    let rest = started.elapsed() - first;
    assert!(
        rest < Duration::from_secs(1),
        "later reads of the window waited {rest:?}"
    );
    // A new window gets its own deadline.
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    let again = std::time::Instant::now();
    assert!(not_enclosed(lizard.read_int(instructions).unwrap_err()));
    assert!(
        again.elapsed() >= Duration::from_secs(2),
        "a new window waits"
    );
    lizard.close_session().unwrap();
}

#[test]
fn a_counter_left_out_of_the_capture_has_no_value_at_once() {
    let daemon = daemon_silent_after_300_ms();
    for mode in [CaptureMode::Persistent, CaptureMode::Reconnecting] {
        let mut config = config_for(&daemon);
        config.mode = mode;
        config.read_timeout = Duration::from_secs(5);
        let mut lizard = Lizard::configure(config).unwrap();
        let memfree = id_of(&lizard, "Sim_memfree");
        let ccnt = id_of(&lizard, "Sim_ccnt");
        let not_captured = |lizard: &Lizard| {
            matches!(
                lizard.read_int(ccnt),
                Err(Error::NoValue {
                    reason: lizard_core::NoValue::NotCaptured,
                    ..
                })
            )
        };
        assert!(not_captured(&lizard), "{mode:?}: before any capture");
        lizard.enable(memfree).unwrap();
        lizard.start_capture().unwrap();
        assert!(not_captured(&lizard), "{mode:?}: while capturing");
        std::thread::sleep(Duration::from_millis(20));
        lizard.stop_capture().unwrap();
        let started = std::time::Instant::now();
        assert!(not_captured(&lizard), "{mode:?}: after the capture");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{mode:?}: a counter outside the capture waits for nothing"
        );
        assert!(lizard.read_int(memfree).is_ok(), "{mode:?}");
    }
}

#[test]
fn a_counter_the_session_never_sends_stops_waiting_once_gatord_has_passed_the_window() {
    // Sim_memfree every 100 ms up to 2 s; Sim_ccnt is bound but never sent (as an event-driven counter
    // whose event never fires).
    let daemon = sim::start(SimConfig {
        stream: Stream::Samples(
            (0..=20)
                .map(|n| SimSample {
                    timestamp_ns: n * 100_000_000,
                    values: vec![("Sim_memfree".into(), 4_000 + n)],
                })
                .collect(),
        ),
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = persistent(&daemon, Some(Duration::from_secs(5)));
    let [memfree, ccnt] = enable(&mut lizard, ["Sim_memfree", "Sim_ccnt"]);
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    std::thread::sleep(Duration::from_millis(250));
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    let started = std::time::Instant::now();
    let err = lizard.read_int(ccnt).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NoValue {
                reason: lizard_core::NoValue::NoSamples,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "gatord had sent samples stamped after the window: nothing more of Sim_ccnt is coming"
    );
    assert!(lizard.read_int(memfree).is_ok());
    lizard.close_session().unwrap();
}
