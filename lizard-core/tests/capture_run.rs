//! `capture::run` and `Regions` over the simulated gatord on loopback: a capture ends by its length, by its
//! watch or by its source, each counter's reading reaches the document, a bad choice of counters or a
//! trace socket that cannot be bound is refused before the capture starts, and regions read one after
//! another.
#![cfg(feature = "serde")]

mod common;

use std::time::Duration;

use common::config_for;
use gatord_sim::{self as sim, Faults, SimConfig, Stream};
use lizard_core::capture::{self, Ended, Plan, RunError, Watch};
use lizard_core::counter_names::SelectError;
use lizard_core::{ChoiceError, Chosen, Counters, Lizard, NoValue, Regions};

/// A watch that never stops a capture, and remembers what it was told.
#[derive(Default)]
struct Patient {
    chosen: Option<Chosen>,
    waits: usize,
}

impl Watch for Patient {
    fn starting(&mut self, chosen: &Chosen) {
        self.chosen = Some(chosen.clone());
    }

    fn wait(&mut self, at_most: Duration, _elapsed: Duration) -> bool {
        assert!(
            at_most <= capture::POLL,
            "a watch is asked for at most one poll"
        );
        self.waits += 1;
        std::thread::sleep(at_most);
        false
    }
}

/// A watch that ends a capture at its `after`th wait.
struct StopAt {
    after: usize,
    waits: usize,
}

impl Watch for StopAt {
    fn wait(&mut self, at_most: Duration, _elapsed: Duration) -> bool {
        std::thread::sleep(at_most);
        self.waits += 1;
        self.waits >= self.after
    }
}

fn plan(counters: Counters, length: Option<Duration>) -> Plan {
    Plan::new(counters, length, vec!["capture_run".to_owned()])
}

#[test]
fn a_capture_runs_for_its_length_and_its_document_holds_each_counter() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let names = vec!["Sim_ccnt".to_owned(), "Sim_instructions".to_owned()];
    let mut watch = Patient::default();
    let plan = plan(Counters::Named(names), Some(Duration::from_millis(300)));
    let captured = capture::run(&mut lizard, &plan, &mut watch).unwrap();
    assert_eq!(captured.ended, Ended::Length);
    assert!(captured.stop_error.is_none(), "{:?}", captured.stop_error);
    assert!(captured.elapsed >= Duration::from_millis(300));
    let chosen = watch.chosen.expect("told before starting");
    assert_eq!(chosen.ids.len(), 2);
    assert!(watch.waits >= 300 / 50, "waited {} times", watch.waits);
    let document = captured.document;
    let keys: Vec<String> = document
        .counters
        .iter()
        .map(|c| c.counter_name().to_string())
        .collect();
    assert_eq!(keys, ["Sim_ccnt", "Sim_instructions"]);
    assert!(document.counters.iter().all(|c| c.value.is_some()));
    let run = document.run.expect("the run's facts");
    assert_eq!(run.command, ["capture_run"]);
    assert_eq!(run.lizard_version, env!("CARGO_PKG_VERSION"));
}

#[test]
fn the_watch_ends_a_capture_without_a_length() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let mut watch = StopAt { after: 3, waits: 0 };
    let captured = capture::run(&mut lizard, &plan(Counters::All, None), &mut watch).unwrap();
    assert_eq!(captured.ended, Ended::Watch);
    assert_eq!(watch.waits, 3);
    assert_eq!(captured.document.counters.len(), lizard.counters().len());
}

#[test]
fn a_daemon_that_dies_ends_the_capture_and_what_came_before_is_kept() {
    let daemon = sim::start(SimConfig {
        faults: Faults {
            die_after_frames: Some(3),
            ..Faults::default()
        },
        ..SimConfig::quick()
    })
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let plan = plan(Counters::Default, Some(Duration::from_secs(20)));
    let captured = capture::run(&mut lizard, &plan, &mut Patient::default()).unwrap();
    assert_eq!(captured.ended, Ended::Source);
    assert!(captured.elapsed < Duration::from_secs(10));
    assert!(
        captured.stop_error.is_some(),
        "the disconnection is reported"
    );
    assert!(captured.document.counters.iter().any(|c| c.value.is_some()));
}

#[test]
fn an_unknown_counter_is_refused_before_the_capture_starts() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let plan = plan(Counters::Named(vec!["Sim_ccn".into()]), None);
    let mut watch = Patient::default();
    let error = capture::run(&mut lizard, &plan, &mut watch).unwrap_err();
    let RunError::Choice(ChoiceError::Select(SelectError::Unknown(unknown))) = error else {
        panic!("not an unknown name: {error:?}");
    };
    assert_eq!(unknown.name, "Sim_ccn");
    assert!(unknown.candidates.iter().any(|c| c == "Sim_ccnt"));
    assert!(watch.chosen.is_none() && watch.waits == 0);
    assert!(!lizard.is_capturing());
}

#[cfg(feature = "trace")]
#[test]
fn a_trace_socket_that_cannot_be_bound_is_refused_before_the_capture_starts() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let mut plan = plan(Counters::Default, Some(Duration::from_millis(100)));
    plan.trace = Some("/nonexistent-lizard-folder/trace.sock".parse().unwrap());
    let error = capture::run(&mut lizard, &plan, &mut Patient::default()).unwrap_err();
    assert!(matches!(error, RunError::Trace { .. }), "{error:?}");
    assert!(error
        .to_string()
        .contains("/nonexistent-lizard-folder/trace.sock"));
    assert!(!lizard.is_capturing());
}

#[test]
fn regions_are_read_one_after_another() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let counters = Counters::Named(vec!["Sim_ccnt".into(), "Sim_memfree".into()]);
    let mut regions = Regions::new(lizard, &counters).unwrap();
    assert_eq!(regions.counters(), ["Sim_ccnt", "Sim_memfree"]);
    regions.start().unwrap();
    let mut with_values = 0;
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(300));
        let readings = regions.read().unwrap();
        let names: Vec<&str> = readings.iter().map(|r| r.counter.as_str()).collect();
        assert_eq!(names, ["Sim_ccnt", "Sim_memfree"]);
        // A region the daemon sent nothing for (a loaded machine) has no value, and says why.
        if readings.iter().all(|r| r.value.is_ok()) {
            with_values += 1;
        }
    }
    assert!(with_values >= 1, "no region had values");
    regions.close().unwrap();
}

#[test]
fn a_region_without_a_sample_reads_as_no_value_and_closes() {
    let daemon = sim::start(SimConfig {
        stream: Stream::Samples(Vec::new()),
        ..SimConfig::quick()
    })
    .unwrap();
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let counters = Counters::Named(vec!["Sim_ccnt".into()]);
    let mut regions = Regions::new(lizard, &counters).unwrap();
    regions.start().unwrap();
    let readings = regions.read().unwrap();
    assert_eq!(readings.len(), 1);
    assert_eq!(readings[0].counter, "Sim_ccnt");
    assert_eq!(readings[0].value, Err(NoValue::NoSamples));
    // The region the read started ends at the close: nothing was captured over it, and that is no error.
    regions.close().unwrap();
}

#[test]
fn regions_refuse_an_unknown_counter() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let error = Regions::new(lizard, &Counters::Named(vec!["nope".into()])).unwrap_err();
    assert!(
        matches!(error, ChoiceError::Select(SelectError::Unknown(_))),
        "{error:?}"
    );
}
