//! Why are there no counters? `lizard doctor`'s checks: for each source of counters (the CPU's perf events,
//! the Mali GPU's kbase driver, gatord), what works, what does not, the exact cause and the command that
//! fixes it.
//!
//! Every check probes the real thing — it opens the event, opens the device and asks the driver, connects to
//! the daemon — rather than guessing from configuration files; files such as `perf_event_paranoid` are read
//! to explain a refusal, not to predict it.
//!
//! ```no_run
//! use lizard_core::doctor::{self, Status};
//!
//! let report = doctor::Report::new(vec![doctor::cpu(), doctor::gpu()]);
//! for source in &report.sources {
//!     for check in source.checks.iter().filter(|c| c.status == Status::Failed) {
//!         println!("{}: {} — fix: {}", check.name, check.found, check.fix.as_deref().unwrap_or("-"));
//!     }
//! }
//! std::process::exit(report.exit_code());
//! ```

mod cpu;
mod errno;
mod gatord;
mod gpu;
#[cfg(feature = "trace")]
mod trace;

pub use cpu::cpu;
pub use errno::{perf_open_refusal, Paranoia};
pub use gatord::gatord;
pub use gpu::gpu;
#[cfg(feature = "trace")]
pub use trace::trace_server;

use std::fmt;

/// A source of counters `doctor` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
#[non_exhaustive]
pub enum SourceKind {
    /// The CPU's hardware and software counters through `perf_event_open`.
    Cpu,
    /// The Mali GPU through the kbase driver.
    Gpu,
    /// The gatord daemon.
    Gatord,
    /// The trace server's copies of GPU device memory (CUDA).
    TraceServer,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Cpu => "CPU",
            SourceKind::Gpu => "GPU",
            SourceKind::Gatord => "gatord",
            SourceKind::TraceServer => "trace server",
        })
    }
}

/// What one check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Status {
    /// It works.
    Ok,
    /// It works, with a limit worth knowing (user-space counting only, say).
    Warning,
    /// It does not work: the source gives fewer counters than it could, or none.
    Failed,
    /// A fact, neither good nor bad (a setting's value, the PMU's name).
    Info,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Failed => "FAILED",
            Status::Info => "info",
        })
    }
}

/// One check: what was probed, what it found, why, and the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Check {
    /// What was checked (`perf_event_paranoid`, `hardware events`, `/dev/mali0`).
    pub name: String,
    /// The verdict.
    pub status: Status,
    /// What the probe found, in a sentence.
    pub found: String,
    /// Why, where it did not work (the errno and what it means here).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub cause: Option<String>,
    /// The command (or step) that fixes it.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub fix: Option<String>,
}

impl Check {
    /// A check with a verdict and a finding, no cause or fix yet.
    pub fn new(name: impl Into<String>, status: Status, found: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status,
            found: found.into(),
            cause: None,
            fix: None,
        }
    }

    /// The same check with a cause.
    pub fn because(mut self, cause: impl Into<String>) -> Check {
        self.cause = Some(cause.into());
        self
    }

    /// The same check with a fix.
    pub fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }
}

/// Everything checked of one source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SourceReport {
    /// The source.
    pub source: SourceKind,
    /// Whether it gives counters here: no check failed.
    pub works: bool,
    /// The checks, in the order they were made.
    pub checks: Vec<Check>,
}

impl SourceReport {
    /// The report of `source` from its checks.
    pub fn new(source: SourceKind, checks: Vec<Check>) -> SourceReport {
        SourceReport {
            source,
            works: checks.iter().all(|c| c.status != Status::Failed),
            checks,
        }
    }
}

/// The exit status of `lizard doctor` when a source asked about does not work.
pub const EXIT_NOT_WORKING: i32 = 3;

/// The report of every source asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Report {
    /// The sources, in the order asked.
    pub sources: Vec<SourceReport>,
}

impl Report {
    /// A report of `sources`.
    pub fn new(sources: Vec<SourceReport>) -> Report {
        Report { sources }
    }

    /// Whether every source asked about works.
    pub fn all_work(&self) -> bool {
        self.sources.iter().all(|s| s.works)
    }

    /// 0 when every source asked about works, [`EXIT_NOT_WORKING`] otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.all_work() {
            0
        } else {
            EXIT_NOT_WORKING
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_works_unless_a_check_failed_and_the_exit_code_follows() {
        let ok = SourceReport::new(
            SourceKind::Cpu,
            vec![
                Check::new("a", Status::Ok, "fine"),
                Check::new("b", Status::Warning, "user space only"),
                Check::new("c", Status::Info, "armv8_pmuv3"),
            ],
        );
        assert!(ok.works);
        let failed = SourceReport::new(
            SourceKind::Gpu,
            vec![Check::new("d", Status::Failed, "no device")
                .because("no /dev/mali*")
                .fix("load mali_kbase")],
        );
        assert!(!failed.works);
        assert_eq!(Report::new(vec![ok.clone()]).exit_code(), 0);
        assert_eq!(Report::new(vec![ok, failed]).exit_code(), EXIT_NOT_WORKING);
        assert_eq!(SourceKind::TraceServer.to_string(), "trace server");
        assert_eq!(Status::Failed.to_string(), "FAILED");
    }
}
