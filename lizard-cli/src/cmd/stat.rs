//! `lizard stat`: count the CPU events of a command (`-- CMD ARGS…`), an existing process (`--pid`) or
//! the whole system (`--system-wide`, `--cpu`), like `perf stat`, and the Mali GPU's counters over the
//! same time (the whole GPU: its counters do not follow a process). The counting is
//! [`lizard_stat`]'s; this prints its report.

use hwcpipe::counting::Target;
use hwcpipe::cpu::MetricValue;
use hwcpipe::{CpuCounter, KernelCounting, Unit};
use lizard_core::error_chain;
use lizard_render::text::{grouped, rate_text, significant, time_text};
use lizard_stat::{self as stat, MetricTotal, Report, StatError};

use crate::args::{ListFormat, StatArgs};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// Runs `lizard stat`. The table goes to standard error (the command's own output shares the terminal), the
/// JSON document to standard output, either to `--output`; a counted command's standard output is sent to
/// standard error while the document is on standard output, so that the two never mix.
pub fn run(args: &StatArgs) -> Result<i32, CliError> {
    interrupt::install();
    let choice = stat::Choice::new(&args.counters, args.metrics);
    let target = args.target.target()?.ok_or_else(|| {
        CliError::Usage(
            "say what to count: `-- CMD ARGS…`, --pid PID, --system-wide or --cpu LIST".into(),
        )
    })?;
    // The output file is opened before anything is counted: a path that cannot be written fails first.
    let destination = output::Destination::open(args.output.as_deref())?;
    if matches!(target, Target::Cpus { .. }) && args.duration.is_none() {
        eprintln!("counting {} until Ctrl-C", target.scope());
    }
    let kernel = if args.user_only {
        KernelCounting::Exclude
    } else {
        KernelCounting::Auto
    };
    let options = stat::Options::new(args.duration, kernel);
    let aside = match (args.format, &destination, &target) {
        (ListFormat::Json, output::Destination::Stdout, Target::Command(_)) => {
            Some(output::StdoutAside::new()?)
        }
        _ => None,
    };
    let counted = stat::count(&target, &choice, &options, &interrupt::interrupted);
    drop(aside);
    let report = counted.map_err(cli_error)?;
    let text = match args.format {
        ListFormat::Table => {
            let mut text = table(&report);
            if let Some(metrics) = &report.metrics {
                text.push_str(&metrics_table(metrics));
            }
            text
        }
        ListFormat::Json => {
            let doc = serde_json::to_value(&report).map_err(|e| CliError::Other(e.to_string()))?;
            output::to_json(&doc)
        }
    };
    match (destination, args.format) {
        // A command's own output went to the same terminal: the table goes to stderr, as perf's does.
        (output::Destination::Stdout, ListFormat::Table) => eprint!("{text}"),
        (destination, _) => destination.write_text(&text)?,
    }
    Ok(report.exit_code())
}

/// The command line's words for a counting that failed.
fn cli_error(error: StatError) -> CliError {
    match error {
        StatError::UnknownCounter { name, candidates } => CliError::UnknownCounter {
            hint: crate::names::hint(&name, candidates.iter().map(String::as_str)),
            name,
        },
        StatError::NoGpuForDatabase {
            name,
            candidates,
            gpu,
        } => CliError::UnknownCounter {
            hint: format!(
                "{} (counters of Arm's Mali database need a Mali GPU: {})",
                crate::names::hint(&name, candidates.iter().map(String::as_str)),
                error_chain(&gpu)
            ),
            name,
        },
        StatError::NotCountable { .. } | StatError::Event(_) => {
            CliError::Usage(error_chain(&error))
        }
        StatError::Pmus(_) => CliError::PmuData(error_chain(&error)),
        StatError::Target(e) => CliError::Target(e),
        other => CliError::Other(error_chain(&other)),
    }
}

/// The metrics as a table: each value with its unit, or why it has none; over every core type, then over
/// each where the events are counted on several.
fn metrics_table(metrics: &[MetricTotal]) -> String {
    let mut table = Table::new(&["metric", "value", "unit", "cores", "group", "note"]);
    for MetricTotal {
        metric: m,
        value,
        pmu,
    } in metrics
    {
        let (value, note) = match value {
            MetricValue::Value {
                value,
                scaled,
                formula,
            } => {
                let mut notes = Vec::new();
                if m.formulas.len() > 1 {
                    notes.push(format!("from {formula}"));
                }
                if *scaled {
                    notes.push("inputs scaled (multiplexed)".to_owned());
                }
                (format!("{value:.2}"), notes.join("; "))
            }
            MetricValue::Unavailable(reason) => ("-".to_owned(), format!("unavailable: {reason}")),
        };
        table.row(vec![
            m.name.to_owned(),
            value,
            m.unit.to_owned(),
            pmu.clone().unwrap_or_else(|| "all".to_owned()),
            m.group.to_owned(),
            note,
        ]);
    }
    format!("\nMetrics:\n\n{}", table.render())
}

/// perf's note for a count the kernel multiplexed: the share of the time it was counted.
fn share_note(multiplexed: bool, share: Option<f64>) -> String {
    match (multiplexed, share) {
        (true, Some(share)) => format!("scaled, counted {:.2}%", share * 100.0),
        (true, None) => "scaled (multiplexed)".to_owned(),
        (false, _) => String::new(),
    }
}

/// The table of a counting, as `perf stat` reads: what was counted in the header; a row per counter with
/// its value in a unit that reads well, its rate (CPUs utilised for times, GHz for cycles, per cycle for
/// instructions, per second otherwise) and its note; the counters not counted grouped by reason after.
fn table(report: &Report) -> String {
    let seconds = report.elapsed.as_secs_f64();
    let total_of = |counter: CpuCounter| {
        report
            .cpu
            .iter()
            .filter(|t| t.counter == counter)
            .map(|t| t.total)
            .sum::<u64>()
    };
    let counted = |counter: CpuCounter| report.cpu.iter().any(|t| t.counter == counter);
    let mut table = Table::new(&["value", "unit", "counter", "rate", "note"]);
    for t in &report.cpu {
        let unit = t.counter.unit();
        let (value, unit_text) = match unit {
            Unit::Nanoseconds => {
                let (value, unit) = time_text(t.total as f64);
                (value, unit.to_owned())
            }
            other => (grouped(i128::from(t.total)), other.to_string()),
        };
        let rate = match t.counter {
            _ if unit == Unit::Nanoseconds && seconds > 0.0 => {
                format!("{:.3} CPUs utilised", t.total as f64 / 1e9 / seconds)
            }
            CpuCounter::Cycles
                if counted(CpuCounter::TaskClock) && total_of(CpuCounter::TaskClock) > 0 =>
            {
                format!(
                    "{:.3} GHz",
                    t.total as f64 / total_of(CpuCounter::TaskClock) as f64
                )
            }
            CpuCounter::Instructions
                if counted(CpuCounter::Cycles) && total_of(CpuCounter::Cycles) > 0 =>
            {
                format!(
                    "{:.2} per cycle",
                    t.total as f64 / total_of(CpuCounter::Cycles) as f64
                )
            }
            _ if seconds > 0.0 => rate_text(t.total as f64 / seconds),
            _ => String::new(),
        };
        table.row(vec![
            value,
            unit_text,
            t.name(),
            rate,
            share_note(t.multiplexed, t.counted_share),
        ]);
    }
    // The Arm PMU events: each summed, then each core type's part.
    let event_total = |name: &str, pmu: Option<&str>| {
        report
            .events
            .iter()
            .filter(|e| e.event == name && e.pmu.as_deref() == pmu)
            .map(|e| e.total)
            .sum::<u64>()
    };
    for e in &report.events {
        let cycles = event_total("CPU_CYCLES", e.pmu.as_deref());
        let rate = match e.event.as_str() {
            "INST_RETIRED" if cycles > 0 => {
                format!("{:.2} per cycle", e.total as f64 / cycles as f64)
            }
            _ if seconds > 0.0 => rate_text(e.total as f64 / seconds),
            _ => String::new(),
        };
        let mut note = share_note(e.multiplexed, e.counted_share);
        if let Some(core) = &e.core {
            if e.counted_share.is_none() {
                note = format!("not counted: never ran on the {core} cores");
            } else if note.is_empty() {
                note = format!("{core} cores");
            } else {
                note = format!("{core} cores; {note}");
            }
        }
        table.row(vec![
            grouped(i128::from(e.total)),
            e.unit.to_string(),
            e.name.clone(),
            rate,
            note,
        ]);
    }
    for g in &report.gpu {
        table.row(vec![
            significant(g.value),
            g.counter.unit().to_string(),
            g.counter.name().to_owned(),
            String::new(),
            "Mali GPU (whole GPU)".to_owned(),
        ]);
    }
    for d in &report.database {
        table.row(vec![
            d.value.map_or_else(|| "-".to_owned(), significant),
            d.units.to_owned(),
            d.name.to_owned(),
            String::new(),
            "Mali GPU (Arm's database)".to_owned(),
        ]);
    }
    let kernel = match report.kernel_excluded {
        true => "user space only",
        false => "user space and kernel",
    };
    let mut text = format!(
        "Counters for {} ({kernel}):\n\n{}",
        report.scope,
        table.render()
    );
    // The counters not counted, one line per reason.
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for u in &report.cpu_unavailable {
        if !report.cpu_counters.contains(&u.counter) {
            continue;
        }
        match reasons.iter_mut().find(|(r, _)| *r == u.reason) {
            Some((_, names)) => names.push(u.counter.name()),
            None => reasons.push((&u.reason, vec![u.counter.name()])),
        }
    }
    // The events not counted on a core type, or at all.
    let event_reasons: Vec<(String, String)> = report
        .event_notes
        .iter()
        .map(|n| {
            let name = match &n.pmu {
                Some(pmu) => format!("{pmu}/{}/", n.event),
                None => n.event.clone(),
            };
            (name, n.reason.to_string())
        })
        .collect();
    for (name, reason) in &event_reasons {
        match reasons.iter_mut().find(|(r, _)| r == reason) {
            Some((_, names)) => names.push(name),
            None => reasons.push((reason, vec![name])),
        }
    }
    if !reasons.is_empty() {
        text.push_str("\nnot counted:\n");
        for (reason, names) in reasons {
            text.push_str(&format!(
                "  {} ({}): {reason}\n",
                names.join(", "),
                names.len()
            ));
        }
    }
    if let Some(reason) = &report.gpu_unavailable {
        text.push_str(&format!("\nGPU counters: none ({})\n", error_chain(reason)));
    }
    text.push_str(&format!("\n{:>12.3} s elapsed\n", seconds));
    if let Some(times) = report.times {
        text.push_str(&format!(
            "{:>12.3} s user\n{:>12.3} s system\n",
            times.user.as_secs_f64(),
            times.system.as_secs_f64()
        ));
    }
    if !report.command.is_empty() {
        text.push_str(&format!("exit status {}\n", report.exit_code()));
    }
    text
}
