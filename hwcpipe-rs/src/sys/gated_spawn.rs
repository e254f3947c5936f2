//! A child process forked now that calls `execve` only when released.
//!
//! Counting a program from its first instruction needs its pid before it runs: the counters are
//! opened on that pid with `enable_on_exec`, then the program is let go. So the child is forked by
//! [`std::process::Command::spawn`] and, in a `pre_exec` hook, waits on a pipe (the *gate*) until
//! [`GatedChild::release`] writes one byte to it.
//!
//! # The hazard
//! A child that waits before `execve` holds a copy of every descriptor that any thread of this
//! process had open when it was forked, close-on-exec ones included: those close only at its own
//! `execve`. Among them are the status pipes through which every concurrent `Command::spawn` —
//! ours, or a host application's on another thread (`liblizard.so` lives inside other programs) —
//! learns that *its* child reached `execve`: such a `spawn` reads its pipe until every write end is
//! closed, so it would wait for our gated child. If releasing our child in turn waits for that
//! thread, nothing ever moves again.
//!
//! # The design
//! Before it waits, the child *seals* what it inherited: every descriptor above standard error that
//! is marked close-on-exec — one the program would never see anyway — is replaced (`dup3`) by a copy
//! of the child's own *report* pipe. Descriptors without close-on-exec are left alone: the program
//! inherits them exactly as it would from any other spawn. From then on the waiting child holds no
//! copy of anything that another spawn waits on.
//!
//! `std`'s own status pipe is among the replaced descriptors. So `Command::spawn` returns as soon
//! as the child has sealed, with the child still waiting at the gate (no helper thread), and if
//! `execve` later fails, the error `std` writes to that descriptor number lands in the report pipe
//! (`std` writes the `errno`, 4 bytes big-endian, then the footer `NOEX`). Release therefore writes
//! the gate byte and reads the report pipe: end of file means `execve` succeeded (every copy of the
//! pipe was close-on-exec), bytes mean it failed and carry the `errno`.
//!
//! Cancelling (dropping an unreleased [`GatedChild`]) kills the child with `SIGKILL` and reaps it:
//! a child that another thread forks at the same moment may hold a copy of the gate's write end, so
//! closing the gate would not end the wait.
//!
//! # Why it is safe
//! - In the forked child only async-signal-safe system calls run (`open`, `getdents64`, `fcntl`,
//!   `dup3`, `close`, `read`); nothing allocates and nothing can panic: the directory listing is
//!   read into a stack buffer with checked indexing.
//! - Sealing changes only the child's own descriptor table; the parent's descriptors are untouched.
//! - The parent keeps its own copy of the gate's read end until the gate byte is written, so that
//!   write can never raise `SIGPIPE` in a host that has not ignored it, even if the child was killed.
//! - Every wait in the parent is bounded: `spawn` returns once the child has sealed, and release
//!   waits at most [`REPORT_DEADLINE`] for the report. Only a process that forks *without* `execve`
//!   while our report pipe is open can hold it longer; after the deadline, having received no error
//!   (which a failing child writes before it exits), release takes the program as started.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use rustix::io::Errno;

use super::poll::{poll_in, Poll};

/// How long [`GatedChild::release`] waits for the child's report on its `execve`.
pub const REPORT_DEADLINE: Duration = Duration::from_secs(5);

/// The footer `std` writes after the `errno` of a failed `execve`.
const EXEC_FAILURE_FOOTER: &[u8; 4] = b"NOEX";

/// The highest descriptor number swept when `/proc/self/fd` cannot be listed in the child.
const FALLBACK_SWEEP_LIMIT: RawFd = 1 << 16;

/// A pipe whose both ends are close-on-exec: (read end, write end).
fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A child process that has been forked but waits before `execve` until [`release`](Self::release).
///
/// Dropping it without releasing kills the child before it runs the program and reaps it.
#[derive(Debug)]
pub struct GatedChild {
    /// The forked child; `None` once handed out by `release`.
    child: Option<Child>,
    /// Our write end of the gate.
    gate_write: Option<OwnedFd>,
    /// Our copy of the gate's read end, held so that writing the gate byte never raises `SIGPIPE`.
    gate_read: Option<OwnedFd>,
    /// The read end of the child's report pipe.
    report: OwnedFd,
}

impl GatedChild {
    /// The child's process id, valid from now on (before and after `execve`).
    pub fn pid(&self) -> i32 {
        self.child.as_ref().map_or(0, |c| c.id() as i32)
    }

    /// Lets the child call `execve` and waits (at most [`REPORT_DEADLINE`]) until it has.
    ///
    /// Returns the running [`Child`], or the error of a failed `execve` (for example
    /// [`io::ErrorKind::NotFound`] for a missing program), after reaping the child.
    pub fn release(mut self) -> io::Result<Child> {
        let (Some(mut child), Some(gate)) = (self.child.take(), self.gate_write.take()) else {
            return Err(io::Error::other("the child was already released"));
        };
        let written = File::from(gate).write_all(b"g");
        self.gate_read = None;
        if let Err(err) = written {
            kill_and_reap(&mut child);
            return Err(err);
        }
        match read_report(&self.report, REPORT_DEADLINE) {
            Ok(Report::Started) => Ok(child),
            Ok(Report::Failed(err)) | Err(err) => {
                kill_and_reap(&mut child);
                Err(err)
            }
        }
    }
}

impl Drop for GatedChild {
    /// Kills an unreleased child and reaps it.
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            kill_and_reap(child);
        }
    }
}

/// Ends a child that has not started its program (or failed to) and collects its exit status.
fn kill_and_reap(child: &mut Child) {
    // Fails only if the child has already exited, which `wait` then reaps just the same.
    let _ = child.kill();
    let _ = child.wait();
}

/// What the report pipe said about `execve`.
enum Report {
    /// End of file: the program is running.
    Started,
    /// `execve` (or the setup before it) failed with this error.
    Failed(io::Error),
}

/// Reads the report pipe until end of file, an error report, or `deadline` from now.
fn read_report(report: &OwnedFd, deadline: Duration) -> io::Result<Report> {
    let until = Instant::now() + deadline;
    let mut bytes = [0u8; 8];
    let mut len = 0;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            // No error arrived: a failing child writes it before it exits, so the program started
            // and some other process (forked without `execve`) holds a copy of the pipe.
            return Ok(Report::Started);
        }
        // Readable or hung up: either way the read below tells end of file from a report.
        if poll_in(report, left)? == Poll::TimedOut {
            continue;
        }
        let Some(rest) = bytes.get_mut(len..) else {
            break;
        };
        match rustix::io::read(report, rest) {
            Ok(0) => break,
            Ok(n) => {
                len += n;
                if len == bytes.len() {
                    break;
                }
            }
            Err(Errno::INTR) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
    Ok(match len {
        0 => Report::Started,
        8 if &bytes[4..] == EXEC_FAILURE_FOOTER => {
            let errno = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            Report::Failed(io::Error::from_raw_os_error(errno))
        }
        _ => Report::Failed(io::Error::other(
            "the child reported a failure before execve in an unknown format",
        )),
    })
}

/// Forks `command` so that the child stops just before `execve` until [`GatedChild::release`].
///
/// The child first seals the close-on-exec descriptors it inherited (see the module docs), so it
/// can wait for any length of time without holding up another spawn in this process. Returns once
/// the child waits at its gate.
pub fn spawn_gated(mut command: Command) -> io::Result<GatedChild> {
    let (gate_read, gate_write) = pipe_cloexec()?;
    let (report_read, report_write) = pipe_cloexec()?;
    let gate_raw = gate_read.as_raw_fd();
    let report_raw = report_write.as_raw_fd();
    let sweep_limit = fallback_sweep_limit();
    let hook = move || -> io::Result<()> {
        // Only async-signal-safe calls from here on: this runs in the forked child. They are raw `libc`
        // calls on raw descriptor numbers, not `rustix`'s: the child owns none of these descriptors as
        // an `OwnedFd`, and `rustix`'s `dup3` falls back to `dup2` on Android, losing close-on-exec.
        seal_inherited_descriptors(report_raw, gate_raw, sweep_limit);
        wait_at_gate(gate_raw)
    };
    // SAFETY: the hook only calls open, getdents64, fcntl, dup3, close and read, which are
    // async-signal-safe, allocates nothing and cannot panic.
    unsafe {
        command.pre_exec(hook);
    }
    let child = command.spawn()?;
    drop(report_write);
    Ok(GatedChild {
        child: Some(child),
        gate_write: Some(gate_write),
        gate_read: Some(gate_read),
        report: report_read,
    })
}

/// In the child: blocks until the gate byte arrives (`Ok`) or every write end is gone.
fn wait_at_gate(gate: RawFd) -> io::Result<()> {
    let mut byte = 0u8;
    loop {
        // SAFETY: `byte` is a live, writable 1-byte buffer.
        let n = unsafe { libc::read(gate, (&mut byte as *mut u8).cast(), 1) };
        match n {
            1 => return Ok(()),
            0 => return Err(io::Error::from(Errno::CANCELED)),
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
}

/// The descriptor numbers the child sweeps when `/proc/self/fd` cannot be listed: up to the soft
/// `RLIMIT_NOFILE`, at most [`FALLBACK_SWEEP_LIMIT`]. Computed before the fork.
fn fallback_sweep_limit() -> RawFd {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    soft.and_then(|n| RawFd::try_from(n).ok())
        .map_or(FALLBACK_SWEEP_LIMIT, |n| n.min(FALLBACK_SWEEP_LIMIT))
}

/// In the child: replaces every inherited close-on-exec descriptor above standard error, except
/// `report` and `gate`, by a copy of `report`.
fn seal_inherited_descriptors(report: RawFd, gate: RawFd, sweep_limit: RawFd) {
    // SAFETY: the path is a NUL-terminated literal; open has no other memory preconditions.
    let dir = unsafe {
        libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        for fd in 3..sweep_limit {
            seal(fd, report, gate);
        }
        return;
    }
    // Replacing a descriptor keeps its number open, so the listing stays valid while we seal.
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: `buf` is a live, writable region of `buf.len()` bytes; `dir` is our directory.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        let Ok(n) = usize::try_from(n) else { break };
        if n == 0 {
            break;
        }
        for fd in DirentFds::new(buf.get(..n).unwrap_or(&[])) {
            if fd != dir {
                seal(fd, report, gate);
            }
        }
    }
    // SAFETY: `dir` was opened above and is closed once.
    unsafe {
        libc::close(dir);
    }
}

/// In the child: replaces `fd` by a copy of `report` if it is an inherited close-on-exec descriptor.
fn seal(fd: RawFd, report: RawFd, gate: RawFd) {
    if fd <= 2 || fd == report || fd == gate {
        return;
    }
    // SAFETY: F_GETFD only reads the descriptor's flags; an unused number gives EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 || flags & libc::FD_CLOEXEC == 0 {
        return;
    }
    // SAFETY: dup3 atomically closes `fd` in this (the child's) table and makes it a
    // close-on-exec copy of `report`; no memory is touched. (The raw system call: Android's libc
    // bindings lack the wrapper, and rustix's falls back to dup2 there, which drops close-on-exec.)
    if unsafe { libc::syscall(libc::SYS_dup3, report, fd, libc::O_CLOEXEC) } < 0 {
        // SAFETY: as a last resort the child's copy is closed; the parent's is unaffected.
        unsafe {
            libc::close(fd);
        }
    }
}

/// The descriptor numbers named by the `linux_dirent64` records of one `getdents64` result.
///
/// Each record is `d_ino` (u64), `d_off` (i64), `d_reclen` (u16), `d_type` (u8), then the
/// NUL-terminated name; names that are not decimal numbers (`.`, `..`) are skipped.
struct DirentFds<'a> {
    records: &'a [u8],
}

impl<'a> DirentFds<'a> {
    /// The byte offset of `d_reclen` in a record.
    const RECLEN_AT: usize = 16;
    /// The byte offset of `d_name` in a record.
    const NAME_AT: usize = 19;

    fn new(records: &'a [u8]) -> Self {
        DirentFds { records }
    }
}

impl Iterator for DirentFds<'_> {
    type Item = RawFd;

    fn next(&mut self) -> Option<RawFd> {
        loop {
            let reclen = match self.records.get(Self::RECLEN_AT..Self::RECLEN_AT + 2)? {
                &[lo, hi] => usize::from(u16::from_ne_bytes([lo, hi])),
                _ => return None,
            };
            if reclen <= Self::NAME_AT || reclen > self.records.len() {
                self.records = &[];
                return None;
            }
            let (record, rest) = self.records.split_at(reclen);
            self.records = rest;
            if let Some(fd) = parse_fd_name(record.get(Self::NAME_AT..).unwrap_or(&[])) {
                return Some(fd);
            }
        }
    }
}

/// The descriptor number in a NUL-terminated decimal name, or `None` for any other name.
fn parse_fd_name(name: &[u8]) -> Option<RawFd> {
    let mut fd: RawFd = 0;
    let mut digits = 0;
    for &b in name.iter().take_while(|&&b| b != 0) {
        if !b.is_ascii_digit() {
            return None;
        }
        fd = fd.checked_mul(10)?.checked_add(RawFd::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(fd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Stdio;

    #[test]
    fn gated_child_runs_only_after_release() {
        let mut cmd = Command::new("true");
        cmd.stdout(Stdio::null());
        let gated = spawn_gated(cmd).expect("spawn");
        assert!(gated.pid() > 0);
        let mut child = gated.release().expect("release");
        assert!(child.wait().expect("wait").success());
    }

    #[test]
    fn a_gated_child_waits_until_released() {
        let dir = std::env::temp_dir().join(format!("hwcpipe-gate-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let mut cmd = Command::new("touch");
        cmd.arg(&dir);
        let gated = spawn_gated(cmd).expect("spawn");
        std::thread::sleep(Duration::from_millis(100));
        assert!(!dir.exists(), "the program ran before its release");
        let mut child = gated.release().expect("release");
        assert!(child.wait().expect("wait").success());
        assert!(dir.exists(), "the released program did not run");
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn gated_child_of_a_missing_program_reports_the_spawn_error() {
        let gated = spawn_gated(Command::new("/nonexistent/program")).expect("fork");
        let err = gated.release().expect_err("exec must fail");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn gated_child_of_a_program_that_is_not_executable_reports_permission_denied() {
        let err = spawn_gated(Command::new("/dev/null"))
            .expect("fork")
            .release()
            .expect_err("exec must fail");
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn dropping_the_gate_cancels_the_child() {
        let gated = spawn_gated(Command::new("true")).expect("fork");
        let pid = gated.pid();
        drop(gated);
        assert!(!process_exists(pid), "child {pid} outlived its gate");
    }

    #[test]
    fn a_cancelled_child_ends_even_while_a_later_child_holds_its_gate() {
        // `second` is forked while `first`'s gate is open and inherits a copy of its write end.
        let first = spawn_gated(Command::new("true")).expect("fork");
        let second = spawn_gated(Command::new("true")).expect("fork");
        let first_pid = first.pid();
        drop(first);
        assert!(!process_exists(first_pid), "child {first_pid} still waits");
        let mut child = second.release().expect("release");
        assert!(child.wait().expect("wait").success());
    }

    #[test]
    fn a_waiting_child_holds_no_close_on_exec_pipe_of_another_spawn() {
        // `busy` stands for the status pipe of a spawn that another thread has in flight when the
        // gated child forks: that spawn reads it until every write end is closed.
        let (busy_read, busy_write) = pipe_cloexec().unwrap();
        let gated = spawn_gated(Command::new("true")).expect("fork");
        drop(busy_write);
        assert_ne!(
            poll_in(&busy_read, Duration::from_secs(5)).unwrap(),
            Poll::TimedOut,
            "the waiting child still holds the other spawn's pipe"
        );
        let n = rustix::io::read(&busy_read, &mut [0u8; 1]).unwrap();
        assert_eq!(n, 0, "end of file expected");
        let mut child = gated.release().expect("release");
        assert!(child.wait().expect("wait").success());
    }

    #[test]
    fn the_program_inherits_descriptors_without_close_on_exec_only() {
        let (keep_read, keep_write) = pipe_cloexec().unwrap();
        let (_sealed_read, sealed_write) = pipe_cloexec().unwrap();
        // Clear close-on-exec on one write end: the program must still see it open.
        rustix::io::fcntl_setfd(&keep_write, rustix::io::FdFlags::empty()).unwrap();
        let script = format!(
            "[ -e /proc/self/fd/{k} ] && ! [ -e /proc/self/fd/{s} ]",
            k = keep_write.as_raw_fd(),
            s = sealed_write.as_raw_fd()
        );
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script]);
        let mut child = spawn_gated(cmd).unwrap().release().unwrap();
        assert!(child.wait().unwrap().success(), "{script}");
        drop((keep_read, keep_write, sealed_write));
    }

    #[test]
    fn dirent_records_name_descriptors() {
        fn record(name: &str) -> Vec<u8> {
            let mut r = vec![0u8; 19];
            r.extend_from_slice(name.as_bytes());
            r.push(0);
            while !r.len().is_multiple_of(8) {
                r.push(0);
            }
            let len = r.len() as u16;
            r[16..18].copy_from_slice(&len.to_ne_bytes());
            r
        }
        let mut buf = Vec::new();
        for name in [".", "..", "0", "17", "4294967296", "x1", "255"] {
            buf.extend(record(name));
        }
        assert_eq!(DirentFds::new(&buf).collect::<Vec<_>>(), vec![0, 17, 255]);
        // A truncated or zero-length record ends the walk instead of looping or panicking.
        assert_eq!(
            DirentFds::new(&buf[..30]).collect::<Vec<_>>(),
            Vec::<RawFd>::new()
        );
        let mut zero = record("5");
        zero[16..18].copy_from_slice(&0u16.to_ne_bytes());
        assert_eq!(DirentFds::new(&zero).count(), 0);
    }

    #[test]
    fn fd_names_parse_only_when_decimal() {
        assert_eq!(parse_fd_name(b"42\0junk"), Some(42));
        assert_eq!(parse_fd_name(b"\0"), None);
        assert_eq!(parse_fd_name(b"-1\0"), None);
        assert_eq!(parse_fd_name(b"99999999999\0"), None);
    }

    /// Whether `pid` names a process, zombies included (`kill(pid, 0)` fails with `ESRCH` only
    /// once it has been reaped).
    fn process_exists(pid: i32) -> bool {
        rustix::process::Pid::from_raw(pid)
            .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
    }
}
