//! `events(path)`: a gatord events XML file as rows, one dict per event ([`Events::rows`]).

use std::path::PathBuf;

use gator_xml::events::EventRow;
use gator_xml::{Events, XmlError};
use pyo3::prelude::*;

use crate::convert::to_python;
use crate::errors::{os_error, raise, FormatError};

/// Why an events file could not be read.
enum EventsFailure {
    /// The file could not be read.
    Read(std::io::Error),
    /// It is not an events document.
    Xml(XmlError),
}

/// Reads the gatord events XML file at `path` (an `<events>` document, or one of gatord's `events-*.xml`
/// fragments) as a list of dicts, one per event, category by category in document order: `category`,
/// `counter_set`, `counter`, `event`, `title`, `name`, `description`, `units`, `class`, `multiplier`, as
/// `lizard events --format json` writes them. A file that cannot be read raises OSError; malformed XML,
/// FormatError.
#[pyfunction]
pub fn events(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let document = py
        .detach(|| {
            let bytes = std::fs::read(&path).map_err(EventsFailure::Read)?;
            Events::from_bytes(&bytes).map_err(EventsFailure::Xml)
        })
        .map_err(|e| match e {
            EventsFailure::Read(source) => os_error(&path, &source),
            EventsFailure::Xml(error) => raise::<FormatError>(py, &error),
        })?;
    let rows: Vec<EventRow<'_>> = document.rows().collect();
    to_python(py, &rows)
}

/// Adds `events` to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(events, module)?)?;
    Ok(())
}
