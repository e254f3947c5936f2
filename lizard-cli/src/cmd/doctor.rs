//! `lizard doctor`: each source's checks (`lizard_doctor`, and the CUDA driver as `lizard_trace` finds
//! it), printed as a table or JSON. The exit status says whether every source named with `--source` gives
//! counters, or, without it, whether every source this machine has does: a source that is not on this
//! machine (no Mali GPU, no CUDA driver) fails only when named.

use lizard_core::{GatordAddress, Timeouts};
use lizard_doctor::{self as doctor, Report};

use crate::args::{DoctorArgs, DoctorSource, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::table::Table;

/// Runs `lizard doctor`.
pub fn run(args: &DoctorArgs) -> Result<i32, CliError> {
    let address = args
        .gatord
        .as_deref()
        .map(|text| {
            text.parse::<GatordAddress>()
                .map_err(|e| CliError::Usage(format!("--gatord {text}: {e}")))
        })
        .transpose()?;
    let destination = output::Destination::open(args.output.as_deref())?;
    let asked = !args.source.is_empty();
    let sources = match (args.source.as_slice(), &address) {
        ([], None) => vec![DoctorSource::Cpu, DoctorSource::Gpu, DoctorSource::Trace],
        ([], Some(_)) => vec![
            DoctorSource::Cpu,
            DoctorSource::Gpu,
            DoctorSource::Gatord,
            DoctorSource::Trace,
        ],
        (chosen, _) => chosen.to_vec(),
    };
    let mut reports = Vec::new();
    for source in sources {
        reports.push(match source {
            DoctorSource::Cpu => doctor::cpu(),
            DoctorSource::Gpu => doctor::gpu(),
            DoctorSource::Gatord => match &address {
                Some(address) => doctor::gatord(address, Timeouts::default()),
                None => {
                    return Err(CliError::Usage(
                        "--source gatord needs --gatord HOST:PORT".to_owned(),
                    ))
                }
            },
            DoctorSource::Trace => doctor::trace_server(),
        });
    }
    let report = match asked {
        true => Report::asked(reports),
        false => Report::new(reports),
    };
    let text = match args.format {
        ListFormat::Json => {
            let mut text = serde_json::to_string_pretty(&report)
                .map_err(|e| CliError::Other(format!("cannot write JSON: {e}")))?;
            text.push('\n');
            text
        }
        ListFormat::Table => table(&report),
    };
    destination.write_text(&text)?;
    Ok(report.exit_code())
}

/// The report as one table per source.
fn table(report: &Report) -> String {
    let mut text = String::new();
    for source in &report.sources {
        text.push_str(&source.headline());
        text.push('\n');
        let mut table = Table::new(&["check", "status", "found"]);
        for check in &source.checks {
            table.row(vec![
                check.name.clone(),
                check.status.to_string(),
                check.found.clone(),
            ]);
        }
        text.push_str(&table.render());
        for check in source
            .checks
            .iter()
            .filter(|c| c.cause.is_some() || c.fix.is_some())
        {
            if let Some(cause) = &check.cause {
                text.push_str(&format!("  {}: why: {cause}\n", check.name));
            }
            if let Some(fix) = &check.fix {
                text.push_str(&format!("  {}: fix: {fix}\n", check.name));
            }
        }
        text.push('\n');
    }
    text
}
