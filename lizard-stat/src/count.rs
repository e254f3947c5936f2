//! [`count`]: one counting of a target, from start to end, as a capture of the engine.

use std::time::Duration;

use hwcpipe::counting::{self, Target};
use hwcpipe::cpu::metrics::CounterTotal;
use hwcpipe::cpu::{CpuPmus, EventUnavailable, MetricInput, METRICS};
use hwcpipe::{CpuCounter, GpuCounter, KernelCounting};

use crate::child_times::ChildTimes;
use crate::choice::Choice;
use crate::error::{GpuUnavailable, StatError};
use crate::events;
use crate::report::{
    CpuTotal, CpuUnavailable, DatabaseTotal, EventNote, EventTotal, GpuTotal, MetricTotal, Report,
};
use lizard_core::capture::{self, CapturedCounter, Plan, Source, Watch};
use lizard_core::counter_names::SelectError;
use lizard_core::sources::{self, Gatord, Join, Local, SourceError, Sources};
use lizard_core::{ChoiceError, Counters, GpuDumps};
use lizard_core::{CommandWatch, Config, CounterId, Lizard, UnreadableCounter};

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

/// How often the engine samples a counting: the totals are the same at any pace (the last sample is taken
/// at the stop), so rarely, to stay out of the way of what is counted.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);

/// How often a counting looks at whether the command or process ended, or `stop` said so.
const POLL: Duration = Duration::from_millis(1);

/// Counts `target` for `choice` as a capture of the engine ([`capture::run`]) over the target's local
/// counters: the names that are no HWCPipe counter are sorted into Arm PMU events of this CPU (its PMUs as
/// the kernel describes them, with Arm's event lists from the folder `LIZARD_PMU_DATA` names) and counters
/// of Arm's Mali database; the counters are chosen by name ([`lizard_core::counter_names`]); a command is counted
/// until it exits, a process or CPUs until it ends, [`Options::duration`] passes or `stop` returns `true`.
/// Each total is the engine's reading over the capture ([`lizard_core::reduce`]); the report is a view of the
/// capture's document.
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
    let mut config = Config::default();
    config.sample_interval = SAMPLE_INTERVAL;
    config.kernel = options.kernel;
    config.cpu_counters = Some(choice.cpu.clone());
    config.cpu_events = chosen.events.into_iter().map(|(name, _)| name).collect();
    // A total over the command, however short: the GPU is dumped with each sample and at the stop, not
    // at the driver's pace, which leaves the part of a period at the stop undumped (all of a command
    // shorter than the interval).
    config.gpu_dumps = GpuDumps::WithSamples;
    if let Some(duration) = options.duration {
        config.size_for(duration);
    }
    let sources = Sources {
        gatord: Gatord::Off,
        local: Local::Target(target.clone()),
        join: Join::WithoutGatord,
    };
    let opened = sources::open(&sources, config).map_err(source_error)?;
    let mut lizard = opened.lizard;
    let local = opened.local.unwrap_or_default();
    let mut gpu_error = local.gpu_error.map(GpuUnavailable::Open);

    let wanted = Wanted::of(&lizard, choice, &chosen.database, &mut gpu_error)?;
    let length = match target {
        Target::Command(_) => None,
        _ => options.duration,
    };
    let mut plan = Plan::new(Counters::Ids(wanted.ids), length, Vec::new());
    plan.tool_version = String::new();
    let mut watch = Ending {
        command: local.watch.clone(),
        pid: match target {
            Target::Pid(pid) => Some(*pid),
            _ => None,
        },
        stop,
    };
    let times_before = ChildTimes::now();
    let captured = capture::run(&mut lizard, &plan, &mut watch).map_err(run_error)?;
    let times = match (target, times_before, ChildTimes::now()) {
        (Target::Command(_), Some(before), Some(after)) => Some(after.since(before)),
        _ => None,
    };
    let kernel_excluded = lizard.kernel_excluded();
    // The rates are the totals over the time they were counted: the window from the start sample to the
    // stop sample, not the capture's start and stop around it (opening and closing the counters, long
    // under emulation).
    let window = lizard.sampling().map(|sampling| sampling.window);
    let exit = local.watch.status();
    drop(lizard);

    let view = View::of(&captured.document.counters);
    let mut cpu_unavailable = wanted.cpu_unavailable;
    cpu_unavailable.extend(view.cpu_without_value);
    let metrics = choice.metrics.then(|| {
        metric_totals(
            &pmus,
            &view.cpu,
            &cpu_unavailable,
            &view.events,
            &wanted.event_notes,
        )
    });
    let gpu_asked = !choice.gpu.is_empty() || !chosen.database.is_empty();
    Ok(Report {
        command: match target {
            Target::Command(argv) => argv.clone(),
            _ => Vec::new(),
        },
        scope: target.scope(),
        exit,
        elapsed: window.unwrap_or(captured.elapsed),
        times,
        kernel_excluded,
        cpu_counters: shown(choice, choice.cpu.clone()),
        cpu: shown(choice, view.cpu),
        cpu_unavailable,
        events: view.events,
        event_notes: wanted.event_notes,
        gpu: view.gpu,
        database: view.database,
        gpu_unavailable: gpu_error.filter(|_| gpu_asked),
        metrics,
    })
}

/// What a counting asks of the engine: its counters, and the CPU counters and events the target cannot
/// count here, with the reason.
struct Wanted {
    ids: Vec<CounterId>,
    cpu_unavailable: Vec<CpuUnavailable>,
    event_notes: Vec<EventNote>,
}

impl Wanted {
    /// The counters of `choice` (its Mali database names `database`) among `lizard`'s, by name
    /// ([`lizard_core::counter_names`]): a CPU counter or an event the target cannot count is a note, an HWCPipe
    /// GPU counter without a GPU is left out (the report says why), and a database name that is no counter
    /// is an error (with the GPU's absence, `gpu_error`, when there is none).
    fn of(
        lizard: &Lizard,
        choice: &Choice,
        database: &[String],
        gpu_error: &mut Option<GpuUnavailable>,
    ) -> Result<Wanted, StatError> {
        let unreadable = lizard.unreadable();
        let mut wanted = Wanted {
            ids: Vec::new(),
            cpu_unavailable: Vec::new(),
            event_notes: unreadable.iter().filter_map(event_note).collect(),
        };
        let named = |names: &[&str], wanted: &mut Wanted| -> Result<(), SelectError> {
            let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
            for counter in lizard_core::counter_names::select_in(lizard, &names)? {
                if !wanted.ids.contains(&counter.id) {
                    wanted.ids.push(counter.id);
                }
            }
            Ok(())
        };
        for &counter in &choice.cpu {
            let reason = unreadable.iter().find(|u| u.name == counter.name());
            match reason {
                Some(u) => wanted.cpu_unavailable.push(CpuUnavailable {
                    counter,
                    reason: u.reason.clone(),
                }),
                None => named(&[counter.name()], &mut wanted).map_err(select_error)?,
            }
        }
        for gpu in &choice.gpu {
            // Without a GPU, or one that lacks it, an HWCPipe GPU counter is left out; the report says why.
            let _ = named(&[gpu.name()], &mut wanted);
        }
        for name in database {
            match named(&[name.as_str()], &mut wanted) {
                Err(SelectError::Unknown(unknown)) => {
                    return Err(match gpu_error.take() {
                        Some(gpu) => StatError::NoGpuForDatabase {
                            name: unknown.name,
                            candidates: unknown.candidates,
                            gpu,
                        },
                        None => StatError::UnknownCounter {
                            name: unknown.name,
                            candidates: unknown.candidates,
                        },
                    });
                }
                other => other.map_err(select_error)?,
            }
        }
        // Every series of every event counted: the events asked for and the metrics' inputs.
        for counter in lizard.counters().iter().filter(|c| c.pmu_part.is_some()) {
            if !wanted.ids.contains(&counter.id) {
                wanted.ids.push(counter.id);
            }
        }
        Ok(wanted)
    }
}

/// A name refused by the engine's choice, in the counting's words.
fn select_error(error: SelectError) -> StatError {
    match error {
        SelectError::Unknown(unknown) => StatError::UnknownCounter {
            name: unknown.name,
            candidates: unknown.candidates,
        },
        SelectError::NotCountable { name, reason } => StatError::NotCountable { name, reason },
        SelectError::Events(error) => error.into(),
        other => StatError::Choice(ChoiceError::Select(other)),
    }
}

/// The note of an Arm PMU event the target cannot count, on one core type or at all.
fn event_note(unreadable: &UnreadableCounter) -> Option<EventNote> {
    let part = unreadable.pmu_part.as_ref()?;
    Some(EventNote {
        event: part.event.clone(),
        pmu: part.pmu.clone(),
        reason: unreadable.reason.clone(),
    })
}

/// The totals of a capture's document, by kind of counter.
#[derive(Default)]
struct View {
    cpu: Vec<CpuTotal>,
    cpu_without_value: Vec<CpuUnavailable>,
    events: Vec<EventTotal>,
    gpu: Vec<GpuTotal>,
    database: Vec<DatabaseTotal>,
}

impl View {
    fn of(counters: &[CapturedCounter]) -> View {
        let mut view = View::default();
        for c in counters {
            let scaling = c.scaling.unwrap_or(lizard_core::Scaling {
                multiplexed: false,
                counted_share: None,
            });
            let base = c
                .info
                .cpu_series
                .as_ref()
                .map_or(c.info.counter.as_str(), |s| s.counter.as_str());
            let cpu = c.info.cpu_series.as_ref().map(|s| s.cpu);
            if let Some(part) = &c.info.pmu_event {
                view.events.push(EventTotal {
                    name: c.info.counter.clone(),
                    event: part.event.clone(),
                    pmu: part.pmu.clone(),
                    core: part.core.clone(),
                    cpu,
                    unit: c.info.units.clone(),
                    description: Some(c.info.description.clone()).filter(|d| !d.is_empty()),
                    total: count_of(c),
                    multiplexed: scaling.multiplexed,
                    counted_share: scaling.counted_share,
                });
            } else if c.info.source == Source::Cpu {
                let Some(counter) = CpuCounter::ALL.into_iter().find(|k| k.name() == base) else {
                    continue;
                };
                match &c.value {
                    Some(_) => view.cpu.push(CpuTotal {
                        counter,
                        cpu,
                        total: count_of(c),
                        multiplexed: scaling.multiplexed,
                        counted_share: scaling.counted_share,
                    }),
                    None => view.cpu_without_value.push(CpuUnavailable {
                        counter,
                        reason: c.no_value.clone().unwrap_or_default(),
                    }),
                }
            } else if let Some(counter) = GpuCounter::ALL.into_iter().find(|g| g.name() == base) {
                if let Some(value) = c.value.as_ref().and_then(serde_json::Number::as_f64) {
                    view.gpu.push(GpuTotal { counter, value });
                }
            } else {
                view.database.push(DatabaseTotal {
                    name: c.info.counter.clone(),
                    units: c.info.units.to_string(),
                    value: c.value.as_ref().and_then(serde_json::Number::as_f64),
                });
            }
        }
        view
    }
}

/// A count's total from the document: a whole number of events.
fn count_of(c: &CapturedCounter) -> u64 {
    c.value
        .as_ref()
        .and_then(serde_json::Number::as_u64)
        .unwrap_or(0)
}

/// `list`, or nothing when the CPU counters are not shown (only GPU counters were asked for).
fn shown<T>(choice: &Choice, list: Vec<T>) -> Vec<T> {
    if choice.cpu_shown {
        list
    } else {
        Vec::new()
    }
}

/// How a counting ends: the command exits, the process ends, or the caller's stop says so.
struct Ending<'s> {
    command: CommandWatch,
    pid: Option<i32>,
    stop: &'s dyn Fn() -> bool,
}

impl Watch for Ending<'_> {
    fn wait(&mut self, at_most: Duration, _elapsed: Duration) -> bool {
        let deadline = std::time::Instant::now() + at_most;
        loop {
            if self.command.exited()
                || self.pid.is_some_and(counting::process_ended)
                || (self.stop)()
            {
                return true;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}

/// The counting's words for sources that could not be opened.
fn source_error(error: SourceError) -> StatError {
    match error {
        SourceError::Target(error) => StatError::Target(error),
        SourceError::Events(error) => StatError::from(error),
        other => StatError::Sources(Box::new(other)),
    }
}

/// The counting's words for a capture that did not run.
fn run_error(error: capture::RunError) -> StatError {
    match error {
        capture::RunError::Choice(error) => StatError::Choice(error),
        capture::RunError::Engine(error) => StatError::Engine(error),
        other => StatError::Capture(Box::new(other)),
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
            unit: hwcpipe::Unit::Events.into(),
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
            })
            .to_string(),
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
        let own = Target::Pid(std::process::id() as i32);
        let counted = count(&own, &choice, &Options::default(), &|| true);
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
