//! `lizard report FILE`: the HTML report of a capture saved with `lizard capture --format json`.

use crate::args::ReportArgs;
use crate::document::Capture;
use crate::error::CliError;
use crate::output;
use crate::report;

/// Runs `lizard report`.
pub fn run(args: &ReportArgs) -> Result<i32, CliError> {
    let text =
        std::fs::read_to_string(&args.capture).map_err(|e| CliError::file(&args.capture, e))?;
    let capture = Capture::from_json(&text).map_err(|source| CliError::BadCapture {
        path: args.capture.clone(),
        source,
    })?;
    output::write(args.output.as_deref(), &report::html(&capture))?;
    Ok(0)
}
