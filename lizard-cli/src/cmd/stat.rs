//! `lizard stat`: count the CPU events of a command (`-- CMD ARGS…`), an existing process (`--pid`) or
//! the whole system (`--system-wide`, `--cpu`), like `perf stat`, and the Mali GPU's counters over the
//! same time (the whole GPU: its counters do not follow a process).

use std::time::{Duration, Instant};

use hwcpipe::counting::{self, Target, TargetCounters};
use hwcpipe::cpu::{CpuMetric, MetricValue, METRICS};
use hwcpipe::gpu::{GpuCounter, GpuProfiler, MaliCounter, MaliValues};
use hwcpipe::{CpuCounter, KernelCounting};
use lizard_core::error_chain;
use serde_json::json;

use crate::args::{ListFormat, StatArgs};
use crate::error::CliError;
use crate::exit_status::shell_status;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// The counters `names` asks for: CPU, HWCPipe GPU, and the other names, which may be counters of Arm's
/// database for the Mali GPU (checked once the GPU is open). No names: every CPU and HWCPipe GPU counter.
type Chosen = (Vec<CpuCounter>, Vec<GpuCounter>, Vec<String>);

/// The CPU and GPU counters named in `names`, or all of them.
fn counters(names: &[String]) -> Chosen {
    if names.is_empty() {
        return (
            CpuCounter::ALL.to_vec(),
            GpuCounter::ALL.to_vec(),
            Vec::new(),
        );
    }
    let (mut cpu, mut gpu, mut database) = (Vec::new(), Vec::new(), Vec::new());
    for name in names {
        let wanted = name.trim();
        if let Some(c) = CpuCounter::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(wanted))
        {
            cpu.push(c);
        } else if let Some(g) = GpuCounter::ALL
            .into_iter()
            .find(|g| g.name().eq_ignore_ascii_case(wanted))
        {
            gpu.push(g);
        } else {
            database.push(wanted.to_owned());
        }
    }
    (cpu, gpu, database)
}

/// `name` is no counter here: the hint names the closest CPU, HWCPipe GPU or database counters.
fn unknown(name: &str, database: &[&str]) -> CliError {
    let known = CpuCounter::ALL
        .iter()
        .map(|c| c.name())
        .chain(GpuCounter::ALL.iter().map(|g| g.name()))
        .chain(database.iter().copied());
    CliError::UnknownCounter {
        name: name.to_owned(),
        hint: crate::names::hint(name, known),
    }
}

/// One counter of Arm's database asked for, and its value over the counting.
struct DatabaseValue {
    counter: MaliCounter,
    name: &'static str,
    units: &'static str,
    value: Option<f64>,
}

/// The Mali GPU's chosen counters over the counting, or why there are none.
struct GpuCounting {
    profiler: Result<GpuProfiler, String>,
    values: Vec<(GpuCounter, f64)>,
    database: Vec<DatabaseValue>,
}

impl GpuCounting {
    /// Opens the GPU and enables `chosen` (those it can measure) and the database counters named in
    /// `database`; nothing asked, nothing opened. A name that is no counter of this GPU's database (or any
    /// name, without a GPU to read it) is an unknown counter.
    fn open(chosen: &[GpuCounter], database: &[String]) -> Result<GpuCounting, CliError> {
        let profiler = if chosen.is_empty() && database.is_empty() {
            Err(String::new())
        } else {
            GpuProfiler::open()
                .map_err(|e| error_chain(&e))
                .and_then(|mut p| {
                    let measurable: Vec<GpuCounter> = chosen
                        .iter()
                        .copied()
                        .filter(|c| p.supported_counters().contains(c))
                        .collect();
                    p.set_enabled(&measurable).map_err(|e| error_chain(&e))?;
                    Ok(p)
                })
        };
        let mut resolved = Vec::new();
        for name in database {
            let catalog = match &profiler {
                Ok(p) => p.mali_counters(),
                Err(reason) => {
                    let mut error = unknown(name, &[]);
                    if let CliError::UnknownCounter { hint, .. } = &mut error {
                        hint.push_str(&format!(
                            " (counters of Arm's Mali database need a Mali GPU: {reason})"
                        ));
                    }
                    return Err(error);
                }
            };
            let names: Vec<&str> = catalog.iter().map(|(_, c)| c.name()).collect();
            let found = catalog
                .iter()
                .find(|(_, c)| c.name().eq_ignore_ascii_case(name));
            let Some((counter, info)) = found else {
                return Err(unknown(name, &names));
            };
            if let Err(reason) = &info.availability {
                return Err(CliError::Usage(format!(
                    "{} cannot be counted on this GPU: {reason}",
                    info.name()
                )));
            }
            resolved.push(DatabaseValue {
                counter,
                name: info.name(),
                units: info.spec.units,
                value: None,
            });
        }
        Ok(GpuCounting {
            profiler,
            values: Vec::new(),
            database: resolved,
        })
    }

    fn run(&mut self) {
        if let Ok(p) = &mut self.profiler {
            if let Err(e) = p.run() {
                self.profiler = Err(error_chain(&e));
            }
        }
    }

    /// Takes the one sample covering the whole counting.
    fn finish(&mut self) {
        if let Ok(p) = &mut self.profiler {
            match p.sample() {
                Ok(sample) => self.values = sample.iter().collect(),
                Err(e) => self.profiler = Err(error_chain(&e)),
            }
            if let Ok(p) = &self.profiler {
                let mut values = MaliValues::default();
                p.mali_values(&mut values);
                for d in &mut self.database {
                    d.value = values.get(d.counter).and_then(Result::ok);
                }
            }
            if let Ok(p) = &mut self.profiler {
                let _ = p.stop();
            }
        }
    }

    /// Why the GPU gave no values, if it gave none (`None` too when no GPU counter was asked for).
    fn unavailable(&self) -> Option<&str> {
        self.profiler
            .as_ref()
            .err()
            .map(String::as_str)
            .filter(|reason| !reason.is_empty())
    }
}

/// How often counting without a command checks whether the process ended, the time is up or Ctrl-C came.
const POLL: Duration = Duration::from_millis(20);

/// Counts until the command exits (its shell status), or for a process or CPUs until the process ends,
/// `duration` passes or Ctrl-C (status 0).
fn wait(
    counting: &mut TargetCounters,
    target: &Target,
    duration: Option<Duration>,
) -> Result<i32, CliError> {
    if let Some(child) = counting.child() {
        let status = child
            .wait()
            .map_err(|e| CliError::Other(format!("waiting for the command: {e}")))?;
        return Ok(shell_status(status));
    }
    let started = Instant::now();
    loop {
        let ended = match target {
            Target::Pid(pid) => counting::process_ended(*pid),
            _ => false,
        };
        let left = duration.map_or(POLL, |d| d.saturating_sub(started.elapsed()));
        if ended || left.is_zero() || interrupt::sleep(left.min(POLL)) {
            return Ok(0);
        }
    }
}

/// Runs `lizard stat`.
pub fn run(args: &StatArgs) -> Result<i32, CliError> {
    interrupt::install();
    let (mut chosen, chosen_gpu, chosen_database) = counters(&args.counters);
    if args.metrics {
        // Every metric's inputs are counted in the same counting.
        for input in METRICS.iter().flat_map(CpuMetric::inputs) {
            if !chosen.contains(&input) {
                chosen.push(input);
            }
        }
    }
    // Only GPU counters asked for: the target still runs under a CPU counting, whose life is the
    // counting's; the task clock serves, and its rows are not shown.
    let cpu_shown = !chosen.is_empty();
    if !cpu_shown {
        chosen.push(CpuCounter::TaskClock);
    }
    let target = args.target.target()?.ok_or_else(|| {
        CliError::Usage(
            "say what to count: `-- CMD ARGS…`, --pid PID, --system-wide or --cpu LIST".into(),
        )
    })?;
    if duration_without_end(&target, args.duration) {
        eprintln!("counting {} until Ctrl-C", target.scope());
    }
    let kernel = if args.user_only {
        KernelCounting::Exclude
    } else {
        KernelCounting::Auto
    };
    // The GPU first: it says which of the other names are counters of its database.
    let mut gpu = GpuCounting::open(&chosen_gpu, &chosen_database)?;
    let mut counting = TargetCounters::open(&target, &chosen, kernel)?;
    let started = Instant::now();
    gpu.run();
    counting.run()?;
    let code = wait(&mut counting, &target, args.duration)?;
    let elapsed = started.elapsed();
    counting.sample()?;
    gpu.finish();
    counting.stop();

    let metrics: Vec<(&CpuMetric, MetricValue)> = match args.metrics {
        true => METRICS
            .iter()
            .map(|m| (m, m.evaluate(|c| total(&counting, c))))
            .collect(),
        false => Vec::new(),
    };
    let text = match args.format {
        ListFormat::Table => {
            let mut text = table(
                &counting,
                cpu_shown.then_some(&chosen[..]),
                &gpu,
                elapsed,
                code,
            );
            if args.metrics {
                text.push_str(&metrics_table(&metrics));
            }
            text
        }
        ListFormat::Json => {
            let mut rows: Vec<_> = counting
                .series()
                .iter()
                .zip(counting.readings())
                .filter(|_| cpu_shown)
                .map(|(series, reading)| {
                    json!({
                        "counter": series.name(),
                        "cpu": series.cpu,
                        "unit": series.counter.unit().to_string(),
                        "value": reading.total,
                        "multiplexed": reading.multiplexed,
                        "unavailable": null,
                        "source": "cpu",
                    })
                })
                .collect();
            rows.extend(gpu.values.iter().map(|(counter, value)| {
                json!({
                    "counter": counter.name(),
                    "cpu": null,
                    "unit": counter.unit().to_string(),
                    "value": value,
                    "multiplexed": false,
                    "unavailable": null,
                    "source": "gpu",
                })
            }));
            rows.extend(gpu.database.iter().map(|d| {
                json!({
                    "counter": d.name,
                    "cpu": null,
                    "unit": d.units,
                    "value": d.value,
                    "multiplexed": false,
                    "unavailable": d.value.is_none().then_some("no value over the counting (a division by zero)"),
                    "source": "gpu",
                })
            }));
            rows.extend(counting.unavailable().iter().map(|(counter, reason)| {
                json!({
                    "counter": counter.name(),
                    "cpu": null,
                    "unit": counter.unit().to_string(),
                    "value": null,
                    "multiplexed": null,
                    "unavailable": reason,
                    "source": "cpu",
                })
            }));
            output::to_json(&json!({
                "command": args.target.command,
                "target": counting.scope(),
                "exit_status": code,
                "elapsed_s": elapsed.as_secs_f64(),
                "kernel_excluded": counting.kernel_excluded(),
                "gpu_unavailable": gpu.unavailable(),
                "counters": rows,
                "metrics": args.metrics.then(|| metrics.iter().map(|(m, value)| {
                    let (value, scaled, unavailable) = match value {
                        MetricValue::Value { value, scaled } => (Some(*value), *scaled, None),
                        MetricValue::Unavailable(reason) => (None, false, Some(reason.as_str())),
                    };
                    json!({
                        "metric": m.name,
                        "group": m.group,
                        "formula": m.formula,
                        "unit": m.unit,
                        "value": value,
                        "scaled": scaled,
                        "unavailable": unavailable,
                    })
                }).collect::<Vec<_>>()),
            }))
        }
    };
    // A command's own output went to the same terminal: keep ours on stderr for tables, as perf does.
    match args.format {
        ListFormat::Table => eprint!("{text}"),
        ListFormat::Json => output::write(None, &text)?,
    }
    Ok(code)
}

/// `counter`'s total over every series that counts it (all CPUs, all threads), and whether any was
/// multiplexed; or why it was not counted.
fn total(counting: &TargetCounters, counter: CpuCounter) -> Result<(u64, bool), String> {
    if let Some((_, reason)) = counting.unavailable().iter().find(|(c, _)| *c == counter) {
        return Err(reason.clone());
    }
    let mut found = None;
    for (series, reading) in counting.series().iter().zip(counting.readings()) {
        if series.counter == counter {
            let (sum, scaled) = found.unwrap_or((0u64, false));
            found = Some((
                sum.saturating_add(reading.total),
                scaled | reading.multiplexed,
            ));
        }
    }
    found.ok_or_else(|| "not counted".to_owned())
}

/// The metrics as a table: each value with its unit, or why it has none.
fn metrics_table(metrics: &[(&CpuMetric, MetricValue)]) -> String {
    let mut table = Table::new(&["metric", "value", "unit", "group", "note"]);
    for (m, value) in metrics {
        let (value, note) = match value {
            MetricValue::Value { value, scaled } => (
                format!("{value:.2}"),
                if *scaled {
                    "inputs scaled (multiplexed)".to_owned()
                } else {
                    String::new()
                },
            ),
            MetricValue::Unavailable(reason) => ("-".to_owned(), format!("unavailable: {reason}")),
        };
        table.row(vec![
            m.name.to_owned(),
            value,
            m.unit.to_owned(),
            m.group.to_owned(),
            note,
        ]);
    }
    format!("\nMetrics:\n\n{}", table.render())
}

/// Whether counting has no end but Ctrl-C: CPUs without `--duration`.
fn duration_without_end(target: &Target, duration: Option<Duration>) -> bool {
    matches!(target, Target::Cpus { .. }) && duration.is_none()
}

/// The table of a counting: the CPU rows when `chosen` (the CPU counters asked for) is given, without
/// them when only GPU counters were asked for; then the GPU rows.
fn table(
    counting: &TargetCounters,
    chosen: Option<&[CpuCounter]>,
    gpu: &GpuCounting,
    elapsed: Duration,
    code: i32,
) -> String {
    let mut table = Table::new(&["counter", "value", "unit", "note"]);
    let series = counting.series().iter().zip(counting.readings());
    for (series, reading) in series.filter(|_| chosen.is_some()) {
        table.row(vec![
            series.name(),
            reading.total.to_string(),
            series.counter.unit().to_string(),
            if reading.multiplexed {
                "scaled (multiplexed)".to_owned()
            } else {
                String::new()
            },
        ]);
    }
    for counter in chosen.unwrap_or_default() {
        if let Some((_, reason)) = counting.unavailable().iter().find(|(c, _)| c == counter) {
            table.row(vec![
                counter.name().to_owned(),
                "-".to_owned(),
                counter.unit().to_string(),
                format!("not counted: {reason}"),
            ]);
        }
    }
    for (counter, value) in &gpu.values {
        table.row(vec![
            counter.name().to_owned(),
            format!("{value}"),
            counter.unit().to_string(),
            "Mali GPU (whole GPU)".to_owned(),
        ]);
    }
    for d in &gpu.database {
        table.row(vec![
            d.name.to_owned(),
            d.value.map_or_else(|| "-".to_owned(), |v| format!("{v}")),
            d.units.to_owned(),
            "Mali GPU (Arm's database)".to_owned(),
        ]);
    }
    let gpu_note = match gpu.unavailable() {
        Some(reason) => format!("GPU counters: none ({reason})\n"),
        None => String::new(),
    };
    format!(
        "Counters for {}:\n\n{}\n{gpu_note}{:.3} s elapsed; exit status {}\n",
        counting.scope(),
        table.render(),
        elapsed.as_secs_f64(),
        code
    )
}
