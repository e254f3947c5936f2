//! `events(path)`: a gatord events XML file as rows, one dict per event ([`Events::rows`]).

use std::path::PathBuf;

use gator_xml::events::EventRow;
use gator_xml::{Events, XmlError};
use pyo3::prelude::*;

use crate::convert::to_python;
use crate::errors::{raise, FormatError};
use lizard_core::input::InputKind;

/// Reads the gatord events XML file at `path` (an `<events>` document, or one of gatord's `events-*.xml`
/// fragments) as a list of dicts, one per event, category by category in document order: `category`,
/// `counter_set`, `counter`, `event`, `title`, `name`, `description`, `units`, `class`, `multiplier`, as
/// `lizard events --format json` writes them. A file that cannot be read raises OSError, one over its limit
/// InputLimitError; malformed XML, or XML of another kind, FormatError.
#[pyfunction]
pub fn events(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let bytes = crate::inputs::read(py, &path, InputKind::EventsXml)?;
    let document = py
        .detach(|| Events::from_bytes(&bytes))
        .map_err(|e: XmlError| raise::<FormatError>(py, &e))?;
    let rows: Vec<EventRow<'_>> = document.rows().collect();
    to_python(py, &rows)
}

/// Adds `events` to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(events, module)?)?;
    Ok(())
}
