//! [`count`]: one counting of a target, from start to end.

use std::time::{Duration, Instant};

use hwcpipe::counting::{self, Target, TargetCounters};
use hwcpipe::cpu::metrics::CounterTotal;
use hwcpipe::cpu::METRICS;
use hwcpipe::{CpuCounter, KernelCounting};

use super::child_times::ChildTimes;
use super::choice::Choice;
use super::error::StatError;
use super::gpu::GpuCounting;
use super::report::{CpuTotal, CpuUnavailable, MetricTotal, Report};

/// How a counting runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Options {
    /// For a process or CPUs: stop after this long (else when the process ends, or when the caller's
    /// stop says so). A command is always counted until it exits.
    pub duration: Option<Duration>,
    /// Whether kernel execution is counted too where the kernel allows it.
    pub kernel: KernelCounting,
}

impl Options {
    /// Counting for `duration` (see [`Options::duration`]), with `kernel`.
    pub fn new(duration: Option<Duration>, kernel: KernelCounting) -> Options {
        Options { duration, kernel }
    }
}

/// How often counting without a command checks whether the process ended, the time is up or `stop`
/// said so.
const POLL: Duration = Duration::from_millis(20);

/// Counts `target` for `choice`: opens the GPU (which says which other names are counters of its
/// database), then the target's CPU counters (starting a command), and counts until the command exits, or
/// for a process or CPUs until it ends, [`Options::duration`] passes or `stop` returns `true` (it is
/// asked every 20 ms).
pub fn count(
    target: &Target,
    choice: &Choice,
    options: &Options,
    stop: &dyn Fn() -> bool,
) -> Result<Report, StatError> {
    let mut gpu = GpuCounting::open(&choice.gpu, &choice.database)?;
    let mut counting = TargetCounters::open(target, &choice.cpu, options.kernel)?;
    let started = Instant::now();
    let times_before = ChildTimes::now();
    gpu.run();
    counting.run()?;
    let exit = wait(&mut counting, target, options.duration, stop)?;
    let elapsed = started.elapsed();
    let times = match (target, times_before, ChildTimes::now()) {
        (Target::Command(_), Some(before), Some(after)) => Some(after.since(before)),
        _ => None,
    };
    counting.sample()?;
    let gpu = gpu.finish();
    counting.stop();

    let cpu: Vec<CpuTotal> = counting
        .series()
        .iter()
        .zip(counting.readings())
        .map(|(series, reading)| CpuTotal {
            counter: series.counter,
            cpu: series.cpu,
            total: reading.total,
            multiplexed: reading.multiplexed,
        })
        .collect();
    let cpu_unavailable: Vec<CpuUnavailable> = counting
        .unavailable()
        .iter()
        .map(|(counter, reason)| CpuUnavailable {
            counter: *counter,
            reason: reason.clone(),
        })
        .collect();
    let metrics = choice.metrics.then(|| {
        METRICS
            .iter()
            .map(|metric| MetricTotal {
                metric,
                value: metric.evaluate(|c| total(&cpu, &cpu_unavailable, c)),
            })
            .collect()
    });
    Ok(Report {
        command: match target {
            Target::Command(argv) => argv.clone(),
            _ => Vec::new(),
        },
        scope: counting.scope().to_owned(),
        exit,
        elapsed,
        times,
        kernel_excluded: counting.kernel_excluded(),
        cpu_counters: shown(choice, choice.cpu.clone()),
        cpu: shown(choice, cpu),
        cpu_unavailable,
        gpu: gpu.gpu,
        database: gpu.database,
        gpu_unavailable: gpu.unavailable,
        metrics,
    })
}

/// `list`, or nothing when the CPU counters are not shown (only GPU counters were asked for).
fn shown<T>(choice: &Choice, list: Vec<T>) -> Vec<T> {
    if choice.cpu_shown {
        list
    } else {
        Vec::new()
    }
}

/// Counts until the command exits (its status), or for a process or CPUs until the process ends,
/// `duration` passes or `stop` says so.
fn wait(
    counting: &mut TargetCounters,
    target: &Target,
    duration: Option<Duration>,
    stop: &dyn Fn() -> bool,
) -> Result<Option<std::process::ExitStatus>, StatError> {
    if let Some(child) = counting.child() {
        return child.wait().map(Some).map_err(StatError::Wait);
    }
    let started = Instant::now();
    loop {
        let ended = match target {
            Target::Pid(pid) => counting::process_ended(*pid),
            _ => false,
        };
        let left = duration.map_or(POLL, |d| d.saturating_sub(started.elapsed()));
        if ended || left.is_zero() || stop() {
            return Ok(None);
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// `counter`'s total over every series that counts it (all CPUs, all threads), and whether any was
/// multiplexed; or why it was not counted.
fn total(cpu: &[CpuTotal], unavailable: &[CpuUnavailable], counter: CpuCounter) -> CounterTotal {
    if let Some(u) = unavailable.iter().find(|u| u.counter == counter) {
        return Err(u.reason.clone());
    }
    cpu.iter()
        .filter(|t| t.counter == counter)
        .fold(None, |found: Option<(u64, bool)>, t| {
            let (sum, scaled) = found.unwrap_or((0, false));
            Some((sum.saturating_add(t.total), scaled | t.multiplexed))
        })
        .ok_or_else(|| "not counted".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycles(cpu: Option<u32>, total: u64, multiplexed: bool) -> CpuTotal {
        CpuTotal {
            counter: CpuCounter::Cycles,
            cpu,
            total,
            multiplexed,
        }
    }

    #[test]
    fn a_total_sums_every_cpus_series_and_any_multiplexing() {
        let cpu = [cycles(Some(0), 5, false), cycles(Some(1), 7, true)];
        assert_eq!(total(&cpu, &[], CpuCounter::Cycles), Ok((12, true)));
        let saturated = [cycles(Some(0), u64::MAX, false), cycles(Some(1), 1, false)];
        assert_eq!(
            total(&saturated, &[], CpuCounter::Cycles),
            Ok((u64::MAX, false))
        );
    }

    #[test]
    fn a_total_says_why_a_counter_has_none() {
        let unavailable = [CpuUnavailable {
            counter: CpuCounter::Cycles,
            reason: "no PMU".into(),
        }];
        assert_eq!(
            total(&[], &unavailable, CpuCounter::Cycles),
            Err("no PMU".into())
        );
        assert_eq!(
            total(&[], &[], CpuCounter::Instructions),
            Err("not counted".into())
        );
    }

    #[test]
    fn a_process_that_does_not_exist_is_a_target_error() {
        let target = Target::Pid(i32::MAX);
        let choice = Choice::new(&["TaskClock".to_owned()], false);
        let counted = count(&target, &choice, &Options::default(), &|| true);
        assert!(matches!(counted, Err(StatError::Target(_))), "{counted:?}");
    }

    #[test]
    fn a_name_of_no_counter_is_unknown_with_candidates() {
        let choice = Choice::new(&["NoSuchCounter".to_owned()], false);
        let counted = count(
            &Target::Pid(i32::MAX),
            &choice,
            &Options::default(),
            &|| true,
        );
        match counted {
            // Without a GPU, Arm's database cannot be asked.
            Err(StatError::NoGpuForDatabase {
                name, candidates, ..
            })
            | Err(StatError::UnknownCounter { name, candidates }) => {
                assert_eq!(name, "NoSuchCounter");
                assert!(candidates.iter().any(|c| c == "TaskClock"));
            }
            other => panic!("{other:?}"),
        }
    }
}
