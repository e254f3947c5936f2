//! The exit status `lizard` passes on for a counted command.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The exit status a shell would report for a command: its code, or 128 + the signal number.
pub fn shell_status(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}
