//! The simulated gatord held to the real one: the stream `gatord-sim` sends for a fixed configuration
//! (`recording::COUNTERS`, the Arm VM's events document) has the profile the real gatord 9.7.2 sent for
//! the same configuration in the emulated Arm system (`tests/data/gatord-9.7.2-arm64-vm.profile`, recorded
//! by `.ci/gatord-tests`): the same frame types in the same order, the same counters keyed and routed the
//! same way, the same PERF_ATTRS layout and the same timing classes.

mod common;
mod recording;

use common::stderr;
use recording::profile::{held_lines, Profile};
use recording::proxy::{Connection, Proxy};
use recording::Session;

#[test]
fn the_simulator_streams_as_the_real_daemon_did() {
    let Some(config) = recording::simulated_arm_vm_daemon() else {
        return;
    };
    let mut failures = Vec::new();
    for session in Session::ALL {
        let committed = std::fs::read_to_string(session.committed_profile())
            .expect("the committed profile of the real daemon");
        let sim = gatord_sim::start(config.clone()).expect("start the simulator");
        let simulated =
            Profile::of(&session.record(sim.local_addr())).expect("the simulator's stream decodes");
        sim.shutdown();
        let apart = held_lines(&committed).differences(&simulated);
        if !apart.is_empty() {
            failures.push(format!(
                "{}: the simulator (+) against the real daemon (-):\n{}\n\nthe simulator's profile:\n{}",
                session.name(),
                apart.join("\n"),
                simulated.render()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_recorded_stream_survives_being_saved() {
    let Some(config) = recording::simulated_arm_vm_daemon() else {
        return;
    };
    let sim = gatord_sim::start(config).expect("start the simulator");
    let proxy = Proxy::start(sim.local_addr());
    let out = common::lizard(&common::gatord_capture(
        &proxy.address(),
        "1s",
        &["--counters", "Linux_meminfo_memfree"],
    ));
    assert!(out.status.success(), "{}", stderr(&out));
    let connections = proxy.finish();
    sim.shutdown();
    let dir = std::env::temp_dir().join(format!("lizard-recording-{}", std::process::id()));
    for (n, conn) in connections.iter().enumerate() {
        conn.save(&dir, &n.to_string()).unwrap();
        let back = Connection::load(&dir, &n.to_string()).unwrap();
        assert_eq!(back.to_daemon, conn.to_daemon);
        assert_eq!(back.from_daemon, conn.from_daemon);
        assert_eq!(back.arrivals, conn.arrivals);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(connections.iter().any(Connection::started_a_capture));
}
