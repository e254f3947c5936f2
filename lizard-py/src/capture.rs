//! Live counters: `counters()` lists them, `capture()` captures them for a while. A capture's counters come
//! back with their values and timestamps as NumPy arrays, and the sampling account as data.

use std::ffi::CString;
use std::time::Duration;

use lizard_core::capture::{self as doc, collect, Cores, Plan, RunError, Watch};
use lizard_core::counter_names::SelectError;
use lizard_core::sources::Join;
use lizard_core::{error_chain, ChoiceError, Config, Counters, Error as EngineError};
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::{f64_array, to_python, u64_array};
use crate::errors::{self, CaptureError, CounterError, FormatError, LizardWarning};
use crate::sources::{self, GatordArg};

/// What a counter is: its name, units, class and source.
#[pyclass(subclass, frozen, module = "lizard_rs")]
pub struct CounterInfo {
    info: doc::CounterInfo,
}

#[pymethods]
impl CounterInfo {
    /// The counter's id in its capture.
    #[getter]
    fn id(&self) -> u32 {
        self.info.id
    }
    /// The name a user types: gatord's counter name or the local counter's name.
    #[getter(name)]
    fn counter(&self) -> &str {
        &self.info.counter
    }
    /// The event's title.
    #[getter]
    fn title(&self) -> &str {
        &self.info.title
    }
    /// A sentence describing the counter.
    #[getter]
    fn description(&self) -> &str {
        &self.info.description
    }
    /// The counter's category.
    #[getter]
    fn category(&self) -> &str {
        &self.info.category
    }
    /// The unit of the values ("" when none is given; MHz counters are read in Hz).
    #[getter]
    fn units(&self) -> String {
        self.info.units.of_readings().to_string()
    }
    /// `"delta"` (each sample is the increase since the previous one), `"absolute"` (a level) or
    /// `"derived"` (an equation over other counters).
    #[getter]
    fn counter_class(&self) -> String {
        self.info.class.to_string()
    }
    /// Where the values come from: `"gatord"`, `"cpu"` or `"gpu"`.
    #[getter]
    fn source(&self) -> String {
        self.info.source.to_string()
    }
    /// What the counter counts: `"system"`, `"gpu"`, `"process 42, all threads"`, ….
    #[getter]
    fn scope(&self) -> &str {
        &self.info.scope
    }
    /// A counter-set event's code (`"0x08"`), or None.
    #[getter]
    fn event(&self) -> Option<&str> {
        self.info.event.as_deref()
    }
    /// The factor the raw values were multiplied by.
    #[getter]
    fn multiplier(&self) -> f64 {
        self.info.multiplier
    }
    fn __repr__(&self) -> String {
        format!(
            "CounterInfo(name={:?}, units={:?}, counter_class={:?}, source={:?})",
            self.info.counter,
            self.units(),
            self.counter_class(),
            self.source()
        )
    }
}

/// One captured counter: what it is (every attribute of `CounterInfo`), its reading over the capture, and
/// its samples as NumPy arrays.
#[pyclass(extends = CounterInfo, frozen, module = "lizard_rs")]
pub struct Counter {
    /// The sample timestamps, ns on the capture's time base (`uint64`).
    #[pyo3(get)]
    timestamps: Py<PyArray1<u64>>,
    /// The sample values, scaled like the reading (`float64`; NaN where a value is not a number).
    #[pyo3(get)]
    values: Py<PyArray1<f64>>,
    /// With `per_core=True`, for a counter counted per core: each core's `(timestamps, values)`.
    #[pyo3(get)]
    per_core: Option<Py<PyDict>>,
    captured: Box<doc::CapturedCounter>,
}

#[pymethods]
impl Counter {
    /// The reading over the capture (delta samples summed, absolute ones averaged, derived ones evaluated
    /// over the window's totals), or None when there is none (`no_value` says why).
    #[getter]
    fn value(&self) -> Option<f64> {
        self.captured.value.as_ref().and_then(|n| n.as_f64())
    }
    /// Why there is no reading, or None.
    #[getter]
    fn no_value(&self) -> Option<&str> {
        self.captured.no_value.as_deref()
    }
    /// Why the source lists the counter but does not deliver it here, or None.
    #[getter]
    fn unavailable(&self) -> Option<&str> {
        self.captured.unavailable.as_deref()
    }
    /// Why the reading cannot happen on working hardware (kept as computed, never clamped), or None.
    #[getter]
    fn implausible(&self) -> Option<&str> {
        self.captured.implausible.as_deref()
    }
    /// Samples the engine dropped because its store was full.
    #[getter]
    fn dropped(&self) -> u64 {
        self.captured.dropped
    }
    /// Seconds from the first sample to the last (None with fewer than two samples).
    #[getter]
    fn covered_s(&self) -> Option<f64> {
        self.captured.covered_s
    }
    fn __len__(&self) -> usize {
        self.captured.samples.len()
    }
    fn __repr__(slf: PyRef<'_, Self>) -> String {
        let info = &slf.as_super().info;
        format!(
            "Counter(name={:?}, value={:?}, samples={})",
            info.counter,
            slf.value(),
            slf.captured.samples.len()
        )
    }
}

/// A capture: its counters (by position, or by name with `capture["GpuCycles"]`), its window, how its
/// sampling went, and the document `lizard capture --format json` writes.
#[pyclass(frozen, module = "lizard_rs")]
pub struct Capture {
    counters: Vec<Py<Counter>>,
    document: doc::Capture,
    /// Whether Ctrl-C ended the capture early (what was captured until then is kept).
    #[pyo3(get)]
    interrupted: bool,
}

#[pymethods]
impl Capture {
    /// The captured counters, in the order chosen.
    #[getter]
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.counters.iter().map(|c| c.clone_ref(py)))
    }
    /// The counters' names, in the order chosen.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.document
            .counters
            .iter()
            .map(|c| c.info.counter.clone())
            .collect()
    }
    /// The first and last sample timestamps over every counter (ns), or None without samples.
    #[getter]
    fn window_ns(&self) -> Option<(u64, u64)> {
        self.document.window_ns.map(|[a, b]| (a, b))
    }
    /// When the capture started (ns, the samples' time base).
    #[getter]
    fn started_ns(&self) -> Option<u64> {
        self.document.started_ns
    }
    /// The host's CLOCK_BOOTTIME at time zero of the timestamps (ns): the capture on the clock other traces
    /// of the host use.
    #[getter]
    fn boottime_zero_ns(&self) -> Option<u64> {
        self.document.boottime_zero_ns
    }
    /// The window's length in seconds (first to last sample), or None.
    #[getter]
    fn duration_s(&self) -> Option<f64> {
        self.document.duration_s
    }
    /// How long the capture ran, in seconds.
    #[getter]
    fn wall_s(&self) -> Option<f64> {
        self.document.wall_s
    }
    /// The warning the capture ended with (a source that failed during it), or None.
    #[getter]
    fn warning(&self) -> Option<&str> {
        self.document.warning.as_deref()
    }
    /// How the local counters' sampling went, as data: the periods expected, delivered and missed, the
    /// method (`kernel`, `thread`, `gpu`), and the GPU's own account under `"gpu"`; None when no local
    /// counter was captured.
    #[getter]
    fn sampling<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.document.sampling)
    }
    /// What ran and where (tool, command, machine), as data, or None.
    #[getter]
    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.document.run)
    }
    /// The application trace records of the capture window, as data.
    #[getter]
    fn trace_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.document.trace_records)
    }
    /// The capture document as `lizard capture --format json` writes it (`lizard report`, `lizard diff`
    /// and `lizard_rs.load` read it back).
    fn to_json(&self) -> String {
        self.document.to_json()
    }
    /// Writes the capture document to `path`.
    fn save(&self, path: std::path::PathBuf) -> PyResult<()> {
        std::fs::write(&path, self.document.to_json()).map_err(|e| errors::os_error(&path, &e))
    }
    /// The samples as a pandas DataFrame in long form: one row a sample, with columns `counter`,
    /// `timestamp_ns` and `value` (needs pandas).
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = py.import("pandas")?;
        let mut names = Vec::new();
        let mut stamps = Vec::new();
        let mut values = Vec::new();
        for counter in &self.document.counters {
            for (t, v) in &counter.samples {
                names.push(counter.info.counter.as_str());
                stamps.push(*t);
                values.push(v.as_ref().and_then(|n| n.as_f64()).unwrap_or(f64::NAN));
            }
        }
        let columns = PyDict::new(py);
        columns.set_item(
            "counter",
            pandas.call_method1("Categorical", (PyList::new(py, names)?,))?,
        )?;
        columns.set_item("timestamp_ns", u64_array(py, stamps))?;
        columns.set_item("value", f64_array(py, values))?;
        pandas.call_method1("DataFrame", (columns,))
    }
    fn __len__(&self) -> usize {
        self.counters.len()
    }
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<Counter>> {
        if let Ok(index) = key.extract::<isize>() {
            let n = self.counters.len() as isize;
            let i = if index < 0 { index + n } else { index };
            return usize::try_from(i)
                .ok()
                .and_then(|i| self.counters.get(i))
                .map(|c| c.clone_ref(py))
                .ok_or_else(|| {
                    pyo3::exceptions::PyIndexError::new_err("counter index out of range")
                });
        }
        let name: String = key.extract()?;
        self.document
            .counters
            .iter()
            .position(|c| c.info.counter == name)
            .map(|i| self.counters[i].clone_ref(py))
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name))
    }
    fn __repr__(&self) -> String {
        format!(
            "Capture(counters={}, duration_s={:?}, interrupted={})",
            self.counters.len(),
            self.document.duration_s,
            self.interrupted
        )
    }
}

impl Capture {
    /// The capture of `document`, its series made arrays.
    pub fn new(py: Python<'_>, document: doc::Capture, interrupted: bool) -> PyResult<Capture> {
        let counters = document
            .counters
            .iter()
            .map(|c| counter(py, c))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Capture {
            counters,
            document,
            interrupted,
        })
    }
}

/// `points` as a timestamps array and a values array (NaN where a value is not a number).
fn arrays(py: Python<'_>, points: &[doc::SamplePoint]) -> (Py<PyArray1<u64>>, Py<PyArray1<f64>>) {
    let stamps = points.iter().map(|(t, _)| *t).collect();
    let values = points
        .iter()
        .map(|(_, v)| v.as_ref().and_then(|n| n.as_f64()).unwrap_or(f64::NAN))
        .collect();
    (u64_array(py, stamps), f64_array(py, values))
}

fn counter(py: Python<'_>, captured: &doc::CapturedCounter) -> PyResult<Py<Counter>> {
    let (timestamps, values) = arrays(py, &captured.samples);
    let per_core = match &captured.per_core {
        None => None,
        Some(parts) => {
            let dict = PyDict::new(py);
            for part in parts {
                dict.set_item(part.core, arrays(py, &part.samples))?;
            }
            Some(dict.unbind())
        }
    };
    let init = PyClassInitializer::from(CounterInfo {
        info: captured.info.clone(),
    })
    .add_subclass(Counter {
        timestamps,
        values,
        per_core,
        captured: Box::new(captured.clone()),
    });
    Py::new(py, init)
}

/// Seconds given by a caller as a duration; positive and finite.
pub fn seconds(what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{what} must be a positive number of seconds, not {value}"
            ))
        })
}

/// The counters `names` names, or the default choice when None.
pub fn choice(names: Option<Vec<String>>) -> Counters {
    names.map_or(Counters::Default, Counters::Named)
}

/// A choice of counters refused, as the Python exception: an unknown name with the closest names.
pub fn choice_error(py: Python<'_>, error: &ChoiceError) -> PyErr {
    match error {
        ChoiceError::Select(SelectError::Unknown(unknown)) => CounterError::new_err(format!(
            "no counter is named '{}'{}",
            unknown.name,
            closest_hint(&unknown.name, &unknown.candidates)
        )),
        ChoiceError::Select(other) => errors::raise::<CounterError>(py, other),
        ChoiceError::Engine(error) => errors::raise::<CounterError>(py, error),
        other => CounterError::new_err(other.to_string()),
    }
}

/// A capture that did not run, as the Python exception.
fn run_error(py: Python<'_>, error: &RunError) -> PyErr {
    match error {
        RunError::Choice(error) => choice_error(py, error),
        RunError::Engine(error) => errors::raise::<CaptureError>(py, error),
        other => CaptureError::new_err(other.to_string()),
    }
}

/// "; did you mean 'X'?" for the closest of `candidates`
/// ([`did_you_mean`](lizard_core::counter_names::did_you_mean)), or nothing.
fn closest_hint(name: &str, candidates: &[String]) -> String {
    let names = candidates.iter().map(String::as_str);
    lizard_core::counter_names::did_you_mean(name, names, ", ")
        .map(|names| format!("; {names}"))
        .unwrap_or_default()
}

/// Issues a `LizardWarning` saying `text`.
pub fn warn(py: Python<'_>, text: &str) -> PyResult<()> {
    let message = CString::new(text.replace('\0', " ")).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<LizardWarning>(), &message, 2)
}

/// How a capture from Python waits: with the GIL released, looking at Python's signals between waits.
/// Ctrl-C ends the capture with what was captured; any other exception a signal handler raised ends it and
/// is raised after.
pub struct Signals<'py> {
    py: Python<'py>,
    interrupted: bool,
    raised: Option<PyErr>,
}

impl<'py> Signals<'py> {
    /// A watch of `py`'s signals.
    pub fn new(py: Python<'py>) -> Signals<'py> {
        Signals {
            py,
            interrupted: false,
            raised: None,
        }
    }

    /// Whether Ctrl-C ended the capture; the exception a signal handler raised, if one did.
    pub fn finish(self) -> PyResult<bool> {
        match self.raised {
            Some(error) => Err(error),
            None => Ok(self.interrupted),
        }
    }
}

impl Watch for Signals<'_> {
    fn wait(&mut self, at_most: Duration, _elapsed: Duration) -> bool {
        self.py.detach(|| std::thread::sleep(at_most));
        match self.py.check_signals() {
            Ok(()) => false,
            Err(error) if error.is_instance_of::<PyKeyboardInterrupt>(self.py) => {
                self.interrupted = true;
                true
            }
            Err(error) => {
                self.raised = Some(error);
                true
            }
        }
    }
}

/// `counters(gatord=None)`: every counter the sources give, with units, class and source; beside the local
/// CPU counters, the CPU's Arm PMU events (category "Arm PMU event"), which a capture counts when named.
#[pyfunction]
#[pyo3(signature = (gatord = None))]
fn counters(py: Python<'_>, gatord: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Py<CounterInfo>>> {
    let gatord = GatordArg::extract(gatord)?;
    let lizard = sources::for_listing(py, &gatord)?;
    let mut infos: Vec<doc::CounterInfo> = lizard.counters().iter().map(collect::info).collect();
    let events = crate::cpu_events::listed(&infos)
        .map_err(|e| errors::raise::<crate::errors::SourceError>(py, &e))?;
    infos.extend(events);
    infos
        .into_iter()
        .map(|info| Py::new(py, CounterInfo { info }))
        .collect()
}

/// `capture(duration=2.0, counters=None, *, gatord=None, interval=0.001, target=None, per_core=False)`. The
/// names of `counters` that are Arm PMU events of this CPU (by mnemonic, kernel name or number) are counted by
/// the local counters too.
#[pyfunction]
#[pyo3(signature = (duration = 2.0, counters = None, *, gatord = None, interval = 0.001, target = None, per_core = false))]
fn capture(
    py: Python<'_>,
    duration: f64,
    counters: Option<Vec<String>>,
    gatord: Option<&Bound<'_, PyAny>>,
    interval: f64,
    target: Option<&Bound<'_, PyAny>>,
    per_core: bool,
) -> PyResult<Capture> {
    let duration = seconds("duration", duration)?;
    let interval = seconds("interval", interval)?;
    let gatord = GatordArg::extract(gatord)?;
    let local = sources::local(target, sources::system_wide(false))?;
    let mut config = Config::default();
    config.sample_interval = interval;
    config.size_for(duration);
    // The names that are Arm PMU events of this CPU are counted by the local counters too.
    config.cpu_events = counters.clone().unwrap_or_default();
    let mut lizard = sources::open(py, &gatord, local, Join::WithoutGatord, config)?.lizard;
    let mut plan = Plan::new(
        choice(counters),
        Some(duration),
        vec!["lizard_rs.capture".to_owned()],
    );
    plan.cores = match per_core {
        true => Cores::PerCore,
        false => Cores::Combined,
    };
    let mut watch = Signals::new(py);
    let captured = doc::run(&mut lizard, &plan, &mut watch);
    let interrupted = watch.finish()?;
    let captured = captured.map_err(|e| run_error(py, &e))?;
    if let Some(error @ EngineError::NothingCaptured(_)) = &captured.stop_error {
        return Err(errors::raise::<CaptureError>(py, error));
    }
    if let Some(error) = &captured.stop_error {
        warn(
            py,
            &format!(
                "the capture ended with an error; what was captured is kept: {}",
                error_chain(error)
            ),
        )?;
    }
    if interrupted {
        warn(
            py,
            &format!(
                "interrupted after {:.2}s; what was captured is kept",
                captured.elapsed.as_secs_f64()
            ),
        )?;
    }
    Capture::new(py, captured.document, interrupted)
}

/// `load(path)`: a capture document as `lizard capture --format json` writes it (any version this tool
/// reads), as a Capture.
#[pyfunction]
fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Capture> {
    let text = crate::inputs::read_text(py, &path, lizard_core::input::InputKind::CaptureDocument)?;
    let document = py
        .detach(|| doc::Capture::from_json(&text))
        .map_err(|e| errors::raise::<FormatError>(py, &e))?;
    Capture::new(py, document, false)
}

/// Adds the live counters' functions and classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<CounterInfo>()?;
    module.add_class::<Counter>()?;
    module.add_class::<Capture>()?;
    module.add_function(wrap_pyfunction!(counters, module)?)?;
    module.add_function(wrap_pyfunction!(capture, module)?)?;
    module.add_function(wrap_pyfunction!(load, module)?)?;
    Ok(())
}
