//! Captures from a simulated gatord: a real TCP server on loopback that speaks the gatord protocol (handshake,
//! XML requests, configuration on one connection, session and APC capture on another) with synthetic
//! counters. Lists the counters, captures two of them for 300 ms, and prints the readings and the first
//! samples of the time series.
//!
//! `cargo run -p lizard-core --example capture_sim`

use std::time::Duration;

use gatord_sim::SimConfig;
use lizard_core::{Config, Lizard};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let daemon = gatord_sim::start(SimConfig::default())?;
    println!("simulated gatord at {}", daemon.local_addr());

    let mut lizard = Lizard::configure(Config::gatord_only(daemon.address()))?;
    for counter in lizard.counters() {
        println!(
            "{:2} {:<24} {:<28} {} ({:?})",
            counter.id, counter.key, counter.name, counter.units, counter.class
        );
    }
    let wanted: Vec<u32> = lizard
        .counters()
        .iter()
        .take(2)
        .map(|counter| counter.id)
        .collect();
    for &id in &wanted {
        lizard.enable(id)?;
    }
    lizard.start_capture()?;
    std::thread::sleep(Duration::from_millis(300));
    lizard.stop_capture()?;

    for &id in &wanted {
        let counter = lizard.counter(id)?;
        let samples = lizard.samples(id)?;
        let first: Vec<String> = samples
            .iter()
            .take(4)
            .map(|s| format!("{} ns: {}", s.timestamp_ns, s.value.as_f64()))
            .collect();
        println!(
            "{}: {} samples, reading {} {} ({}), first: {}",
            counter.key,
            samples.len(),
            lizard.read_double(id)?,
            counter.units,
            if matches!(counter.class, lizard_core::CounterClass::Delta) {
                "delta: the sum"
            } else {
                "absolute: the mean"
            },
            first.join("; ")
        );
    }
    daemon.shutdown();
    Ok(())
}
