//! Every counter Arm's database documents for one GPU ([`MaliCounters`]): its hardware counters by machine
//! name, with block, index, units and description, and its derived counters, whose equations are parsed once
//! and evaluated per sample with the device's constants.
//!
//! Hardware counters are summed over the blocks of their kind (shader cores present, L2 slices), as Arm's
//! equations expect. A counter that cannot be computed on this GPU and driver is listed with the reason
//! ([`MaliUnavailable`]), never given a value.

use std::collections::HashMap;

use super::dump::BlockSums;
use super::equation::{self, EquationError, EvalError, Expr};
use super::tables::arm_counters::SPEC_COUNTERS;
use super::tables::{BlockKind, HardwareLayout, SpecCounter};

/// A counter of one [`MaliCounters`] catalog: its position there (meaningful only for the catalog that gave
/// it; look counters up by name with [`MaliCounters::by_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MaliCounter(u16);

impl MaliCounter {
    /// The position in its catalog.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

/// Device constants Arm's equations use (`MALI_CONFIG_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaliConstants {
    /// Shader cores present (`MALI_CONFIG_SHADER_CORE_COUNT`).
    pub shader_cores: u32,
    /// L2 cache slices (`MALI_CONFIG_L2_CACHE_COUNT`).
    pub l2_slices: u32,
    /// Bytes per external bus beat (`MALI_CONFIG_EXT_BUS_BYTE_SIZE`).
    pub ext_bus_bytes: u32,
    /// Seconds the sample covers (`MALI_CONFIG_TIME_SPAN`).
    pub time_span_s: f64,
}

/// A device constant of Arm's equations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaliConstant {
    /// `MALI_CONFIG_SHADER_CORE_COUNT`.
    ShaderCores,
    /// `MALI_CONFIG_L2_CACHE_COUNT`.
    L2Slices,
    /// `MALI_CONFIG_EXT_BUS_BYTE_SIZE`.
    ExtBusBytes,
    /// `MALI_CONFIG_TIME_SPAN`: the seconds a sample (or a window) covers.
    TimeSpan,
}

impl MaliConstant {
    /// Every constant, in input order after the counters.
    pub const ALL: [MaliConstant; 4] = [
        MaliConstant::ShaderCores,
        MaliConstant::L2Slices,
        MaliConstant::ExtBusBytes,
        MaliConstant::TimeSpan,
    ];

    /// The name the database's equations use.
    pub fn name(self) -> &'static str {
        CONSTANTS[self as usize]
    }

    /// The short name, its field's in [`MaliConstants`]: `shader_cores`, `l2_slices`, `ext_bus_bytes`,
    /// `time_span_s`.
    pub fn short_name(self) -> &'static str {
        match self {
            MaliConstant::ShaderCores => "shader_cores",
            MaliConstant::L2Slices => "l2_slices",
            MaliConstant::ExtBusBytes => "ext_bus_bytes",
            MaliConstant::TimeSpan => "time_span_s",
        }
    }
}

impl MaliConstants {
    /// The value of `constant`.
    pub fn value(&self, constant: MaliConstant) -> f64 {
        match constant {
            MaliConstant::ShaderCores => f64::from(self.shader_cores),
            MaliConstant::L2Slices => f64::from(self.l2_slices),
            MaliConstant::ExtBusBytes => f64::from(self.ext_bus_bytes),
            MaliConstant::TimeSpan => self.time_span_s,
        }
    }
}

/// What input `n` of a derived counter's equation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaliInput {
    /// Another counter of the catalog, hardware or derived.
    Counter(MaliCounter),
    /// A device constant.
    Constant(MaliConstant),
}

/// The constant names, in input order after the counters.
const CONSTANTS: [&str; 4] = [
    "MALI_CONFIG_SHADER_CORE_COUNT",
    "MALI_CONFIG_L2_CACHE_COUNT",
    "MALI_CONFIG_EXT_BUS_BYTE_SIZE",
    "MALI_CONFIG_TIME_SPAN",
];

/// Where a counter's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterSource {
    /// A hardware counter: `name` (the database's source name or an alias) at `index` in blocks of `block`.
    Hardware {
        /// The block kind.
        block: BlockKind,
        /// The counter's index in the block.
        index: u32,
        /// The hardware name the layout has.
        name: &'static str,
    },
    /// A derived counter or constant, computed by Arm's equation.
    Derived {
        /// The equation as the database writes it.
        equation: &'static str,
    },
}

/// Why a counter of the database cannot be computed on this GPU and driver.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MaliUnavailable {
    /// None of the counter's hardware names is in this GPU's layout.
    #[error("hardware counter {name} is not in this GPU's layout")]
    NotInLayout {
        /// The database's source name.
        name: &'static str,
    },
    /// The layout places the counter beyond the values per block the driver dumps.
    #[error("hardware counter {name} is at index {index}, beyond the {values} values per block the driver dumps")]
    OutsideDriverBlock {
        /// The hardware name.
        name: &'static str,
        /// Its index in the layout.
        index: u32,
        /// Values per block the driver dumps.
        values: usize,
    },
    /// The equation does not parse.
    #[error("the equation of {counter} does not parse: {source}")]
    Equation {
        /// The counter.
        counter: &'static str,
        /// Why.
        source: EquationError,
    },
    /// The equation names a counter or constant this GPU does not have.
    #[error("the equation needs {name}, which this GPU does not have")]
    UnknownInput {
        /// The name.
        name: String,
    },
    /// The equation needs a counter that is itself unavailable.
    #[error("needs {input}, which is unavailable")]
    InputUnavailable {
        /// The unavailable input's machine name.
        input: &'static str,
    },
    /// The equations refer to each other in a cycle.
    #[error("its equation depends on itself")]
    Cycle,
}

/// One counter of the catalog.
#[derive(Clone, Debug)]
pub struct MaliCounterInfo {
    /// The database entry: machine name, names, units, description.
    pub spec: &'static SpecCounter,
    /// Where its value comes from.
    pub source: CounterSource,
    /// `Ok` when it is computed, else why not.
    pub availability: Result<(), MaliUnavailable>,
    /// A known problem of the database's definition on this GPU, said wherever the counter is shown.
    pub caveat: Option<&'static str>,
    /// The parsed equation of a derived counter.
    expr: Option<Expr>,
}

impl MaliCounterInfo {
    /// Arm's machine name.
    pub fn name(&self) -> &'static str {
        self.spec.machine_name
    }

    /// Whether it is computed.
    pub fn is_available(&self) -> bool {
        self.availability.is_ok()
    }

    /// Whether it is a hardware counter (else derived).
    pub fn is_hardware(&self) -> bool {
        matches!(self.source, CounterSource::Hardware { .. })
    }
}

/// Known errors of Arm's database, by layout and machine name, with what is said about them.
const CAVEATS: &[(&str, &str, &str)] = &[(
    "Mali-G715",
    "MaliGPUActiveCy",
    "Arm reports a hardware erratum of GPU_ACTIVE on the Mali-G715 generation; its workaround counter is not \
     in the database, so this value may overcount (libGPUCounters#81)",
)];

/// Every database counter of one GPU, resolved against its layout and the driver's block size.
#[derive(Clone, Debug, Default)]
pub struct MaliCounters {
    /// The layout's GPU name (`""` for a GPU the database lacks).
    gpu: &'static str,
    /// The counters, hardware and derived, in database order.
    counters: Vec<MaliCounterInfo>,
    /// Positions by machine name.
    by_name: HashMap<&'static str, u16>,
    /// Derived counters in an order where each comes after its inputs.
    order: Vec<u16>,
}

/// Values of one sample, one per counter of the catalog that computed them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MaliValues {
    /// By catalog position: `None` for an unavailable counter.
    values: Vec<Option<Result<f64, EvalError>>>,
}

impl MaliValues {
    /// The value of `counter`: `None` when it is unavailable, `Some(Err)` when this sample has none (a
    /// division by zero).
    pub fn get(&self, counter: MaliCounter) -> Option<Result<f64, EvalError>> {
        self.values.get(counter.index()).cloned().flatten()
    }
}

/// Visit marks of the ordering walk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    New,
    Visiting,
    Done,
}

impl MaliCounters {
    /// The catalog of the GPU whose database layout is `layout`, whose driver dumps `values_per_block`
    /// values per block.
    pub fn for_layout(layout: &'static HardwareLayout, values_per_block: usize) -> MaliCounters {
        let entries: Vec<&'static SpecCounter> = SPEC_COUNTERS
            .iter()
            .filter(|c| c.supports(layout.gpu))
            .collect();
        let by_name: HashMap<&'static str, u16> = entries
            .iter()
            .enumerate()
            .map(|(i, c)| (c.machine_name, i as u16))
            .collect();
        let n = entries.len();
        let mut counters: Vec<MaliCounterInfo> = entries
            .iter()
            .map(|&spec| resolve(spec, layout, values_per_block, &by_name, n))
            .collect();
        let order = evaluation_order(&mut counters, n);
        MaliCounters {
            gpu: layout.gpu,
            counters,
            by_name,
            order,
        }
    }

    /// The layout's GPU name.
    pub fn gpu(&self) -> &'static str {
        self.gpu
    }

    /// Every counter, in database order.
    pub fn iter(&self) -> impl Iterator<Item = (MaliCounter, &MaliCounterInfo)> + '_ {
        self.counters
            .iter()
            .enumerate()
            .map(|(i, c)| (MaliCounter(i as u16), c))
    }

    /// Number of counters.
    pub fn len(&self) -> usize {
        self.counters.len()
    }

    /// Whether the catalog is empty (a GPU the database lacks).
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty()
    }

    /// The counter with this machine name.
    pub fn by_name(&self, name: &str) -> Option<MaliCounter> {
        self.by_name.get(name).map(|&i| MaliCounter(i))
    }

    /// The description of `counter`.
    pub fn info(&self, counter: MaliCounter) -> Option<&MaliCounterInfo> {
        self.counters.get(counter.index())
    }

    /// The parsed equation of derived `counter` and what each of its input numbers is (`inputs[n]` for
    /// `Expr::Input(n)`), for evaluating it over other values than one sample's: a window's totals, say.
    /// `None` for a hardware or unavailable counter.
    pub fn equation(&self, counter: MaliCounter) -> Option<(&Expr, Vec<MaliInput>)> {
        let info = self.counters.get(counter.index())?;
        let expr = info.expr.as_ref().filter(|_| info.is_available())?;
        let n = self.counters.len();
        let inputs = (0..n + CONSTANTS.len())
            .map(|i| match i.checked_sub(n) {
                None => MaliInput::Counter(MaliCounter(i as u16)),
                Some(k) => MaliInput::Constant(MaliConstant::ALL[k]),
            })
            .collect();
        Some((expr, inputs))
    }

    /// `expr`, an equation of this catalog (or a part of one), as text with its inputs' names.
    pub fn render(&self, expr: &Expr) -> String {
        let n = self.counters.len();
        expr.render(&|i| match i.checked_sub(n) {
            None => self
                .counters
                .get(i)
                .map_or("?", |c| c.spec.machine_name)
                .to_owned(),
            Some(k) => CONSTANTS.get(k).copied().unwrap_or("?").to_owned(),
        })
    }

    /// Computes every available counter from one sample's block sums.
    pub fn evaluate(&self, sums: &BlockSums, constants: &MaliConstants, out: &mut MaliValues) {
        let n = self.counters.len();
        let mut inputs = vec![0.0; n + CONSTANTS.len()];
        inputs[n] = f64::from(constants.shader_cores);
        inputs[n + 1] = f64::from(constants.l2_slices);
        inputs[n + 2] = f64::from(constants.ext_bus_bytes);
        inputs[n + 3] = constants.time_span_s;
        out.values.clear();
        out.values.resize(n, None);
        for (i, c) in self.counters.iter().enumerate() {
            if let (Ok(()), CounterSource::Hardware { block, index, .. }) =
                (&c.availability, c.source)
            {
                let value = sums.get(block, index) as f64;
                inputs[i] = value;
                out.values[i] = Some(Ok(value));
            }
        }
        for &i in &self.order {
            let i = usize::from(i);
            let Some(expr) = &self.counters[i].expr else {
                continue;
            };
            // An input without a value in this sample leaves this one without a value too.
            let failed = expr
                .inputs()
                .into_iter()
                .find_map(|input| out.values.get(input).cloned().flatten()?.err());
            let value = match failed {
                Some(err) => Err(err),
                None => expr.eval(&inputs),
            };
            if let Ok(v) = value {
                inputs[i] = v;
            }
            out.values[i] = Some(value);
        }
    }
}

/// Resolves one database entry against the layout (hardware) or parses its equation (derived).
fn resolve(
    spec: &'static SpecCounter,
    layout: &'static HardwareLayout,
    values_per_block: usize,
    by_name: &HashMap<&'static str, u16>,
    n: usize,
) -> MaliCounterInfo {
    let caveat = CAVEATS
        .iter()
        .find(|(gpu, name, _)| *gpu == layout.gpu && *name == spec.machine_name)
        .map(|&(_, _, text)| text);
    let mut info = MaliCounterInfo {
        spec,
        source: CounterSource::Derived { equation: "" },
        availability: Ok(()),
        caveat,
        expr: None,
    };
    if let Some(equation) = spec.equation {
        info.source = CounterSource::Derived { equation };
        let parsed = equation::parse(equation, |name| {
            if let Some(&i) = by_name.get(name) {
                return Ok(usize::from(i));
            }
            match CONSTANTS.iter().position(|c| *c == name) {
                Some(k) => Ok(n + k),
                None => Err(MaliUnavailable::UnknownInput {
                    name: name.to_owned(),
                }),
            }
        });
        match parsed {
            Ok(Ok(expr)) => info.expr = Some(expr),
            Ok(Err(unavailable)) => info.availability = Err(unavailable),
            Err(source) => {
                info.availability = Err(MaliUnavailable::Equation {
                    counter: spec.machine_name,
                    source,
                })
            }
        }
        return info;
    }
    let hit = spec.source.iter().find_map(|&name| {
        BlockKind::ALL.into_iter().find_map(|block| {
            layout
                .index_of(block, name)
                .map(|index| (block, index, name))
        })
    });
    match hit {
        Some((block, index, name)) => {
            info.source = CounterSource::Hardware { block, index, name };
            if index as usize >= values_per_block {
                info.availability = Err(MaliUnavailable::OutsideDriverBlock {
                    name,
                    index,
                    values: values_per_block,
                });
            }
        }
        None => {
            info.availability = Err(MaliUnavailable::NotInLayout {
                name: spec.source.first().copied().unwrap_or(spec.machine_name),
            })
        }
    }
    info
}

/// Orders the derived counters so each follows its inputs, marking those with an unavailable input or in a
/// cycle as unavailable.
fn evaluation_order(counters: &mut [MaliCounterInfo], n: usize) -> Vec<u16> {
    let mut marks = vec![Mark::New; n];
    let mut order = Vec::new();
    for i in 0..n {
        visit(i, counters, &mut marks, &mut order);
    }
    order
}

/// Depth-first visit of counter `i` (the depth is bounded by the number of counters).
fn visit(i: usize, counters: &mut [MaliCounterInfo], marks: &mut [Mark], order: &mut Vec<u16>) {
    match marks[i] {
        Mark::Done => return,
        Mark::Visiting => {
            counters[i].availability = Err(MaliUnavailable::Cycle);
            return;
        }
        Mark::New => {}
    }
    marks[i] = Mark::Visiting;
    let inputs = counters[i]
        .expr
        .as_ref()
        .map(Expr::inputs)
        .unwrap_or_default();
    let n = counters.len();
    for input in inputs.into_iter().filter(|&k| k < n) {
        visit(input, counters, marks, order);
        if counters[i].availability.is_ok() {
            if let Err(err) = &counters[input].availability {
                counters[i].availability = Err(match err {
                    MaliUnavailable::Cycle => MaliUnavailable::Cycle,
                    _ => MaliUnavailable::InputUnavailable {
                        input: counters[input].spec.machine_name,
                    },
                });
            }
        }
    }
    marks[i] = Mark::Done;
    if counters[i].expr.is_some() && counters[i].availability.is_ok() {
        order.push(i as u16);
    }
}
