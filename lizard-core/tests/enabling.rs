//! `Lizard::enable_fitting` against the simulated gatord serving gatord 9.7.2's own Cortex-A72 events file
//! (`../shared/data/gatord-9.7.2/events/events-Cortex-A72.xml`, a 6-slot `ARMv8_Cortex_A72_cnt` set). A
//! missing data folder is a printed skip.

mod common;

use common::{config_for, gatord_data};
use gatord_sim::{self as sim, SimConfig, SimHandle};
use lizard_core::{Error, GatordError, Lizard, Overflow};

fn a72_daemon() -> Option<SimHandle> {
    let events = gatord_data("events/events-Cortex-A72.xml")?;
    Some(
        sim::start(SimConfig {
            events_xml: Some(String::from_utf8(events).unwrap()),
            ..SimConfig::default()
        })
        .unwrap(),
    )
}

/// The first `n` events of the counter set, by id.
fn set_events(lizard: &Lizard, n: usize) -> Vec<u32> {
    lizard
        .counters()
        .iter()
        .filter(|c| c.set_event.as_ref().is_some_and(|e| e.code != 0x00))
        .take(n)
        .map(|c| c.id)
        .collect()
}

#[test]
fn events_past_the_slots_are_left_out_and_named() {
    let Some(daemon) = a72_daemon() else { return };
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let chosen = set_events(&lizard, 8);
    let enabled = lizard
        .enable_fitting(&chosen, Overflow::LeaveOut)
        .expect("left out, not failed");
    assert_eq!(enabled.ids, chosen[..6]);
    assert_eq!(enabled.left_out.len(), 1);
    let left_out = &enabled.left_out[0];
    assert_eq!(
        (left_out.set.as_str(), left_out.slots),
        ("ARMv8_Cortex_A72_cnt", 6)
    );
    assert_eq!(left_out.events.len(), 2);
    assert!(left_out
        .to_string()
        .starts_with("counter set ARMv8_Cortex_A72_cnt has 6 slots: its first 6 events are captured, 2 left out ("));
}

#[test]
fn events_past_the_slots_fail_when_each_was_chosen() {
    let Some(daemon) = a72_daemon() else { return };
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let chosen = set_events(&lizard, 7);
    let error = lizard
        .enable_fitting(&chosen, Overflow::Fail)
        .expect_err("too many events");
    assert!(
        matches!(
            error,
            Error::Gatord(GatordError::TooManyEvents { slots: 6, .. })
        ),
        "{error:?}"
    );
    // An unknown counter is an error either way.
    assert!(lizard
        .enable_fitting(&[u32::MAX], Overflow::LeaveOut)
        .is_err());
}
