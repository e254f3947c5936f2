#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

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
    /// What it needs is not on this machine (no Mali GPU, no CUDA driver, no PMU driver): nothing to fix
    /// in a setting.
    Absent,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Failed => "FAILED",
            Status::Info => "info",
            Status::Absent => "not here",
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

/// What a source's checks add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Verdict {
    /// Every check passed.
    Works,
    /// It gives counters, but part of it is not on this machine (software events without a PMU driver).
    Partly,
    /// It is not on this machine at all (no Mali GPU, no CUDA driver).
    Absent,
    /// It is here, and a check failed: a setting, a permission or a driver refuses.
    Broken,
}

impl Verdict {
    /// The verdict of `checks`: broken when one failed; else absent or partly when some are not here
    /// (partly when another passed); else works.
    pub fn of(checks: &[Check]) -> Verdict {
        let any = |status| checks.iter().any(|c| c.status == status);
        match (any(Status::Failed), any(Status::Absent), any(Status::Ok)) {
            (true, _, _) => Verdict::Broken,
            (false, true, true) => Verdict::Partly,
            (false, true, false) => Verdict::Absent,
            (false, false, _) => Verdict::Works,
        }
    }

    /// Whether the source gives counters here (works, or works in part).
    pub fn gives_counters(self) -> bool {
        matches!(self, Verdict::Works | Verdict::Partly)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Works => "works",
            Verdict::Partly => "works in part",
            Verdict::Absent => "not on this machine",
            Verdict::Broken => "does NOT work",
        })
    }
}

/// Everything checked of one source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct SourceReport {
    /// The source.
    pub source: SourceKind,
    /// What its checks add up to.
    pub verdict: Verdict,
    /// Whether it gives counters here ([`Verdict::gives_counters`]).
    pub works: bool,
    /// The checks, in the order they were made.
    pub checks: Vec<Check>,
}

impl SourceReport {
    /// The report of `source` from its checks.
    pub fn new(source: SourceKind, checks: Vec<Check>) -> SourceReport {
        let verdict = Verdict::of(&checks);
        SourceReport {
            source,
            verdict,
            works: verdict.gives_counters(),
            checks,
        }
    }

    /// The one line a person reads first: `CPU: works in part (hardware events: not here)`.
    pub fn headline(&self) -> String {
        let named = |status| {
            self.checks
                .iter()
                .filter(|c| c.status == status)
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self.verdict {
            Verdict::Works => format!("{}: works", self.source),
            Verdict::Partly => format!(
                "{}: works in part ({} not here)",
                self.source,
                named(Status::Absent)
            ),
            Verdict::Absent => format!(
                "{}: not on this machine ({})",
                self.source,
                self.checks
                    .iter()
                    .find(|c| c.status == Status::Absent)
                    .map_or("", |c| c.found.as_str())
            ),
            Verdict::Broken => format!(
                "{}: does NOT work ({} failed)",
                self.source,
                named(Status::Failed)
            ),
        }
    }
}

/// The exit status of `lizard doctor` when a source asked about does not work.
pub const EXIT_NOT_WORKING: i32 = 3;

/// The report of every source looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Report {
    /// The sources, in the order looked at.
    pub sources: Vec<SourceReport>,
    /// Whether the user named the sources (`--source`), rather than taking every source there is.
    pub asked: bool,
}

impl Report {
    /// A report of every source there is to look at: one that is not on this machine is no failure.
    pub fn new(sources: Vec<SourceReport>) -> Report {
        Report {
            sources,
            asked: false,
        }
    }

    /// A report of the sources the user named: each must give counters.
    pub fn asked(sources: Vec<SourceReport>) -> Report {
        Report {
            sources,
            asked: true,
        }
    }

    /// Whether every source counted gives counters: every source named ([`Report::asked`]), or else every
    /// source that is on this machine.
    pub fn all_work(&self) -> bool {
        self.sources.iter().all(|s| match self.asked {
            true => s.verdict.gives_counters(),
            false => s.verdict != Verdict::Broken,
        })
    }

    /// 0 when [`Report::all_work`], [`EXIT_NOT_WORKING`] otherwise.
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
        assert_eq!(failed.verdict, Verdict::Broken);
        assert_eq!(Report::new(vec![ok.clone()]).exit_code(), 0);
        assert_eq!(
            Report::new(vec![ok.clone(), failed]).exit_code(),
            EXIT_NOT_WORKING
        );
        // What is not on this machine fails only a report of sources the user named.
        let absent = SourceReport::new(
            SourceKind::TraceServer,
            vec![Check::new("CUDA driver", Status::Absent, "no CUDA driver")],
        );
        assert_eq!(absent.verdict, Verdict::Absent);
        assert_eq!(
            absent.headline(),
            "trace server: not on this machine (no CUDA driver)"
        );
        assert_eq!(Report::new(vec![ok.clone(), absent.clone()]).exit_code(), 0);
        assert_eq!(Report::asked(vec![absent]).exit_code(), EXIT_NOT_WORKING);
        // Software events without a PMU: works in part, which fails neither.
        let partly = SourceReport::new(
            SourceKind::Cpu,
            vec![
                Check::new("software events", Status::Ok, "counts"),
                Check::new("hardware events", Status::Absent, "no PMU driver"),
            ],
        );
        assert_eq!(partly.verdict, Verdict::Partly);
        assert!(partly.works);
        assert_eq!(
            partly.headline(),
            "CPU: works in part (hardware events not here)"
        );
        assert_eq!(Report::asked(vec![partly]).exit_code(), 0);
        assert_eq!(SourceKind::TraceServer.to_string(), "trace server");
        assert_eq!(Status::Failed.to_string(), "FAILED");
    }
}
