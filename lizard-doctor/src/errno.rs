//! What the kernel's answers mean: `kernel.perf_event_paranoid` levels and `perf_event_open`'s errnos, with
//! the fix for each refusal.

use std::fmt;

use rustix::io::Errno;

/// What `kernel.perf_event_paranoid` lets a process without `CAP_PERFMON` (or `CAP_SYS_ADMIN`) count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paranoia {
    /// `-1`: every event, for every user.
    Everything,
    /// `0`: every event but raw tracepoints: CPU-wide counting and the kernel included.
    CpuWide,
    /// `1`: one's own processes, kernel and user space; no CPU-wide counting.
    OwnProcesses,
    /// `2` (the mainline default): one's own processes, user space only.
    UserSpaceOnly,
    /// `3` and above (Debian's and Android's kernels): nothing at all without the capability.
    Nothing,
}

impl Paranoia {
    /// The meaning of level `level`.
    pub fn from_level(level: i32) -> Paranoia {
        match level {
            i32::MIN..=-1 => Paranoia::Everything,
            0 => Paranoia::CpuWide,
            1 => Paranoia::OwnProcesses,
            2 => Paranoia::UserSpaceOnly,
            _ => Paranoia::Nothing,
        }
    }

    /// Whether an unprivileged process may count its own processes at all.
    pub fn allows_own_processes(self) -> bool {
        self != Paranoia::Nothing
    }

    /// Whether an unprivileged process may count whole CPUs (`lizard capture --system-wide`).
    pub fn allows_cpu_wide(self) -> bool {
        matches!(self, Paranoia::Everything | Paranoia::CpuWide)
    }
}

impl fmt::Display for Paranoia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Paranoia::Everything => "every event for every user",
            Paranoia::CpuWide => "every event but raw tracepoints, whole CPUs included",
            Paranoia::OwnProcesses => "one's own processes (kernel and user space), no whole CPUs",
            Paranoia::UserSpaceOnly => "one's own processes in user space only",
            Paranoia::Nothing => "nothing without CAP_PERFMON (Debian's and Android's level 3)",
        })
    }
}

/// Why `perf_event_open` refused with `errno`, and the fix: `(cause, fix)`. `paranoid` is the level read
/// from `/proc/sys/kernel/perf_event_paranoid`, if it could be.
pub fn perf_open_refusal(errno: i32, paranoid: Option<i32>) -> (String, Option<String>) {
    let name = errno_name(errno);
    match errno_of(errno) {
        Some(Errno::ACCESS | Errno::PERM) => {
            let level = paranoid.map_or_else(
                || "perf_event_paranoid could not be read".to_owned(),
                |p| format!("kernel.perf_event_paranoid is {p}: {}", Paranoia::from_level(p)),
            );
            (
                format!("{name}: the kernel refuses it to this process ({level}; on Android security.perf_harden may also be 1)"),
                Some("sudo sysctl kernel.perf_event_paranoid=1 (on Android: adb shell setprop security.perf_harden 0), or run as root or with CAP_PERFMON".to_owned()),
            )
        }
        Some(Errno::NOENT) => (
            format!("{name}: the kernel has no such event here: no hardware PMU driver serves this CPU, as in most virtual machines"),
            Some("count on the device itself, or give the virtual machine a PMU (KVM: -cpu host; QEMU TCG on Arm: -cpu max,pmu=on)".to_owned()),
        ),
        Some(Errno::OPNOTSUPP) => (
            format!("{name}: the PMU cannot count this way (it has no overflow interrupt for sampling, or cannot exclude a privilege level)"),
            None,
        ),
        Some(Errno::NODEV) => (
            format!("{name}: no PMU serves this CPU (the CPU is offline, or its PMU driver did not probe)"),
            Some("check `dmesg | grep -i pmu` for the PMU driver, and that the CPU is online".to_owned()),
        ),
        Some(Errno::INVAL) => (
            format!("{name}: the kernel rejects the event's attributes (an event its PMU lacks, or an older kernel)"),
            None,
        ),
        Some(Errno::BUSY) => (
            format!("{name}: another user holds the PMU exclusively"),
            Some("stop the other profiler (or tracer) using the PMU".to_owned()),
        ),
        Some(Errno::MFILE) => (
            format!("{name}: this process has no descriptor left"),
            Some("ulimit -n 4096".to_owned()),
        ),
        Some(Errno::NOSYS) => (
            format!("{name}: the kernel has no perf_event_open (CONFIG_PERF_EVENTS off), or an emulator such as qemu-user does not forward it"),
            Some("run on a kernel with perf events (or in a system emulator rather than qemu-user)".to_owned()),
        ),
        _ => (format!("{name}: {}", std::io::Error::from_raw_os_error(errno)), None),
    }
}

/// `errno` as an [`Errno`], or `None` out of the range an errno has (1..=4095, which rustix asserts).
fn errno_of(errno: i32) -> Option<Errno> {
    (1..4096)
        .contains(&errno)
        .then(|| Errno::from_raw_os_error(errno))
}

/// The symbolic name of `errno`.
fn errno_name(errno: i32) -> String {
    let name = match errno_of(errno) {
        Some(Errno::ACCESS) => "EACCES",
        Some(Errno::PERM) => "EPERM",
        Some(Errno::NOENT) => "ENOENT",
        Some(Errno::OPNOTSUPP) => "EOPNOTSUPP",
        Some(Errno::NODEV) => "ENODEV",
        Some(Errno::INVAL) => "EINVAL",
        Some(Errno::BUSY) => "EBUSY",
        Some(Errno::MFILE) => "EMFILE",
        Some(Errno::NOSYS) => "ENOSYS",
        _ => return format!("errno {errno}"),
    };
    name.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paranoid_levels_say_what_they_allow() {
        assert_eq!(Paranoia::from_level(-1), Paranoia::Everything);
        assert!(Paranoia::from_level(0).allows_cpu_wide());
        assert!(!Paranoia::from_level(1).allows_cpu_wide());
        assert!(Paranoia::from_level(2).allows_own_processes());
        assert!(!Paranoia::from_level(3).allows_own_processes());
        assert_eq!(Paranoia::from_level(4), Paranoia::Nothing);
        assert_eq!(Paranoia::from_level(i32::MIN), Paranoia::Everything);
    }

    #[test]
    fn every_refusal_is_read_right_with_its_fix() {
        let (cause, fix) = perf_open_refusal(libc::EACCES, Some(3));
        assert!(
            cause.starts_with("EACCES") && cause.contains("perf_event_paranoid is 3"),
            "{cause}"
        );
        assert!(fix.unwrap().contains("sysctl kernel.perf_event_paranoid"));
        let (cause, fix) = perf_open_refusal(libc::ENOENT, None);
        assert!(
            cause.contains("virtual machines") && fix.is_some(),
            "{cause}"
        );
        assert!(perf_open_refusal(libc::EOPNOTSUPP, None)
            .0
            .starts_with("EOPNOTSUPP"));
        assert!(perf_open_refusal(libc::ENODEV, None)
            .0
            .starts_with("ENODEV"));
        assert!(perf_open_refusal(libc::EINVAL, None)
            .0
            .starts_with("EINVAL"));
        assert!(perf_open_refusal(libc::EPERM, None)
            .0
            .contains("could not be read"));
        assert!(perf_open_refusal(libc::ENOSYS, None).1.is_some());
        for odd in [0, -1, 9999, i32::MIN, i32::MAX] {
            assert!(perf_open_refusal(odd, None)
                .0
                .starts_with(&format!("errno {odd}")));
        }
    }
}
