//! [`TargetCounters`]: the CPU counters of a [`Target`], opened as one perf profiler per thread (an
//! existing process) or per CPU (CPU-wide counting), read together and summed or kept per CPU.

use std::collections::BTreeSet;
use std::process::{Child, Command};
use std::sync::Arc;

use rustix::io::Errno;

use crate::sys::{LinuxPerf, PerfSys};
use crate::{
    CpuConfig, CpuCounter, CpuError, CpuProfiler, CpuTarget, KernelCounting, UnavailableReason,
};

use super::cpus::online_cpus;
use super::error::TargetError;
use super::fd_limit::{open_file_limits, raise_open_file_limit};
use super::kernel_sampler::CpuPlan;
use super::threads::threads;
use super::Target;
use crate::cpu_list::format_cpu_list;

/// How many times the threads of a process are listed again while new ones keep appearing between a
/// listing and the opening of their counters. A thread created after its creator's counters opened is
/// counted by `inherit`, so the listing only has to settle once.
const THREAD_SCANS: usize = 8;

/// One value stream of a target: a counter, on one CPU when counting per CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Series {
    /// The counter.
    pub counter: CpuCounter,
    /// The CPU, when each CPU is a series of its own.
    pub cpu: Option<u32>,
}

impl Series {
    /// The counter name, with `@cpuN` for a per-CPU series (`TaskClock@cpu1`).
    pub fn name(&self) -> String {
        match self.cpu {
            Some(cpu) => format!("{}@cpu{cpu}", self.counter.name()),
            None => self.counter.name().to_owned(),
        }
    }
}

/// The latest values of one series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeriesReading {
    /// The change at the last sample (summed over the threads or CPUs).
    pub delta: u64,
    /// The sum of every change since `run`.
    pub total: u64,
    /// Whether any part of any sample was scaled because the kernel multiplexed the counter.
    pub multiplexed: bool,
}

/// One profiler: a thread, a CPU, a command or the calling process.
#[derive(Debug)]
struct Part {
    profiler: CpuProfiler,
    cpu: Option<u32>,
}

/// The CPU counters of a target.
///
/// Call order: [`open`](Self::open) → [`run`](Self::run) → [`sample`](Self::sample) any number of times
/// → [`stop`](Self::stop). Only counters every thread or CPU could open are listed; the others are in
/// [`unavailable`](Self::unavailable) with the reason.
#[derive(Debug)]
pub struct TargetCounters {
    scope: String,
    /// The program of a command target, for the error when it cannot start.
    program: Option<String>,
    parts: Vec<Part>,
    series: Vec<Series>,
    readings: Vec<SeriesReading>,
    unavailable: Vec<(CpuCounter, String)>,
}

impl TargetCounters {
    /// Opens `wanted` for `target` with the real kernel, counting kernel code as `kernel` says.
    pub fn open(
        target: &Target,
        wanted: &[CpuCounter],
        kernel: KernelCounting,
    ) -> Result<Self, TargetError> {
        // One descriptor per counter per thread or CPU: a process of a few hundred threads passes the
        // usual soft limit of 1024. Without the raise, opening still runs and a shortfall is named.
        raise_open_file_limit();
        Self::open_with(target, wanted, kernel, Arc::new(LinuxPerf))
    }

    /// Opens `wanted` for `target` through `sys` (a kernel that refuses, in tests).
    pub fn open_with(
        target: &Target,
        wanted: &[CpuCounter],
        kernel: KernelCounting,
        sys: Arc<dyn PerfSys>,
    ) -> Result<Self, TargetError> {
        let open = |cpu_target: CpuTarget| {
            let config = CpuConfig::new(wanted).target(cpu_target).kernel(kernel);
            CpuProfiler::with_sys(config, Arc::clone(&sys)).map_err(|e| opening_error(target, e))
        };
        let parts = match target {
            Target::Command(argv) => {
                let (program, args) = argv.split_first().ok_or_else(|| TargetError::Spawn {
                    program: String::new(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "no command given",
                    ),
                })?;
                let mut command = Command::new(program);
                command.args(args);
                vec![Part {
                    profiler: open(CpuTarget::Spawn(command))?,
                    cpu: None,
                }]
            }
            Target::Pid(pid) => open_threads(*pid, wanted, kernel, &sys, target)?,
            Target::Cpus { cpus, .. } => {
                let online = online_cpus()?;
                let mut parts = Vec::with_capacity(cpus.len());
                for &cpu in cpus {
                    if !online.contains(&cpu) {
                        return Err(TargetError::CpuOffline {
                            cpu,
                            online: format_cpu_list(&online),
                        });
                    }
                    parts.push(Part {
                        profiler: open(CpuTarget::Cpu(cpu))?,
                        cpu: Some(cpu),
                    });
                }
                parts
            }
            Target::Probe => vec![Part {
                profiler: open(CpuTarget::CallingThread)?,
                cpu: None,
            }],
        };
        // A counter that some thread or CPU could not open for want of a descriptor is not unavailable:
        // the whole count would be short, so it is an error.
        let short = parts.iter().find_map(|p| {
            let unavailable: Vec<_> = wanted
                .iter()
                .filter_map(|&c| p.profiler.availability(c).err().map(|r| (c, r)))
                .collect();
            let error = CpuError::NoCounterAvailable {
                unavailable,
                events: Vec::new(),
            };
            out_of_files(&error).then_some(error)
        });
        if let Some(source) = short {
            return Err(TargetError::TooManyOpenFiles {
                what: target.scope(),
                limit: open_file_limits().0,
                source,
            });
        }
        let per_cpu = matches!(target, Target::Cpus { per_cpu: true, .. });
        let mut counters = Vec::new();
        let mut unavailable = Vec::new();
        for &counter in wanted {
            if counters.contains(&counter) {
                continue;
            }
            let missing = parts
                .iter()
                .find_map(|p| p.profiler.availability(counter).err());
            match missing {
                None => counters.push(counter),
                Some(reason) => unavailable.push((counter, reason.to_string())),
            }
        }
        let series: Vec<Series> = if per_cpu {
            parts
                .iter()
                .flat_map(|p| {
                    counters.iter().map(|&counter| Series {
                        counter,
                        cpu: p.cpu,
                    })
                })
                .collect()
        } else {
            counters
                .iter()
                .map(|&counter| Series { counter, cpu: None })
                .collect()
        };
        Ok(TargetCounters {
            scope: target.scope(),
            program: match target {
                Target::Command(argv) => argv.first().cloned(),
                _ => None,
            },
            readings: vec![SeriesReading::default(); series.len()],
            series,
            parts,
            unavailable,
        })
    }

    /// What is counted, for people (`process 42, all threads`).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The series [`sample`](Self::sample) reads, in order.
    pub fn series(&self) -> &[Series] {
        &self.series
    }

    /// The wanted counters that are not counted, with the reason.
    pub fn unavailable(&self) -> &[(CpuCounter, String)] {
        &self.unavailable
    }

    /// Whether kernel code is left out of some of the counts (the kernel allowed only user space).
    pub fn kernel_excluded(&self) -> bool {
        self.parts.iter().any(|p| p.profiler.kernel_excluded())
    }

    /// Starts counting (and lets a command start running).
    pub fn run(&mut self) -> Result<(), TargetError> {
        self.readings.fill(SeriesReading::default());
        for part in &mut self.parts {
            part.profiler.run().map_err(|e| match e {
                CpuError::Spawn(source) => TargetError::Spawn {
                    program: self.program.clone().unwrap_or_else(|| self.scope.clone()),
                    source,
                },
                source => TargetError::Counters {
                    what: self.scope.clone(),
                    source,
                },
            })?;
        }
        Ok(())
    }

    /// Reads every thread or CPU once; the readings are in [`series`](Self::series) order.
    pub fn sample(&mut self) -> Result<&[SeriesReading], TargetError> {
        for reading in &mut self.readings {
            reading.delta = 0;
        }
        let per_counter = self.series.iter().all(|s| s.cpu.is_none());
        for part in &mut self.parts {
            let sample = part
                .profiler
                .sample()
                .map_err(|source| TargetError::Counters {
                    what: self.scope.clone(),
                    source,
                })?;
            for (series, reading) in self.series.iter().zip(&mut self.readings) {
                if !per_counter && series.cpu != part.cpu {
                    continue;
                }
                if let Some(r) = sample.reading(series.counter) {
                    reading.delta = reading.delta.saturating_add(r.delta);
                    reading.multiplexed |= r.is_multiplexed();
                }
            }
        }
        for reading in &mut self.readings {
            reading.total = reading.total.saturating_add(reading.delta);
        }
        Ok(&self.readings)
    }

    /// The latest readings, in [`series`](Self::series) order.
    pub fn readings(&self) -> &[SeriesReading] {
        &self.readings
    }

    /// Stops counting; errors leave nothing to undo.
    pub fn stop(&mut self) {
        for part in &mut self.parts {
            let _ = part.profiler.stop();
        }
    }

    /// The plan for a [`KernelSampler`](super::KernelSampler) of the `enabled` series (indices into
    /// [`series`](Self::series), which are the keys of their values): for each CPU, the counters to sample
    /// there. `None` for a target that is not CPU-wide (a task's timer fires only while the task runs).
    pub fn kernel_sampling_plan(&self, enabled: &[usize]) -> Option<Vec<CpuPlan>> {
        let mut plan = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let cpu = part.cpu?;
            let counters = enabled
                .iter()
                .filter_map(|&index| {
                    let series = self.series.get(index)?;
                    let key = i32::try_from(index).ok()?;
                    (series.cpu.is_none() || series.cpu == Some(cpu))
                        .then_some((key, series.counter))
                })
                .collect();
            plan.push(CpuPlan { cpu, counters });
        }
        Some(plan)
    }

    /// The command being counted, once [`run`](Self::run) let it start.
    pub fn child(&mut self) -> Option<&mut Child> {
        self.parts.first_mut()?.profiler.child()
    }
}

/// Opens one profiler per thread of `pid`, listing the threads again until no new one appears.
fn open_threads(
    pid: i32,
    wanted: &[CpuCounter],
    kernel: KernelCounting,
    sys: &Arc<dyn PerfSys>,
    target: &Target,
) -> Result<Vec<Part>, TargetError> {
    let mut seen = BTreeSet::new();
    let mut parts = Vec::new();
    for _ in 0..THREAD_SCANS {
        let fresh: Vec<i32> = threads(pid)?
            .into_iter()
            .filter(|tid| !seen.contains(tid))
            .collect();
        if fresh.is_empty() {
            break;
        }
        for tid in fresh {
            seen.insert(tid);
            let config = CpuConfig::new(wanted)
                .target(CpuTarget::Pid(tid))
                .kernel(kernel);
            match CpuProfiler::with_sys(config, Arc::clone(sys)) {
                Ok(profiler) => parts.push(Part {
                    profiler,
                    cpu: None,
                }),
                // The thread ended between the listing and the opening: nothing of it to count.
                Err(e) if thread_gone(&e) => {}
                Err(e) => return Err(opening_error(target, e)),
            }
        }
    }
    if parts.is_empty() {
        return Err(TargetError::NoProcess(pid));
    }
    Ok(parts)
}

/// Whether the thread no longer exists: some open failed with `ESRCH` (the others may have failed
/// for reasons of their own, such as an Arm event on another architecture, without ever reaching
/// the kernel).
fn thread_gone(error: &CpuError) -> bool {
    match error {
        CpuError::NoCounterAvailable { unavailable, .. } => unavailable.iter().any(
            |(_, r)| matches!(r, UnavailableReason::Rejected { errno } if *errno == Errno::SRCH.raw_os_error()),
        ),
        _ => false,
    }
}

/// The error of a profiler that did not open, phrased for the target.
fn opening_error(target: &Target, error: CpuError) -> TargetError {
    match (target, error) {
        (
            _,
            CpuError::CpuWideDenied {
                paranoid, source, ..
            },
        )
        | (Target::Cpus { .. }, CpuError::PermissionDenied { paranoid, source }) => {
            TargetError::SystemWideRefused { paranoid, source }
        }
        (Target::Pid(pid), CpuError::PermissionDenied { paranoid, source }) => {
            TargetError::ProcessRefused {
                pid: *pid,
                paranoid,
                source,
            }
        }
        (_, CpuError::PermissionDenied { paranoid, source }) => {
            TargetError::CommandRefused { paranoid, source }
        }
        (Target::Command(argv), CpuError::Spawn(source)) => TargetError::Spawn {
            program: argv.first().cloned().unwrap_or_default(),
            source,
        },
        (target, source) if out_of_files(&source) => TargetError::TooManyOpenFiles {
            what: target.scope(),
            limit: open_file_limits().0,
            source,
        },
        (target, source) => TargetError::Counters {
            what: target.scope(),
            source,
        },
    }
}

/// Whether an open failed because the process (`EMFILE`) or the system (`ENFILE`) has no descriptor
/// left.
fn out_of_files(error: &CpuError) -> bool {
    match error {
        CpuError::NoCounterAvailable { unavailable, .. } => unavailable.iter().any(|(_, r)| {
            matches!(r, UnavailableReason::Rejected { errno } if *errno == Errno::MFILE.raw_os_error() || *errno == Errno::NFILE.raw_os_error())
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sim::FakePerf;

    /// The simulated kernel at `perf_event_paranoid` `paranoid`, opening `left` events and refusing every
    /// later open with `errno`.
    fn opening(left: usize, errno: i32, paranoid: i32) -> Arc<FakePerf> {
        let kernel = FakePerf::new(paranoid);
        kernel.faults(|f| f.open_limit = Some((left, errno)));
        Arc::new(kernel)
    }

    /// The simulated kernel refusing every open with `EACCES`, at `perf_event_paranoid` 3.
    fn refusing() -> Arc<FakePerf> {
        opening(0, Errno::ACCESS.raw_os_error(), 3)
    }

    #[test]
    fn running_out_of_descriptors_is_named_not_reported_as_unavailable_counters() {
        let own = Target::Pid(std::process::id() as i32);
        // None opens (the profiler fails), or the group leader opens and the rest do not.
        for left in [0, 1] {
            let sys = opening(left, Errno::MFILE.raw_os_error(), -1);
            let err =
                TargetCounters::open_with(&own, &CpuCounter::SOFTWARE, KernelCounting::Auto, sys)
                    .unwrap_err();
            assert!(
                matches!(err, TargetError::TooManyOpenFiles { ref what, .. } if what.contains("all threads")),
                "{left} descriptors: {err:?}"
            );
            assert!(err.to_string().contains("ulimit -Hn"), "{err}");
        }
    }

    fn refused(target: &Target) -> TargetError {
        TargetCounters::open_with(
            target,
            &CpuCounter::SOFTWARE,
            KernelCounting::Auto,
            refusing(),
        )
        .unwrap_err()
    }

    #[test]
    fn a_thread_is_gone_when_the_kernel_found_no_such_process_beside_static_refusals() {
        let gone = CpuError::NoCounterAvailable {
            unavailable: vec![
                (
                    CpuCounter::TaskClock,
                    UnavailableReason::Rejected {
                        errno: Errno::SRCH.raw_os_error(),
                    },
                ),
                (
                    CpuCounter::L1Accesses,
                    UnavailableReason::NotOnThisArchitecture,
                ),
            ],
            events: Vec::new(),
        };
        assert!(thread_gone(&gone));
        let refused = CpuError::NoCounterAvailable {
            unavailable: vec![
                (
                    CpuCounter::TaskClock,
                    UnavailableReason::Rejected {
                        errno: Errno::INVAL.raw_os_error(),
                    },
                ),
                (
                    CpuCounter::L1Accesses,
                    UnavailableReason::NotOnThisArchitecture,
                ),
            ],
            events: Vec::new(),
        };
        assert!(!thread_gone(&refused));
    }

    #[test]
    fn each_refusal_names_its_target_and_the_paranoid_level() {
        let own = std::process::id() as i32;
        let err = refused(&Target::Pid(own));
        assert!(
            matches!(err, TargetError::ProcessRefused { pid, paranoid: Some(3), .. } if pid == own),
            "{err:?}"
        );
        let cpus = Target::Cpus {
            cpus: vec![0],
            per_cpu: false,
            all: false,
        };
        let err = refused(&cpus);
        assert!(
            matches!(
                err,
                TargetError::SystemWideRefused {
                    paranoid: Some(3),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.is_refusal());
        let err = refused(&Target::Command(vec!["true".into()]));
        assert!(
            matches!(
                err,
                TargetError::CommandRefused {
                    paranoid: Some(3),
                    ..
                }
            ),
            "{err:?}"
        );
        let source = std::error::Error::source(&err).expect("the kernel's answer is kept");
        assert!(source.to_string().contains("Permission denied"), "{source}");
    }

    #[test]
    fn a_process_that_does_not_exist_and_an_empty_command_are_named() {
        let err = refused(&Target::Pid(5_000_000));
        assert!(matches!(err, TargetError::NoProcess(5_000_000)), "{err:?}");
        let err = refused(&Target::Command(Vec::new()));
        assert!(matches!(err, TargetError::Spawn { .. }), "{err:?}");
    }

    #[test]
    fn per_cpu_series_are_named_after_their_cpu() {
        let series = Series {
            counter: CpuCounter::TaskClock,
            cpu: Some(3),
        };
        assert_eq!(series.name(), "TaskClock@cpu3");
        assert_eq!(
            Series {
                cpu: None,
                ..series
            }
            .name(),
            "TaskClock"
        );
    }
}
