//! Every socket is closed: the process's open file descriptors (`/proc/self/fd`) are the same before and after
//! 100 reconnecting capture cycles against the simulated gatord (synthetic frames over loopback TCP). This file
//! holds one test so no other test opens descriptors meanwhile.

mod common;

use std::time::{Duration, Instant};

use common::config_for;
use gatord_sim::{self as sim, SimConfig};
use lizard_core::{Error, Lizard};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// Stops a capture that may be too short to hold a sample (which is reported, and is not what this test is
/// about).
fn stop(lizard: &mut Lizard) {
    match lizard.stop_capture() {
        Ok(()) | Err(Error::NothingCaptured(_)) => {}
        Err(other) => panic!("stop failed: {other:?}"),
    }
}

#[test]
fn fd_count_unchanged_after_100_capture_cycles() {
    let daemon = sim::start(SimConfig::quick()).unwrap();
    let mut lizard = Lizard::configure(config_for(&daemon)).unwrap();
    lizard.enable(1).unwrap();
    lizard.enable(3).unwrap();
    // One cycle first, so lazily created process-wide descriptors (if any) exist before counting.
    lizard.start_capture().unwrap();
    stop(&mut lizard);
    let before = open_fds();
    for _ in 0..100 {
        lizard.start_capture().unwrap();
        stop(&mut lizard);
    }
    // The simulator's per-connection threads close their sockets as they finish.
    let deadline = Instant::now() + Duration::from_secs(3);
    while open_fds() > before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(open_fds(), before, "a descriptor leaked");
    assert_eq!(daemon.stats().captures, 101);
    drop(lizard);
    daemon.shutdown();
}
