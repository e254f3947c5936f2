//! The text a scrape receives: every served counter as a metric family in the Prometheus text format 0.0.4
//! or OpenMetrics 1.0 (as the scraper's `Accept` header asks), plus the exporter's own account of itself.
//!
//! A delta counter is a `counter` whose `_total` sums every window's reading since the exporter started; an
//! absolute counter is a `gauge` holding the last window's reading. Every series carries the labels `counter`
//! (the engine's key), `source` (`gatord` or `local`) and `host`; the rest of what is known about the device
//! is one `lizard_device_info` series, as the conventions ask for target metadata.

use std::fmt::Write;

use crate::metric_name::{MetricName, NAMESPACE};
use crate::stats::Account;

/// The two exposition formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The Prometheus text format 0.0.4 (what a scraper gets unless it asks for OpenMetrics).
    Prometheus,
    /// OpenMetrics 1.0 (`# UNIT` lines, `info` families, `# EOF`).
    OpenMetrics,
}

impl Format {
    /// The format a scraper's `Accept` header asks for: OpenMetrics where it names
    /// `application/openmetrics-text`, else the Prometheus text format.
    pub fn negotiate(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    /// The `Content-Type` of a response in this format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// Whether a served counter accumulates or is a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A delta counter: the family is a `counter`, its value the sum of every window.
    Counter,
    /// An absolute counter: the family is a `gauge`, its value the last window's reading.
    Gauge,
}

/// One served counter and its value so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The engine's key for the counter (the `counter` label).
    pub key: String,
    /// `gatord` or `local` (the `source` label).
    pub source: &'static str,
    /// The family's help text (the counter's title and description).
    pub help: String,
    /// The metric name, unit and scale.
    pub metric: MetricName,
    /// Counter or gauge.
    pub kind: Kind,
    /// The `_total` of a counter or the level of a gauge, in the base unit; `None` until a window gave a value.
    pub value: Option<f64>,
    /// Windows that gave this counter no value (it is not in the total; `lizard_windows_without_value_total`).
    pub windows_without_value: u64,
}

/// The device every series was read on.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct DeviceLabels {
    /// The host name (the `host` label of every series).
    pub host: String,
    /// Everything else known about the device, the labels of `lizard_device_info` (kernel, arch, cores and
    /// their MIDR, the gatord protocol, …), in the order given.
    pub info: Vec<(String, String)>,
}

impl DeviceLabels {
    /// Labels for `host` with the info labels `info`.
    pub fn new(host: impl Into<String>, info: Vec<(String, String)>) -> DeviceLabels {
        DeviceLabels {
            host: host.into(),
            info,
        }
    }
}

/// Writes the whole exposition of `series`, the device and the exporter's account in `format`.
pub fn render(
    format: Format,
    series: &[Series],
    device: &DeviceLabels,
    account: &Account,
) -> String {
    let mut out = String::with_capacity(256 + series.len() * 320);
    let host = escape_label(&device.host);
    for s in series {
        let labels = format!(
            "counter=\"{}\",source=\"{}\",host=\"{host}\"",
            escape_label(&s.key),
            s.source
        );
        let (kind, suffix) = match s.kind {
            Kind::Counter => ("counter", "_total"),
            Kind::Gauge => ("gauge", ""),
        };
        family(
            &mut out,
            format,
            &s.metric.name,
            kind,
            suffix,
            s.metric.unit,
            &s.help,
        );
        if let Some(value) = s.value {
            sample(&mut out, &s.metric.name, suffix, &labels, value);
        }
    }
    let own = |name: &str| format!("{NAMESPACE}_{name}");

    let info = own("device");
    let mut labels = format!("host=\"{host}\"");
    for (k, v) in &device.info {
        let _ = write!(
            labels,
            ",{}=\"{}\"",
            super::metric_name::snake_case(k),
            escape_label(v)
        );
    }
    let help = "The device the counters are read on (always 1).";
    match format {
        Format::OpenMetrics => family(&mut out, format, &info, "info", "_info", None, help),
        Format::Prometheus => family(&mut out, format, &info, "gauge", "_info", None, help),
    }
    sample(&mut out, &info, "_info", &labels, 1.0);

    let host_only = format!("host=\"{host}\"");
    let counters: [(&str, &str, f64); 8] = [
        ("windows", "Sampling windows completed.", account.windows as f64),
        (
            "window_failures",
            "Sampling windows whose capture failed to start or ended with an error (the engine's reason is printed by `lizard serve`).",
            account.window_failures as f64,
        ),
        (
            "covered_seconds",
            "Seconds covered by sampling windows; the rest of the wall time (gaps between windows) is in no delta counter's total.",
            account.covered_s,
        ),
        (
            "sampling_periods_missed",
            "Local sampling periods the sampler woke too late for (counted, never silently skipped).",
            account.periods_missed as f64,
        ),
        (
            "gpu_dumps_delivered",
            "GPU dumps taken, one sample each (the driver dumping by itself where it can).",
            account.gpu_delivered as f64,
        ),
        (
            "gpu_periods_folded",
            "GPU sampling periods folded into a dump covering several (their counts kept).",
            account.gpu_folded as f64,
        ),
        (
            "gpu_periods_missed",
            "GPU sampling periods without their counts (an erroneous dump, or none by the window's end).",
            account.gpu_missed as f64,
        ),
        ("scrapes", "Scrapes answered.", account.scrapes as f64),
    ];
    for (name, help, value) in counters {
        let name = own(name);
        family(&mut out, format, &name, "counter", "_total", None, help);
        sample(&mut out, &name, "_total", &host_only, value);
    }

    let without = own("windows_without_value");
    family(
        &mut out,
        format,
        &without,
        "counter",
        "_total",
        None,
        "Windows that gave a counter no value (its total does not include them).",
    );
    for s in series {
        let labels = format!("counter=\"{}\",host=\"{host}\"", escape_label(&s.key));
        sample(
            &mut out,
            &without,
            "_total",
            &labels,
            s.windows_without_value as f64,
        );
    }

    let refused = own("http_refused");
    family(
        &mut out,
        format,
        &refused,
        "counter",
        "_total",
        None,
        "HTTP requests refused, by reason.",
    );
    for (reason, count) in account.refused.by_reason() {
        let labels = format!("reason=\"{reason}\",host=\"{host}\"");
        sample(&mut out, &refused, "_total", &labels, count as f64);
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

/// The metadata lines of one family.
fn family(
    out: &mut String,
    format: Format,
    name: &str,
    kind: &str,
    suffix: &str,
    unit: Option<&str>,
    help: &str,
) {
    let help = escape_help(help);
    match format {
        Format::Prometheus => {
            let _ = writeln!(out, "# HELP {name}{suffix} {help}");
            let _ = writeln!(out, "# TYPE {name}{suffix} {kind}");
        }
        Format::OpenMetrics => {
            let _ = writeln!(out, "# TYPE {name} {kind}");
            if let Some(unit) = unit {
                let _ = writeln!(out, "# UNIT {name} {unit}");
            }
            let _ = writeln!(out, "# HELP {name} {help}");
        }
    }
}

/// One sample line.
fn sample(out: &mut String, name: &str, suffix: &str, labels: &str, value: f64) {
    let _ = writeln!(out, "{name}{suffix}{{{labels}}} {}", number(value));
}

/// A value as both formats spell it (`+Inf`, `-Inf`, `NaN`; otherwise the shortest decimal of the value
/// rounded to 12 significant digits, so that sums of window lengths read `5.0055`, not `5.0055000000000005`).
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".into()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        let rounded: f64 = format!("{value:.11e}").parse().unwrap_or(value);
        format!("{rounded}")
    }
}

/// A label value with `\`, `"` and line feeds escaped.
fn escape_label(text: &str) -> String {
    escape(text, true)
}

/// Help text with `\` and line feeds escaped (and, for OpenMetrics, `"`, which the text format allows
/// escaped too).
fn escape_help(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, quote: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lizard_core::counter::Units;

    fn series() -> Vec<Series> {
        vec![
            Series {
                key: "TaskClock".into(),
                source: "local",
                help: "Task clock\nin ns".into(),
                metric: MetricName::new("TaskClock", &Units::Other("ns".into())),
                kind: Kind::Counter,
                value: Some(1.5),
                windows_without_value: 0,
            },
            Series {
                key: "Linux_meminfo_memfree".into(),
                source: "gatord",
                help: "Free memory".into(),
                metric: MetricName::new("Linux_meminfo_memfree", &Units::Bytes),
                kind: Kind::Gauge,
                value: None,
                windows_without_value: 2,
            },
        ]
    }

    fn device() -> DeviceLabels {
        DeviceLabels::new(
            "box\"1",
            vec![
                ("kernel".into(), "Linux 6.1".into()),
                ("MIDR".into(), "0x410fd083".into()),
            ],
        )
    }

    #[test]
    fn prometheus_text_names_types_and_labels_every_counter() {
        let text = render(
            Format::Prometheus,
            &series(),
            &device(),
            &Account::default(),
        );
        assert!(text.contains("# HELP lizard_task_clock_seconds_total Task clock\\nin ns\n"));
        assert!(text.contains("# TYPE lizard_task_clock_seconds_total counter\n"));
        assert!(text.contains(
            "lizard_task_clock_seconds_total{counter=\"TaskClock\",source=\"local\",host=\"box\\\"1\"} 1.5\n"
        ));
        // A gauge that has no value yet has its metadata and no sample.
        assert!(text.contains("# TYPE lizard_linux_meminfo_memfree_bytes gauge\n"));
        assert!(!text.contains("lizard_linux_meminfo_memfree_bytes{"));
        assert!(text.contains(
            "lizard_windows_without_value_total{counter=\"Linux_meminfo_memfree\",host=\"box\\\"1\"} 2\n"
        ));
        assert!(text.contains(
            "lizard_device_info{host=\"box\\\"1\",kernel=\"Linux 6.1\",midr=\"0x410fd083\"} 1\n"
        ));
        assert!(!text.contains("# EOF"));
    }

    #[test]
    fn openmetrics_has_units_info_and_eof() {
        let text = render(
            Format::OpenMetrics,
            &series(),
            &device(),
            &Account::default(),
        );
        assert!(text.contains(
            "# TYPE lizard_task_clock_seconds counter\n# UNIT lizard_task_clock_seconds seconds\n"
        ));
        assert!(text.contains("# TYPE lizard_device info\n"));
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn formats_follow_the_accept_header() {
        assert_eq!(Format::negotiate(None), Format::Prometheus);
        assert_eq!(
            Format::negotiate(Some(
                "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
            )),
            Format::OpenMetrics
        );
        assert_eq!(Format::negotiate(Some("text/plain")), Format::Prometheus);
    }

    #[test]
    fn special_values_are_spelled_as_the_formats_do() {
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(1e-9), "0.000000001");
        assert_eq!(number(2.0), "2");
    }
}
