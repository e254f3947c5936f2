//! `Session`: counters measured over regions of a program, the per-draw pattern of the C API. One engine
//! (and one gatord session) is kept open; each `read()` ends a region, returns its readings, and starts
//! the next.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use lizard_core::sources::{Join, Local};
use lizard_core::{Config, Error as EngineError, GatordAddress, Regions};
use pyo3::prelude::*;

use crate::capture::{choice, choice_error, seconds};
use crate::errors::{self, CaptureError};
use crate::sources::{self, GatordArg};

/// The engine of a session and why each counter of the last region had no reading.
struct Engine {
    regions: Regions,
    no_value: BTreeMap<String, String>,
}

/// `Session(counters=None, *, gatord=None, target="self", interval=0.001)`: counters read over regions.
///
/// ```python
/// with lizard_rs.Session(counters=["CPUCycles", "Instructions"]) as s:
///     draw()
///     print(s.read())   # the region since entering
///     draw()
///     print(s.read())   # the region since the last read
/// ```
///
/// The local counters count this process by default (`target="self"`), as `liblizard.so` does inside a
/// program; gatord is used when one answers (`gatord=None`) and keeps one session across regions.
#[pyclass(frozen, module = "lizard_rs")]
pub struct Session {
    engine: Mutex<Option<Engine>>,
}

impl Session {
    fn engine(&self) -> PyResult<MutexGuard<'_, Option<Engine>>> {
        self.engine
            .lock()
            .map_err(|_| CaptureError::new_err("the session failed in another thread"))
    }
}

/// Runs `f` on the open engine with the GIL released.
fn with_engine<T: Send>(
    py: Python<'_>,
    session: &Session,
    f: impl FnOnce(&mut Engine) -> T + Send,
) -> PyResult<T> {
    let mut guard = session.engine()?;
    let engine = guard
        .as_mut()
        .ok_or_else(|| CaptureError::new_err("the session is closed"))?;
    Ok(py.detach(|| f(engine)))
}

#[pymethods]
impl Session {
    #[new]
    #[pyo3(signature = (counters = None, *, gatord = None, target = None, interval = 0.001))]
    fn new(
        py: Python<'_>,
        counters: Option<Vec<String>>,
        gatord: Option<&Bound<'_, PyAny>>,
        target: Option<&Bound<'_, PyAny>>,
        interval: f64,
    ) -> PyResult<Session> {
        let interval = seconds("interval", interval)?;
        let gatord = GatordArg::extract(gatord)?;
        let local = sources::local(target, Local::ThisProcess)?;
        let mut config = match &gatord {
            GatordArg::Off => Config::default(),
            GatordArg::Probe => Config::per_draw(GatordAddress::default()),
            GatordArg::Required(address) => Config::per_draw(address.clone()),
        };
        config.sample_interval = interval;
        let lizard = sources::open(py, &gatord, local, Join::Always, config)?.lizard;
        let regions = Regions::new(lizard, &choice(counters)).map_err(|e| choice_error(py, &e))?;
        Ok(Session {
            engine: Mutex::new(Some(Engine {
                regions,
                no_value: BTreeMap::new(),
            })),
        })
    }

    /// Starts the first region.
    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().start(slf.py())?;
        Ok(slf)
    }

    /// Ends the region and closes the session.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Starts a region (`with` does it on entering).
    fn start(&self, py: Python<'_>) -> PyResult<()> {
        with_engine(py, self, |e| e.regions.start())?
            .map_err(|e| errors::raise::<CaptureError>(py, &e))
    }

    /// Ends the region started last and returns each counter's reading over it (`None` where the counter
    /// has no reading: `no_value` says why), then starts the next region.
    fn read(&self, py: Python<'_>) -> PyResult<BTreeMap<String, Option<f64>>> {
        let result = with_engine(py, self, |engine| -> Result<_, EngineError> {
            let readings = engine.regions.read()?;
            engine.no_value.clear();
            let mut values = BTreeMap::new();
            for reading in readings {
                if let Err(why) = &reading.value {
                    engine
                        .no_value
                        .insert(reading.counter.clone(), why.to_string());
                }
                values.insert(reading.counter, reading.value.ok());
            }
            Ok(values)
        })?;
        result.map_err(|e| errors::raise::<CaptureError>(py, &e))
    }

    /// Why each counter of the last `read()` had no reading, by name.
    #[getter]
    fn no_value(&self) -> PyResult<BTreeMap<String, String>> {
        Ok(self
            .engine()?
            .as_ref()
            .map(|e| e.no_value.clone())
            .unwrap_or_default())
    }

    /// The counters read, by name, in the order chosen.
    #[getter]
    fn counters(&self) -> PyResult<Vec<String>> {
        Ok(self
            .engine()?
            .as_ref()
            .map(|e| e.regions.counters().to_vec())
            .unwrap_or_default())
    }

    /// Ends a running region and closes the engine (and its gatord session); the session cannot be used
    /// after. Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let engine = self.engine()?.take();
        let Some(engine) = engine else {
            return Ok(());
        };
        let result = py.detach(move || engine.regions.close());
        result.map_err(|e| errors::raise::<CaptureError>(py, &e))
    }
}

/// Adds `Session` to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Session>()
}
