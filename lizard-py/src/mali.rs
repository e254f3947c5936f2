//! `lizard_rs.mali`: Arm's Mali counter database. `gpu("Mali-G78")` gives a GPU's counters with their
//! equations and constants, and evaluates an equation on given values as the Rust crate does.

use std::collections::HashMap;

use hwcpipe::gpu::tables::arm_spec::{SPEC_LAYOUTS, SPEC_PRODUCTS};
use hwcpipe::gpu::tables::{spec_layout, HardwareLayout};
use hwcpipe::gpu::{
    CounterSource, MaliConstant, MaliCounter as CounterId, MaliCounters, MaliInput,
};
use pyo3::prelude::*;

use crate::errors::{self, MaliError};

/// Why a lookup in the database failed (an evaluation fails with hwcpipe's
/// [`MaliEvalError`](hwcpipe::gpu::MaliEvalError)).
#[derive(Debug, thiserror::Error)]
enum MaliUse {
    /// No product or layout has the name.
    #[error("Arm's database has no GPU named '{name}' (it has {known})")]
    UnknownGpu { name: String, known: String },
    /// The GPU has no counter of the name.
    #[error("{gpu} has no counter named '{name}'")]
    UnknownCounter { gpu: &'static str, name: String },
}

/// One counter of a GPU in Arm's database.
#[pyclass(frozen, get_all, module = "lizard_rs.mali")]
pub struct MaliCounter {
    /// Arm's machine name (`"MaliGPUActiveCy"`).
    name: String,
    /// The name for people (`"GPU active cycles"`).
    human_name: String,
    /// The group it is shown in.
    group: String,
    /// Units as the database writes them (`"cycles"`, `"percent"`, …).
    units: String,
    /// Arm's description.
    description: String,
    /// Whether it is a hardware counter (else derived by an equation).
    hardware: bool,
    /// A hardware counter's block (`"ShaderCore"`, …), else None.
    block: Option<String>,
    /// A hardware counter's index in its block, else None.
    index: Option<u32>,
    /// A derived counter's equation as the database writes it, else None.
    equation: Option<String>,
    /// The counters and constants the equation uses, by name (empty for a hardware counter).
    inputs: Vec<String>,
    /// Why it cannot be computed on this GPU, or None when it can.
    unavailable: Option<String>,
    /// A known problem of the database's definition on this GPU, or None.
    caveat: Option<String>,
}

#[pymethods]
impl MaliCounter {
    fn __repr__(&self) -> String {
        format!(
            "MaliCounter(name={:?}, units={:?}, hardware={})",
            self.name, self.units, self.hardware
        )
    }
}

/// A GPU of Arm's database: its counters, equations and constants.
#[pyclass(frozen, module = "lizard_rs.mali")]
pub struct MaliGpu {
    catalog: MaliCounters,
    architecture: Option<&'static str>,
}

impl MaliGpu {
    fn id(&self, name: &str) -> Result<CounterId, MaliUse> {
        self.catalog
            .by_name(name)
            .ok_or_else(|| MaliUse::UnknownCounter {
                gpu: self.catalog.gpu(),
                name: name.to_owned(),
            })
    }

    /// What an equation of the GPU reads for `input`: a counter's value from `values` by its machine name, a
    /// constant's from `constants` by its `MALI_CONFIG_*` or short name.
    fn given(
        &self,
        input: MaliInput,
        values: &HashMap<String, f64>,
        constants: &HashMap<String, f64>,
    ) -> Option<f64> {
        match input {
            MaliInput::Counter(counter) => values.get(self.catalog.info(counter)?.name()).copied(),
            MaliInput::Constant(constant) => constants
                .get(constant.name())
                .or_else(|| constants.get(constant.short_name()))
                .copied(),
        }
    }

    fn counter(&self, id: CounterId) -> Option<MaliCounter> {
        let info = self.catalog.info(id)?;
        let (hardware, block, index, equation) = match info.source {
            CounterSource::Hardware { block, index, .. } => {
                (true, Some(format!("{block:?}")), Some(index), None)
            }
            CounterSource::Derived { equation } => (false, None, None, Some(equation.to_owned())),
        };
        let inputs = self
            .catalog
            .equation(id)
            .map(|(expr, inputs)| {
                expr.inputs()
                    .into_iter()
                    .map(|i| match inputs[i] {
                        MaliInput::Counter(c) => {
                            self.catalog.info(c).map_or("?", |c| c.name()).to_owned()
                        }
                        MaliInput::Constant(k) => k.name().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(MaliCounter {
            name: info.name().to_owned(),
            human_name: info.spec.human_name.to_owned(),
            group: info.spec.group.to_owned(),
            units: info.spec.units.to_owned(),
            description: info.spec.description.to_owned(),
            hardware,
            block,
            index,
            equation,
            inputs,
            unavailable: info.availability.as_ref().err().map(ToString::to_string),
            caveat: info.caveat.map(str::to_owned),
        })
    }
}

#[pymethods]
impl MaliGpu {
    /// The database's name of the GPU's counter layout (`"Mali-G78"`).
    #[getter]
    fn name(&self) -> &'static str {
        self.catalog.gpu()
    }
    /// The architecture (`"Valhall"`, …), or None when the layout names no product.
    #[getter]
    fn architecture(&self) -> Option<&'static str> {
        self.architecture
    }
    /// Every counter of the GPU, hardware and derived.
    #[getter]
    fn counters(&self) -> Vec<MaliCounter> {
        self.catalog
            .iter()
            .filter_map(|(id, _)| self.counter(id))
            .collect()
    }
    /// The names of the constants equations use (`MALI_CONFIG_*`), with their short names.
    #[getter]
    fn constants(&self) -> Vec<(&'static str, &'static str)> {
        MaliConstant::ALL
            .iter()
            .map(|c| (c.name(), c.short_name()))
            .collect()
    }
    /// The counter called `name` (MaliError when there is none).
    fn counter_named(&self, py: Python<'_>, name: &str) -> PyResult<MaliCounter> {
        self.id(name)
            .ok()
            .and_then(|id| self.counter(id))
            .ok_or_else(|| {
                let error = MaliUse::UnknownCounter {
                    gpu: self.catalog.gpu(),
                    name: name.to_owned(),
                };
                errors::raise::<MaliError>(py, &error)
            })
    }
    /// Evaluates counter `name` on `values` (hardware or derived counters by name: totals over a window,
    /// or one sample's) and `constants` (by `MALI_CONFIG_*` or short name: `shader_cores`, `l2_slices`,
    /// `ext_bus_bytes`, `time_span_s`). A derived input not given is computed by its own equation.
    #[pyo3(signature = (name, values, constants = None))]
    fn evaluate(
        &self,
        py: Python<'_>,
        name: &str,
        values: HashMap<String, f64>,
        constants: Option<HashMap<String, f64>>,
    ) -> PyResult<f64> {
        let constants = constants.unwrap_or_default();
        let id = self
            .id(name)
            .map_err(|e| errors::raise::<MaliError>(py, &e))?;
        // `name` itself is evaluated by its equation, never read back from `values`.
        self.catalog
            .evaluate_given(id, &|input| self.given(input, &values, &constants))
            .map_err(|e| errors::raise::<MaliError>(py, &e))
    }
    fn __len__(&self) -> usize {
        self.catalog.len()
    }
    fn __repr__(&self) -> String {
        format!(
            "MaliGpu(name={:?}, counters={})",
            self.catalog.gpu(),
            self.catalog.len()
        )
    }
}

/// The layout of the GPU called `name` (a product's marketing name or a layout's name, in any case).
fn layout(name: &str) -> Option<(&'static HardwareLayout, Option<&'static str>)> {
    let wanted = name.trim();
    if let Some(product) = SPEC_PRODUCTS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(wanted))
    {
        return spec_layout(product.layout).map(|l| (l, Some(product.architecture)));
    }
    let layout = SPEC_LAYOUTS
        .iter()
        .find(|l| l.gpu.eq_ignore_ascii_case(wanted))?;
    let architecture = SPEC_PRODUCTS
        .iter()
        .find(|p| p.layout == layout.gpu)
        .map(|p| p.architecture);
    Some((layout, architecture))
}

/// `mali.gpu(name)`: the GPU called `name` in Arm's database (`"Mali-G78"`, any case).
#[pyfunction]
fn gpu(py: Python<'_>, name: &str) -> PyResult<MaliGpu> {
    let (layout, architecture) = layout(name).ok_or_else(|| {
        let error = MaliUse::UnknownGpu {
            name: name.to_owned(),
            known: gpus().join(", "),
        };
        errors::raise::<MaliError>(py, &error)
    })?;
    Ok(MaliGpu {
        catalog: MaliCounters::for_layout(layout, layout.values_per_block as usize),
        architecture,
    })
}

/// `mali.gpus()`: the names of every GPU in Arm's database, as its products are called.
#[pyfunction]
fn gpus() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = SPEC_PRODUCTS
        .iter()
        .filter(|p| spec_layout(p.layout).is_some())
        .map(|p| p.name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Adds the `mali` submodule.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let mali = PyModule::new(module.py(), "mali")?;
    mali.add_class::<MaliGpu>()?;
    mali.add_class::<MaliCounter>()?;
    mali.add_function(wrap_pyfunction!(gpu, &mali)?)?;
    mali.add_function(wrap_pyfunction!(gpus, &mali)?)?;
    module.add_submodule(&mali)
}
