//! [`TargetCounters`]: the CPU counters and Arm PMU events of a [`Target`], opened as one perf profiler per
//! thread (an existing process) or per CPU (CPU-wide counting), read together and summed or kept per CPU;
//! an event counted on several core types is also kept per core type.

use std::collections::BTreeSet;
use std::process::{Child, Command};
use std::sync::Arc;

use rustix::io::Errno;

use crate::cpu::{EventStatus, EventUnavailable, PartStatus, PmuEvent};
use crate::sys::{LinuxPerf, PerfSys};
use crate::{
    CpuConfig, CpuCounter, CpuError, CpuProfiler, CpuTarget, KernelCounting, UnavailableReason,
    Unit,
};

use super::cpus::online_cpus;
use super::error::TargetError;
use super::fd_limit::{open_file_limits, raise_open_file_limit};
use super::kernel_sampler::{CpuPlan, PlannedEvent};
use super::threads::threads;
use super::Target;
use crate::cpu_list::format_cpu_list;

/// How many times the threads of a process are listed again while new ones keep appearing between a
/// listing and the opening of their counters. A thread created after its creator's counters opened is
/// counted by `inherit`, so the listing only has to settle once.
const THREAD_SCANS: usize = 8;

/// What a series counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// One of HWCPipe's counters (or a software counter).
    Counter(CpuCounter),
    /// An Arm PMU event, by its position in [`TargetCounters::events`]: summed over the core types that
    /// count it (`pmu` `None`), or on one of them (its position in the system's PMUs).
    Event {
        /// The event.
        event: usize,
        /// The core type, for one core type's part.
        pmu: Option<usize>,
    },
}

/// One value stream of a target: a counter or an event, on one CPU when counting per CPU, on one core type
/// when an event is counted on several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Series {
    /// What it counts.
    pub of: Counted,
    /// The CPU, when each CPU is a series of its own.
    pub cpu: Option<u32>,
}

impl Series {
    /// The counter this series counts, when it is one of the counters.
    pub fn counter(&self) -> Option<CpuCounter> {
        match self.of {
            Counted::Counter(c) => Some(c),
            Counted::Event { .. } => None,
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
    /// Nanoseconds on a counter since `run`, summed over the threads, CPUs or core types.
    pub time_running: u64,
    /// Nanoseconds it could have been on one since `run`: the time enabled, or for an event of one core
    /// type the time on those cores. `time_running / time_counting` is perf's `(50.00%)`.
    pub time_counting: u64,
}

impl SeriesReading {
    /// The share of the time it could count that it was counted, 0 to 1; `None` before it had any.
    pub fn counted_share(&self) -> Option<f64> {
        (self.time_counting > 0)
            .then(|| (self.time_running as f64 / self.time_counting as f64).min(1.0))
    }
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
    /// The events asked for, with what became of them (for the first thread or CPU that counts each).
    events: Vec<EventStatus>,
    /// The names of the system's PMUs, by position.
    pmu_names: Vec<String>,
}

impl TargetCounters {
    /// Opens `wanted` and the Arm PMU events `events` for `target` with the real kernel, counting kernel
    /// code as `kernel` says.
    pub fn open(
        target: &Target,
        wanted: &[CpuCounter],
        events: &[PmuEvent],
        kernel: KernelCounting,
    ) -> Result<Self, TargetError> {
        // One descriptor per counter per thread or CPU: a process of a few hundred threads passes the
        // usual soft limit of 1024. Without the raise, opening still runs and a shortfall is named.
        raise_open_file_limit();
        Self::open_with(target, wanted, events, kernel, Arc::new(LinuxPerf))
    }

    /// Opens `wanted` and `events` for `target` through `sys` (a kernel that refuses, in tests).
    pub fn open_with(
        target: &Target,
        wanted: &[CpuCounter],
        events: &[PmuEvent],
        kernel: KernelCounting,
        sys: Arc<dyn PerfSys>,
    ) -> Result<Self, TargetError> {
        let open = |cpu_target: CpuTarget| {
            let config = CpuConfig::new(wanted)
                .events(events.to_vec())
                .target(cpu_target)
                .kernel(kernel);
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
            Target::Pid(pid) => open_threads(*pid, wanted, events, kernel, &sys, target)?,
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
            let events = p
                .profiler
                .events()
                .iter()
                .filter_map(|status| {
                    let refused = status.not_counted().find(|(_, why)| {
                        matches!(why, EventUnavailable::Refused { reason: UnavailableReason::Rejected { errno }, .. }
                            if *errno == Errno::MFILE.raw_os_error() || *errno == Errno::NFILE.raw_os_error())
                    })?;
                    Some((status.event.name.clone(), refused.1.clone()))
                })
                .collect();
            let error = CpuError::NoCounterAvailable {
                unavailable,
                events,
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
        let mut series: Vec<Series> = if per_cpu {
            parts
                .iter()
                .flat_map(|p| {
                    counters.iter().map(|&counter| Series {
                        of: Counted::Counter(counter),
                        cpu: p.cpu,
                    })
                })
                .collect()
        } else {
            counters
                .iter()
                .map(|&counter| Series {
                    of: Counted::Counter(counter),
                    cpu: None,
                })
                .collect()
        };
        let pmu_names: Vec<String> =
            events
                .iter()
                .flat_map(|e| &e.placements)
                .fold(Vec::new(), |mut names, placement| {
                    if names.len() <= placement.pmu {
                        names.resize(placement.pmu + 1, String::new());
                    }
                    names[placement.pmu] = placement.pmu_name.clone();
                    names
                });
        // An event is counted where any thread or CPU counts it: a CPU-wide counting of a system of several
        // core types counts each event on the CPUs whose PMU has it.
        let mut statuses = Vec::with_capacity(events.len());
        for (index, event) in events.iter().enumerate() {
            let counting: Vec<&Part> = parts
                .iter()
                .filter(|p| {
                    p.profiler
                        .events()
                        .get(index)
                        .is_some_and(EventStatus::is_counted)
                })
                .collect();
            let status = counting
                .first()
                .copied()
                .or(parts.first())
                .and_then(|p| p.profiler.events().get(index).cloned())
                .unwrap_or_else(|| EventStatus {
                    event: event.clone(),
                    parts: Vec::new(),
                });
            if !counting.is_empty() {
                if per_cpu {
                    series.extend(counting.iter().map(|p| Series {
                        of: Counted::Event {
                            event: index,
                            pmu: None,
                        },
                        cpu: p.cpu,
                    }));
                } else {
                    series.push(Series {
                        of: Counted::Event {
                            event: index,
                            pmu: None,
                        },
                        cpu: None,
                    });
                    // One series per core type, where several count it.
                    let mut pmus: Vec<usize> = event
                        .placements
                        .iter()
                        .filter(|placement| {
                            counting.iter().any(|p| {
                                p.profiler.events()[index]
                                    .event
                                    .placements
                                    .iter()
                                    .zip(&p.profiler.events()[index].parts)
                                    .any(|(pl, part)| {
                                        pl.pmu == placement.pmu
                                            && matches!(part, PartStatus::Counted { .. })
                                    })
                            })
                        })
                        .map(|placement| placement.pmu)
                        .collect();
                    pmus.sort_unstable();
                    pmus.dedup();
                    if pmus.len() > 1 {
                        series.extend(pmus.into_iter().map(|pmu| Series {
                            of: Counted::Event {
                                event: index,
                                pmu: Some(pmu),
                            },
                            cpu: None,
                        }));
                    }
                }
            }
            statuses.push(status);
        }
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
            events: statuses,
            pmu_names,
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

    /// The Arm PMU events asked for, in order, each with the core types it is counted on and why not on
    /// the others (as the first thread or CPU that counts it opened it).
    pub fn events(&self) -> &[EventStatus] {
        &self.events
    }

    /// The name of `series`: the counter's or the event's (`INST_RETIRED`), perf's spelling for one core
    /// type's part (`armv8_cortex_a55/INST_RETIRED/`), with `@cpuN` for one CPU's (`TaskClock@cpu1`).
    pub fn series_name(&self, series: &Series) -> String {
        let base = self.base_name(series);
        match series.cpu {
            Some(cpu) => format!("{base}@cpu{cpu}"),
            None => base,
        }
    }

    /// The name of what `series` counts, without its CPU: the counter's or event's name, or perf's spelling
    /// of one core type's part.
    pub fn base_name(&self, series: &Series) -> String {
        match series.of {
            Counted::Counter(c) => c.name().to_owned(),
            Counted::Event { event, pmu } => {
                let name = self
                    .events
                    .get(event)
                    .map_or("?", |e| e.event.name.as_str());
                match pmu.and_then(|p| self.pmu_names.get(p)) {
                    Some(pmu) => format!("{pmu}/{name}/"),
                    None => name.to_owned(),
                }
            }
        }
    }

    /// What `series` counts, in words.
    pub fn series_description(&self, series: &Series) -> String {
        match series.of {
            Counted::Counter(c) => c.description().to_owned(),
            Counted::Event { event, pmu } => {
                let Some(status) = self.events.get(event) else {
                    return String::new();
                };
                let mut text = status
                    .event
                    .description
                    .clone()
                    .unwrap_or_else(|| format!("Arm PMU event {}", status.event.name));
                if let Some(placement) =
                    pmu.and_then(|p| status.event.placements.iter().find(|pl| pl.pmu == p))
                {
                    text.push_str(&format!(" (on the {} cores)", placement.label));
                }
                text
            }
        }
    }

    /// The unit of `series`' values.
    pub fn series_unit(&self, series: &Series) -> Unit {
        match series.of {
            Counted::Counter(c) => c.unit(),
            Counted::Event { event, .. } => self
                .events
                .get(event)
                .map_or(Unit::Events, |e| e.event.unit()),
        }
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
                let (delta, running, counting, multiplexed) = match series.of {
                    Counted::Counter(counter) => match sample.reading(counter) {
                        Some(r) => (r.delta, r.time_running, r.time_enabled, r.is_multiplexed()),
                        None => continue,
                    },
                    Counted::Event { event, pmu: None } => match sample.event(event) {
                        Some(r) => (r.delta, r.time_running, r.time_on_pmu, r.is_multiplexed()),
                        None => continue,
                    },
                    Counted::Event {
                        event,
                        pmu: Some(pmu),
                    } => match sample.event_parts(event).find(|r| r.pmu == pmu) {
                        Some(r) => (r.delta, r.time_running, r.time_on_pmu, r.is_multiplexed()),
                        None => continue,
                    },
                };
                reading.delta = reading.delta.saturating_add(delta);
                reading.time_running = reading.time_running.saturating_add(running);
                reading.time_counting = reading.time_counting.saturating_add(counting);
                reading.multiplexed |= multiplexed;
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
    /// [`series`](Self::series), which are the keys of their values): for each CPU, the counters and events
    /// to sample there (an event on the CPU's own PMU). `None` for a target that is not CPU-wide (a task's
    /// timer fires only while the task runs), and when one core type's part of an event is enabled (it is
    /// a sum over that type's CPUs, which the kernel's records do not make).
    pub fn kernel_sampling_plan(&self, enabled: &[usize]) -> Option<Vec<CpuPlan>> {
        let mut plan = Vec::with_capacity(self.parts.len());
        for part in &self.parts {
            let cpu = part.cpu?;
            let mut counters = Vec::new();
            for &index in enabled {
                let Some(series) = self.series.get(index) else {
                    continue;
                };
                let key = i32::try_from(index).ok()?;
                if series.cpu.is_some_and(|c| c != cpu) {
                    continue;
                }
                match series.of {
                    Counted::Counter(counter) => {
                        counters.push((key, PlannedEvent::of_counter(counter)?));
                    }
                    Counted::Event { pmu: Some(_), .. } => return None,
                    Counted::Event { event, pmu: None } => {
                        let status = part.profiler.events().get(event)?;
                        let counted = status.event.placements.iter().zip(&status.parts).find_map(
                            |(placement, part)| match (part, &placement.status) {
                                (PartStatus::Counted { .. }, Ok((code, _))) => Some(PlannedEvent {
                                    type_: placement.perf_type,
                                    config: u64::from(*code),
                                    hardware: true,
                                }),
                                _ => None,
                            },
                        );
                        counters.extend(counted.map(|planned| (key, planned)));
                    }
                }
            }
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
    events: &[PmuEvent],
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
                .events(events.to_vec())
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
    error.open_errnos().contains(&Errno::SRCH.raw_os_error())
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
    let errnos = error.open_errnos();
    errnos.contains(&Errno::MFILE.raw_os_error()) || errnos.contains(&Errno::NFILE.raw_os_error())
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
            let err = TargetCounters::open_with(
                &own,
                &CpuCounter::SOFTWARE,
                &[],
                KernelCounting::Auto,
                sys,
            )
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
            &[],
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
    fn series_are_named_after_their_cpu_and_core_type() {
        use crate::cpu::sim::FakePmu;
        use crate::cpu::CpuPmus;
        use crate::sys::arm_pmu::ArmPmu;

        let online = online_cpus().unwrap();
        let Some(&cpu) = online.first() else { return };
        let kernel = FakePerf::new(-1);
        let pmu = |name: &str, perf_type, cpus: Vec<u32>| FakePmu {
            pmu: ArmPmu {
                name: name.into(),
                perf_type,
                cpus,
                events: vec![("inst_retired".into(), 0x08)],
                formats: Vec::new(),
                slots: None,
            },
            midr: 0x410f_d083,
            counters: 6,
        };
        // Two core types: the first online CPU alone is of the first.
        let others: Vec<u32> = online.iter().copied().filter(|&c| c != cpu).collect();
        kernel.set_arm_pmus(vec![
            pmu("armv8_little", 8, vec![cpu]),
            pmu("armv8_big", 9, others),
        ]);
        let kernel = Arc::new(kernel);
        let pmus = CpuPmus::from_kernel(&*kernel).unwrap();
        let events = pmus.resolve_all(&["inst_retired".to_owned()]).unwrap();
        let per_cpu = Target::Cpus {
            cpus: vec![cpu],
            per_cpu: true,
            all: false,
        };
        let counters = TargetCounters::open_with(
            &per_cpu,
            &[CpuCounter::TaskClock],
            &events,
            KernelCounting::Auto,
            kernel.clone(),
        )
        .unwrap();
        let names: Vec<String> = counters
            .series()
            .iter()
            .map(|s| counters.series_name(s))
            .collect();
        assert_eq!(
            names,
            [
                format!("TaskClock@cpu{cpu}"),
                format!("INST_RETIRED@cpu{cpu}")
            ]
        );
        // A task on both core types: the sum and each core type's part, in perf's spelling.
        let task =
            TargetCounters::open_with(&Target::Probe, &[], &events, KernelCounting::Auto, kernel)
                .unwrap();
        let names: Vec<String> = task.series().iter().map(|s| task.series_name(s)).collect();
        if online.len() > 1 {
            assert_eq!(
                names,
                [
                    "INST_RETIRED",
                    "armv8_little/INST_RETIRED/",
                    "armv8_big/INST_RETIRED/"
                ]
            );
            let little = task.series()[1];
            assert_eq!(task.series_unit(&little), Unit::Events);
            assert!(task
                .series_description(&little)
                .ends_with("(on the armv8_little cores)"));
        }
    }
}
