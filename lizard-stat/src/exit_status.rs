//! The exit status a counted command is passed on with.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The exit status a shell would report for a command: its code, or 128 + the signal number.
pub fn shell_status(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_itself_and_a_signal_is_128_more() {
        assert_eq!(shell_status(ExitStatus::from_raw(3 << 8)), 3);
        // Killed by SIGKILL (9).
        assert_eq!(shell_status(ExitStatus::from_raw(9)), 137);
    }
}
