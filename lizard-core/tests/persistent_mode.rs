//! Persistent capture mode against the simulated gatord (synthetic BLOCK_COUNTER frames every millisecond over
//! loopback TCP): many start/stop pairs on one session, no connection per pair, samples selected by window.

mod common;

use std::time::Duration;

use common::{config_for, id_of};
use lizard_core::sim::{self, Faults, SimConfig};
use lizard_core::{CaptureMode, Error, Lizard};

#[test]
fn many_pairs_share_one_session_and_select_their_window() {
    let daemon = sim::start(SimConfig::default()).unwrap();
    let mut config = config_for(&daemon);
    config.mode = CaptureMode::Persistent;
    let mut lizard = Lizard::configure(config).unwrap();
    let ccnt = id_of(&lizard, "Sim_ccnt");
    lizard.enable(ccnt).unwrap();

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
        let sum: i64 = samples.iter().map(|s| s.value.as_f64() as i64).sum();
        assert_eq!(
            lizard.read_int(ccnt).unwrap(),
            sum,
            "delta: sum over the window"
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
    let daemon = sim::start(SimConfig::default()).unwrap();
    let mut config = config_for(&daemon);
    config.mode = CaptureMode::Persistent;
    let mut lizard = Lizard::configure(config).unwrap();
    lizard.enable(1).unwrap();
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    lizard.enable(2).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(5));
    lizard.stop_capture().unwrap();
    assert!(!lizard.samples(2).unwrap().is_empty());
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
        ..SimConfig::default()
    })
    .unwrap();
    let mut config = config_for(&daemon);
    config.mode = CaptureMode::Persistent;
    let mut lizard = Lizard::configure(config).unwrap();
    lizard.enable(1).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let err = lizard.stop_capture().unwrap_err();
    assert!(matches!(err, Error::Disconnected), "{err:?}");
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
