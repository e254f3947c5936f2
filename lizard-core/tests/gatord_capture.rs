//! Discovery and capture against the simulated gatord over real loopback TCP: ids and order from the real
//! Mali-G71 events file (`../shared/data/gatord-9.7.2/events/events-Mali-G71_hw.xml`, gatord 9.7.2), scripted
//! BLOCK_COUNTER and COUNTER values read back through the reduction rules, both protocol generations, and
//! unknown ids.

mod common;

use std::time::Duration;

use common::{config_for, id_of};
use gatord_sim::{self as sim, SimConfig, SimSample, Stream};
use lizard_core::{CounterClass, Error, Lizard, NoValue, ResultType, Source, Units, Value};
use lizard_core::{GatordError, UsageError};

fn sample(t: i64, values: &[(&str, i64)]) -> SimSample {
    SimSample {
        timestamp_ns: t,
        values: values.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
    }
}

#[test]
fn discovery_ids_follow_the_real_events_order() {
    let Some(g71) = test_data::gatord_text("events/events-Mali-G71_hw.xml") else {
        return;
    };
    let mut available = vec![
        "ARM_Mali-G71_L2_READ_LOOKUP".to_owned(),
        "ARM_Mali-G71_GPU_ACTIVE".to_owned(),
        "NOT_DESCRIBED_ANYWHERE".to_owned(),
        "ARM_Mali-G71_JS0_ACTIVE".to_owned(),
    ];
    let daemon = sim::start(SimConfig {
        events_xml: Some(g71.clone()),
        counters: Some(available.clone()),
        ..SimConfig::quick()
    })
    .unwrap();
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    available.retain(|n| n != "NOT_DESCRIBED_ANYWHERE");
    available.sort_by_key(|n| g71.find(&format!("counter=\"{n}\"")).unwrap());
    let keys: Vec<_> = lizard.counters().iter().map(|c| c.key.clone()).collect();
    assert_eq!(
        keys, available,
        "events order, filtered by the counters list"
    );
    for (i, counter) in lizard.counters().iter().enumerate() {
        assert_eq!(counter.id as usize, i + 1, "id == position");
        assert_eq!(counter.source, Source::Gatord);
        assert!(!counter.name.is_empty() && !counter.category.is_empty());
    }
    let active = lizard
        .counter(id_of(&lizard, "ARM_Mali-G71_GPU_ACTIVE"))
        .unwrap();
    assert_eq!(active.name, "GPU active");
    assert_eq!(lizard.protocol_version().map(|v| v.0), Some(950));
    assert!(lizard.hwcpipe_error().is_some(), "HWCPipe was switched off");
    assert_eq!(
        daemon.stats().connections,
        1,
        "discovery is one short connection"
    );
}

fn scripted() -> SimConfig {
    SimConfig {
        stream: Stream::Samples(vec![
            sample(
                1_000,
                &[
                    ("Sim_ccnt", 10),
                    ("Sim_memfree", 100),
                    ("Sim_freq", 800),
                    ("Sim_power", 1500),
                ],
            ),
            sample(
                2_000,
                &[
                    ("Sim_ccnt", 20),
                    ("Sim_memfree", 200),
                    ("Sim_freq", 1000),
                    ("Sim_power", 2500),
                ],
            ),
            sample(3_000, &[("Sim_ccnt", 30), ("Sim_memfree", 301)]),
        ]),
        ..SimConfig::quick()
    }
}

fn capture_all(lizard: &mut Lizard) {
    for id in 1..=lizard.count() as u32 {
        lizard.enable(id).unwrap();
    }
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(30));
    lizard.stop_capture().unwrap();
}

fn check_scripted_reads(lizard: &Lizard) {
    let ccnt = id_of(lizard, "Sim_ccnt");
    let memfree = id_of(lizard, "Sim_memfree");
    let freq = id_of(lizard, "Sim_freq");
    let power = id_of(lizard, "Sim_power");
    let instructions = id_of(lizard, "Sim_instructions");

    let samples = lizard.samples(ccnt).unwrap();
    let values: Vec<_> = samples.iter().map(|s| s.value).collect();
    assert_eq!(values, [Value::Int(10), Value::Int(20), Value::Int(30)]);
    assert!(samples
        .windows(2)
        .all(|w| w[1].timestamp_ns - w[0].timestamp_ns == 1_000));

    assert_eq!(lizard.counter(ccnt).unwrap().class, CounterClass::Delta);
    assert_eq!(lizard.read_int(ccnt).unwrap(), 60, "delta: sum");
    assert_eq!(lizard.read_double(ccnt).unwrap(), 60.0);

    assert_eq!(lizard.counter(memfree).unwrap().units, Units::Bytes);
    assert_eq!(
        lizard.read_int(memfree).unwrap(),
        200,
        "absolute: truncated mean"
    );
    assert!((lizard.read_double(memfree).unwrap() - 601.0 / 3.0).abs() < 1e-9);

    assert_eq!(lizard.counter(freq).unwrap().units, Units::Megahertz);
    assert_eq!(
        lizard.read_int(freq).unwrap(),
        900_000_000,
        "MHz scaled in the int read"
    );
    assert_eq!(
        lizard.read_double(freq).unwrap(),
        900_000_000.0,
        "and in the double read"
    );

    let p = lizard.counter(power).unwrap();
    assert_eq!((p.multiplier, p.result_type), (0.001, ResultType::Floating));
    assert!((lizard.read_double(power).unwrap() - 2.0).abs() < 1e-12);
    assert_eq!(lizard.read_int(power).unwrap(), 2);

    assert!(lizard.samples(instructions).unwrap().is_empty());
    for result in [
        lizard.read_int(instructions).map(|v| v as f64),
        lizard.read_double(instructions),
    ] {
        assert!(
            matches!(
                result,
                Err(Error::NoValue {
                    reason: NoValue::NoSamples,
                    ..
                })
            ),
            "no samples is no value, never 0: {result:?}"
        );
    }
}

#[test]
fn scripted_values_read_back_with_the_reduction_rules_950() {
    let daemon = sim::start(scripted()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    capture_all(&mut lizard);
    check_scripted_reads(&lizard);
    let stats = daemon.stats();
    // A connection made before the daemon released the previous one is refused as busy and retried.
    assert_eq!(
        stats.connections - stats.busy_rejections,
        3,
        "discovery, configuration, capture"
    );
    assert_eq!(stats.configurations, 1);
    assert_eq!(stats.end_markers, 1);
    assert_eq!(
        daemon.configuration().len(),
        6,
        "every enabled gatord counter configured, the set event in a slot"
    );
    assert_eq!(daemon.slot_events(), [("Sim_cnt0".to_owned(), 0x08)]);
}

#[test]
fn protocol_670_with_counter_frames() {
    let daemon = sim::start(SimConfig {
        protocol: gator_proto::ProtocolVersion::V670,
        counter_frames: true,
        ..scripted()
    })
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    assert_eq!(lizard.protocol_version().map(|v| v.0), Some(670));
    capture_all(&mut lizard);
    check_scripted_reads(&lizard);
}

#[test]
fn synthetic_stream_values_follow_the_workload() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let ccnt = id_of(&lizard, "Sim_ccnt");
    let memfree = id_of(&lizard, "Sim_memfree");
    lizard.enable(ccnt).unwrap();
    lizard.enable(memfree).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    lizard.stop_capture().unwrap();
    // Keys are bound in the daemon's counter order: Sim_ccnt is index 0, Sim_memfree index 1.
    let ccnt_samples = lizard.samples(ccnt).unwrap();
    assert!(ccnt_samples.len() >= 3, "{} samples", ccnt_samples.len());
    for (n, s) in ccnt_samples.iter().enumerate() {
        assert_eq!(s.value, Value::Int(sim::synthetic_value(0, n as u64)));
    }
    let sum: i64 = (0..ccnt_samples.len() as u64)
        .map(|n| sim::synthetic_value(0, n))
        .sum();
    assert_eq!(lizard.read_int(ccnt).unwrap(), sum);
    let mem = lizard.samples(memfree).unwrap();
    assert!(mem
        .iter()
        .enumerate()
        .all(|(n, s)| s.value == Value::Int(sim::synthetic_value(1, n as u64))));
}

#[test]
fn a_second_capture_starts_from_an_empty_store() {
    let daemon = sim::start(scripted()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    capture_all(&mut lizard);
    lizard.start_capture().unwrap();
    lizard.stop_capture().unwrap();
    check_scripted_reads(&lizard);
}

#[test]
fn unknown_ids_and_misuse_are_errors() {
    let daemon = sim::start(scripted()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let n = lizard.count() as u32;
    for id in [0, n + 1, u32::MAX] {
        assert!(matches!(
            lizard.enable(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.disable(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.counter(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.read_int(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.read_double(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.samples(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
        assert!(matches!(
            lizard.is_enabled(id),
            Err(Error::Usage(UsageError::UnknownCounter { .. }))
        ));
    }
    assert!(matches!(
        lizard.start_capture(),
        Err(Error::Usage(UsageError::NothingEnabled))
    ));
    assert!(matches!(
        lizard.stop_capture(),
        Err(Error::Usage(UsageError::NotCapturing))
    ));
    lizard.enable(1).unwrap();
    lizard.start_capture().unwrap();
    assert!(matches!(
        lizard.start_capture(),
        Err(Error::Usage(UsageError::CaptureRunning))
    ));
    lizard.stop_capture().unwrap();
}

#[test]
fn unreachable_gatord_without_hwcpipe_fails_with_both_reasons() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config =
        lizard_core::Config::gatord_only(lizard_core::GatordAddress::new("127.0.0.1", port));
    let err = Lizard::configure(config).unwrap_err();
    let Error::NoSource { gatord, hwcpipe } = err else {
        panic!("expected NoSource, got {err:?}");
    };
    assert!(
        matches!(*gatord, Error::Gatord(GatordError::Transport(_))),
        "{gatord:?}"
    );
    assert!(matches!(*hwcpipe, Error::SourceDisabled), "{hwcpipe:?}");
}

#[test]
fn ipv6_loopback_works() {
    let Ok(daemon) = sim::start(SimConfig {
        bind: "[::1]:0".parse().unwrap(),
        ..scripted()
    }) else {
        return; // No IPv6 on this host.
    };
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    capture_all(&mut lizard);
    check_scripted_reads(&lizard);
}
