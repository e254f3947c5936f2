//! `lizard stat`: count the CPU events of a command (`-- CMD ARGS…`), an existing process (`--pid`) or
//! the whole system (`--system-wide`, `--cpu`), like `perf stat`, and the Mali GPU's counters over the
//! same time (the whole GPU: its counters do not follow a process). The counting is
//! [`lizard_core::stat`]'s; this prints its report.

use hwcpipe::counting::Target;
use hwcpipe::cpu::MetricValue;
use hwcpipe::KernelCounting;
use lizard_core::error_chain;
use lizard_core::stat::{self, MetricTotal, Report, StatError};

use crate::args::{ListFormat, StatArgs};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// Runs `lizard stat`.
pub fn run(args: &StatArgs) -> Result<i32, CliError> {
    interrupt::install();
    let choice = stat::Choice::new(&args.counters, args.metrics);
    let target = args.target.target()?.ok_or_else(|| {
        CliError::Usage(
            "say what to count: `-- CMD ARGS…`, --pid PID, --system-wide or --cpu LIST".into(),
        )
    })?;
    if matches!(target, Target::Cpus { .. }) && args.duration.is_none() {
        eprintln!("counting {} until Ctrl-C", target.scope());
    }
    let kernel = if args.user_only {
        KernelCounting::Exclude
    } else {
        KernelCounting::Auto
    };
    let options = stat::Options::new(args.duration, kernel);
    let report =
        stat::count(&target, &choice, &options, &interrupt::interrupted).map_err(cli_error)?;
    match args.format {
        // A command's own output went to the same terminal: keep ours on stderr, as perf does.
        ListFormat::Table => {
            eprint!("{}", table(&report));
            if let Some(metrics) = &report.metrics {
                eprint!("{}", metrics_table(metrics));
            }
        }
        ListFormat::Json => {
            let doc = serde_json::to_value(&report).map_err(|e| CliError::Other(e.to_string()))?;
            output::write(None, &output::to_json(&doc))?;
        }
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
        StatError::NotCountable { .. } => CliError::Usage(error_chain(&error)),
        StatError::Target(e) => CliError::Target(e),
        other => CliError::Other(error_chain(&other)),
    }
}

/// The metrics as a table: each value with its unit, or why it has none.
fn metrics_table(metrics: &[MetricTotal]) -> String {
    let mut table = Table::new(&["metric", "value", "unit", "group", "note"]);
    for MetricTotal { metric: m, value } in metrics {
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

/// The table of a counting: the CPU rows (none when only GPU counters were asked for), then the GPU rows.
fn table(report: &Report) -> String {
    let mut table = Table::new(&["counter", "value", "unit", "note"]);
    for t in &report.cpu {
        table.row(vec![
            t.name(),
            t.total.to_string(),
            t.counter.unit().to_string(),
            if t.multiplexed {
                "scaled (multiplexed)".to_owned()
            } else {
                String::new()
            },
        ]);
    }
    for counter in &report.cpu_counters {
        if let Some(u) = report
            .cpu_unavailable
            .iter()
            .find(|u| u.counter == *counter)
        {
            table.row(vec![
                counter.name().to_owned(),
                "-".to_owned(),
                counter.unit().to_string(),
                format!("not counted: {}", u.reason),
            ]);
        }
    }
    for g in &report.gpu {
        table.row(vec![
            g.counter.name().to_owned(),
            format!("{}", g.value),
            g.counter.unit().to_string(),
            "Mali GPU (whole GPU)".to_owned(),
        ]);
    }
    for d in &report.database {
        table.row(vec![
            d.name.to_owned(),
            d.value.map_or_else(|| "-".to_owned(), |v| format!("{v}")),
            d.units.to_owned(),
            "Mali GPU (Arm's database)".to_owned(),
        ]);
    }
    let gpu_note = match &report.gpu_unavailable {
        Some(reason) => format!("GPU counters: none ({})\n", error_chain(reason)),
        None => String::new(),
    };
    format!(
        "Counters for {}:\n\n{}\n{gpu_note}{:.3} s elapsed; exit status {}\n",
        report.scope,
        table.render(),
        report.elapsed.as_secs_f64(),
        report.exit_code()
    )
}
