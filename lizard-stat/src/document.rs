//! A [`Report`] as one serializable document: a row per counter (CPU series, Arm PMU event series, GPU
//! counters, database counters, then the CPU counters and events not counted), the metrics, and what was
//! counted.

use serde::{Serialize, Serializer};

use hwcpipe::cpu::MetricValue;

use lizard_core::capture::Source;

use crate::report::Report;
use lizard_core::error_chain;

/// A row's value: a CPU count is an integer, a GPU value a real number.
#[derive(Serialize)]
#[serde(untagged)]
enum Number {
    Count(u64),
    Real(f64),
}

/// One counter's row.
#[derive(Serialize)]
struct Row {
    counter: String,
    cpu: Option<u32>,
    /// The PMU (one core type) of an Arm PMU event's part.
    pmu: Option<String>,
    unit: String,
    value: Option<Number>,
    multiplexed: Option<bool>,
    /// The share of the time it could count that it was on a counter (perf's percentage, as 0 to 1).
    counted_share: Option<f64>,
    unavailable: Option<String>,
    source: Source,
}

/// One metric's row.
#[derive(Serialize)]
struct MetricRow {
    metric: &'static str,
    group: &'static str,
    /// The formula that gave the value (the first one tried when there is none).
    formula: &'static str,
    unit: &'static str,
    /// The core type (PMU) of a value over one core type's events.
    pmu: Option<String>,
    value: Option<f64>,
    scaled: bool,
    unavailable: Option<String>,
}

/// The whole document.
#[derive(Serialize)]
struct Document<'a> {
    command: &'a [String],
    target: &'a str,
    exit_status: i32,
    elapsed_s: f64,
    user_s: Option<f64>,
    system_s: Option<f64>,
    kernel_excluded: bool,
    gpu_unavailable: Option<String>,
    counters: Vec<Row>,
    metrics: Option<Vec<MetricRow>>,
}

/// Why a database counter has no value over a counting.
const NO_DATABASE_VALUE: &str = "no value over the counting (a division by zero)";

impl Serialize for Report {
    /// The report as `{command, target, exit_status, elapsed_s, user_s, system_s, kernel_excluded, gpu_unavailable,
    /// counters: [{counter, cpu, pmu, unit, value, multiplexed, counted_share, unavailable, source}],
    /// metrics: [{metric, group, formula, unit, pmu, value, scaled, unavailable}] or null}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cpu = self.cpu.iter().map(|t| Row {
            counter: t.name(),
            cpu: t.cpu,
            pmu: None,
            unit: t.counter.unit().to_string(),
            value: Some(Number::Count(t.total)),
            multiplexed: Some(t.multiplexed),
            counted_share: t.counted_share,
            unavailable: None,
            source: Source::Cpu,
        });
        let events = self.events.iter().map(|e| Row {
            counter: e.name.clone(),
            cpu: e.cpu,
            pmu: e.pmu.clone(),
            unit: e.unit.to_string(),
            value: Some(Number::Count(e.total)),
            multiplexed: Some(e.multiplexed),
            counted_share: e.counted_share,
            unavailable: None,
            source: Source::Cpu,
        });
        let gpu = self.gpu.iter().map(|g| Row {
            counter: g.counter.name().to_owned(),
            cpu: None,
            pmu: None,
            unit: g.counter.unit().to_string(),
            value: Some(Number::Real(g.value)),
            multiplexed: Some(false),
            counted_share: None,
            unavailable: None,
            source: Source::Gpu,
        });
        let database = self.database.iter().map(|d| Row {
            counter: d.name.to_owned(),
            cpu: None,
            pmu: None,
            unit: d.units.to_owned(),
            value: d.value.map(Number::Real),
            multiplexed: Some(false),
            counted_share: None,
            unavailable: d.value.is_none().then(|| NO_DATABASE_VALUE.to_owned()),
            source: Source::Gpu,
        });
        let unavailable = self.cpu_unavailable.iter().map(|u| Row {
            counter: u.counter.name().to_owned(),
            cpu: None,
            pmu: None,
            unit: u.counter.unit().to_string(),
            value: None,
            multiplexed: None,
            counted_share: None,
            unavailable: Some(u.reason.clone()),
            source: Source::Cpu,
        });
        let events_unavailable = self.event_notes.iter().map(|n| Row {
            counter: match &n.pmu {
                Some(pmu) => format!("{pmu}/{}/", n.event),
                None => n.event.clone(),
            },
            cpu: None,
            pmu: n.pmu.clone(),
            unit: String::new(),
            value: None,
            multiplexed: None,
            counted_share: None,
            unavailable: Some(n.reason.to_string()),
            source: Source::Cpu,
        });
        let metrics = self.metrics.as_ref().map(|metrics| {
            metrics
                .iter()
                .map(|m| {
                    let first = m.metric.formulas.first().copied().unwrap_or_default();
                    let (value, scaled, formula, unavailable) = match &m.value {
                        MetricValue::Value {
                            value,
                            scaled,
                            formula,
                        } => (Some(*value), *scaled, *formula, None),
                        MetricValue::Unavailable(reason) => {
                            (None, false, first, Some(reason.clone()))
                        }
                    };
                    MetricRow {
                        metric: m.metric.name,
                        group: m.metric.group,
                        formula,
                        unit: m.metric.unit,
                        pmu: m.pmu.clone(),
                        value,
                        scaled,
                        unavailable,
                    }
                })
                .collect()
        });
        Document {
            command: &self.command,
            target: &self.scope,
            exit_status: self.exit_code(),
            elapsed_s: self.elapsed.as_secs_f64(),
            user_s: self.times.map(|t| t.user.as_secs_f64()),
            system_s: self.times.map(|t| t.system.as_secs_f64()),
            kernel_excluded: self.kernel_excluded,
            gpu_unavailable: self.gpu_unavailable.as_ref().map(|e| error_chain(e)),
            counters: cpu
                .chain(events)
                .chain(gpu)
                .chain(database)
                .chain(unavailable)
                .chain(events_unavailable)
                .collect(),
            metrics,
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hwcpipe::cpu::METRICS;
    use hwcpipe::{CpuCounter, GpuCounter};

    use super::*;
    use crate::report::{
        CpuTotal, CpuUnavailable, DatabaseTotal, EventNote, EventTotal, GpuTotal, MetricTotal,
    };
    use hwcpipe::cpu::{EventUnavailable, NotOnPmu};

    fn report() -> Report {
        Report {
            command: vec!["true".into()],
            scope: "command 'true' and its children".into(),
            exit: None,
            elapsed: Duration::from_millis(1500),
            times: None,
            kernel_excluded: false,
            cpu_counters: vec![CpuCounter::TaskClock, CpuCounter::Cycles],
            cpu: vec![CpuTotal {
                counter: CpuCounter::TaskClock,
                cpu: Some(1),
                total: 42,
                multiplexed: true,
                counted_share: Some(0.5),
            }],
            cpu_unavailable: vec![CpuUnavailable {
                counter: CpuCounter::Cycles,
                reason: "no PMU".into(),
            }],
            events: vec![EventTotal {
                name: "armv8_cortex_a55/INST_RETIRED/".into(),
                event: "INST_RETIRED".into(),
                pmu: Some("armv8_cortex_a55".into()),
                core: Some("Cortex-A55".into()),
                cpu: None,
                unit: hwcpipe::Unit::Events.into(),
                description: None,
                total: 7,
                multiplexed: false,
                counted_share: Some(1.0),
            }],
            event_notes: vec![EventNote {
                event: "STALL_BACKEND".into(),
                pmu: None,
                reason: EventUnavailable::NotOnPmu(NotOnPmu::NotImplemented {
                    core: "Cortex-A72".into(),
                    code: 0x24,
                })
                .to_string(),
            }],
            gpu: vec![GpuTotal {
                counter: GpuCounter::GpuCycles,
                value: 1000.0,
            }],
            database: vec![DatabaseTotal {
                name: "MaliGPUActiveCy".into(),
                units: "cycles".into(),
                value: None,
            }],
            gpu_unavailable: None,
            metrics: Some(vec![MetricTotal {
                metric: &METRICS[2],
                value: MetricValue::Unavailable("needs Cycles".into()),
                pmu: None,
            }]),
        }
    }

    #[test]
    fn a_report_is_one_row_per_counter_then_its_metrics() {
        let doc = serde_json::to_value(report()).unwrap();
        assert_eq!(doc["command"], serde_json::json!(["true"]));
        assert_eq!(doc["exit_status"], 0);
        assert_eq!(doc["elapsed_s"], 1.5);
        assert!(doc["gpu_unavailable"].is_null());
        let rows = doc["counters"].as_array().unwrap();
        let names: Vec<&str> = rows
            .iter()
            .map(|r| r["counter"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "TaskClock@cpu1",
                "armv8_cortex_a55/INST_RETIRED/",
                "GpuCycles",
                "MaliGPUActiveCy",
                "Cycles",
                "STALL_BACKEND"
            ]
        );
        assert!(rows[0]["value"].is_u64() && rows[0]["multiplexed"] == true);
        assert_eq!(rows[0]["counted_share"], 0.5);
        assert_eq!(rows[1]["pmu"], "armv8_cortex_a55");
        assert!(rows[1]["value"].is_u64() && rows[1]["unit"] == "events");
        assert!(rows[2]["value"].is_f64() && rows[2]["source"] == "gpu");
        assert!(rows[3]["value"].is_null() && rows[3]["unavailable"].is_string());
        assert!(rows[4]["multiplexed"].is_null() && rows[4]["unavailable"] == "no PMU");
        let stall = rows[5]["unavailable"].as_str().unwrap();
        assert!(stall.contains("Cortex-A72 does not implement"), "{stall}");
        let metric = &doc["metrics"][0];
        assert_eq!(metric["metric"], "IPC");
        assert_eq!(metric["formula"], "INST_RETIRED / CPU_CYCLES");
        assert!(metric["value"].is_null() && metric["unavailable"] == "needs Cycles");
    }

    #[test]
    fn without_metrics_the_document_says_null() {
        let mut report = report();
        report.metrics = None;
        assert!(serde_json::to_value(report).unwrap()["metrics"].is_null());
    }
}
