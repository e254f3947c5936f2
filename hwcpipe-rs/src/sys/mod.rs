//! The one seam through which every kernel call of this crate passes.
//!
//! CPU counters use [`PerfSys`]: `perf_event_open` (of counting and sampling events alike), `read`, the
//! perf `ioctl`s, `close`, and the `mmap` of a sampling event's ring ([`PerfSys::map_ring`]). The
//! real implementation is [`LinuxPerf`]; what `rustix` covers goes through it (`read`, the perf
//! `ioctl`s, `open`, `mmap`, `poll`, pipes, the page size, resource limits, errno values), and raw
//! `libc` is left for what it does not, each call saying why: the `perf_event_open` syscall, the kbase
//! `ioctl`s (request numbers decided at run time), a `close` that reports its error,
//! `clock_gettime(CLOCK_MONOTONIC_RAW)` (`rustix`'s crashes under valgrind, where the tests run), and
//! the gated child's code between `fork` and `execve`, which makes only async-signal-safe system calls
//! on raw descriptors; tests hand the profiler their own [`PerfSys`] to feed it
//! refusals (`EACCES`, `ENOENT`, `EINVAL`), short reads and malformed group records without a
//! special kernel. Every descriptor is an [`OwnedFd`], so nothing leaks on an error path, and
//! `errno` becomes an [`io::Error`] in one place, `check`, crate-visible so the kbase calls can share it.
//!
//! [`spawn_gated`] (in `gated_spawn.rs`) starts a child process that waits, before `execve`, until its
//! counters have been opened, so the child is counted from its first instruction and nothing else is.
#![allow(unsafe_code)]

pub mod arm_pmu;
mod gated_spawn;
pub(crate) mod kbase;
pub(crate) mod mapping;
pub mod perf_event_attr;
pub mod perf_page;
pub mod perf_ring;
pub(crate) mod poll;

use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use rustix::io::Errno;
use rustix::ioctl::{opcode, Getter, IntegerSetter, Opcode};

pub use gated_spawn::{spawn_gated, GatedChild, REPORT_DEADLINE};
pub use perf_event_attr::PerfEventAttr;
pub use perf_page::PerfPage;
pub use perf_ring::{monotonic_raw_ns, PerfRing, RingError};

use perf_event_attr::KernelAttr;

use arm_pmu::{ArmPmu, SYSFS_PMU_DEVICES};

/// `PERF_IOC_FLAG_GROUP`: apply an ioctl to the leader and every member of its group.
const PERF_IOC_FLAG_GROUP: usize = 1;
/// `PERF_EVENT_IOC_ENABLE` = `_IO('$', 0)`.
const PERF_EVENT_IOC_ENABLE: Opcode = opcode::none(b'$', 0);
/// `PERF_EVENT_IOC_DISABLE` = `_IO('$', 1)`.
const PERF_EVENT_IOC_DISABLE: Opcode = opcode::none(b'$', 1);
/// `PERF_EVENT_IOC_RESET` = `_IO('$', 3)`.
const PERF_EVENT_IOC_RESET: Opcode = opcode::none(b'$', 3);
/// `PERF_EVENT_IOC_ID` = `_IOR('$', 7, __u64 *)`: the size field is a pointer's, as in the kernel header.
const PERF_EVENT_IOC_ID: Opcode = opcode::read::<*mut u64>(b'$', 7);

/// Where `perf_event_paranoid` lives.
const PARANOID_PATH: &str = "/proc/sys/kernel/perf_event_paranoid";

/// A perf `ioctl` on an event descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfIoctl {
    /// `PERF_EVENT_IOC_ENABLE` with `PERF_IOC_FLAG_GROUP`: enable the leader and every member.
    EnableGroup,
    /// `PERF_EVENT_IOC_DISABLE` with `PERF_IOC_FLAG_GROUP`: disable the leader and every member.
    DisableGroup,
    /// `PERF_EVENT_IOC_ENABLE` on one event. On a group leader the whole group starts counting with it,
    /// its members still enabled from their opening.
    Enable,
    /// `PERF_EVENT_IOC_DISABLE` on one event. On a group leader the whole group stops counting with it and
    /// its members stay enabled, ready for the leader's next [`Enable`](Self::Enable).
    Disable,
    /// `PERF_EVENT_IOC_RESET` with `PERF_IOC_FLAG_GROUP`: zero every count of the group.
    ResetGroup,
    /// `PERF_EVENT_IOC_ID`: the kernel's unique id of the event (the value returned).
    Id,
}

impl PerfIoctl {
    /// The name of the request as the kernel headers spell it.
    pub fn name(self) -> &'static str {
        match self {
            PerfIoctl::EnableGroup | PerfIoctl::Enable => "PERF_EVENT_IOC_ENABLE",
            PerfIoctl::DisableGroup | PerfIoctl::Disable => "PERF_EVENT_IOC_DISABLE",
            PerfIoctl::ResetGroup => "PERF_EVENT_IOC_RESET",
            PerfIoctl::Id => "PERF_EVENT_IOC_ID",
        }
    }
}

/// The kernel calls of the CPU profiler. [`LinuxPerf`] makes them for real.
///
/// An implementation must behave like the kernel: `perf_event_open` returns a new descriptor
/// or an `errno`; `read` fills at most `buf.len()` bytes and says how many; `ioctl` returns the
/// event id for [`PerfIoctl::Id`] and 0 otherwise; `map_ring` gives a ring the event writes its
/// records into, as the kernel lays them out.
pub trait PerfSys: Send + Sync + fmt::Debug {
    /// `perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)` of a counting or a sampling
    /// event; `group` is the leader's descriptor, or `None` to start a new group.
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
    /// sysfs (see [`arm_pmu`]; with several PMUs, an event any of them lists), or `None`
    /// where no Arm PMU is described (another architecture, a kernel without the driver). The
    /// profiler reports a common event outside the set as unavailable instead of reading zeros.
    ///
    /// Every implementation answers for itself (there is no default): a simulated kernel that
    /// described no PMU would otherwise see the host's.
    fn arm_common_events(&self) -> Option<pmu_regs::CommonEventSet>;

    /// Maps the first page of the event `fd` for user-space reads ([`PerfPage::map`]). The default
    /// refuses (`Unsupported`): only the real kernel's pages may steer a counter instruction, so a
    /// simulated kernel leaves its counters on the `read()` path.
    fn map_page(&self, fd: BorrowedFd<'_>) -> io::Result<PerfPage> {
        let _ = fd;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// Maps the ring buffer of sampling event `fd` with `data_pages` pages of data (a power of two;
    /// [`PerfRing::map`]), into which the event writes its records. The default refuses (`Unsupported`):
    /// a kernel without rings, whose counters a thread samples instead.
    fn map_ring(&self, fd: BorrowedFd<'_>, data_pages: usize) -> io::Result<PerfRing> {
        let _ = (fd, data_pages);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    /// How many Arm PMUs the kernel describes in sysfs (more than one on a big.LITTLE system; 0 on
    /// other architectures). No default, as for [`arm_common_events`](Self::arm_common_events).
    fn arm_pmu_count(&self) -> usize;

    /// Every Arm CPU PMU the kernel describes in sysfs ([`ArmPmu::discover`]): one per core type, each
    /// with its own perf `type`, CPUs and event list; empty on other architectures. No default, as for
    /// [`arm_common_events`](Self::arm_common_events).
    fn arm_pmus(&self) -> Result<Vec<ArmPmu>, arm_pmu::ArmPmuError>;

    /// MIDR_EL1 of `cpu` as the kernel shows it ([`arm_pmu::midr`]), which names the core; `None` where
    /// it is not shown. No default, as for [`arm_common_events`](Self::arm_common_events).
    fn midr(&self, cpu: u32) -> Option<u64>;

    /// The value of `/proc/sys/kernel/perf_event_paranoid`, used to explain a refusal. No default, as
    /// for [`arm_common_events`](Self::arm_common_events).
    fn perf_event_paranoid(&self) -> io::Result<i32>;
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
    // while copying the attribute in, before anything is opened. (Were a descriptor returned all
    // the same, it is dropped, closed, here.)
    match unsafe { perf_event_open(std::ptr::null::<KernelAttr>(), 0, -1, None) } {
        Ok(_) => true,
        Err(err) => Errno::from_io_error(&err) != Some(Errno::NOSYS),
    }
}

/// `perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC)`: the crate's one call of the
/// system call, which `rustix` does not have. `group` is the leader's descriptor, or `None` to start a
/// new group.
///
/// # Safety
/// `attr` must be NULL or point to a live, initialised [`KernelAttr`] (whose `size` field is never more
/// than the struct's bytes, by its construction), since the kernel reads `size` bytes from it.
unsafe fn perf_event_open(
    attr: *const KernelAttr,
    pid: i32,
    cpu: i32,
    group: Option<BorrowedFd<'_>>,
) -> io::Result<OwnedFd> {
    let group_fd: RawFd = group.map_or(-1, |fd| fd.as_raw_fd());
    // SAFETY: `attr` is NULL or a valid attribute (the caller's contract); the other arguments are
    // plain integers.
    let ret = check(unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr,
            pid as libc::c_long,
            cpu as libc::c_long,
            group_fd as libc::c_long,
            perf_event_attr::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    })?;
    let raw = RawFd::try_from(ret).map_err(|_| Errno::BADF)?;
    // SAFETY: the kernel just returned `raw` as a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// A perf ioctl whose argument is the integer `flag`, not memory: ENABLE, DISABLE or RESET, the only
/// requests it compiles for.
fn flag_ioctl<const OPCODE: Opcode>(fd: BorrowedFd<'_>, flag: usize) -> io::Result<()> {
    const {
        assert!(matches!(
            OPCODE,
            PERF_EVENT_IOC_ENABLE | PERF_EVENT_IOC_DISABLE | PERF_EVENT_IOC_RESET
        ))
    };
    // SAFETY: OPCODE is ENABLE, DISABLE or RESET (checked at compile time above), each of which takes
    // an integer flag, 0 or PERF_IOC_FLAG_GROUP, and touches no memory through it.
    let setter = unsafe { IntegerSetter::<OPCODE>::new_usize(flag) };
    // SAFETY: as above; `fd` is a live descriptor for the duration of the call.
    unsafe { rustix::ioctl::ioctl(fd, setter) }?;
    Ok(())
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
        let attr = KernelAttr::from(attr);
        // SAFETY: `attr` is a live, initialised `KernelAttr`, whose `size` field is at most its own
        // 96 bytes: the kernel reads no more.
        unsafe { perf_event_open(&attr, pid, cpu, group) }
    }

    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match rustix::io::read(fd, &mut *buf) {
                Ok(n) => return Ok(n),
                Err(Errno::INTR) => continue,
                Err(errno) => return Err(errno.into()),
            }
        }
    }

    fn ioctl(&self, fd: BorrowedFd<'_>, request: PerfIoctl) -> io::Result<u64> {
        match request {
            PerfIoctl::EnableGroup => flag_ioctl::<PERF_EVENT_IOC_ENABLE>(fd, PERF_IOC_FLAG_GROUP),
            PerfIoctl::DisableGroup => {
                flag_ioctl::<PERF_EVENT_IOC_DISABLE>(fd, PERF_IOC_FLAG_GROUP)
            }
            PerfIoctl::Enable => flag_ioctl::<PERF_EVENT_IOC_ENABLE>(fd, 0),
            PerfIoctl::Disable => flag_ioctl::<PERF_EVENT_IOC_DISABLE>(fd, 0),
            PerfIoctl::ResetGroup => flag_ioctl::<PERF_EVENT_IOC_RESET>(fd, PERF_IOC_FLAG_GROUP),
            PerfIoctl::Id => {
                // SAFETY: PERF_EVENT_IOC_ID writes one u64, the getter's output, and nothing else.
                let getter = unsafe { Getter::<PERF_EVENT_IOC_ID, u64>::new() };
                // SAFETY: as above; `fd` is a live descriptor for the duration of the call.
                return Ok(unsafe { rustix::ioctl::ioctl(fd, getter) }?);
            }
        }?;
        Ok(0)
    }

    fn map_page(&self, fd: BorrowedFd<'_>) -> io::Result<PerfPage> {
        PerfPage::map(fd)
    }

    fn map_ring(&self, fd: BorrowedFd<'_>, data_pages: usize) -> io::Result<PerfRing> {
        PerfRing::map(fd, data_pages)
    }

    fn arm_common_events(&self) -> Option<pmu_regs::CommonEventSet> {
        let pmus = ArmPmu::discover(std::path::Path::new(SYSFS_PMU_DEVICES)).ok()?;
        pmus.iter().map(ArmPmu::common_events).reduce(|a, b| {
            pmu_regs::CommonEventSet::from_registers(
                a.pmceid0() | b.pmceid0(),
                a.pmceid1() | b.pmceid1(),
            )
        })
    }

    fn arm_pmu_count(&self) -> usize {
        ArmPmu::discover(std::path::Path::new(SYSFS_PMU_DEVICES)).map_or(0, |pmus| pmus.len())
    }

    fn arm_pmus(&self) -> Result<Vec<ArmPmu>, arm_pmu::ArmPmuError> {
        let devices = std::path::Path::new(SYSFS_PMU_DEVICES);
        // A kernel without perf events (or a sandbox without sysfs) has no such folder: no Arm PMU.
        if !devices.exists() {
            return Ok(Vec::new());
        }
        ArmPmu::discover(devices)
    }

    fn midr(&self, cpu: u32) -> Option<u64> {
        arm_pmu::midr(std::path::Path::new(arm_pmu::SYSFS_CPUS), cpu).ok()
    }

    fn perf_event_paranoid(&self) -> io::Result<i32> {
        let text = std::fs::read_to_string(PARANOID_PATH)?;
        text.trim()
            .parse()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    fn close(&self, fd: OwnedFd) -> io::Result<()> {
        let raw = fd.into_raw_fd();
        // `libc`'s close: `rustix`'s reports no error, and reporting it is the point of this call.
        // SAFETY: `raw` came out of an `OwnedFd`, so this is its only owner and it is closed once.
        check(unsafe { libc::close(raw) })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_ioctl_numbers_are_those_of_the_kernel_header() {
        // `Opcode` is a C int of either sign and width, as the platform's ioctl takes it: compare its
        // bits, which hexadecimal formatting shows for every integer type.
        assert_eq!(format!("{PERF_EVENT_IOC_ENABLE:#x}"), "0x2400");
        assert_eq!(format!("{PERF_EVENT_IOC_DISABLE:#x}"), "0x2401");
        assert_eq!(format!("{PERF_EVENT_IOC_RESET:#x}"), "0x2403");
        let id = if cfg!(target_pointer_width = "64") {
            "0x80082407"
        } else {
            "0x80042407"
        };
        assert_eq!(format!("{PERF_EVENT_IOC_ID:#x}"), id);
    }

    #[test]
    fn real_close_of_a_valid_descriptor_succeeds() {
        let fd = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        LinuxPerf.close(fd).unwrap();
    }

    #[test]
    fn the_probe_agrees_with_a_real_open() {
        let attr = PerfEventAttr::counting(perf_event_attr::PERF_TYPE_SOFTWARE, 1);
        let enosys = match LinuxPerf.perf_event_open(&attr, 0, -1, None) {
            Ok(_) => false,
            Err(err) => err.raw_os_error() == Some(Errno::NOSYS.raw_os_error()),
        };
        assert_eq!(perf_event_open_implemented(), !enosys);
    }

    #[test]
    fn invalid_attribute_is_refused_with_errno() {
        if !perf_event_open_implemented() {
            test_data::skip!(
                test_data::Fixture::PerfEvents,
                "this kernel or emulator has no perf_event_open (ENOSYS)"
            );
            return;
        }
        let mut attr = PerfEventAttr::counting(perf_event_attr::PERF_TYPE_SOFTWARE, 1);
        attr.size = 1;
        let err = LinuxPerf.perf_event_open(&attr, 0, -1, None).unwrap_err();
        assert!(matches!(
            Errno::from_io_error(&err),
            Some(Errno::TOOBIG | Errno::INVAL)
        ));
    }
}
