//! The capture document `lizard capture --format json` writes, read back: what a report is made from.

use serde::{Deserialize, Serialize};
use serde_json::Number;

/// Why a capture document cannot be made into a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The text is not JSON, or not shaped like the document `lizard capture --format json` writes.
    #[error("not a capture document as `lizard capture --format json` writes it")]
    NotACapture(#[source] serde_json::Error),
    /// A counter has no value and no reason for it (`"value": null` without `"no_value"`).
    #[error("counter {id} ({counter}) has no value and no reason why (\"no_value\")")]
    MissingReason {
        /// The counter's id.
        id: u32,
        /// The counter's name.
        counter: String,
    },
}

/// A capture: its counters with their time series and readings, and the trace records of its window.
#[derive(Debug, Clone, Deserialize)]
pub struct Capture {
    /// The first and last sample timestamps over every counter (ns, the capture's time base); `None` when
    /// no counter got a sample.
    pub window_ns: Option<[u64; 2]>,
    /// How long the capture command ran, in seconds.
    #[serde(default)]
    pub wall_s: Option<f64>,
    /// The warning the capture ended with (a missing end marker, skipped frames).
    #[serde(default)]
    pub warning: Option<String>,
    /// The captured counters, in the order they were chosen.
    pub counters: Vec<CapturedCounter>,
    /// The application trace records received during the capture (`--trace`).
    #[serde(default)]
    pub trace_records: Vec<TraceRecord>,
}

/// One captured counter.
#[derive(Debug, Clone, Deserialize)]
pub struct CapturedCounter {
    /// The counter's id in its capture.
    pub id: u32,
    /// The counter's name (gatord's counter name or the local counter's name).
    pub counter: String,
    /// `gatord`, `cpu` or `gpu`.
    #[serde(default)]
    pub source: String,
    /// What the counter counts (`system`, `gpu`, `process 42, all threads`, …).
    #[serde(default)]
    pub scope: String,
    /// The event's title.
    #[serde(default)]
    pub title: String,
    /// The event's name.
    #[serde(default)]
    pub name: String,
    /// A sentence describing the counter.
    #[serde(default)]
    pub description: String,
    /// The unit of the readings and samples (empty when none is given).
    #[serde(default)]
    pub units: String,
    /// `delta` (each sample is the increase since the previous one) or `absolute` (a level).
    pub class: String,
    /// The reading (delta samples summed, absolute ones averaged), or `None` when there is none.
    pub value: Option<Number>,
    /// Why there is no reading.
    #[serde(default)]
    pub no_value: Option<String>,
    /// Samples the engine dropped.
    #[serde(default)]
    pub dropped: u64,
    /// `(timestamp ns, value)` pairs, values scaled like the reading.
    pub samples: Vec<(u64, f64)>,
}

impl CapturedCounter {
    /// Whether each sample is an increase since the previous one (rather than a level).
    pub fn is_delta(&self) -> bool {
        self.class == "delta"
    }

    /// The unit the samples and the reading are in: the counter's, except that MHz values are written in Hz
    /// (the capture scales them so).
    pub fn value_units(&self) -> &str {
        match self.units.as_str() {
            "MHz" => "Hz",
            units => units,
        }
    }
}

/// One application trace record in the capture window: as the capture writes it and the report reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// When it was recorded, on the capture's time base (ns).
    pub timestamp_ns: u64,
    /// Its sequence number in the ring.
    pub seq: u64,
    /// The module tag.
    pub module: String,
    /// The source file.
    pub file: String,
    /// The source line.
    pub line: u32,
    /// The recording process.
    pub pid: u32,
    /// The payload's length.
    pub bytes: u64,
}

impl Capture {
    /// Reads the text of a capture's JSON document.
    pub fn from_json(text: &str) -> Result<Capture, ReportError> {
        serde_json::from_str::<Capture>(text)
            .map_err(ReportError::NotACapture)?
            .checked()
    }

    /// Reads a capture's JSON document already parsed.
    pub fn from_value(value: serde_json::Value) -> Result<Capture, ReportError> {
        serde_json::from_value::<Capture>(value)
            .map_err(ReportError::NotACapture)?
            .checked()
    }

    /// The capture, if every counter without a value says why.
    fn checked(self) -> Result<Capture, ReportError> {
        match self
            .counters
            .iter()
            .find(|c| c.value.is_none() && c.no_value.is_none())
        {
            Some(c) => Err(ReportError::MissingReason {
                id: c.id,
                counter: c.counter.clone(),
            }),
            None => Ok(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = r#"{
        "window_ns": [1000, 3000], "wall_s": 0.1, "warning": null,
        "counters": [
            {"id": 1, "counter": "Sim_ccnt", "units": "cycles", "class": "delta", "value": 400,
             "samples": [[1000, 100], [3000, 300]]},
            {"id": 2, "counter": "Sim_instructions", "units": "instructions", "class": "delta",
             "value": null, "no_value": "no samples", "samples": []}
        ],
        "trace_records": [
            {"timestamp_ns": 2000, "seq": 0, "module": "draw", "file": "app.c", "line": 7, "pid": 9, "bytes": 3}
        ]
    }"#;

    #[test]
    fn a_capture_document_reads_back() {
        let capture = Capture::from_json(DOCUMENT).unwrap();
        assert_eq!(capture.window_ns, Some([1000, 3000]));
        assert_eq!(capture.counters[0].samples, [(1000, 100.0), (3000, 300.0)]);
        assert!(capture.counters[0].is_delta());
        assert_eq!(capture.counters[0].value_units(), "cycles");
        let mut clock = capture.counters[0].clone();
        clock.units = "MHz".into();
        assert_eq!(clock.value_units(), "Hz", "captures write MHz values in Hz");
        assert_eq!(capture.counters[1].no_value.as_deref(), Some("no samples"));
        assert_eq!(capture.trace_records[0].module, "draw");
    }

    #[test]
    fn other_documents_are_refused_with_the_cause() {
        for text in [
            "",
            "not json",
            "{}",
            r#"{"counters": 5}"#,
            r#"{"window_ns": null, "counters": [{"id": 1}]}"#,
            r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
                "value": 1, "samples": [[1, "x"]]}]}"#,
            r#"{"window_ns": null, "counters": [{"id": 1, "counter": "a", "class": "delta",
                "value": 1, "samples": [[-1, 2]]}]}"#,
        ] {
            let error = Capture::from_json(text).unwrap_err();
            assert!(matches!(error, ReportError::NotACapture(_)), "{text}");
            assert!(std::error::Error::source(&error).is_some());
        }
    }

    #[test]
    fn a_counter_without_value_or_reason_is_refused() {
        let text = DOCUMENT.replace(r#""no_value": "no samples", "#, "");
        let error = Capture::from_json(&text).unwrap_err();
        assert!(
            matches!(&error, ReportError::MissingReason { id: 2, counter } if counter == "Sim_instructions"),
            "{error}"
        );
    }
}
