//! Perf-backed counters end to end on loopback: the simulated gatord sends them as gatord 9.7.2 does
//! (PERF_ATTRS attributes and id map, PERF_DATA sample records with group reads, one frame per core), and the
//! engine turns them into per-core delta samples on the BLOCK_COUNTER time base; counting-only ones are
//! reported unavailable.

mod common;

use std::time::Duration;

use common::{config_for, id_of};
use gatord_sim::{self as sim, SimConfig, SimSample, Stream};
use lizard_core::{Lizard, Unavailable, Value};

fn sample(timestamp_ns: i64, values: &[(&str, i64)]) -> SimSample {
    SimSample {
        timestamp_ns,
        values: values.iter().map(|(n, v)| ((*n).to_owned(), *v)).collect(),
    }
}

fn perf_config(stream: Stream) -> SimConfig {
    SimConfig {
        stream,
        perf_counters: vec!["Sim_ccnt".into()],
        counting_only_counters: vec!["Sim_instructions".into()],
        cores: 2,
        ..SimConfig::quick()
    }
}

#[test]
fn scripted_perf_values_arrive_per_core_and_sum() {
    let daemon = sim::start(perf_config(Stream::Samples(vec![
        sample(1_000, &[("Sim_ccnt", 10), ("Sim_memfree", 100)]),
        sample(2_000, &[("Sim_ccnt", 20), ("Sim_memfree", 200)]),
        sample(3_000, &[("Sim_ccnt", 30), ("Sim_memfree", 300)]),
    ])))
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let (ccnt, instructions, memfree) = (
        id_of(&lizard, "Sim_ccnt"),
        id_of(&lizard, "Sim_instructions"),
        id_of(&lizard, "Sim_memfree"),
    );
    for id in [ccnt, instructions, memfree] {
        lizard.enable(id).unwrap();
    }
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    lizard.stop_capture().unwrap();

    // Core 0 grows by the scripted values, core 1 by nothing: six samples (one per core per sample).
    let samples = lizard.samples(ccnt).unwrap();
    let values: Vec<_> = samples.iter().map(|s| s.value).collect();
    assert_eq!(
        values,
        [10, 0, 20, 0, 30, 0].map(Value::Int),
        "core 0 then core 1, per sample"
    );
    let cores: Vec<_> = samples.iter().map(|s| s.core).collect();
    assert_eq!(
        cores,
        [0, 1, 0, 1, 0, 1].map(Some),
        "each sample keeps its CPU"
    );
    assert_eq!(lizard.read_int(ccnt).unwrap(), 60);
    // Perf and BLOCK_COUNTER samples share the time base.
    let mem = lizard.samples(memfree).unwrap();
    let times = |s: &[lizard_core::Sample]| s.iter().map(|s| s.timestamp_ns).collect::<Vec<_>>();
    assert_eq!(
        times(&mem),
        times(&samples).into_iter().step_by(2).collect::<Vec<_>>()
    );
    assert_eq!(
        lizard.unavailable(instructions).unwrap(),
        Some(Unavailable::CountingOnly)
    );
    assert!(lizard.samples(instructions).unwrap().is_empty());
    assert_eq!(lizard.unavailable(ccnt).unwrap(), None);
    assert_eq!(lizard.unavailable(memfree).unwrap(), None);
    daemon.shutdown();
}

#[test]
fn synthetic_perf_counter_reads_cores_times_the_workload() {
    let daemon = sim::start(perf_config(Stream::Synthetic {
        period: Duration::from_millis(2),
    }))
    .unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let ccnt = id_of(&lizard, "Sim_ccnt");
    lizard.enable(ccnt).unwrap();
    lizard.start_capture().unwrap();
    std::thread::sleep(Duration::from_millis(60));
    lizard.stop_capture().unwrap();
    let samples = lizard.samples(ccnt).unwrap();
    assert!(samples.len() >= 4, "{}", samples.len());
    assert_eq!(samples.len() % 2, 0, "one sample per core per tick");
    // Key-map index 0: each core grows by synthetic_value(0, n) at tick n.
    let ticks = samples.len() as u64 / 2;
    let expected: i64 = (0..ticks).map(|n| 2 * sim::synthetic_value(0, n)).sum();
    assert_eq!(lizard.read_int(ccnt).unwrap(), expected);
    daemon.shutdown();
}
