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

/// The descriptor count once it has held for 300 ms (at most 5 s): the simulator's per-connection threads close
/// their sockets a moment after the client has gone, so a count taken at once may still include one.
fn settled_fds() -> usize {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut count = open_fds();
    let mut since = Instant::now();
    while since.elapsed() < Duration::from_millis(300) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        let now = open_fds();
        if now != count {
            count = now;
            since = Instant::now();
        }
    }
    count
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
    let before = settled_fds();
    for _ in 0..100 {
        lizard.start_capture().unwrap();
        stop(&mut lizard);
    }
    // On a busy machine a connection thread may not have run for a while: give it time to close its socket.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut after = settled_fds();
    while after > before && Instant::now() < deadline {
        after = settled_fds();
    }
    assert_eq!(after, before, "a descriptor leaked");
    assert_eq!(daemon.stats().captures, 101);
    drop(lizard);
    daemon.shutdown();
}
