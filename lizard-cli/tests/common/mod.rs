//! Helpers shared by the integration tests that watch the `lizard` process itself.

use std::process::Command;
use std::time::{Duration, Instant};

/// Longest a measured command may run before it is killed and the test fails.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// Runs `cmd` to its end (killed after [`DEADLINE`]); returns its exit status and peak RSS in KiB.
///
/// Linux carries the high-water mark of the memory a child had before `exec` (a copy or a share of
/// this test process's) into the child's `ru_maxrss`, so this process's own mark is first reset to its
/// current size (`/proc/self/clear_refs`, "5"): the figure is then the larger of this process's size at
/// the spawn and the command's own peak.
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, not Child::wait"
)]
pub fn run_measuring_peak(cmd: &mut Command) -> (i32, i64) {
    std::fs::write("/proc/self/clear_refs", "5").expect("reset this process's peak RSS");
    let mut child = cmd.spawn().expect("run lizard");
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: all-zero bytes are a valid `rusage` (a struct of integers).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `usage` are valid for writes; `pid` is our own unreaped child.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        assert!(reaped >= 0, "wait4: {}", std::io::Error::last_os_error());
        if reaped == pid {
            return (status, usage.ru_maxrss);
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("lizard stm-dump did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
