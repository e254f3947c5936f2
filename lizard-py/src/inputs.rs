//! The files `lizard_rs` reads, through the same bounded reader as the `lizard` command
//! ([`lizard_core::input`]): each kind under its size limit (`LIZARD_MAX_INPUT` raises them all), a
//! directory refused, and a wait for a pipe's writer ended by Ctrl-C.

use std::path::Path;

use lizard_core::input::{InputError, InputKind, Inputs};
use pyo3::exceptions::{PyIsADirectoryError, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;

use crate::errors::{os_error, raise, InputLimitError};

/// Linux's errno for "is a directory".
const EISDIR: i32 = 21;

/// Whether a signal is waiting for Python (Ctrl-C): asked while a read waits for a pipe's writer.
fn signalled() -> bool {
    Python::attach(|py| py.check_signals().is_err())
}

/// How `lizard_rs` reads files: `LIZARD_MAX_INPUT`'s limit, else each kind's; stopped by Ctrl-C.
pub fn inputs() -> PyResult<Inputs<'static>> {
    let inputs = Inputs::from_env().map_err(|e| {
        PyValueError::new_err(format!("{}: {e}", lizard_core::input::MAX_INPUT_VAR))
    })?;
    Ok(inputs.stopped_by(&signalled))
}

/// The Python exception for an input that could not be read: OSError (its errno's subclass) where the
/// system refused (missing, no permission, a directory), KeyboardInterrupt for Ctrl-C, InputLimitError for
/// the rest (over its limit, no memory for it, not text).
pub fn error(py: Python<'_>, error: &InputError) -> PyErr {
    match error {
        InputError::Open { path, source } | InputError::Read { path, source } => {
            os_error(path, source)
        }
        InputError::Directory { path, .. } => {
            PyIsADirectoryError::new_err((EISDIR, error.to_string(), path.display().to_string()))
        }
        InputError::Stopped { .. } => PyKeyboardInterrupt::new_err(error.to_string()),
        other => raise::<InputLimitError>(py, other),
    }
}

/// Reads all of `path` as `kind`, without the GIL.
pub fn read(py: Python<'_>, path: &Path, kind: InputKind) -> PyResult<Vec<u8>> {
    let inputs = inputs()?;
    py.detach(|| inputs.read(path, kind))
        .map_err(|e| error(py, &e))
}

/// Reads all of `path` as UTF-8 text of `kind`, without the GIL.
pub fn read_text(py: Python<'_>, path: &Path, kind: InputKind) -> PyResult<String> {
    let inputs = inputs()?;
    py.detach(|| inputs.read_text(path, kind))
        .map_err(|e| error(py, &e))
}
