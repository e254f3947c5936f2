//! Counting another process, a command or whole CPUs: what a [`Target`] is, and [`TargetCounters`], its CPU
//! counters opened as one profiler per thread (a process, with every thread it has and creates) or per CPU
//! (CPU-wide counting), read together, summed or kept per CPU. Opening raises the soft open-file limit when
//! a process has more threads than descriptors allow, and says which setting refuses a target.
//!
//! [`CpuProfiler`](crate::CpuProfiler) counts the calling thread (or one given thread); this module builds on
//! it for every other target, never silently the calling process itself.

mod counters;
mod cpus;
mod error;
mod fd_limit;
mod kernel_sampler;
mod threads;

pub use crate::cpu_list::{format_cpu_list, parse_cpu_list, CpuListError};
pub use counters::{Counted, Series, SeriesReading, TargetCounters};
pub use cpus::online_cpus;
pub use error::TargetError;
pub use kernel_sampler::{CpuPlan, KernelSampler, PlannedEvent, RING_SPAN, TIMER_KEY};
pub use threads::process_ended;

/// How much of a command line the scope of its counters shows.
const SHOWN_COMMAND_CHARS: usize = 32;

/// What is counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A command started here and every thread and process it creates, from its first instruction.
    Command(Vec<String>),
    /// An existing process: a profiler per thread of `/proc/PID/task` (perf's `inherit` follows only
    /// threads created later), and through `inherit` every thread or process those create.
    Pid(i32),
    /// Everything that runs on these CPUs (CPU-wide counters), summed or one series per CPU.
    Cpus {
        /// The CPUs.
        cpus: Vec<u32>,
        /// One series per CPU instead of the sum.
        per_cpu: bool,
        /// Whether these are all the online CPUs (`--system-wide`, the default).
        all: bool,
    },
    /// The `lizard` process itself: only to find which counters exist (`lizard list` where CPU-wide
    /// counting is refused), labelled so.
    Probe,
}

impl Target {
    /// A target in text, for settings such as an environment variable: `pid:PID` (a process, all its
    /// threads), `system` (every online CPU, summed) or `cpus:LIST` (these CPUs, summed; `LIST` in the
    /// kernel's notation, `0-3,6`). Anything else is [`TargetError::InvalidSpec`]; `system` reads which CPUs
    /// are online.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let invalid = |reason: String| TargetError::InvalidSpec {
            text: text.to_owned(),
            reason,
        };
        let spec = text.trim();
        if spec == "system" {
            return Target::system_wide(false);
        }
        if let Some(pid) = spec.strip_prefix("pid:") {
            return match pid.trim().parse::<i32>() {
                Ok(pid) if pid > 0 => Ok(Target::Pid(pid)),
                _ => Err(invalid(format!("'{pid}' is not a process id"))),
            };
        }
        if let Some(list) = spec.strip_prefix("cpus:") {
            return Ok(Target::Cpus {
                cpus: parse_cpu_list(list).map_err(|err| invalid(err.to_string()))?,
                per_cpu: false,
                all: false,
            });
        }
        Err(invalid("unknown form".to_owned()))
    }

    /// Every online CPU.
    pub fn system_wide(per_cpu: bool) -> Result<Target, TargetError> {
        Ok(Target::Cpus {
            cpus: online_cpus()?,
            per_cpu,
            all: true,
        })
    }

    /// What is counted, for people: the scope shown beside every local CPU counter.
    pub fn scope(&self) -> String {
        match self {
            Target::Command(argv) => {
                let mut text = argv.join(" ");
                if let Some((cut, _)) = text.char_indices().nth(SHOWN_COMMAND_CHARS) {
                    text.truncate(cut);
                    text.push('…');
                }
                format!("command '{text}' and its children")
            }
            Target::Pid(pid) => format!("process {pid}, all threads"),
            Target::Cpus { cpus, per_cpu, all } => {
                let which = if *all {
                    format!("system-wide, {} CPUs", cpus.len())
                } else {
                    format!("CPUs {}", format_cpu_list(cpus))
                };
                let how = if *per_cpu { "per CPU" } else { "summed" };
                format!("{which}, {how}")
            }
            Target::Probe => "this process, a probe of what can be counted".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_from_text() {
        assert_eq!(Target::parse("pid:42").unwrap(), Target::Pid(42));
        assert_eq!(
            Target::parse(" cpus:0-2,5 ").unwrap(),
            Target::Cpus {
                cpus: vec![0, 1, 2, 5],
                per_cpu: false,
                all: false
            }
        );
        if let Ok(online) = online_cpus() {
            assert!(matches!(
                Target::parse("system").unwrap(),
                Target::Cpus { cpus, per_cpu: false, all: true } if cpus == online
            ));
        }
        for bad in [
            "",
            "pid:",
            "pid:-3",
            "pid:x",
            "cpus:",
            "cpus:3-1",
            "process:1",
            "System",
        ] {
            let err = Target::parse(bad).unwrap_err();
            assert!(
                matches!(&err, TargetError::InvalidSpec { text, .. } if text == bad),
                "{bad}: {err:?}"
            );
            assert!(err
                .to_string()
                .contains("expected pid:PID, system or cpus:LIST"));
        }
    }
}
