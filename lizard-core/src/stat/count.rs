//! [`count`]: one counting of a target, from start to end.

use std::time::{Duration, Instant};

use hwcpipe::counting::{self, Counted, Target, TargetCounters};
use hwcpipe::cpu::metrics::CounterTotal;
use hwcpipe::cpu::{CpuPmus, EventUnavailable, MetricInput, PartStatus, METRICS};
use hwcpipe::KernelCounting;

use super::child_times::ChildTimes;
use super::choice::Choice;
use super::error::StatError;
use super::events;
use super::gpu::GpuCounting;
use super::report::{CpuTotal, CpuUnavailable, EventNote, EventTotal, MetricTotal, Report};

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

/// Counts `target` for `choice`: sorts the names that are no HWCPipe counter into Arm PMU events of this CPU
/// (its PMUs as the kernel describes them, with Arm's event lists from the folder `LIZARD_PMU_DATA` names)
/// and the others; opens the GPU (which says which of the others are counters of its database), then the
/// target's CPU counters and events (starting a command), and counts until the command exits, or for a
/// process or CPUs until it ends, [`Options::duration`] passes or `stop` returns `true` (it is asked every
/// 20 ms).
pub fn count(
    target: &Target,
    choice: &Choice,
    options: &Options,
    stop: &dyn Fn() -> bool,
) -> Result<Report, StatError> {
    let pmus = match choice.database.is_empty() && !choice.metrics {
        true => CpuPmus::default(),
        false => CpuPmus::discover()?,
    };
    let chosen = events::choose(&pmus, &choice.database, choice.metrics)?;
    let mut gpu = GpuCounting::open(&choice.gpu, &chosen.database, &pmus.names())?;
    let mut counting = TargetCounters::open(target, &choice.cpu, &chosen.events, options.kernel)?;
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

    let mut cpu: Vec<CpuTotal> = Vec::new();
    let mut event_totals: Vec<EventTotal> = Vec::new();
    for (series, reading) in counting.series().iter().zip(counting.readings()) {
        match series.of {
            Counted::Counter(counter) => cpu.push(CpuTotal {
                counter,
                cpu: series.cpu,
                total: reading.total,
                multiplexed: reading.multiplexed,
                counted_share: reading.counted_share(),
            }),
            Counted::Event { event, pmu } => {
                let Some(status) = counting.events().get(event) else {
                    continue;
                };
                let placement =
                    pmu.and_then(|p| status.event.placements.iter().find(|pl| pl.pmu == p));
                event_totals.push(EventTotal {
                    name: counting.series_name(series),
                    event: status.event.name.clone(),
                    pmu: placement.map(|pl| pl.pmu_name.clone()),
                    core: placement.map(|pl| pl.label.clone()),
                    cpu: series.cpu,
                    unit: counting.series_unit(series),
                    description: status.event.description.clone(),
                    total: reading.total,
                    multiplexed: reading.multiplexed,
                    counted_share: reading.counted_share(),
                });
            }
        }
    }
    let mut event_notes = Vec::new();
    for status in counting.events() {
        if let Some(reason) = status.unavailable() {
            event_notes.push(EventNote {
                event: status.event.name.clone(),
                pmu: None,
                reason,
            });
            continue;
        }
        for (placement, part) in status.event.placements.iter().zip(&status.parts) {
            if let PartStatus::Unavailable(reason) = part {
                event_notes.push(EventNote {
                    event: status.event.name.clone(),
                    pmu: Some(placement.pmu_name.clone()),
                    reason: reason.clone(),
                });
            }
        }
    }
    let cpu_unavailable: Vec<CpuUnavailable> = counting
        .unavailable()
        .iter()
        .map(|(counter, reason)| CpuUnavailable {
            counter: *counter,
            reason: reason.clone(),
        })
        .collect();
    let metrics = choice
        .metrics
        .then(|| metric_totals(&pmus, &cpu, &cpu_unavailable, &event_totals, &event_notes));
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
        events: event_totals,
        event_notes,
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

/// The metrics over every core type, then, where events are counted on several core types, over each.
fn metric_totals(
    pmus: &CpuPmus,
    cpu: &[CpuTotal],
    unavailable: &[CpuUnavailable],
    events: &[EventTotal],
    notes: &[EventNote],
) -> Vec<MetricTotal> {
    let mut metrics: Vec<MetricTotal> = METRICS
        .iter()
        .map(|metric| MetricTotal {
            metric,
            value: metric.evaluate(
                |input| total(cpu, unavailable, events, notes, input, None),
                || slots(pmus, None),
            ),
            pmu: None,
        })
        .collect();
    let mut per_core: Vec<&str> = Vec::new();
    for pmu in events.iter().filter_map(|e| e.pmu.as_deref()) {
        if !per_core.contains(&pmu) {
            per_core.push(pmu);
        }
    }
    for pmu in per_core {
        metrics.extend(METRICS.iter().map(|metric| MetricTotal {
            metric,
            value: metric.evaluate(
                |input| total(cpu, unavailable, events, notes, input, Some(pmu)),
                || slots(pmus, Some(pmu)),
            ),
            pmu: Some(pmu.to_owned()),
        }));
    }
    metrics
}

/// PMMIR_EL1.SLOTS of core type `pmu`, or of every core type when they agree.
fn slots(pmus: &CpuPmus, pmu: Option<&str>) -> Result<f64, String> {
    let known: Vec<u32> = pmus
        .pmus()
        .iter()
        .filter(|p| pmu.is_none_or(|name| p.name == name))
        .filter_map(|p| p.slots)
        .collect();
    match known.as_slice() {
        [] => Err("the kernel does not show PMMIR_EL1.SLOTS for this CPU (caps/slots)".to_owned()),
        [first, rest @ ..] if rest.iter().all(|s| s == first) => Ok(f64::from(*first)),
        _ => Err(
            "the core types issue different numbers of operations per cycle: see each core type's \
                  value"
                .to_owned(),
        ),
    }
}

/// The total of a metric's input over every series that counts it (all CPUs, all threads; one core type's
/// part with `pmu`), and whether any was multiplexed; or why it was not counted.
fn total(
    cpu: &[CpuTotal],
    unavailable: &[CpuUnavailable],
    events: &[EventTotal],
    notes: &[EventNote],
    input: MetricInput<'_>,
    pmu: Option<&str>,
) -> CounterTotal {
    let sum = |totals: &mut dyn Iterator<Item = (u64, bool)>| {
        totals.fold(None, |found: Option<(u64, bool)>, (total, multiplexed)| {
            let (sum, scaled) = found.unwrap_or((0, false));
            Some((sum.saturating_add(total), scaled | multiplexed))
        })
    };
    match input {
        MetricInput::Counter(counter) => {
            if pmu.is_some() {
                return Err("HWCPipe's counters are not kept per core type".to_owned());
            }
            if let Some(u) = unavailable.iter().find(|u| u.counter == counter) {
                return Err(u.reason.clone());
            }
            sum(&mut cpu
                .iter()
                .filter(|t| t.counter == counter)
                .map(|t| (t.total, t.multiplexed)))
            .ok_or_else(|| "not counted".to_owned())
        }
        MetricInput::Event(name) => {
            let counted = sum(&mut events
                .iter()
                .filter(|e| e.event == name && e.pmu.as_deref() == pmu)
                .map(|e| (e.total, e.multiplexed)));
            if let Some(found) = counted {
                return Ok(found);
            }
            let note = notes
                .iter()
                .find(|n| n.event == name && (n.pmu.is_none() || n.pmu.as_deref() == pmu));
            Err(match note {
                Some(n) => n.reason.to_string(),
                // The metrics' events are counted only where there is an Arm PMU.
                None if events.is_empty() && notes.is_empty() => {
                    EventUnavailable::NoArmPmu.to_string()
                }
                None => "not counted".to_owned(),
            })
        }
        MetricInput::Slots => Err("not a counter".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwcpipe::CpuCounter;

    fn cycles(cpu: Option<u32>, total: u64, multiplexed: bool) -> CpuTotal {
        CpuTotal {
            counter: CpuCounter::Cycles,
            cpu,
            total,
            multiplexed,
            counted_share: Some(1.0),
        }
    }

    fn counter_total(
        cpu: &[CpuTotal],
        unavailable: &[CpuUnavailable],
        c: CpuCounter,
    ) -> CounterTotal {
        total(cpu, unavailable, &[], &[], MetricInput::Counter(c), None)
    }

    #[test]
    fn a_total_sums_every_cpus_series_and_any_multiplexing() {
        let cpu = [cycles(Some(0), 5, false), cycles(Some(1), 7, true)];
        assert_eq!(counter_total(&cpu, &[], CpuCounter::Cycles), Ok((12, true)));
        let saturated = [cycles(Some(0), u64::MAX, false), cycles(Some(1), 1, false)];
        assert_eq!(
            counter_total(&saturated, &[], CpuCounter::Cycles),
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
            counter_total(&[], &unavailable, CpuCounter::Cycles),
            Err("no PMU".into())
        );
        assert_eq!(
            counter_total(&[], &[], CpuCounter::Instructions),
            Err("not counted".into())
        );
    }

    fn event(name: &str, pmu: Option<&str>, total: u64) -> EventTotal {
        EventTotal {
            name: pmu.map_or_else(|| name.to_owned(), |p| format!("{p}/{name}/")),
            event: name.to_owned(),
            pmu: pmu.map(str::to_owned),
            core: None,
            cpu: None,
            unit: hwcpipe::Unit::Events,
            description: None,
            total,
            multiplexed: false,
            counted_share: Some(1.0),
        }
    }

    #[test]
    fn metrics_are_over_every_core_type_and_each_where_several_count() {
        use hwcpipe::cpu::{MetricValue, NotOnPmu};
        let events = [
            event("INST_RETIRED", None, 8_000),
            event("CPU_CYCLES", None, 4_000),
            event("INST_RETIRED", Some("armv8_a"), 2_000),
            event("INST_RETIRED", Some("armv8_b"), 6_000),
            event("CPU_CYCLES", Some("armv8_a"), 2_000),
            event("CPU_CYCLES", Some("armv8_b"), 2_000),
        ];
        let notes = [EventNote {
            event: "STALL_BACKEND".into(),
            pmu: None,
            reason: EventUnavailable::NotOnPmu(NotOnPmu::NotImplemented {
                core: "Cortex-A72".into(),
                code: 0x24,
            }),
        }];
        let metrics = metric_totals(&CpuPmus::default(), &[], &[], &events, &notes);
        let ipc: Vec<(Option<&str>, f64)> = metrics
            .iter()
            .filter(|m| m.metric.name == "IPC")
            .map(|m| match &m.value {
                MetricValue::Value { value, .. } => (m.pmu.as_deref(), *value),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            ipc,
            [(None, 2.0), (Some("armv8_a"), 1.0), (Some("armv8_b"), 3.0)]
        );
        let backend = metrics
            .iter()
            .find(|m| m.metric.name == "Backend stalled cycles" && m.pmu.is_none())
            .unwrap();
        let MetricValue::Unavailable(reason) = &backend.value else {
            panic!("{backend:?}")
        };
        assert!(reason.contains("Cortex-A72 does not implement"), "{reason}");
        let bound = metrics
            .iter()
            .find(|m| m.metric.name == "Frontend bound" && m.pmu.is_none())
            .unwrap();
        assert!(
            matches!(&bound.value, MetricValue::Unavailable(r) if r.contains("STALL_SLOT_FRONTEND"))
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
