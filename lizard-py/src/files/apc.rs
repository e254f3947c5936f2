//! `apc(path)`: a Streamline local capture directory (`PATH.apc`) read through [`Recording`], its values
//! gathered per counter into NumPy arrays.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lizard_core::input::Inputs;
use lizard_core::{RecordedValue, Recording, RecordingError, RecordingSummary};
use numpy::{PyArray1, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{f64_array, to_python, u64_array};
use crate::errors::{os_error, raise, FormatError};

/// The core array's entry for a value of the whole system.
const WHOLE_SYSTEM: i64 = -1;

/// One counter's values in a local capture, in the order recorded. Perf counter values are the increase
/// since the previous reading on the same core.
#[pyclass(frozen, module = "lizard_rs")]
pub struct ApcSeries {
    /// The gatord key.
    #[pyo3(get)]
    key: i32,
    /// Nanoseconds since capture start (uint64).
    #[pyo3(get)]
    timestamps: Py<PyArray1<u64>>,
    /// The values (float64).
    #[pyo3(get)]
    values: Py<PyArray1<f64>>,
    /// The CPU each value was counted on, -1 for a value of the whole system (int64).
    #[pyo3(get)]
    cores: Py<PyArray1<i64>>,
}

#[pymethods]
impl ApcSeries {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ApcSeries(key={:#x}, values={})",
            self.key,
            self.values.bind(py).len()
        )
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.values.bind(py).len()
    }
}

/// A Streamline local capture directory read whole: its values per counter and what the walk summed up.
#[pyclass(frozen, module = "lizard_rs")]
pub struct ApcRecording {
    /// The directory read.
    #[pyo3(get)]
    path: PathBuf,
    /// The protocol version `captured.xml` gives; None without one (950 is assumed).
    #[pyo3(get)]
    protocol: Option<u32>,
    /// Counter name → ApcSeries, in the order of their gatord keys.
    #[pyo3(get)]
    counters: Py<PyDict>,
    /// The SUMMARY's clocks and attributes, frame counts per type, perf events and `errors` (as texts),
    /// as `lizard apc-dump --format json` writes them.
    #[pyo3(get)]
    summary: Py<PyAny>,
    /// What could not be read in the frame file, one text each.
    #[pyo3(get)]
    issues: Vec<String>,
    /// How many values the capture holds (over every counter).
    #[pyo3(get)]
    samples: u64,
}

#[pymethods]
impl ApcRecording {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ApcRecording(path={:?}, protocol={}, counters={}, samples={}, issues={})",
            self.path.display().to_string(),
            self.protocol
                .map_or_else(|| "None".to_owned(), |p| p.to_string()),
            self.counters.bind(py).len(),
            self.samples,
            self.issues.len()
        )
    }
}

/// One counter's values as gathered during the walk.
#[derive(Default)]
struct Gathered {
    /// The counter's name.
    name: String,
    /// Nanoseconds since capture start.
    timestamps: Vec<u64>,
    /// The values.
    values: Vec<f64>,
    /// The core, or [`WHOLE_SYSTEM`].
    cores: Vec<i64>,
}

/// What a walk of the whole capture gives.
struct Walked {
    /// The protocol version `captured.xml` gives.
    protocol: Option<u32>,
    /// The values by gatord key.
    by_key: BTreeMap<i32, Gathered>,
    /// The rest.
    summary: RecordingSummary,
}

/// Opens and walks the capture at `path`, gathering every value by key.
fn walk(path: &Path, inputs: &Inputs<'_>) -> Result<Walked, RecordingError> {
    let mut recording = Recording::open_with(path, inputs)?;
    let protocol = recording.protocol();
    let mut by_key: BTreeMap<i32, Gathered> = BTreeMap::new();
    let summary = recording.walk(|v: &RecordedValue<'_>| -> Result<(), RecordingError> {
        let series = by_key.entry(v.key).or_insert_with(|| Gathered {
            name: v.counter.clone().into_owned(),
            ..Gathered::default()
        });
        series.timestamps.push(v.timestamp_ns);
        series.values.push(v.value.as_f64());
        series.cores.push(v.core.map_or(WHOLE_SYSTEM, i64::from));
        Ok(())
    })?;
    Ok(Walked {
        protocol,
        by_key,
        summary,
    })
}

/// The Python exception for `error`: `OSError` for a file that cannot be read (`FileNotFoundError` for a
/// path that does not exist, though the reader calls it not a directory), `FormatError` otherwise.
fn recording_error(py: Python<'_>, error: &RecordingError) -> PyErr {
    match error {
        RecordingError::Io { path, source } => os_error(path, source),
        RecordingError::Input(input) => crate::inputs::error(py, input),
        RecordingError::NotADirectory { path } => match std::fs::metadata(path) {
            Err(missing) => os_error(path, &missing),
            Ok(_) => raise::<FormatError>(py, error),
        },
        other => raise::<FormatError>(py, other),
    }
}

/// Reads the Streamline local capture directory `path` (`x.apc`: `0000000000`, `captured.xml`,
/// `events.xml`) into an ApcRecording: every counter's values as NumPy arrays, with the capture's summary.
/// A path that is not a directory, or a malformed `captured.xml` or `events.xml`, raises FormatError; a
/// path that does not exist or a file that cannot be read (such as a missing frame file), OSError. Frames
/// that cannot be decoded are not an error: the walk stops or skips there and says so in `issues`.
#[pyfunction]
pub fn apc(py: Python<'_>, path: PathBuf) -> PyResult<ApcRecording> {
    let inputs = crate::inputs::inputs()?;
    let walked = py
        .detach(|| walk(&path, &inputs))
        .map_err(|e| recording_error(py, &e))?;
    let counters = PyDict::new(py);
    for (key, gathered) in walked.by_key {
        let series = ApcSeries {
            key,
            timestamps: u64_array(py, gathered.timestamps),
            values: f64_array(py, gathered.values),
            cores: PyArray1::from_vec(py, gathered.cores).unbind(),
        };
        // Two keys whose counters share a name are told apart by their keys.
        let name = if counters.contains(&gathered.name)? {
            format!("{} (key {key:#x})", gathered.name)
        } else {
            gathered.name
        };
        counters.set_item(name, Py::new(py, series)?)?;
    }
    Ok(ApcRecording {
        path,
        protocol: walked.protocol,
        counters: counters.unbind(),
        summary: to_python(py, &walked.summary)?.unbind(),
        issues: walked
            .summary
            .issues
            .iter()
            .map(ToString::to_string)
            .collect(),
        samples: walked.summary.samples,
    })
}

/// Adds `apc` and its classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<ApcRecording>()?;
    module.add_class::<ApcSeries>()?;
    module.add_function(wrap_pyfunction!(apc, module)?)?;
    Ok(())
}
