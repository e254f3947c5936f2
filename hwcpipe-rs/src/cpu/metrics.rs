//! CPU metrics: ratios of counted events that say more than the counts (instructions per cycle, branch
//! mispredictions per thousand instructions, …), each computed from one counting of its inputs by a formula
//! over counter names, parsed by the same total parser as Arm's Mali equations.
//!
//! A formula names [`CpuCounter`]s (`Instructions / Cycles`) or Arm PMU events this crate does not count
//! (`STALL_FRONTEND`): a metric over such an event, or over a counter the kernel did not count, is
//! unavailable with the reason; a metric over a counter the kernel multiplexed says so.

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
    /// The formula over counter names.
    pub formula: &'static str,
    /// The unit of its value.
    pub unit: &'static str,
}

/// The metrics, grouped as Arm's top-down methodology groups them (cycle accounting first).
pub const METRICS: &[CpuMetric] = &[
    CpuMetric {
        name: "Frontend stalled cycles",
        group: "Cycle accounting (top-down)",
        description:
            "Cycles in which no operation was issued because the front end had none to give",
        formula: "STALL_FRONTEND / Cycles * 100",
        unit: "percent",
    },
    CpuMetric {
        name: "Backend stalled cycles",
        group: "Cycle accounting (top-down)",
        description: "Cycles in which no operation was issued because the back end could take none",
        formula: "STALL_BACKEND / Cycles * 100",
        unit: "percent",
    },
    CpuMetric {
        name: "IPC",
        group: "General",
        description: "Instructions retired per CPU cycle",
        formula: "Instructions / Cycles",
        unit: "instructions/cycle",
    },
    CpuMetric {
        name: "Branch MPKI",
        group: "Branch effectiveness",
        description: "Mispredicted branches per thousand instructions",
        formula: "BranchMisses / Instructions * 1000",
        unit: "misses/1000 instructions",
    },
    CpuMetric {
        name: "Branch misprediction ratio",
        group: "Branch effectiveness",
        description: "Mispredicted branches per branch",
        formula: "BranchMisses / BranchInstructions",
        unit: "ratio",
    },
    CpuMetric {
        name: "Cache miss ratio",
        group: "Cache effectiveness",
        description:
            "Cache misses per cache reference (the kernel's generic cache events: L1 data on Arm)",
        formula: "CacheMisses / CacheReferences",
        unit: "ratio",
    },
    CpuMetric {
        name: "L1D cache MPKI",
        group: "Cache effectiveness",
        description: "L1 data cache refills per thousand instructions",
        formula: "L1D_CACHE_REFILL / Instructions * 1000",
        unit: "refills/1000 instructions",
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
    },
    /// Not computed, and why.
    Unavailable(String),
}

/// What a counting gave for one counter: its total and whether the kernel multiplexed it, or why it has none.
pub type CounterTotal = Result<(u64, bool), String>;

impl CpuMetric {
    /// The counters the formula names (names of events this crate does not count are left out).
    pub fn inputs(&self) -> Vec<CpuCounter> {
        let mut inputs = Vec::new();
        let _ = equation::parse(self.formula, |name| {
            if let Some(c) = CpuCounter::ALL.into_iter().find(|c| c.name() == name) {
                inputs.push(c);
            }
            Ok::<usize, ()>(0)
        });
        inputs
    }

    /// The metric over the totals `total` gives for each counter.
    pub fn evaluate(&self, total: impl Fn(CpuCounter) -> CounterTotal) -> MetricValue {
        let mut names: Vec<CpuCounter> = Vec::new();
        let parsed = equation::parse(self.formula, |name| {
            let counter = CpuCounter::ALL
                .into_iter()
                .find(|c| c.name() == name)
                .ok_or_else(|| {
                    format!("needs the Arm PMU event {name}, which is not counted here")
                })?;
            let index = names.iter().position(|&c| c == counter).unwrap_or_else(|| {
                names.push(counter);
                names.len() - 1
            });
            Ok(index)
        });
        let expr = match parsed {
            Ok(Ok(expr)) => expr,
            Ok(Err(reason)) => return MetricValue::Unavailable(reason),
            Err(error) => return MetricValue::Unavailable(format!("its formula: {error}")),
        };
        let mut inputs = Vec::with_capacity(names.len());
        let mut scaled = false;
        for &counter in &names {
            match total(counter) {
                Ok((value, multiplexed)) => {
                    inputs.push(value as f64);
                    scaled |= multiplexed;
                }
                Err(reason) => {
                    return MetricValue::Unavailable(format!("needs {}: {reason}", counter.name()))
                }
            }
        }
        match expr.eval(&inputs) {
            Ok(value) => MetricValue::Value { value, scaled },
            Err(EvalError::DivisionByZero { divisor }) => MetricValue::Unavailable(format!(
                "no value: {} is 0",
                divisor.render(&|n| names.get(n).map_or("?", |c| c.name()).to_owned())
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str) -> &'static CpuMetric {
        METRICS.iter().find(|m| m.name == name).unwrap()
    }

    #[test]
    fn every_formula_parses_and_names_its_counters() {
        for m in METRICS {
            let parsed = equation::parse(m.formula, |_| Ok::<usize, ()>(0));
            assert!(matches!(parsed, Ok(Ok(_))), "{}: {parsed:?}", m.name);
        }
        assert_eq!(
            metric("IPC").inputs(),
            [CpuCounter::Instructions, CpuCounter::Cycles]
        );
    }

    #[test]
    fn ipc_is_instructions_over_cycles_and_says_when_scaled() {
        let ipc = metric("IPC");
        let totals = |c: CpuCounter| match c {
            CpuCounter::Instructions => Ok((3_000, false)),
            CpuCounter::Cycles => Ok((2_000, true)),
            _ => Err("not asked".to_owned()),
        };
        assert_eq!(
            ipc.evaluate(totals),
            MetricValue::Value {
                value: 1.5,
                scaled: true
            }
        );
    }

    #[test]
    fn a_missing_input_or_event_or_a_zero_divisor_is_unavailable_with_the_reason() {
        let ipc = metric("IPC");
        let MetricValue::Unavailable(reason) = ipc.evaluate(|c| match c {
            CpuCounter::Cycles => Err("the PMU has no cycle counter".to_owned()),
            _ => Ok((1, false)),
        }) else {
            panic!()
        };
        assert_eq!(reason, "needs Cycles: the PMU has no cycle counter");
        let MetricValue::Unavailable(reason) =
            metric("Frontend stalled cycles").evaluate(|_| Ok((1, false)))
        else {
            panic!()
        };
        assert!(reason.contains("STALL_FRONTEND"), "{reason}");
        let zero = ipc.evaluate(|c| Ok((u64::from(c == CpuCounter::Instructions), false)));
        assert_eq!(
            zero,
            MetricValue::Unavailable("no value: Cycles is 0".into())
        );
    }
}
