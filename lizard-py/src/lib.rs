//! `lizard_rs._native`: the extension module under the `lizard_rs` Python package. Live counters
//! (modules `capture`, `session`, `stat`; `cpu_events` lists the CPU's Arm PMU events), every file lizard
//! reads or writes (`files`) and Arm's Mali database (`mali`), over the workspace's library crates. The
//! package's Python half (`python/lizard_rs`) re-exports it with its type stubs.

mod capture;
mod convert;
mod cpu_events;
mod errors;
mod files;
mod inputs;
mod mali;
mod session;
mod sources;
mod stat;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(module)?;
    capture::register(module)?;
    session::register(module)?;
    stat::register(module)?;
    files::register(module)?;
    mali::register(module)?;
    Ok(())
}
