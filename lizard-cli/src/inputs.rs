//! The input files a command reads: each through [`lizard_core::input`], under its kind's limit (or
//! `--max-input`, or `LIZARD_MAX_INPUT`), and stopped by Ctrl-C or SIGTERM.

use std::sync::OnceLock;

use lizard_core::input::Inputs;

use crate::error::CliError;
use crate::interrupt;

/// `--max-input`, set once by `main`.
static MAX_INPUT: OnceLock<Option<u64>> = OnceLock::new();

/// Sets the limit `--max-input` gives (`None`: `LIZARD_MAX_INPUT`, else each kind's own).
pub fn set_max_input(bytes: Option<u64>) {
    let _ = MAX_INPUT.set(bytes);
}

fn stopped() -> bool {
    interrupt::interrupted()
}

/// How this command reads its input files. Installs the Ctrl-C handler, so that a read waiting for a
/// FIFO's writer ends at Ctrl-C or SIGTERM.
pub fn inputs() -> Result<Inputs<'static>, CliError> {
    interrupt::install();
    let inputs = match MAX_INPUT.get().copied().flatten() {
        Some(bytes) => Inputs::new().with_max_bytes(Some(bytes)),
        None => Inputs::from_env()
            .map_err(|e| CliError::Usage(format!("{}: {e}", lizard_core::input::MAX_INPUT_VAR)))?,
    };
    Ok(inputs.stopped_by(&stopped))
}
