//! Gated spawns racing each other and plain `std::process::Command` spawns on other threads, as in a
//! host application that loads the library and starts its own processes: every thread must finish.
//!
//! A gated child waits before `execve`; if it held copies of the close-on-exec descriptors other
//! threads had open when it forked (other spawns' status pipes, other gates), a spawn or a cancel on
//! another thread would wait for it, and it for them. A watchdog turns such a deadlock into a
//! failure that names what is stuck, instead of a hang.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use hwcpipe::sys::spawn_gated;

/// Threads doing gated spawns, and how many rounds each does.
const GATED_THREADS: usize = 6;
const GATED_ROUNDS: usize = 60;
/// Threads doing plain spawns, and how many each does.
const PLAIN_THREADS: usize = 2;
const PLAIN_SPAWNS: usize = 40;
/// How long the whole exercise may take before it counts as a deadlock (it takes well under a
/// second when nothing blocks).
const WATCHDOG: Duration = Duration::from_secs(30);

fn quiet(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// One round of thread `t`: release one child, cancel another, or hold two at once and cancel the
/// older while the younger (forked while the older's gate was open) waits, then release it.
fn gated_round(t: usize, round: usize) {
    match (t + round) % 3 {
        0 => {
            let child = spawn_gated(quiet("true")).expect("fork");
            let status = child.release().expect("release").wait().expect("wait");
            assert!(status.success());
        }
        1 => drop(spawn_gated(quiet("true")).expect("fork")),
        _ => {
            let older = spawn_gated(quiet("true")).expect("fork");
            let younger = spawn_gated(quiet("true")).expect("fork");
            drop(older);
            let status = younger.release().expect("release").wait().expect("wait");
            assert!(status.success());
        }
    }
}

#[test]
fn gated_and_plain_spawns_on_many_threads_all_finish() {
    let (done_tx, done_rx) = mpsc::channel::<String>();
    let progress = Arc::new(AtomicUsize::new(0));
    let mut names = Vec::new();
    for t in 0..GATED_THREADS {
        let (done_tx, progress) = (done_tx.clone(), Arc::clone(&progress));
        let name = format!("gated-{t}");
        names.push(name.clone());
        thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                for round in 0..GATED_ROUNDS {
                    gated_round(t, round);
                    progress.fetch_add(1, Ordering::Relaxed);
                }
                let _ = done_tx.send(name);
            })
            .unwrap();
    }
    for t in 0..PLAIN_THREADS {
        let (done_tx, progress) = (done_tx.clone(), Arc::clone(&progress));
        let name = format!("plain-{t}");
        names.push(name.clone());
        thread::Builder::new()
            .name(name.clone())
            .spawn(move || {
                for _ in 0..PLAIN_SPAWNS {
                    let status = quiet("true").status().expect("plain spawn");
                    assert!(status.success());
                    progress.fetch_add(1, Ordering::Relaxed);
                }
                let _ = done_tx.send(name);
            })
            .unwrap();
    }
    drop(done_tx);

    let total = GATED_THREADS * GATED_ROUNDS + PLAIN_THREADS * PLAIN_SPAWNS;
    let deadline = std::time::Instant::now() + WATCHDOG;
    while !names.is_empty() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match done_rx.recv_timeout(left) {
            Ok(name) => names.retain(|n| *n != name),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("a spawning thread panicked; still unfinished: {names:?}")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "deadlock: after {WATCHDOG:?}, threads {names:?} are still spawning \
                 ({} of {total} spawns done)",
                progress.load(Ordering::Relaxed)
            ),
        }
    }
    assert_eq!(progress.load(Ordering::Relaxed), total);
}
