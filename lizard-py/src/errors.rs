//! The exceptions of `lizard_rs`, one class per concern, all under [`LizardError`]; and the one way a Rust
//! error becomes one of them ([`raise`]), keeping its typed cause.
//!
//! Every exception carries `kind`, the name of the Rust error's variant (`"NewerVersion"`), so that code can
//! tell causes apart without reading messages, and `__cause__`, one exception per link of the Rust error's
//! source chain. Failures to read a file are Python's own `OSError` family (`FileNotFoundError`, …) with
//! the path.

use std::error::Error;
use std::path::Path;

use pyo3::exceptions::{PyException, PyOSError};
use pyo3::prelude::*;
use pyo3::types::PyString;

pyo3::create_exception!(
    lizard_rs,
    LizardError,
    PyException,
    "The base of every error lizard_rs raises (besides OSError for files that cannot be read)."
);
pyo3::create_exception!(
    lizard_rs,
    LizardWarning,
    pyo3::exceptions::PyUserWarning,
    "A capture ended early or with a source's error; what was captured until then is kept."
);
pyo3::create_exception!(
    lizard_rs,
    SourceError,
    LizardError,
    "No counter source could be opened: gatord, the local CPU counters, the target to count."
);
pyo3::create_exception!(
    lizard_rs,
    GatordError,
    SourceError,
    "The gatord named could not be used, or it failed during a capture."
);
pyo3::create_exception!(
    lizard_rs,
    CounterError,
    LizardError,
    "A counter named is unknown, or the counters named do not fit the hardware's slots together."
);
pyo3::create_exception!(
    lizard_rs,
    CaptureError,
    LizardError,
    "The engine could not start, run or stop a capture."
);
pyo3::create_exception!(
    lizard_rs,
    StatError,
    LizardError,
    "A command or process could not be counted."
);
pyo3::create_exception!(
    lizard_rs,
    FormatError,
    LizardError,
    "A file's contents are not what its format says: a capture document, a local capture, a trace ring, \
     an STM dump, an events file."
);
pyo3::create_exception!(
    lizard_rs,
    InputLimitError,
    LizardError,
    "An input file is larger than the limit for its kind (LIZARD_MAX_INPUT raises it), there is no memory \
     to hold it, or a text input is not UTF-8."
);
pyo3::create_exception!(
    lizard_rs,
    MaliError,
    LizardError,
    "Arm's Mali database has no such GPU or counter, or an equation cannot be evaluated on the values given."
);

/// The exception of class `E` for `error`: its message the error's own line, `kind` its variant's name, and
/// `__cause__` the chain of its sources, each one exception of the same class.
pub fn raise<E: pyo3::PyTypeInfo>(py: Python<'_>, error: &(dyn Error + 'static)) -> PyErr {
    let err = exception::<E>(py, error);
    let mut link = err.clone_ref(py);
    let mut source = error.source();
    while let Some(cause) = source {
        let next = exception::<E>(py, cause);
        link.set_cause(py, Some(next.clone_ref(py)));
        link = next;
        source = cause.source();
    }
    err
}

/// One exception of class `E` saying `error` (its own line only), with `kind` set.
fn exception<E: pyo3::PyTypeInfo>(py: Python<'_>, error: &(dyn Error + 'static)) -> PyErr {
    let err = PyErr::from_type(py.get_type::<E>(), error.to_string());
    let value = err.value(py);
    // Setting an attribute on a fresh exception instance cannot fail.
    let _ = value.setattr("kind", PyString::new(py, &variant_name(error)));
    err
}

/// The name of `error`'s variant as its `Debug` form starts (`NewerVersion { found: 2 }` → `NewerVersion`);
/// a struct error gives its type's name.
fn variant_name(error: &dyn Error) -> String {
    let debug = format!("{error:?}");
    debug
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|word| !word.is_empty())
        .unwrap_or("Error")
        .to_owned()
}

/// Python's `OSError` (its subclass for the errno: `FileNotFoundError`, `PermissionError`, …) for a file
/// at `path` that could not be read.
pub fn os_error(path: &Path, error: &std::io::Error) -> PyErr {
    let message = error.to_string();
    match error.raw_os_error() {
        Some(errno) => PyOSError::new_err((errno, message, path.display().to_string())),
        None => PyOSError::new_err(format!("{}: {message}", path.display())),
    }
}

/// Adds the exception classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("LizardError", py.get_type::<LizardError>())?;
    module.add("LizardWarning", py.get_type::<LizardWarning>())?;
    module.add("SourceError", py.get_type::<SourceError>())?;
    module.add("GatordError", py.get_type::<GatordError>())?;
    module.add("CounterError", py.get_type::<CounterError>())?;
    module.add("CaptureError", py.get_type::<CaptureError>())?;
    module.add("StatError", py.get_type::<StatError>())?;
    module.add("FormatError", py.get_type::<FormatError>())?;
    module.add("MaliError", py.get_type::<MaliError>())?;
    module.add("InputLimitError", py.get_type::<InputLimitError>())?;
    Ok(())
}
