//! CPU metrics: ratios of counted events that say more than the counts (instructions per cycle, branch
//! mispredictions per thousand instructions, stall and top-down shares, …), each computed from one counting
//! of its inputs by a formula over names, parsed by the same total parser as Arm's Mali equations.
//!
//! A metric has one or more formulas, tried in order: over Arm PMU events first (`INST_RETIRED / CPU_CYCLES`,
//! counted on every core type), then over HWCPipe's generic counters (`Instructions / Cycles`) where the
//! metric has such a formula. A name in a formula is a [`CpuCounter`] name, the constant `SLOTS`
//! (PMMIR_EL1.SLOTS, the operations a core can issue per cycle, which the top-down `STALL_SLOT*` events
//! count in), or an Arm event mnemonic. The first formula all of whose inputs were counted gives the value;
//! when none can, the metric is unavailable with each formula's reason; a metric over an input the kernel
//! multiplexed says so.
//!
//! The formulas are Arm's architected definitions: the stall ratios and MPKIs of Arm's per-core
//! telemetry guides, and the top-down level-1 breakdown over the PMUv3 `STALL_SLOT*` and `OP_*` events.
//! Arm's per-core JSON event lists carry no metric formulas, so none is read from them.

use super::counter::CpuCounter;
use crate::gpu::equation::{self, EvalError};

/// One metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuMetric {
    /// Its name (`IPC`).
    pub name: &'static str,
    /// The group it belongs to (`General`, `Branch effectiveness`, …).
    pub group: &'static str,
    /// What it measures.
    pub description: &'static str,
    /// Its formulas, in the order they are tried.
    pub formulas: &'static [&'static str],
    /// The unit of its value.
    pub unit: &'static str,
}

/// The constant of the top-down formulas: PMMIR_EL1.SLOTS.
pub const SLOTS: &str = "SLOTS";

/// The metrics, grouped as Arm's top-down methodology groups them (cycle accounting first).
pub const METRICS: &[CpuMetric] = &[
    CpuMetric {
        name: "Frontend stalled cycles",
        group: "Cycle accounting (top-down)",
        description:
            "Cycles in which no operation was issued because the front end had none to give",
        formulas: &["STALL_FRONTEND / CPU_CYCLES * 100"],
        unit: "percent",
    },
    CpuMetric {
        name: "Backend stalled cycles",
        group: "Cycle accounting (top-down)",
        description: "Cycles in which no operation was issued because the back end could take none",
        formulas: &["STALL_BACKEND / CPU_CYCLES * 100"],
        unit: "percent",
    },
    CpuMetric {
        name: "IPC",
        group: "General",
        description: "Instructions retired per CPU cycle",
        formulas: &["INST_RETIRED / CPU_CYCLES", "Instructions / Cycles"],
        unit: "instructions/cycle",
    },
    CpuMetric {
        name: "Branch MPKI",
        group: "Branch effectiveness",
        description: "Mispredicted branches per thousand instructions",
        formulas: &[
            "BR_MIS_PRED_RETIRED / INST_RETIRED * 1000",
            "BranchMisses / Instructions * 1000",
        ],
        unit: "misses/1000 instructions",
    },
    CpuMetric {
        name: "Branch misprediction ratio",
        group: "Branch effectiveness",
        description: "Mispredicted branches per branch",
        formulas: &[
            "BR_MIS_PRED_RETIRED / BR_RETIRED",
            "BranchMisses / BranchInstructions",
        ],
        unit: "ratio",
    },
    CpuMetric {
        name: "Cache miss ratio",
        group: "Cache effectiveness",
        description:
            "Cache misses per cache reference (the kernel's generic cache events: L1 data on Arm)",
        formulas: &["CacheMisses / CacheReferences"],
        unit: "ratio",
    },
    CpuMetric {
        name: "L1D cache miss ratio",
        group: "Cache effectiveness",
        description: "L1 data cache refills per L1 data cache access",
        formulas: &["L1D_CACHE_REFILL / L1D_CACHE"],
        unit: "ratio",
    },
    CpuMetric {
        name: "L1D cache MPKI",
        group: "Cache effectiveness",
        description: "L1 data cache refills per thousand instructions",
        formulas: &["L1D_CACHE_REFILL / INST_RETIRED * 1000"],
        unit: "refills/1000 instructions",
    },
    CpuMetric {
        name: "L1I cache MPKI",
        group: "Cache effectiveness",
        description: "L1 instruction cache refills per thousand instructions",
        formulas: &["L1I_CACHE_REFILL / INST_RETIRED * 1000"],
        unit: "refills/1000 instructions",
    },
    CpuMetric {
        name: "L2D cache miss ratio",
        group: "Cache effectiveness",
        description: "L2 data cache refills per L2 data cache access",
        formulas: &["L2D_CACHE_REFILL / L2D_CACHE"],
        unit: "ratio",
    },
    CpuMetric {
        name: "L2D cache MPKI",
        group: "Cache effectiveness",
        description: "L2 data cache refills per thousand instructions",
        formulas: &["L2D_CACHE_REFILL / INST_RETIRED * 1000"],
        unit: "refills/1000 instructions",
    },
    CpuMetric {
        name: "DTLB walk PKI",
        group: "TLB effectiveness",
        description:
            "Data TLB accesses that walked the translation tables, per thousand instructions",
        formulas: &["DTLB_WALK / INST_RETIRED * 1000"],
        unit: "walks/1000 instructions",
    },
    CpuMetric {
        name: "Frontend bound",
        group: "Top-down (slots)",
        description: "Issue slots left empty because the front end had no operation to give",
        formulas: &["STALL_SLOT_FRONTEND / (SLOTS * CPU_CYCLES) * 100"],
        unit: "percent",
    },
    CpuMetric {
        name: "Backend bound",
        group: "Top-down (slots)",
        description: "Issue slots left empty because the back end could take no operation",
        formulas: &["STALL_SLOT_BACKEND / (SLOTS * CPU_CYCLES) * 100"],
        unit: "percent",
    },
    CpuMetric {
        name: "Bad speculation",
        group: "Top-down (slots)",
        description: "Issue slots used by operations that were never retired",
        formulas: &["(1 - OP_RETIRED / OP_SPEC) * (1 - STALL_SLOT / (SLOTS * CPU_CYCLES)) * 100"],
        unit: "percent",
    },
    CpuMetric {
        name: "Retiring",
        group: "Top-down (slots)",
        description: "Issue slots used by operations that retired",
        formulas: &["OP_RETIRED / OP_SPEC * (1 - STALL_SLOT / (SLOTS * CPU_CYCLES)) * 100"],
        unit: "percent",
    },
];

/// A metric's value over one counting.
#[derive(Debug, Clone, PartialEq)]
pub enum MetricValue {
    /// Computed.
    Value {
        /// The value.
        value: f64,
        /// An input was multiplexed by the kernel: its count is scaled up from the time it ran.
        scaled: bool,
        /// The formula that gave it.
        formula: &'static str,
    },
    /// Not computed, and why.
    Unavailable(String),
}

/// What a counting gave for one counter or event: its total and whether the kernel multiplexed it, or why it
/// has none.
pub type CounterTotal = Result<(u64, bool), String>;

/// What a name in a formula is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricInput<'a> {
    /// One of HWCPipe's counters.
    Counter(CpuCounter),
    /// The constant [`SLOTS`].
    Slots,
    /// An Arm PMU event, by Arm's mnemonic.
    Event(&'a str),
}

impl<'a> MetricInput<'a> {
    /// What `name` names.
    pub fn of(name: &'a str) -> MetricInput<'a> {
        if name == SLOTS {
            return MetricInput::Slots;
        }
        match CpuCounter::ALL.into_iter().find(|c| c.name() == name) {
            Some(counter) => MetricInput::Counter(counter),
            None => MetricInput::Event(name),
        }
    }
}

/// Every name `formula` uses, in order of first use.
fn names(formula: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    let _ = equation::parse(formula, |name| {
        let at = formula.find(name).unwrap_or(0);
        let name = &formula[at..at + name.len()];
        if !names.contains(&name) {
            names.push(name);
        }
        Ok::<usize, ()>(0)
    });
    names
}

impl CpuMetric {
    /// The counters any formula names.
    pub fn inputs(&self) -> Vec<CpuCounter> {
        let mut inputs = Vec::new();
        for name in self.formulas.iter().flat_map(|f| names(f)) {
            if let MetricInput::Counter(c) = MetricInput::of(name) {
                if !inputs.contains(&c) {
                    inputs.push(c);
                }
            }
        }
        inputs
    }

    /// The Arm PMU events any formula names, by Arm's mnemonic.
    pub fn event_inputs(&self) -> Vec<&'static str> {
        let mut inputs = Vec::new();
        for name in self.formulas.iter().flat_map(|f| names(f)) {
            if let MetricInput::Event(event) = MetricInput::of(name) {
                if !inputs.contains(&event) {
                    inputs.push(event);
                }
            }
        }
        inputs
    }

    /// The metric over one counting: `total` gives each counter's or event's total (by its name), or why it
    /// has none; `slots` gives [`SLOTS`], or why it is not known. The first formula whose inputs all have
    /// totals gives the value.
    pub fn evaluate(
        &self,
        total: impl Fn(MetricInput<'_>) -> CounterTotal,
        slots: impl Fn() -> Result<f64, String>,
    ) -> MetricValue {
        let mut reasons = Vec::new();
        for &formula in self.formulas {
            match evaluate_one(formula, &total, &slots) {
                Ok((value, scaled)) => {
                    return MetricValue::Value {
                        value,
                        scaled,
                        formula,
                    }
                }
                Err(reason) if self.formulas.len() == 1 => return MetricValue::Unavailable(reason),
                Err(reason) => reasons.push(format!("{formula}: {reason}")),
            }
        }
        MetricValue::Unavailable(reasons.join("; "))
    }
}

/// One formula over one counting: its value and whether an input was scaled, or why it has none.
fn evaluate_one(
    formula: &'static str,
    total: &impl Fn(MetricInput<'_>) -> CounterTotal,
    slots: &impl Fn() -> Result<f64, String>,
) -> Result<(f64, bool), String> {
    let used = names(formula);
    let expr = match equation::parse(formula, |name| {
        used.iter()
            .position(|&n| n == name)
            .ok_or_else(|| format!("no input {name}"))
    }) {
        Ok(Ok(expr)) => expr,
        Ok(Err(reason)) => return Err(reason),
        Err(error) => return Err(format!("its formula: {error}")),
    };
    let mut inputs = Vec::with_capacity(used.len());
    let mut scaled = false;
    for &name in &used {
        let input = MetricInput::of(name);
        let value = match input {
            MetricInput::Slots => slots().map_err(|reason| format!("needs {SLOTS}: {reason}"))?,
            _ => {
                let (value, multiplexed) =
                    total(input).map_err(|reason| format!("needs {name}: {reason}"))?;
                scaled |= multiplexed;
                value as f64
            }
        };
        inputs.push(value);
    }
    match expr.eval(&inputs) {
        Ok(value) => Ok((value, scaled)),
        Err(EvalError::DivisionByZero { divisor }) => Err(format!(
            "no value: {} is 0",
            divisor.render(&|n| used.get(n).copied().unwrap_or("?").to_owned())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str) -> &'static CpuMetric {
        METRICS.iter().find(|m| m.name == name).unwrap()
    }

    fn no_slots() -> Result<f64, String> {
        Err("not known".to_owned())
    }

    #[test]
    fn every_formula_parses_and_names_its_inputs() {
        for m in METRICS {
            for formula in m.formulas {
                let parsed = equation::parse(formula, |_| Ok::<usize, ()>(0));
                assert!(matches!(parsed, Ok(Ok(_))), "{}: {parsed:?}", m.name);
            }
        }
        assert_eq!(
            metric("IPC").inputs(),
            [CpuCounter::Instructions, CpuCounter::Cycles]
        );
        assert_eq!(metric("IPC").event_inputs(), ["INST_RETIRED", "CPU_CYCLES"]);
        assert_eq!(
            metric("Bad speculation").event_inputs(),
            ["OP_RETIRED", "OP_SPEC", "STALL_SLOT", "CPU_CYCLES"]
        );
        assert_eq!(&METRICS[2].name, &"IPC");
    }

    #[test]
    fn the_arm_formula_comes_first_and_the_generic_one_stands_in() {
        let ipc = metric("IPC");
        let arm = |input: MetricInput<'_>| match input {
            MetricInput::Event("INST_RETIRED") => Ok((3_000, false)),
            MetricInput::Event("CPU_CYCLES") => Ok((2_000, true)),
            _ => Ok((1, false)),
        };
        assert_eq!(
            ipc.evaluate(arm, no_slots),
            MetricValue::Value {
                value: 1.5,
                scaled: true,
                formula: "INST_RETIRED / CPU_CYCLES"
            }
        );
        let generic = |input: MetricInput<'_>| match input {
            MetricInput::Counter(CpuCounter::Instructions) => Ok((3_000, false)),
            MetricInput::Counter(CpuCounter::Cycles) => Ok((1_000, false)),
            _ => Err("no Arm PMU".to_owned()),
        };
        assert_eq!(
            ipc.evaluate(generic, no_slots),
            MetricValue::Value {
                value: 3.0,
                scaled: false,
                formula: "Instructions / Cycles"
            }
        );
    }

    #[test]
    fn a_missing_input_or_constant_or_a_zero_divisor_is_unavailable_with_the_reason() {
        let ipc = metric("IPC");
        let MetricValue::Unavailable(reason) = ipc.evaluate(
            |input| match input {
                MetricInput::Counter(CpuCounter::Cycles) => Err("unsupported".to_owned()),
                MetricInput::Event(_) => Err("no Arm PMU".to_owned()),
                _ => Ok((1, false)),
            },
            no_slots,
        ) else {
            panic!()
        };
        assert_eq!(
            reason,
            "INST_RETIRED / CPU_CYCLES: needs INST_RETIRED: no Arm PMU; Instructions / Cycles: needs \
             Cycles: unsupported"
        );
        let MetricValue::Unavailable(reason) =
            metric("Backend stalled cycles").evaluate(|_| Err("absent".into()), no_slots)
        else {
            panic!()
        };
        assert_eq!(reason, "needs STALL_BACKEND: absent");
        let MetricValue::Unavailable(reason) =
            metric("Frontend bound").evaluate(|_| Ok((5, false)), no_slots)
        else {
            panic!()
        };
        assert_eq!(reason, "needs SLOTS: not known");
        let bound = metric("Frontend bound").evaluate(|_| Ok((4, false)), || Ok(8.0));
        assert_eq!(
            bound,
            MetricValue::Value {
                value: 12.5,
                scaled: false,
                formula: "STALL_SLOT_FRONTEND / (SLOTS * CPU_CYCLES) * 100"
            }
        );
        let zero = metric("L1D cache MPKI").evaluate(
            |input| {
                Ok((
                    u64::from(input == MetricInput::Event("L1D_CACHE_REFILL")),
                    false,
                ))
            },
            no_slots,
        );
        assert_eq!(
            zero,
            MetricValue::Unavailable("no value: INST_RETIRED is 0".into())
        );
    }
}
