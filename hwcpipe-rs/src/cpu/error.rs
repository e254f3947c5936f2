//! Errors of the CPU profiler, and why a single counter is unavailable.

use core::fmt;
use std::io;

use rustix::io::Errno;

use super::counter::CpuCounter;
use super::group_read::GroupReadError;
use super::pmu_event::EventUnavailable;

/// Why one [`CpuCounter`] is not measured. The errno is the kernel's answer to `perf_event_open`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnavailableReason {
    /// The counter was not in the selection the profiler was built with.
    NotSelected,
    /// The counter is an Arm PMU event number and this is not an aarch64 build, where the number
    /// would mean an unrelated event.
    NotOnThisArchitecture,
    /// The kernel or the CPU has no such event (`ENOENT`, `EOPNOTSUPP`, `ENODEV`, `ENOSYS`).
    Unsupported {
        /// The errno of `perf_event_open`.
        errno: i32,
    },
    /// The kernel refused (`EACCES`, `EPERM`), even with kernel counting excluded.
    PermissionDenied {
        /// The errno of `perf_event_open`.
        errno: i32,
        /// `perf_event_paranoid` at the time, when it could be read.
        paranoid: Option<i32>,
    },
    /// The kernel rejected the request for another reason (`EINVAL`, `E2BIG`, `EMFILE`, ...).
    Rejected {
        /// The errno of `perf_event_open`.
        errno: i32,
    },
    /// The counter is a common Arm PMU event that the CPU's PMU does not implement: the kernel's
    /// Arm PMU driver does not list it in sysfs (it lists what PMCEID0/1_EL0 say). Opened anyway, it
    /// would only ever read zero.
    NotImplementedByCpu {
        /// The Arm event number.
        event: u16,
    },
    /// The event opened but `PERF_EVENT_IOC_ID` failed, so its values could not be told apart.
    NoEventId {
        /// The errno of the ioctl.
        errno: i32,
    },
}

impl UnavailableReason {
    /// Classifies the errno of a refused `perf_event_open`.
    pub fn from_open_errno(errno: i32, paranoid: Option<i32>) -> Self {
        match Errno::from_raw_os_error(errno) {
            Errno::NOENT | Errno::OPNOTSUPP | Errno::NODEV | Errno::NOSYS => {
                UnavailableReason::Unsupported { errno }
            }
            Errno::ACCESS | Errno::PERM => UnavailableReason::PermissionDenied { errno, paranoid },
            _ => UnavailableReason::Rejected { errno },
        }
    }
}

fn strerror(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

impl fmt::Display for UnavailableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            UnavailableReason::NotSelected => f.write_str("not selected"),
            UnavailableReason::NotOnThisArchitecture => {
                f.write_str("Arm PMU event, not available on this CPU architecture")
            }
            UnavailableReason::Unsupported { errno } => {
                write!(f, "unsupported by this kernel or CPU: {}", strerror(errno))
            }
            UnavailableReason::PermissionDenied { errno, paranoid } => {
                write!(f, "not permitted: {}", strerror(errno))?;
                if let Some(level) = paranoid {
                    write!(f, " (perf_event_paranoid = {level})")?;
                }
                Ok(())
            }
            UnavailableReason::Rejected { errno } => {
                write!(f, "rejected by perf_event_open: {}", strerror(errno))
            }
            UnavailableReason::NotImplementedByCpu { event } => write!(
                f,
                "this CPU's PMU does not implement Arm event {event:#06x} (not in the kernel's \
                 sysfs events list, which follows PMCEID0/1_EL0)"
            ),
            UnavailableReason::NoEventId { errno } => {
                write!(f, "PERF_EVENT_IOC_ID failed: {}", strerror(errno))
            }
        }
    }
}

/// Everything that can go wrong while opening or sampling CPU counters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CpuError {
    /// No counter was requested.
    #[error("no CPU counter selected")]
    NothingSelected,
    /// The kernel refused every counter for lack of permission, even with kernel counting excluded.
    #[error(
        "perf_event_open is not permitted (perf_event_paranoid = {}): lower it with \
         `sysctl kernel.perf_event_paranoid=2` (or 1 to count kernel code too), or on Android \
         `adb shell setprop security.perf_harden 0`",
        paranoid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
    )]
    PermissionDenied {
        /// `perf_event_paranoid` at the time, when it could be read.
        paranoid: Option<i32>,
        /// The error of the last refused `perf_event_open`.
        #[source]
        source: io::Error,
    },
    /// The kernel refused every counter of a CPU-wide target
    /// ([`CpuTarget::Cpu`](super::CpuTarget::Cpu)) for lack of permission: counting everything on a
    /// CPU needs `perf_event_paranoid` ≤ 0 or `CAP_PERFMON`, whatever the kernel-counting setting.
    #[error(
        "counting everything on CPU {cpu} is not permitted (perf_event_paranoid = {}): it needs \
         `sysctl kernel.perf_event_paranoid=0` (or -1), or CAP_PERFMON (CAP_SYS_ADMIN before \
         Linux 5.8), e.g. running as root",
        paranoid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
    )]
    CpuWideDenied {
        /// The CPU.
        cpu: u32,
        /// `perf_event_paranoid` at the time, when it could be read.
        paranoid: Option<i32>,
        /// The error of the last refused `perf_event_open`.
        #[source]
        source: io::Error,
    },
    /// None of the requested counters and events could be opened.
    #[error(
        "none of the requested CPU counters is available: {}",
        list(unavailable, events)
    )]
    NoCounterAvailable {
        /// Every requested counter with the reason it failed.
        unavailable: Vec<(CpuCounter, UnavailableReason)>,
        /// Every requested Arm PMU event (by name) with the reason it is counted nowhere.
        events: Vec<(String, EventUnavailable)>,
    },
    /// A pinned group (the first group of an Arm PMU's events on a system with several core types) could
    /// not be put on its PMU: another user holds its counters, and `read()` gave end-of-file.
    #[error(
        "the kernel could not keep the first group of the events of the system's Arm PMU number {pmu} \
         (counting from 0, as `CpuPmus::pmus` lists them) on its counters: another perf user holds them \
         pinned, and this core type's events cannot be counted"
    )]
    PinnedGroupOff {
        /// The PMU's position in the system's PMUs ([`CpuPmus::pmus`](super::CpuPmus::pmus)).
        pmu: usize,
    },
    /// A perf ioctl on a group leader failed.
    #[error("{request} failed")]
    Ioctl {
        /// Name of the request, e.g. `PERF_EVENT_IOC_ENABLE`.
        request: &'static str,
        /// The error of the ioctl.
        #[source]
        source: io::Error,
    },
    /// `read()` of a group leader failed.
    #[error("reading the CPU counter group failed")]
    Read(#[source] io::Error),
    /// `read()` of a group leader returned fewer bytes than one record.
    #[error("short read of the CPU counter group: {got} of {expected} bytes")]
    ShortRead {
        /// Bytes of a full record.
        expected: usize,
        /// Bytes returned.
        got: usize,
    },
    /// The group record read from the kernel is malformed.
    #[error("malformed CPU counter group record")]
    Malformed(#[from] GroupReadError),
    /// An entry of the group record belongs to another event than expected.
    #[error("group record entry {position} has event id {found}, expected {expected}")]
    UnexpectedEventId {
        /// Position in the record.
        position: usize,
        /// The id `PERF_EVENT_IOC_ID` returned for the event at that position.
        expected: u64,
        /// The id in the record.
        found: u64,
    },
    /// A count or a time went backwards between two reads.
    #[error("{what} went backwards: {previous} then {current}")]
    WentBackwards {
        /// What went backwards: a counter name, `time_enabled` or `time_running`.
        what: &'static str,
        /// The earlier reading.
        previous: u64,
        /// The later, smaller reading.
        current: u64,
    },
    /// `sample()` or `stop()` was called while the profiler was not running.
    #[error("the CPU profiler is not running; call run() first")]
    NotRunning,
    /// A counter was enabled that is not available.
    #[error("CPU counter {counter} is not available: {reason}")]
    Unavailable {
        /// The counter.
        counter: CpuCounter,
        /// Why it is not available.
        reason: UnavailableReason,
    },
    /// The child process to measure could not be started.
    #[error("starting the measured process failed")]
    Spawn(#[source] io::Error),
    /// A [`CpuTarget::Cpu`](super::CpuTarget::Cpu) number beyond any CPU the kernel can name.
    #[error("there is no CPU {0}")]
    NoSuchCpu(u32),
    /// Closing a counter descriptor failed.
    #[error("closing a perf event descriptor failed")]
    Close(#[source] io::Error),
}

fn list(
    unavailable: &[(CpuCounter, UnavailableReason)],
    events: &[(String, EventUnavailable)],
) -> String {
    unavailable
        .iter()
        .map(|(c, r)| format!("{c} ({r})"))
        .chain(events.iter().map(|(e, r)| format!("{e} ({r})")))
        .collect::<Vec<_>>()
        .join(", ")
}

impl CpuError {
    /// The errnos the kernel gave the counters and events that would not open (for
    /// [`NoCounterAvailable`](Self::NoCounterAvailable); none for other errors).
    pub fn open_errnos(&self) -> Vec<i32> {
        let CpuError::NoCounterAvailable {
            unavailable,
            events,
        } = self
        else {
            return Vec::new();
        };
        unavailable
            .iter()
            .map(|(_, r)| r)
            .chain(events.iter().filter_map(|(_, r)| match r {
                EventUnavailable::Refused { reason, .. } => Some(reason),
                _ => None,
            }))
            .filter_map(|r| match *r {
                UnavailableReason::Unsupported { errno }
                | UnavailableReason::PermissionDenied { errno, .. }
                | UnavailableReason::Rejected { errno }
                | UnavailableReason::NoEventId { errno } => Some(errno),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_classes() {
        assert_eq!(
            UnavailableReason::from_open_errno(Errno::NOENT.raw_os_error(), None),
            UnavailableReason::Unsupported {
                errno: Errno::NOENT.raw_os_error()
            }
        );
        assert_eq!(
            UnavailableReason::from_open_errno(Errno::ACCESS.raw_os_error(), Some(3)),
            UnavailableReason::PermissionDenied {
                errno: Errno::ACCESS.raw_os_error(),
                paranoid: Some(3)
            }
        );
        assert_eq!(
            UnavailableReason::from_open_errno(Errno::INVAL.raw_os_error(), None),
            UnavailableReason::Rejected {
                errno: Errno::INVAL.raw_os_error()
            }
        );
    }

    #[test]
    fn permission_message_names_both_knobs() {
        let err = CpuError::PermissionDenied {
            paranoid: Some(3),
            source: io::Error::from(Errno::ACCESS),
        };
        let text = err.to_string();
        assert!(text.contains("perf_event_paranoid = 3"), "{text}");
        assert!(text.contains("security.perf_harden"), "{text}");
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn reasons_show_the_errno_text() {
        let text = UnavailableReason::Unsupported {
            errno: Errno::NOENT.raw_os_error(),
        }
        .to_string();
        assert!(text.contains("No such file"), "{text}");
    }
}
