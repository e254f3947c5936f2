//! The one seam through which every kernel call of this crate passes.
//!
//! CPU counters use [`PerfSys`]: `perf_event_open`, `read`, the perf `ioctl`s and `close`. The
//! real implementation is [`LinuxPerf`]; tests hand the profiler their own [`PerfSys`] to feed it
//! refusals (`EACCES`, `ENOENT`, `EINVAL`), short reads and malformed group records without a
//! special kernel. Every descriptor is an [`OwnedFd`], so nothing leaks on an error path, and
//! `errno` becomes an [`io::Error`] in one place, `check`, crate-visible so the kbase calls can share it.
//!
//! [`spawn_gated`] starts a child process that waits, before `execve`, until its counters have been
//! opened, so the child is counted from its first instruction and nothing else is.
#![allow(unsafe_code)]

pub(crate) mod kbase;
pub mod perf_event_attr;

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::thread::JoinHandle;

pub use perf_event_attr::PerfEventAttr;

use crate::cpu::arm_pmu::{ArmPmu, SYSFS_PMU_DEVICES};

/// `PERF_IOC_FLAG_GROUP`: apply an ioctl to the leader and every member of its group.
const PERF_IOC_FLAG_GROUP: libc::c_ulong = 1;
/// `PERF_EVENT_IOC_ENABLE` = `_IO('$', 0)`.
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
/// `PERF_EVENT_IOC_DISABLE` = `_IO('$', 1)`.
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
/// `PERF_EVENT_IOC_RESET` = `_IO('$', 3)`.
const PERF_EVENT_IOC_RESET: libc::c_ulong = 0x2403;
/// `PERF_EVENT_IOC_ID` = `_IOR('$', 7, __u64 *)`.
const PERF_EVENT_IOC_ID: libc::c_ulong = 0x8008_2407;

/// Where `perf_event_paranoid` lives.
const PARANOID_PATH: &str = "/proc/sys/kernel/perf_event_paranoid";

/// A perf `ioctl` on an event descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfIoctl {
    /// `PERF_EVENT_IOC_ENABLE` with `PERF_IOC_FLAG_GROUP`: start the whole group.
    EnableGroup,
    /// `PERF_EVENT_IOC_DISABLE` with `PERF_IOC_FLAG_GROUP`: stop the whole group.
    DisableGroup,
    /// `PERF_EVENT_IOC_RESET` with `PERF_IOC_FLAG_GROUP`: zero every count of the group.
    ResetGroup,
    /// `PERF_EVENT_IOC_ID`: the kernel's unique id of the event (the value returned).
    Id,
}

impl PerfIoctl {
    /// The name of the request as the kernel headers spell it.
    pub fn name(self) -> &'static str {
        match self {
            PerfIoctl::EnableGroup => "PERF_EVENT_IOC_ENABLE",
            PerfIoctl::DisableGroup => "PERF_EVENT_IOC_DISABLE",
            PerfIoctl::ResetGroup => "PERF_EVENT_IOC_RESET",
            PerfIoctl::Id => "PERF_EVENT_IOC_ID",
        }
    }
}

/// The kernel calls of the CPU profiler. [`LinuxPerf`] makes them for real.
///
/// An implementation must behave like the kernel: `perf_event_open` returns a new descriptor
/// or an `errno`; `read` fills at most `buf.len()` bytes and says how many; `ioctl` returns the
/// event id for [`PerfIoctl::Id`] and 0 otherwise.
pub trait PerfSys: Send + Sync + fmt::Debug {
    /// `perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)`; `group` is the leader's
    /// descriptor, or `None` to start a new group.
    fn perf_event_open(
        &self,
        attr: &PerfEventAttr,
        pid: i32,
        cpu: i32,
        group: Option<BorrowedFd<'_>>,
    ) -> io::Result<OwnedFd>;

    /// `read(fd, buf)`: the number of bytes read.
    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize>;

    /// A perf `ioctl` on `fd`.
    fn ioctl(&self, fd: BorrowedFd<'_>, request: PerfIoctl) -> io::Result<u64>;

    /// `close(fd)`, reporting the error a plain drop would swallow.
    fn close(&self, fd: OwnedFd) -> io::Result<()>;

    /// The common Arm PMU events the CPUs implement, as the kernel's Arm PMU driver lists them in
    /// sysfs (see [`crate::cpu::arm_pmu`]; with several PMUs, an event any of them lists), or `None`
    /// where no Arm PMU is described (another architecture, a kernel without the driver). The
    /// profiler reports a common event outside the set as unavailable instead of reading zeros.
    fn arm_common_events(&self) -> Option<pmu_regs::CommonEventSet> {
        let pmus = ArmPmu::discover(std::path::Path::new(SYSFS_PMU_DEVICES)).ok()?;
        pmus.iter().map(ArmPmu::common_events).reduce(|a, b| {
            pmu_regs::CommonEventSet::from_registers(
                a.pmceid0() | b.pmceid0(),
                a.pmceid1() | b.pmceid1(),
            )
        })
    }

    /// The value of `/proc/sys/kernel/perf_event_paranoid`, used to explain a refusal.
    fn perf_event_paranoid(&self) -> io::Result<i32> {
        let text = std::fs::read_to_string(PARANOID_PATH)?;
        text.trim()
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// The real kernel: `syscall(SYS_perf_event_open)`, `read(2)`, `ioctl(2)`, `close(2)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LinuxPerf;

/// Whether the running kernel implements `perf_event_open` at all.
///
/// Probes with a NULL attribute, which opens nothing: a kernel with perf events answers `EFAULT`;
/// a kernel built without them, or a user-mode emulator that does not forward the call (such as
/// `qemu-user`), answers `ENOSYS`. Only `ENOSYS` gives `false`: any other refusal, such as a
/// seccomp filter's `EPERM`, is left for the real open to report with its reason.
pub fn perf_event_open_implemented() -> bool {
    // SAFETY: a NULL attribute pointer is never dereferenced in user space; the kernel rejects it
    // while copying the attribute in, before anything is opened.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            std::ptr::null::<PerfEventAttr>(),
            0,
            -1,
            -1,
            0,
        )
    };
    if ret >= 0 {
        // Not expected from a NULL attribute, but a descriptor would be ours to close.
        // SAFETY: a non-negative return is a new descriptor owned by nobody else.
        drop(unsafe { OwnedFd::from_raw_fd(ret as RawFd) });
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// The one place a C return value becomes an [`io::Error`]: a negative result means `errno`.
pub(crate) fn check<T: Copy + PartialOrd + Default>(ret: T) -> io::Result<T> {
    if ret < T::default() {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl PerfSys for LinuxPerf {
    fn perf_event_open(
        &self,
        attr: &PerfEventAttr,
        pid: i32,
        cpu: i32,
        group: Option<BorrowedFd<'_>>,
    ) -> io::Result<OwnedFd> {
        let group_fd: RawFd = group.map_or(-1, |fd| fd.as_raw_fd());
        // SAFETY: `attr` points to a live, initialised `perf_event_attr` whose `size` field
        // (64) matches the bytes the kernel may read; the other arguments are plain integers.
        let ret = check(unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr as *const PerfEventAttr,
                pid as libc::c_long,
                cpu as libc::c_long,
                group_fd as libc::c_long,
                perf_event_attr::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
            )
        })?;
        let raw = RawFd::try_from(ret).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
        // SAFETY: the kernel just returned `raw` as a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(raw) })
    }

    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is a valid, writable region of `buf.len()` bytes for the whole call.
            let ret = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            match check(ret) {
                Ok(n) => return Ok(n as usize),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn ioctl(&self, fd: BorrowedFd<'_>, request: PerfIoctl) -> io::Result<u64> {
        let raw = fd.as_raw_fd();
        let (code, group) = match request {
            PerfIoctl::EnableGroup => (PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP),
            PerfIoctl::DisableGroup => (PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP),
            PerfIoctl::ResetGroup => (PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP),
            PerfIoctl::Id => {
                let mut id: u64 = 0;
                // SAFETY: PERF_EVENT_IOC_ID writes one u64 through the pointer, which points to
                // the live local `id`.
                check(unsafe { libc::ioctl(raw, PERF_EVENT_IOC_ID as _, &mut id as *mut u64) })?;
                return Ok(id);
            }
        };
        // SAFETY: ENABLE, DISABLE and RESET take an integer flag argument and touch no memory.
        check(unsafe { libc::ioctl(raw, code as _, group) })?;
        Ok(0)
    }

    fn close(&self, fd: OwnedFd) -> io::Result<()> {
        let raw = fd.into_raw_fd();
        // SAFETY: `raw` came out of an `OwnedFd`, so this is its only owner and it is closed once.
        check(unsafe { libc::close(raw) })?;
        Ok(())
    }
}

/// A pipe whose both ends are close-on-exec: (read end, write end).
fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: `fds` is a writable array of two ints, as pipe2 requires.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: pipe2 succeeded, so both entries are new descriptors owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A child process that has been forked but waits before `execve` until [`release`](Self::release).
///
/// Dropping it without releasing kills the child before it runs the program and reaps it.
#[derive(Debug)]
pub struct GatedChild {
    pid: i32,
    /// Our write end of the gate; `None` once released.
    gate: Option<OwnedFd>,
    /// The thread blocked in `Command::spawn`; `None` once joined.
    spawner: Option<JoinHandle<io::Result<Child>>>,
}

impl GatedChild {
    /// The child's process id, valid from now on (before and after `execve`).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Lets the child call `execve` and waits until it has; returns the running [`Child`].
    pub fn release(mut self) -> io::Result<Child> {
        let written = match self.gate.take() {
            Some(gate) => File::from(gate).write_all(b"g"),
            None => Ok(()),
        };
        written.and(self.join_spawner())
    }

    fn join_spawner(&mut self) -> io::Result<Child> {
        match self.spawner.take() {
            Some(spawner) => spawner
                .join()
                .map_err(|_| io::Error::other("the thread spawning the child panicked"))?,
            None => Err(io::Error::other("the child was already released")),
        }
    }
}

impl Drop for GatedChild {
    /// Kills an unreleased child and reaps it.
    ///
    /// Closing the gate alone is not enough: a child forked by another thread at the same moment
    /// inherits a copy of this gate's write end and holds it until its own `execve`, so two
    /// children cancelled together would each keep the other waiting forever.
    fn drop(&mut self) {
        if self.gate.is_none() {
            return;
        }
        // SAFETY: kill has no memory preconditions. The pid is still ours: while we hold the gate
        // open the child can only leave its wait by being killed, and it is reaped below, after
        // this call, by the spawning thread or by us.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
        }
        self.gate = None;
        if let Ok(mut child) = self.join_spawner() {
            // The killed child never reached `execve`, so `spawn` saw success; reap it.
            let _ = child.wait();
        }
    }
}

/// Forks `command` so that the child stops just before `execve` until [`GatedChild::release`].
///
/// `Command::spawn` only returns once the child has called `execve`, so it runs on a helper
/// thread; the child reports its pid through a pipe, then blocks reading a second pipe (the gate).
/// Both pipes are close-on-exec; a process forked by another thread at the same moment may hold
/// a copy of the gate until it calls `execve` itself, which is why cancelling kills the child
/// (see [`GatedChild`]'s `Drop`) rather than only closing the gate.
pub fn spawn_gated(mut command: Command) -> io::Result<GatedChild> {
    let (pid_read, pid_write) = pipe_cloexec()?;
    let (gate_read, gate_write) = pipe_cloexec()?;
    let (pid_read_raw, pid_write_raw) = (pid_read.as_raw_fd(), pid_write.as_raw_fd());
    let (gate_read_raw, gate_write_raw) = (gate_read.as_raw_fd(), gate_write.as_raw_fd());
    let hook = move || -> io::Result<()> {
        // Only async-signal-safe calls from here on: this runs in the forked child.
        // SAFETY: these are the parent's pipe ends, duplicated into this child by fork; the child
        // owns its copies and closes the two it must not hold.
        unsafe {
            libc::close(pid_read_raw);
            libc::close(gate_write_raw);
        }
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let bytes = pid.to_ne_bytes();
        // SAFETY: `bytes` is a live 4-byte buffer; a short or failed write shows up in the parent
        // as a short read of the pid pipe.
        unsafe {
            libc::write(pid_write_raw, bytes.as_ptr().cast(), bytes.len());
            libc::close(pid_write_raw);
        }
        let mut byte = 0u8;
        loop {
            // SAFETY: `byte` is a live, writable 1-byte buffer.
            let n = unsafe { libc::read(gate_read_raw, (&mut byte as *mut u8).cast(), 1) };
            match n {
                1 => return Ok(()),
                0 => return Err(io::Error::from_raw_os_error(libc::ECANCELED)),
                _ => {
                    let err = io::Error::last_os_error();
                    if err.kind() != io::ErrorKind::Interrupted {
                        return Err(err);
                    }
                }
            }
        }
    };
    // SAFETY: the hook only calls close, getpid, write and read, which are async-signal-safe, and
    // allocates nothing.
    unsafe {
        command.pre_exec(hook);
    }
    let spawner = std::thread::Builder::new()
        .name("hwcpipe-spawn".into())
        .spawn(move || {
            let child = command.spawn();
            drop(pid_write);
            drop(gate_read);
            child
        })?;
    let mut pid_bytes = [0u8; 4];
    let mut pid_pipe = File::from(pid_read);
    if let Err(read_error) = pid_pipe.read_exact(&mut pid_bytes) {
        drop(gate_write);
        return Err(match spawner.join() {
            Ok(Err(spawn_error)) => spawn_error,
            _ => read_error,
        });
    }
    Ok(GatedChild {
        pid: i32::from_ne_bytes(pid_bytes),
        gate: Some(gate_write),
        spawner: Some(spawner),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gated_child_runs_only_after_release() {
        let mut cmd = Command::new("true");
        cmd.stdout(std::process::Stdio::null());
        let gated = spawn_gated(cmd).expect("spawn");
        assert!(gated.pid() > 0);
        let mut child = gated.release().expect("release");
        assert!(child.wait().expect("wait").success());
    }

    #[test]
    fn gated_child_of_a_missing_program_reports_the_spawn_error() {
        let gated = spawn_gated(Command::new("/nonexistent/program")).expect("fork");
        let err = gated.release().expect_err("exec must fail");
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
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
        // `second` is forked while `first`'s gate is open, so it inherits a copy of that write
        // end: closing the gate alone would leave `first` waiting until `second` ends.
        let first = spawn_gated(Command::new("true")).expect("fork");
        let second = spawn_gated(Command::new("true")).expect("fork");
        let first_pid = first.pid();
        drop(first);
        assert!(!process_exists(first_pid), "child {first_pid} still waits");
        let mut child = second.release().expect("release");
        assert!(child.wait().expect("wait").success());
    }

    /// Whether `pid` names a process, zombies included (`kill(pid, 0)` fails with `ESRCH` only
    /// once it has been reaped).
    fn process_exists(pid: i32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn real_close_of_a_valid_descriptor_succeeds() {
        let fd = OwnedFd::from(File::open("/dev/null").unwrap());
        LinuxPerf.close(fd).unwrap();
    }

    #[test]
    fn the_probe_agrees_with_a_real_open() {
        let attr = PerfEventAttr::counting(perf_event_attr::PERF_TYPE_SOFTWARE, 1);
        let enosys = match LinuxPerf.perf_event_open(&attr, 0, -1, None) {
            Ok(_) => false,
            Err(err) => err.raw_os_error() == Some(libc::ENOSYS),
        };
        assert_eq!(perf_event_open_implemented(), !enosys);
    }

    #[test]
    fn invalid_attribute_is_refused_with_errno() {
        if !perf_event_open_implemented() {
            eprintln!("skipped: this kernel or emulator has no perf_event_open (ENOSYS)");
            return;
        }
        let mut attr = PerfEventAttr::counting(perf_event_attr::PERF_TYPE_SOFTWARE, 1);
        attr.size = 1;
        let err = LinuxPerf.perf_event_open(&attr, 0, -1, None).unwrap_err();
        assert!(matches!(
            err.raw_os_error(),
            Some(libc::E2BIG) | Some(libc::EINVAL)
        ));
    }
}
