//! `lizard report FILE`: the HTML report of a capture saved with `lizard capture --format json`, or
//! (`--format perfetto`) the capture as a native Perfetto trace.

use lizard_core::capture::Capture;
use lizard_render::{perfetto, report};

use crate::args::{ReportArgs, ReportFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output;
use lizard_core::input::InputKind;

/// Runs `lizard report`.
pub fn run(args: &ReportArgs) -> Result<i32, CliError> {
    let destination = output::Destination::open(args.output.as_deref())?;
    if args.format == ReportFormat::Perfetto {
        destination.check_binary("a Perfetto trace")?;
    }
    let text = inputs()?.read_text(&args.capture, InputKind::CaptureDocument)?;
    let capture = Capture::from_json(&text).map_err(|source| CliError::BadCapture {
        path: args.capture.clone(),
        source,
    })?;
    if capture.counters.is_empty() {
        return Err(CliError::NothingUsable {
            path: args.capture.clone(),
            expected: "a capture document with counters".to_owned(),
            found: "it has none".to_owned(),
        });
    }
    match args.format {
        ReportFormat::Html => destination.write_text(&report::html(&capture))?,
        ReportFormat::Perfetto => destination.write_with(|out| perfetto::write(&capture, out))?,
    }
    Ok(0)
}
