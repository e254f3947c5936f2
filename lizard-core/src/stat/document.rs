//! A [`Report`] as one serializable document: a row per counter (CPU series, GPU counters, database
//! counters, then the CPU counters not counted), the metrics, and what was counted.

use serde::{Serialize, Serializer};

use hwcpipe::cpu::MetricValue;

use super::report::Report;
use crate::error::error_chain;

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
    unit: String,
    value: Option<Number>,
    multiplexed: Option<bool>,
    unavailable: Option<String>,
    source: &'static str,
}

/// One metric's row.
#[derive(Serialize)]
struct MetricRow {
    metric: &'static str,
    group: &'static str,
    formula: &'static str,
    unit: &'static str,
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
    /// counters: [{counter, cpu, unit, value, multiplexed, unavailable, source}], metrics: [{metric, group,
    /// formula, unit, value, scaled, unavailable}] or null}`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cpu = self.cpu.iter().map(|t| Row {
            counter: t.name(),
            cpu: t.cpu,
            unit: t.counter.unit().to_string(),
            value: Some(Number::Count(t.total)),
            multiplexed: Some(t.multiplexed),
            unavailable: None,
            source: "cpu",
        });
        let gpu = self.gpu.iter().map(|g| Row {
            counter: g.counter.name().to_owned(),
            cpu: None,
            unit: g.counter.unit().to_string(),
            value: Some(Number::Real(g.value)),
            multiplexed: Some(false),
            unavailable: None,
            source: "gpu",
        });
        let database = self.database.iter().map(|d| Row {
            counter: d.name.to_owned(),
            cpu: None,
            unit: d.units.to_owned(),
            value: d.value.map(Number::Real),
            multiplexed: Some(false),
            unavailable: d.value.is_none().then(|| NO_DATABASE_VALUE.to_owned()),
            source: "gpu",
        });
        let unavailable = self.cpu_unavailable.iter().map(|u| Row {
            counter: u.counter.name().to_owned(),
            cpu: None,
            unit: u.counter.unit().to_string(),
            value: None,
            multiplexed: None,
            unavailable: Some(u.reason.clone()),
            source: "cpu",
        });
        let metrics = self.metrics.as_ref().map(|metrics| {
            metrics
                .iter()
                .map(|m| {
                    let (value, scaled, unavailable) = match &m.value {
                        MetricValue::Value { value, scaled } => (Some(*value), *scaled, None),
                        MetricValue::Unavailable(reason) => (None, false, Some(reason.clone())),
                    };
                    MetricRow {
                        metric: m.metric.name,
                        group: m.metric.group,
                        formula: m.metric.formula,
                        unit: m.metric.unit,
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
            counters: cpu.chain(gpu).chain(database).chain(unavailable).collect(),
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

    use super::super::report::{CpuTotal, CpuUnavailable, DatabaseTotal, GpuTotal, MetricTotal};
    use super::*;

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
            }],
            cpu_unavailable: vec![CpuUnavailable {
                counter: CpuCounter::Cycles,
                reason: "no PMU".into(),
            }],
            gpu: vec![GpuTotal {
                counter: GpuCounter::GpuCycles,
                value: 1000.0,
            }],
            database: vec![DatabaseTotal {
                name: "MaliGPUActiveCy",
                units: "cycles",
                value: None,
            }],
            gpu_unavailable: None,
            metrics: Some(vec![MetricTotal {
                metric: &METRICS[2],
                value: MetricValue::Unavailable("needs Cycles".into()),
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
            ["TaskClock@cpu1", "GpuCycles", "MaliGPUActiveCy", "Cycles"]
        );
        assert!(rows[0]["value"].is_u64() && rows[0]["multiplexed"] == true);
        assert!(rows[1]["value"].is_f64() && rows[1]["source"] == "gpu");
        assert!(rows[2]["value"].is_null() && rows[2]["unavailable"].is_string());
        assert!(rows[3]["multiplexed"].is_null() && rows[3]["unavailable"] == "no PMU");
        let metric = &doc["metrics"][0];
        assert_eq!(metric["metric"], "IPC");
        assert!(metric["value"].is_null() && metric["unavailable"] == "needs Cycles");
    }

    #[test]
    fn without_metrics_the_document_says_null() {
        let mut report = report();
        report.metrics = None;
        assert!(serde_json::to_value(report).unwrap()["metrics"].is_null());
    }
}
