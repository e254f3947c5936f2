//! [`CounterSelection`]: HWCPipe's counter selection, read from its JSON form `{"cpu": [...], "gpu": [...]}`
//! with the `json` feature.

use crate::cpu::{CpuCounter, UnknownCpuCounter};
use crate::gpu::{GpuCounter, UnknownGpuCounter};

/// The counters chosen for each side. An empty list means no profiler for that side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterSelection {
    /// CPU counters, in the order given, without duplicates.
    pub cpu: Vec<CpuCounter>,
    /// GPU counters, in the order given, without duplicates.
    pub gpu: Vec<GpuCounter>,
}

/// Why a JSON selection was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SelectionError {
    /// The text is not JSON.
    #[cfg(feature = "json")]
    #[error("counter selection is not valid JSON")]
    Syntax(#[source] serde_json::Error),
    /// The document is not a JSON object.
    #[error("counter selection must be a JSON object with \"cpu\" and/or \"gpu\" arrays")]
    NotAnObject,
    /// A key other than `"cpu"` and `"gpu"`.
    #[error("unknown key {0:?} in counter selection; only \"cpu\" and \"gpu\" are allowed")]
    UnknownKey(String),
    /// `"cpu"` or `"gpu"` is not an array.
    #[error("\"{key}\" must be an array of counter names")]
    NotAnArray {
        /// The key.
        key: &'static str,
    },
    /// An element of an array is not a string.
    #[error("element {index} of \"{key}\" is not a string")]
    NotAString {
        /// The key of the array.
        key: &'static str,
        /// The position of the element.
        index: usize,
    },
    /// A CPU counter name that does not exist (the error lists the valid ones).
    #[error(transparent)]
    UnknownCpuCounter(#[from] UnknownCpuCounter),
    /// A GPU counter name that does not exist (the error lists the valid ones).
    #[error(transparent)]
    UnknownGpuCounter(#[from] UnknownGpuCounter),
}

#[cfg(feature = "json")]
fn names<'j>(
    key: &'static str,
    value: &'j serde_json::Value,
) -> Result<impl Iterator<Item = Result<&'j str, SelectionError>>, SelectionError> {
    let array = value.as_array().ok_or(SelectionError::NotAnArray { key })?;
    Ok(array
        .iter()
        .enumerate()
        .map(move |(index, v)| v.as_str().ok_or(SelectionError::NotAString { key, index })))
}

#[cfg(feature = "json")]
impl CounterSelection {
    /// Parses `{"cpu": ["Cycles", ...], "gpu": ["GpuCycles", ...]}`. Both keys are optional;
    /// names must match exactly.
    pub fn from_json(json: &str) -> Result<Self, SelectionError> {
        let doc: serde_json::Value = serde_json::from_str(json).map_err(SelectionError::Syntax)?;
        let object = doc.as_object().ok_or(SelectionError::NotAnObject)?;
        let mut selection = CounterSelection::default();
        for (key, value) in object {
            match key.as_str() {
                "cpu" => {
                    for name in names("cpu", value)? {
                        let counter: CpuCounter = name?.parse()?;
                        if !selection.cpu.contains(&counter) {
                            selection.cpu.push(counter);
                        }
                    }
                }
                "gpu" => {
                    for name in names("gpu", value)? {
                        let counter: GpuCounter = name?.parse()?;
                        if !selection.gpu.contains(&counter) {
                            selection.gpu.push(counter);
                        }
                    }
                }
                other => return Err(SelectionError::UnknownKey(other.to_owned())),
            }
        }
        Ok(selection)
    }

    /// The selection as JSON, in the form [`from_json`](Self::from_json) reads.
    pub fn to_json(&self) -> String {
        let cpu: Vec<&str> = self.cpu.iter().map(|c| c.name()).collect();
        let gpu: Vec<&str> = self.gpu.iter().map(|g| g.name()).collect();
        serde_json::json!({ "cpu": cpu, "gpu": gpu }).to_string()
    }
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_hwcpipes_readme_example() {
        let s = CounterSelection::from_json(
            r#"{"cpu": ["Cycles", "Instructions"], "gpu": ["GpuCycles"]}"#,
        )
        .unwrap();
        assert_eq!(s.cpu, [CpuCounter::Cycles, CpuCounter::Instructions]);
        assert_eq!(s.gpu, [GpuCounter::GpuCycles]);
    }

    #[test]
    fn missing_keys_are_empty_and_duplicates_collapse() {
        let s = CounterSelection::from_json(r#"{"cpu": ["TaskClock", "TaskClock"]}"#).unwrap();
        assert_eq!(s.cpu, [CpuCounter::TaskClock]);
        assert!(s.gpu.is_empty());
        assert_eq!(
            CounterSelection::from_json("{}").unwrap(),
            CounterSelection::default()
        );
    }

    #[test]
    fn compute_jobs_is_compute_jobs() {
        let s = CounterSelection::from_json(r#"{"gpu": ["ComputeJobs"]}"#).unwrap();
        assert_eq!(s.gpu, [GpuCounter::ComputeJobs]);
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = CounterSelection::from_json(r#"{"cpu": ["Cycle"]}"#).unwrap_err();
        assert!(matches!(&err, SelectionError::UnknownCpuCounter(u) if u.name == "Cycle"));
        assert!(err.to_string().contains("Cycles, Instructions"), "{err}");
        let err = CounterSelection::from_json(r#"{"gpu": ["Cycles"]}"#).unwrap_err();
        assert!(matches!(&err, SelectionError::UnknownGpuCounter(u) if u.name == "Cycles"));
        assert!(err.to_string().contains("GpuCycles"), "{err}");
    }

    #[test]
    fn malformed_documents_get_their_own_errors() {
        type Check = fn(&SelectionError) -> bool;
        let cases: [(&str, Check); 6] = [
            ("{", |e| matches!(e, SelectionError::Syntax(_))),
            ("[]", |e| matches!(e, SelectionError::NotAnObject)),
            (r#"{"cpu": "Cycles"}"#, |e| {
                matches!(e, SelectionError::NotAnArray { key: "cpu" })
            }),
            (r#"{"gpu": [1]}"#, |e| {
                matches!(
                    e,
                    SelectionError::NotAString {
                        key: "gpu",
                        index: 0
                    }
                )
            }),
            (r#"{"cpu": ["Cycles", null]}"#, |e| {
                matches!(
                    e,
                    SelectionError::NotAString {
                        key: "cpu",
                        index: 1
                    }
                )
            }),
            (
                r#"{"npu": []}"#,
                |e| matches!(e, SelectionError::UnknownKey(k) if k == "npu"),
            ),
        ];
        for (json, check) in cases {
            let err = CounterSelection::from_json(json).unwrap_err();
            assert!(check(&err), "{json}: {err:?}");
        }
    }

    proptest! {
        #[test]
        fn any_selection_round_trips(
            cpu in proptest::collection::vec(0..CpuCounter::COUNT, 0..30),
            gpu in proptest::collection::vec(0..GpuCounter::ALL.len(), 0..40),
        ) {
            let mut want = CounterSelection::default();
            for i in cpu {
                let c = CpuCounter::ALL[i];
                if !want.cpu.contains(&c) { want.cpu.push(c); }
            }
            for i in gpu {
                let g = GpuCounter::ALL[i];
                if !want.gpu.contains(&g) { want.gpu.push(g); }
            }
            prop_assert_eq!(CounterSelection::from_json(&want.to_json()).unwrap(), want);
        }

        #[test]
        fn arbitrary_text_never_panics(text in ".{0,64}") {
            let _ = CounterSelection::from_json(&text);
        }

        #[test]
        fn arbitrary_names_are_accepted_only_when_exact(name in "[A-Za-z]{0,24}") {
            let json = serde_json::json!({ "cpu": [name.clone()] }).to_string();
            match CounterSelection::from_json(&json) {
                Ok(s) => prop_assert_eq!(s.cpu[0].name(), name.as_str()),
                Err(SelectionError::UnknownCpuCounter(u)) => prop_assert_eq!(u.name, name),
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }
    }
}
