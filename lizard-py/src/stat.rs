//! `stat()`: counts a command (or a process, or CPUs) from start to end, as `lizard stat` does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hwcpipe::counting::Target;
use hwcpipe::KernelCounting;
use lizard_core::sources::Local;
use lizard_stat::{self as engine, StatError as EngineStatError};
use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::capture::{seconds, warn};
use crate::convert::to_python;
use crate::errors::{self, CounterError, StatError};
use crate::sources;

/// How often a counting in progress lets Python look at its signals.
const POLL: Duration = Duration::from_millis(50);

/// What `command` and `target` say to count: a command (a list of its words) or a target.
fn what(command: Option<Vec<String>>, target: Option<&Bound<'_, PyAny>>) -> PyResult<Target> {
    match (command, target) {
        (Some(command), None) if !command.is_empty() => Ok(Target::Command(command)),
        (Some(_), None) => Err(PyValueError::new_err("the command is empty")),
        (None, Some(target)) => match sources::local(Some(target), Local::Off)? {
            Local::Target(target) => Ok(target),
            _ => Err(PyValueError::new_err(
                "stat counts a command, a process (pid) or CPUs (\"system\", \"cpus:LIST\")",
            )),
        },
        (Some(_), Some(_)) => Err(PyTypeError::new_err("give a command or a target, not both")),
        (None, None) => Err(PyTypeError::new_err(
            "say what to count: a command or target=",
        )),
    }
}

/// `stat(command=None, counters=None, *, target=None, metrics=False, user_only=False, duration=None)`:
/// the totals of `lizard stat --format json`, as data, with `exit_code` the command's status as a shell
/// reports it (0 for a process or CPUs).
#[pyfunction]
#[pyo3(signature = (command = None, counters = None, *, target = None, metrics = false, user_only = false, duration = None))]
fn stat<'py>(
    py: Python<'py>,
    command: Option<Vec<String>>,
    counters: Option<Vec<String>>,
    target: Option<&Bound<'py, PyAny>>,
    metrics: bool,
    user_only: bool,
    duration: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let target = what(command, target)?;
    let duration = duration.map(|d| seconds("duration", d)).transpose()?;
    let choice = engine::Choice::new(&counters.unwrap_or_default(), metrics);
    let kernel = match user_only {
        true => KernelCounting::Exclude,
        false => KernelCounting::Auto,
    };
    let options = engine::Options::new(duration, kernel);
    let stop = Arc::new(AtomicBool::new(false));
    let counting = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("lizard-stat".into())
            .spawn(move || {
                engine::count(&target, &choice, &options, &|| stop.load(Ordering::Relaxed))
            })
            .map_err(|e| StatError::new_err(format!("cannot start the counting thread: {e}")))?
    };
    // Ctrl-C stops a process or CPUs counting; a command gets the signal from the terminal itself.
    let mut interrupted = false;
    while !counting.is_finished() {
        py.detach(|| std::thread::sleep(POLL));
        if let Err(error) = py.check_signals() {
            if !error.is_instance_of::<PyKeyboardInterrupt>(py) {
                stop.store(true, Ordering::Relaxed);
                let _ = py.detach(|| counting.join());
                return Err(error);
            }
            interrupted = true;
            stop.store(true, Ordering::Relaxed);
        }
    }
    let report = py
        .detach(|| counting.join())
        .map_err(|_| StatError::new_err("the counting failed"))?
        .map_err(|error| match &error {
            EngineStatError::UnknownCounter { .. }
            | EngineStatError::NoGpuForDatabase { .. }
            | EngineStatError::NotCountable { .. }
            | EngineStatError::Event(_) => errors::raise::<CounterError>(py, &error),
            _ => errors::raise::<StatError>(py, &error),
        })?;
    if interrupted {
        warn(py, "interrupted; the totals counted until then are kept")?;
    }
    let document = to_python(py, &report)?;
    document.set_item("exit_code", report.exit_code())?;
    Ok(document)
}

/// Adds `stat` to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(stat, module)?)
}
