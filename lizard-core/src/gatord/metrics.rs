//! gatord's CPU metric counters (`metric="yes"`, e.g. `ARMv8_Cortex_A72_metric_ipc`): which events a
//! metric is the ratio of, and the metric's values computed from those events' samples.
//!
//! What gatord does (9.7.2, `PerfDriver::add_metrics_for`): it opens no event for the metric and sends no
//! value under its key. It opens the metric's PMU events and the cycle counter in a perf group of their own,
//! each sampled on its own overflows (event-based sampling: each sample stands for `period` events), and
//! links each event to the metric key with a METRIC_EVENT_KEY message. The formula is not in gatord (its
//! metric tables list only the events); it is Arm's, as published in Arm's Telemetry Solution and
//! Streamline's metric descriptions: a ratio of event counts, scaled ([`Formula`]).
//!
//! How a value is made ([`MetricValues`]): on each CPU, every sample of the denominator's event closes an
//! interval; the metric's sample for that interval is `scale × Σ numerator periods since the previous
//! denominator sample ÷ the denominator's period`. The denominator's period is the same for every sample,
//! so the mean of a window's samples, which is how an absolute counter reads, is `scale × Σ numerator ÷ Σ
//! denominator` over the window: the ratio of the events' counts. Counts of the numerator after the last
//! denominator sample of a capture are in no interval (one sampling period at most).

use std::collections::HashMap;

use gator_proto::apc::{MetricEvent, MetricEventRole};

/// The events a metric divides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operand {
    /// The cycle counter gatord opens beside every metric's events.
    Cycles,
    /// The metric's event with this PMU event number.
    Event(i32),
}

/// A metric as a ratio: `scale × numerator ÷ denominator`, where the numerator is the sum of every event
/// of the metric but the denominator's (or the cycles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Formula {
    /// The cycles (cpi), or `None`: the metric's other events (ipc: INST_RETIRED; a demand mpki: both
    /// refill events).
    numerator_cycles: bool,
    denominator: Operand,
    scale: f64,
}

/// INST_RETIRED.
const INST_RETIRED: i32 = 0x08;
/// INST_SPEC.
const INST_SPEC: i32 = 0x1b;
/// LDST_SPEC.
const LDST_SPEC: i32 = 0x72;
/// L1D_CACHE, L1I_CACHE, L2D_CACHE: the accesses a miss ratio divides by.
const L1D_CACHE: i32 = 0x04;
const L1I_CACHE: i32 = 0x14;
const L2D_CACHE: i32 = 0x16;

/// The formula of metric `identifier` (the part of the counter name after `_metric_`), for the metrics
/// gatord 9.7.2 offers on Armv8-A cores; `None` for one whose formula this library does not know.
pub(crate) fn formula(identifier: &str) -> Option<Formula> {
    let events_over = |denominator, scale| Formula {
        numerator_cycles: false,
        denominator: Operand::Event(denominator),
        scale,
    };
    Some(match identifier {
        "ipc" => Formula {
            numerator_cycles: false,
            denominator: Operand::Cycles,
            scale: 1.0,
        },
        "cpi" => Formula {
            numerator_cycles: true,
            denominator: Operand::Event(INST_RETIRED),
            scale: 1.0,
        },
        "retired_insns_percent" => events_over(INST_SPEC, 100.0),
        "strex_fail_mpki" => events_over(INST_SPEC, 1000.0),
        "branch_mpki"
        | "l1d_tlb_mpki"
        | "l1i_tlb_mpki"
        | "l1d_cache_mpki"
        | "l1i_cache_mpki"
        | "l2_cache_mpki"
        | "l2d_cache_mpki"
        | "l1d_cache_demand_mpki"
        | "l2d_cache_demand_mpki" => events_over(INST_RETIRED, 1000.0),
        "l1d_cache_miss_ratio" => events_over(L1D_CACHE, 100.0),
        "l1i_cache_miss_ratio" => events_over(L1I_CACHE, 100.0),
        "l2_cache_miss_ratio" | "l2d_cache_miss_ratio" => events_over(L2D_CACHE, 100.0),
        "load_ls_percentage" | "store_ls_percentage" => events_over(LDST_SPEC, 100.0),
        "barrier_percentage"
        | "branch_percentage"
        | "crypto_percentage"
        | "integer_dp_percentage"
        | "ldrex_percentage"
        | "load_percentage"
        | "store_percentage"
        | "rc_ld_percentage"
        | "rc_st_percentage"
        | "scalar_fp_percentage"
        | "simd_percentage"
        | "load_store_percentage" => events_over(INST_SPEC, 100.0),
        _ => return None,
    })
}

/// The metric identifier of a gatord metric counter name: `<counter set>_metric_<identifier>`, where
/// gatord appends `_<major>_<minor>` for a definition specific to a core revision (`…_metric_ipc_1_0`).
pub(crate) fn identifier(counter: &str) -> Option<&str> {
    let (_, rest) = counter.split_once("_metric_")?;
    let versioned = rest.rsplitn(3, '_').collect::<Vec<_>>();
    match versioned.as_slice() {
        [minor, major, base]
            if minor.bytes().all(|b| b.is_ascii_digit())
                && major.bytes().all(|b| b.is_ascii_digit())
                && !minor.is_empty()
                && !major.is_empty() =>
        {
            Some(base)
        }
        _ => Some(rest),
    }
}

/// Which part of a formula an event key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Numerator,
    Denominator,
}

/// The parts of `formula` among the events gatord linked to the metric: `(event key, part)`, or `None` when
/// the events lack the denominator or any numerator (gatord's definition of the metric is not this one).
fn parts(formula: &Formula, events: &[MetricEvent]) -> Option<Vec<(i32, Part)>> {
    let denominator = events.iter().find(|e| match formula.denominator {
        Operand::Cycles => e.role == MetricEventRole::CycleCounter,
        Operand::Event(code) => e.role == MetricEventRole::Event && e.code == code,
    })?;
    let numerators: Vec<(i32, Part)> = events
        .iter()
        .filter(|e| {
            if formula.numerator_cycles {
                e.role == MetricEventRole::CycleCounter
            } else {
                e.role == MetricEventRole::Event && e.key != denominator.key
            }
        })
        .map(|e| (e.key, Part::Numerator))
        .collect();
    if numerators.is_empty() {
        return None;
    }
    let mut parts = numerators;
    parts.push((denominator.key, Part::Denominator));
    Some(parts)
}

/// One metric of a capture: its formula, its events' parts once gatord has linked them, and each CPU's
/// numerator since its last denominator sample.
#[derive(Debug, Clone)]
struct Metric {
    formula: Formula,
    parts: Option<Vec<(i32, Part)>>,
    pending: HashMap<i32, u64>,
}

/// The metric values of a capture's samples (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct MetricValues {
    /// Every metric counter bound, with a formula or not.
    keys: Vec<i32>,
    metrics: HashMap<i32, Metric>,
}

/// Why a metric counter gets no values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MetricGap {
    /// Its formula is not known.
    NoFormula,
    /// gatord linked no events to it, or not the ones its formula divides.
    NoEvents,
}

impl MetricValues {
    /// Takes metric counter `counter` (its name) bound to `key`; `false` when the name is no metric.
    pub(crate) fn insert(&mut self, key: i32, counter: &str) -> bool {
        let Some(identifier) = identifier(counter) else {
            return false;
        };
        self.keys.push(key);
        if let Some(formula) = formula(identifier) {
            self.metrics.insert(
                key,
                Metric {
                    formula,
                    parts: None,
                    pending: HashMap::new(),
                },
            );
        }
        true
    }

    /// The keys of the metric counters bound, with a formula or not.
    pub(crate) fn keys(&self) -> &[i32] {
        &self.keys
    }

    /// Links each metric to the events gatord announced for it (`events_of` a metric key).
    pub(crate) fn link<'e>(&mut self, events_of: impl Fn(i32) -> &'e [MetricEvent]) {
        for (&key, metric) in &mut self.metrics {
            if metric.parts.is_none() {
                metric.parts = parts(&metric.formula, events_of(key));
            }
        }
    }

    /// Why the metric bound to `key` gets no values, if it gets none: `None` for a metric whose events are
    /// linked, and for a key bound to no metric.
    pub(crate) fn gap(&self, key: i32) -> Option<MetricGap> {
        match self.metrics.get(&key) {
            None if self.keys.contains(&key) => Some(MetricGap::NoFormula),
            None => None,
            Some(metric) if metric.parts.is_none() => Some(MetricGap::NoEvents),
            Some(_) => None,
        }
    }

    /// A sample of `delta` events of event `key` on `core`: the metric values it closes, as `(metric key,
    /// value)`.
    pub(crate) fn sample(&mut self, key: i32, core: i32, delta: u64, out: &mut Vec<(i32, f64)>) {
        for (&metric_key, metric) in &mut self.metrics {
            let Some(parts) = &metric.parts else {
                continue;
            };
            for &(event_key, part) in parts {
                if event_key != key {
                    continue;
                }
                let pending = metric.pending.entry(core).or_insert(0);
                match part {
                    Part::Numerator => *pending = pending.saturating_add(delta),
                    Part::Denominator if delta > 0 => {
                        let numerator = std::mem::take(pending);
                        out.push((
                            metric_key,
                            metric.formula.scale * numerator as f64 / delta as f64,
                        ));
                    }
                    Part::Denominator => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CYCLES: i32 = 0x7fff_fffe;
    const INST: i32 = 0x7fff_fffd;
    const MISPRED: i32 = 0x7fff_fffc;

    fn event(code: i32, key: i32, role: MetricEventRole) -> MetricEvent {
        MetricEvent { code, key, role }
    }

    /// ipc and branch_mpki as gatord 9.7.2 links them in one group: cycles (type 1) for both, INST_RETIRED
    /// shared, BR_MIS_PRED for the mpki.
    fn linked() -> MetricValues {
        let mut values = MetricValues::default();
        assert!(values.insert(0x20, "ARMv8_Cortex_A72_metric_ipc"));
        assert!(values.insert(0x22, "ARMv8_Cortex_A72_metric_branch_mpki"));
        assert!(values.insert(0x24, "ARMv8_Cortex_A72_metric_no_such_metric"));
        assert!(!values.insert(0x26, "ARMv8_Cortex_A72_ccnt"));
        let ipc = [
            event(0x11, CYCLES, MetricEventRole::CycleCounter),
            event(0x08, INST, MetricEventRole::Event),
        ];
        let mpki = [
            event(0x11, CYCLES, MetricEventRole::CycleCounter),
            event(0x08, INST, MetricEventRole::Event),
            event(0x10, MISPRED, MetricEventRole::Event),
        ];
        values.link(|key| match key {
            0x20 => &ipc,
            0x22 => &mpki,
            _ => &[],
        });
        values
    }

    #[test]
    fn identifiers_come_from_the_counter_name_without_a_revision() {
        assert_eq!(identifier("ARMv8_Cortex_A72_metric_ipc"), Some("ipc"));
        assert_eq!(
            identifier("ARMv8_Cortex_A72_metric_l1d_cache_miss_ratio"),
            Some("l1d_cache_miss_ratio")
        );
        assert_eq!(identifier("ARMv8_Cortex_X1_metric_ipc_1_0"), Some("ipc"));
        assert_eq!(identifier("ARMv8_Cortex_A72_ccnt"), None);
    }

    #[test]
    fn every_metric_gatord_offers_on_a_cortex_a72_has_a_formula() {
        let Some(text) = test_data::gatord_text("arm64-vm-local.apc/events.xml") else {
            return;
        };
        let names: Vec<&str> = text
            .split("counter=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .filter(|name| name.contains("_metric_"))
            .collect();
        assert_eq!(names.len(), 31, "{names:?}");
        for name in names {
            assert!(
                identifier(name).and_then(formula).is_some(),
                "{name} has no formula"
            );
        }
    }

    #[test]
    fn each_denominator_sample_closes_an_interval_of_its_numerators() {
        let mut values = linked();
        let mut out = Vec::new();
        // CPU 0: 3 INST periods of 1000 then a cycles period of 2000: ipc 1.5.
        for _ in 0..3 {
            values.sample(INST, 0, 1000, &mut out);
        }
        values.sample(CYCLES, 0, 2000, &mut out);
        // Each INST sample closed an interval of branch_mpki without mispredicts.
        assert_eq!(out, [(0x22, 0.0), (0x22, 0.0), (0x22, 0.0), (0x20, 1.5)]);
        out.clear();
        // The INST samples close branch_mpki's intervals: 2 mispredicts per 1000 instructions.
        values.sample(MISPRED, 0, 2, &mut out);
        values.sample(INST, 0, 1000, &mut out);
        values.sample(CYCLES, 1, 500, &mut out);
        let mut got = out.clone();
        got.sort_by_key(|g| g.0);
        // CPU 1 had no instructions yet: ipc 0 there.
        assert_eq!(got, [(0x20, 0.0), (0x22, 2.0)]);
        // A zero period closes nothing.
        out.clear();
        values.sample(CYCLES, 0, 0, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn metrics_without_formula_or_events_say_why() {
        let values = linked();
        assert_eq!(values.gap(0x20), None);
        assert_eq!(values.gap(0x24), Some(MetricGap::NoFormula));
        assert_eq!(values.gap(0x26), None, "not a metric");
        assert_eq!(values.keys(), [0x20, 0x22, 0x24]);
        let mut unlinked = MetricValues::default();
        unlinked.insert(0x20, "ARMv8_Cortex_A72_metric_cpi");
        // gatord linked only the cycles: cpi's denominator, INST_RETIRED, is missing.
        let cycles = [event(0x11, CYCLES, MetricEventRole::CycleCounter)];
        unlinked.link(|_| &cycles);
        assert_eq!(unlinked.gap(0x20), Some(MetricGap::NoEvents));
    }
}
