//! What the local CPU counters count: a command, an existing process (all its threads), or whole CPUs;
//! never silently the `lizard` process itself.

mod backend;
mod counting;
mod cpus;
mod error;
mod fd_limit;
mod threads;

pub use backend::{open_backend, CommandWatch};
pub use counting::TargetCounters;
pub use cpus::{online_cpus, parse_cpu_list};
pub use error::TargetError;
pub use threads::process_ended;

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use crate::args::TargetArgs;
use cpus::format_cpu_list;

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
    /// The target the flags name, if any.
    pub fn from_args(args: &TargetArgs) -> Result<Option<Target>, TargetError> {
        if let Some(pid) = args.pid {
            return Ok(Some(Target::Pid(pid)));
        }
        if !args.command.is_empty() {
            return Ok(Some(Target::Command(args.command.clone())));
        }
        if let Some(cpus) = &args.cpu {
            return Ok(Some(Target::Cpus {
                cpus: cpus.0.clone(),
                per_cpu: args.per_cpu,
                all: false,
            }));
        }
        if args.system_wide || args.per_cpu {
            return Target::system_wide(args.per_cpu).map(Some);
        }
        Ok(None)
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

/// The exit status a shell would report for a command: its code, or 128 + the signal number.
pub fn shell_status(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
