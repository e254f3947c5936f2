//! `lizard stat -- CMD ARGS…`: run a command and count its CPU events, like `perf stat`.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::time::Instant;

use hwcpipe::{CpuConfig, CpuCounter, CpuError, CpuProfiler, CpuTarget, KernelCounting};
use serde_json::json;

use crate::args::{ListFormat, StatArgs};
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use crate::table::Table;

/// The counters named in `names`, or all of them.
fn counters(names: &[String]) -> Result<Vec<CpuCounter>, CliError> {
    if names.is_empty() {
        return Ok(CpuCounter::ALL.to_vec());
    }
    names
        .iter()
        .map(|name| {
            CpuCounter::ALL
                .into_iter()
                .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
                .ok_or_else(|| CliError::UnknownCounter {
                    name: name.clone(),
                    hint: crate::names::hint(name, CpuCounter::ALL.iter().map(|c| c.name())),
                })
        })
        .collect()
}

/// The exit status a shell would report: the code, or 128 + the signal number.
fn shell_status(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

fn profiler_error(error: CpuError, program: &str) -> CliError {
    match error {
        CpuError::Spawn(e) => CliError::Other(format!("cannot run '{program}': {e}")),
        other => CliError::Permission(crate::source::chain(&other)),
    }
}

/// Runs `lizard stat`.
pub fn run(args: &StatArgs) -> Result<i32, CliError> {
    interrupt::install();
    let chosen = counters(&args.counters)?;
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| CliError::Other("no command given".into()))?;
    let mut command = Command::new(program);
    command.args(rest);
    let kernel = if args.user_only {
        KernelCounting::Exclude
    } else {
        KernelCounting::Auto
    };
    let config = CpuConfig::new(&chosen)
        .target(CpuTarget::Spawn(command))
        .kernel(kernel);
    let mut profiler = CpuProfiler::new(config).map_err(|e| profiler_error(e, program))?;
    let started = Instant::now();
    profiler.run().map_err(|e| profiler_error(e, program))?;
    let status = match profiler.child() {
        Some(child) => child
            .wait()
            .map_err(|e| CliError::Other(format!("waiting for '{program}': {e}")))?,
        None => return Err(CliError::Other(format!("'{program}' did not start"))),
    };
    let elapsed = started.elapsed();
    profiler.sample().map_err(|e| profiler_error(e, program))?;
    let _ = profiler.stop();
    let sample = profiler.last_sample();
    let code = shell_status(status);

    let text = match args.format {
        ListFormat::Table => {
            let mut table = Table::new(&["counter", "value", "unit", "note"]);
            for counter in &chosen {
                let (value, note) =
                    match (sample.reading(*counter), profiler.availability(*counter)) {
                        (Some(r), _) if r.is_multiplexed() => {
                            (r.total.to_string(), "scaled (multiplexed)".to_owned())
                        }
                        (Some(r), _) => (r.total.to_string(), String::new()),
                        (None, Err(reason)) => ("-".to_owned(), format!("not counted: {reason}")),
                        (None, Ok(())) => ("-".to_owned(), "not counted".to_owned()),
                    };
                table.row(vec![
                    counter.name().to_owned(),
                    value,
                    counter.unit().to_string(),
                    note,
                ]);
            }
            format!(
                "Counters for '{}':\n\n{}\n{:.3} s elapsed; exit status {}\n",
                args.command.join(" "),
                table.render(),
                elapsed.as_secs_f64(),
                code
            )
        }
        ListFormat::Json => {
            let rows: Vec<_> = chosen
                .iter()
                .map(|counter| {
                    let reading = sample.reading(*counter);
                    json!({
                        "counter": counter.name(),
                        "unit": counter.unit().to_string(),
                        "value": reading.map(|r| r.total),
                        "multiplexed": reading.map(|r| r.is_multiplexed()),
                        "unavailable": profiler.availability(*counter).err().map(|r| r.to_string()),
                    })
                })
                .collect();
            output::to_json(&json!({
                "command": args.command,
                "exit_status": code,
                "elapsed_s": elapsed.as_secs_f64(),
                "kernel_excluded": profiler.kernel_excluded(),
                "counters": rows,
            }))
        }
    };
    // The command's own output went to the same terminal: keep ours on stderr for tables, as perf does.
    match args.format {
        ListFormat::Table => eprint!("{text}"),
        ListFormat::Json => output::write(None, &text)?,
    }
    Ok(code)
}
