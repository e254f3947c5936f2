//! Rust values as Python ones: documents through their serde form, series as NumPy arrays.

use numpy::PyArray1;
use pyo3::prelude::*;
use serde::Serialize;

/// `value`'s serde form as Python data (dicts, lists, str, int, float, bool, None), through JSON: the
/// same members the CLI's `--format json` documents have.
pub fn to_python<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A `u64` array holding `values`, moved without a copy.
pub fn u64_array(py: Python<'_>, values: Vec<u64>) -> Py<PyArray1<u64>> {
    PyArray1::from_vec(py, values).unbind()
}

/// An `f64` array holding `values`, moved without a copy.
pub fn f64_array(py: Python<'_>, values: Vec<f64>) -> Py<PyArray1<f64>> {
    PyArray1::from_vec(py, values).unbind()
}
