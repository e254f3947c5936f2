//! Programmable counter sets end to end on loopback: the simulated gatord serves gatord 9.7.2's own
//! Cortex-A72 events file (`../shared/data/gatord-9.7.2/events/events-Cortex-A72.xml`, a 6-slot
//! `ARMv8_Cortex_A72_cnt` set) and lists the set's slots as gatord does; the engine offers the set's events
//! as counters, programs the enabled ones into slots, binds the `captured` slots back to them, and reads
//! their perf-backed values next to the cycle counter's.

mod common;

use std::time::Duration;

use common::{config_for, gatord_data, id_of};
use gatord_sim::{self as sim, synthetic_event_value, SimConfig, SimHandle, Stream, Timing};
use lizard_core::GatordError;
use lizard_core::{Error, Lizard, SetEvent};

const CORES: u32 = 2;

/// How long after its polled counters gatord starts its perf events (the slots' among them).
fn perf_start() -> Duration {
    Timing::default().perf_start
}

fn a72_daemon() -> Option<SimHandle> {
    let events = gatord_data("events/events-Cortex-A72.xml")?;
    Some(
        sim::start(SimConfig {
            events_xml: Some(String::from_utf8(events).unwrap()),
            stream: Stream::Synthetic {
                period: Duration::from_millis(2),
            },
            // gatord reads the cycle counter in its perf sampling group, like the slots.
            perf_counters: vec!["ARMv8_Cortex_A72_ccnt".into()],
            cores: CORES,
            ..SimConfig::default()
        })
        .unwrap(),
    )
}

#[test]
fn set_events_are_counters_after_the_fixed_ones_with_their_code() {
    let Some(daemon) = a72_daemon() else { return };
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let counters = lizard.counters();
    let inst = &counters[id_of(&lizard, "ARMv8_Cortex_A72:INST_RETIRED") as usize - 1];
    assert_eq!(
        inst.set_event,
        Some(SetEvent {
            set: "ARMv8_Cortex_A72_cnt".into(),
            code: 0x08
        })
    );
    assert_eq!(
        (
            inst.title.as_str(),
            inst.name.as_str(),
            inst.category.as_str()
        ),
        ("Instructions (Executed)", "All", "Cortex-A72")
    );
    assert_eq!(inst.units.to_string(), "instructions");
    // Fixed counters first, then the set's events in document order; ids equal positions.
    let first_event = counters.iter().position(|c| c.set_event.is_some()).unwrap();
    assert!(counters[..first_event]
        .iter()
        .all(|c| c.set_event.is_none()));
    assert!(counters[first_event..]
        .iter()
        .all(|c| c.set_event.is_some()));
    let codes: Vec<u64> = counters[first_event..]
        .iter()
        .map(|c| c.set_event.as_ref().unwrap().code)
        .collect();
    assert_eq!(&codes[..3], &[0x00, 0x01, 0x02]);
    // An implementation-defined event has no common mnemonic: it is named by its code.
    assert!(counters.iter().any(|c| c.key == "ARMv8_Cortex_A72:0x60"
        && c.set_event.as_ref().is_some_and(|e| e.code == 0x60)));
    for (i, c) in counters.iter().enumerate() {
        assert_eq!(c.id as usize, i + 1);
    }
}

#[test]
fn one_set_event_and_the_cycle_counter_read_their_values() {
    let Some(daemon) = a72_daemon() else { return };
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let cycles = id_of(&lizard, "ARMv8_Cortex_A72_ccnt");
    let inst = id_of(&lizard, "ARMv8_Cortex_A72:INST_RETIRED");
    let refill = id_of(&lizard, "ARMv8_Cortex_A72:L1D_CACHE_REFILL");
    for id in [cycles, refill, inst] {
        lizard.enable(id).unwrap();
    }
    lizard.start_capture().unwrap();
    std::thread::sleep(perf_start() + Duration::from_millis(60));
    lizard.stop_capture().unwrap();

    // The configuration gatord received programs the events into the first slots, in id order.
    let mut programmed = daemon.slot_events();
    programmed.sort();
    let mut expected = [(0x03, refill), (0x08, inst)];
    expected.sort_by_key(|&(_, id)| id);
    let expected: Vec<(String, u64)> = expected
        .iter()
        .enumerate()
        .map(|(slot, &(code, _))| (format!("ARMv8_Cortex_A72_cnt{slot}"), code))
        .collect();
    assert_eq!(programmed, expected);

    // Every sample of an event's slot grows on each core by the event's synthetic value.
    for (id, code) in [(inst, 0x08), (refill, 0x03)] {
        let samples = lizard.samples(id).unwrap();
        assert!(samples.len() >= 2 * CORES as usize, "{samples:?}");
        let low = synthetic_event_value(code, 0);
        let high = synthetic_event_value(code, 15);
        let mut first = true;
        for s in &samples {
            let v = match s.value {
                lizard_core::Value::Int(v) => v,
                other => panic!("{other:?}"),
            };
            // The first reading on a core may cover more than one sample of the daemon's.
            assert!(v >= low && (v <= high || first), "{v} for event {code:#x}");
            first = false;
        }
        let total = lizard.read_int(id).unwrap();
        assert!(total >= low * samples.len() as i64, "{total}");
    }
    assert!(lizard.read_int(cycles).unwrap() > 0);
    assert_ne!(
        lizard.read_int(inst).unwrap(),
        lizard.read_int(refill).unwrap()
    );

    // Counted per core: each core's part is read by the same rules, and the parts add up to the reading;
    // the series has one sample per instant.
    assert!(lizard.counted_per_core(inst).unwrap());
    let parts = lizard.core_readings(inst).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.core).collect::<Vec<_>>(),
        (0..CORES).collect::<Vec<_>>()
    );
    let sum: i64 = parts
        .iter()
        .map(|p| match p.value {
            Some(lizard_core::Value::Int(v)) => v,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(sum, lizard.read_int(inst).unwrap());
    let series = lizard.series(inst).unwrap();
    assert!(series.iter().all(|s| s.core.is_none()));
    assert!(series.len() < lizard.samples(inst).unwrap().len());
    let series_sum: i64 = series
        .iter()
        .map(|s| match s.value {
            lizard_core::Value::Int(v) => v,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(series_sum, sum);
}

#[test]
fn more_events_than_slots_is_a_typed_error_and_nothing_starts() {
    let Some(daemon) = a72_daemon() else { return };
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let events: Vec<u32> = lizard
        .counters()
        .iter()
        .filter(|c| c.set_event.is_some())
        .map(|c| c.id)
        .take(7)
        .collect();
    // Six fit the set's six slots; the seventh is refused at once, and changes nothing.
    for &id in &events[..6] {
        lizard.enable(id).unwrap();
    }
    let err = lizard.enable(events[6]).unwrap_err();
    match &err {
        Error::Gatord(GatordError::TooManyEvents { set, slots, events }) => {
            assert_eq!(
                (set.as_str(), *slots, events.len()),
                ("ARMv8_Cortex_A72_cnt", 6, 7)
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!lizard.is_enabled(events[6]).unwrap());
    // Enabling one already enabled is not a seventh.
    lizard.enable(events[0]).unwrap();
    assert!(!lizard.is_capturing());
    assert_eq!(daemon.stats().captures, 0, "no capture was started");
    lizard.start_capture().unwrap();
    std::thread::sleep(perf_start() + Duration::from_millis(20));
    lizard.stop_capture().unwrap();
    assert_eq!(daemon.slot_events().len(), 6);
    // A slot freed is a slot for another event.
    lizard.disable(events[0]).unwrap();
    lizard.enable(events[6]).unwrap();
}
