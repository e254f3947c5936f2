//! Why counting a target failed, each refusal naming the setting that would allow it.

use std::io;
use std::path::PathBuf;

use crate::CpuError;

/// `perf_event_paranoid` as the messages show it.
fn level(paranoid: &Option<i32>) -> String {
    paranoid.map_or_else(|| "unknown".to_owned(), |p| p.to_string())
}

/// Why a target's counters could not be opened or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// A text form of a target ([`Target::parse`](super::Target::parse)) names none.
    #[error("'{text}' names no target: {reason} (expected pid:PID, system or cpus:LIST)")]
    InvalidSpec {
        /// The text.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `--pid` names no process.
    #[error("there is no process {0}")]
    NoProcess(i32),
    /// `--cpu` names a CPU that is not online.
    #[error("CPU {cpu} is not online (online: {online})")]
    CpuOffline {
        /// The CPU asked for.
        cpu: u32,
        /// The online CPUs, in kernel notation.
        online: String,
    },
    /// The kernel refused CPU-wide counters (`--system-wide`, `--cpu`, the default without gatord).
    #[error(
        "counting the whole system is not permitted (perf_event_paranoid = {}): CPU-wide counters need \
         `sysctl kernel.perf_event_paranoid=0` (or -1), or CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8), \
         e.g. running as root",
        level(paranoid)
    )]
    SystemWideRefused {
        /// `perf_event_paranoid` at the time, when readable.
        paranoid: Option<i32>,
        /// The kernel's answer to the last refused `perf_event_open`.
        #[source]
        source: io::Error,
    },
    /// The kernel refused counters for an existing process.
    #[error(
        "counting process {pid} is not permitted (perf_event_paranoid = {}): another user's process needs \
         CAP_PERFMON or CAP_SYS_PTRACE (e.g. running as root), and any process needs \
         `sysctl kernel.perf_event_paranoid=2` or lower",
        level(paranoid)
    )]
    ProcessRefused {
        /// The process.
        pid: i32,
        /// `perf_event_paranoid` at the time, when readable.
        paranoid: Option<i32>,
        /// The kernel's answer to the last refused `perf_event_open`.
        #[source]
        source: io::Error,
    },
    /// The kernel refused counters for a command started here.
    #[error(
        "counting a command is not permitted (perf_event_paranoid = {}): it needs \
         `sysctl kernel.perf_event_paranoid=2` or lower, or CAP_PERFMON (e.g. running as root)",
        level(paranoid)
    )]
    CommandRefused {
        /// `perf_event_paranoid` at the time, when readable.
        paranoid: Option<i32>,
        /// The kernel's answer to the last refused `perf_event_open`.
        #[source]
        source: io::Error,
    },
    /// No target was named, gatord is not used, and the default (the whole system) was refused.
    #[error(
        "nothing to count: without gatord the whole system is counted by default, and that was refused; \
         name what to count instead: `-- CMD ARGS…` (a command), `--pid PID` (a process of yours), or use \
         gatord (`--gatord HOST:PORT`)"
    )]
    DefaultRefused(#[source] Box<TargetError>),
    /// The command to count could not be started.
    #[error("cannot run '{program}'")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// `/proc` or `/sys` could not be read.
    #[error("reading {path} failed")]
    Proc {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The process ran out of file descriptors: every counter of every thread or CPU is one.
    #[error(
        "counting {what} needs more open files than the limit of {limit} allows (one per counter per \
         thread or CPU): raise the hard limit (`ulimit -Hn`, as root) or count fewer counters (--counters)"
    )]
    TooManyOpenFiles {
        /// What was being counted.
        what: String,
        /// The soft `RLIMIT_NOFILE` in force (already raised to the hard limit when allowed).
        limit: u64,
        /// The kernel's refusal.
        #[source]
        source: CpuError,
    },
    /// Opening or reading the counters failed for another reason.
    #[error("counting {what} failed")]
    Counters {
        /// What was being counted.
        what: String,
        /// Why.
        #[source]
        source: CpuError,
    },
}

impl TargetError {
    /// Whether the kernel refused for lack of permission (exit status 3), as opposed to a bad argument.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            TargetError::SystemWideRefused { .. }
                | TargetError::ProcessRefused { .. }
                | TargetError::CommandRefused { .. }
                | TargetError::DefaultRefused(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(_paranoid: Option<i32>) -> io::Error {
        io::Error::from(io::ErrorKind::PermissionDenied)
    }

    #[test]
    fn refusals_name_the_setting_that_allows_them() {
        let system = TargetError::SystemWideRefused {
            paranoid: Some(2),
            source: denied(Some(2)),
        };
        let text = system.to_string();
        assert!(text.contains("perf_event_paranoid = 2"), "{text}");
        assert!(text.contains("perf_event_paranoid=0") && text.contains("CAP_PERFMON"));
        let process = TargetError::ProcessRefused {
            pid: 1,
            paranoid: None,
            source: denied(None),
        }
        .to_string();
        assert!(process.contains("process 1") && process.contains("CAP_SYS_PTRACE"));
        assert!(
            process.contains("perf_event_paranoid = unknown"),
            "{process}"
        );
        let default = TargetError::DefaultRefused(Box::new(system));
        assert!(default.is_refusal());
        let text = default.to_string();
        assert!(
            text.contains("--pid PID") && text.contains("-- CMD"),
            "{text}"
        );
        assert!(std::error::Error::source(&default).is_some());
        assert!(!TargetError::NoProcess(7).is_refusal());
    }
}
