//! The capture document's named facts: where a counter's values come from, how its samples combine, what
//! type its readings have, whether it was counted per core, who sampled and at whose pace. Each is an enum,
//! written as the same lowercase word the JSON has always had (`"class": "delta"`), so the outputs are
//! written from a type, never from a string compared with another.
//!
//! Each enum also keeps a word this version does not know as `Other`, exactly as written: a document
//! written by a later version of the same schema (a new source, a new class) still reads, shows that word
//! and is written back unchanged. Where a document of an earlier version has no such key at all, the fact
//! is `Other` with an empty word (and written back as `""`, as before).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Where a counter's values come from (the `source` key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Source {
    /// `gatord`: the gatord daemon.
    Gatord,
    /// `cpu`: the local CPU counters (Linux perf).
    Cpu,
    /// `gpu`: the local Mali GPU counters (the kbase driver).
    Gpu,
    /// A source this version does not know, as written (empty in documents written before the key).
    #[serde(untagged)]
    Other(String),
}

/// How a counter's samples combine into its reading (the `class` key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Class {
    /// `absolute`: each sample is a level; the reading is their mean.
    Absolute,
    /// `delta`: each sample is the increase since the previous one; the reading is their sum.
    Delta,
    /// `derived`: each sample and the reading are an equation over other counters.
    Derived,
    /// A class this version does not know, as written.
    #[serde(untagged)]
    Other(String),
}

/// The numeric type of a counter's readings as the engine reads them (the `type` key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ValueType {
    /// `int`: whole numbers.
    Int,
    /// `double`: fractional numbers.
    Double,
    /// A type this version does not know, as written (empty in documents written before the key).
    #[serde(untagged)]
    Other(String),
}

/// How a counter was counted, when not once for the whole system (the `counted` key).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Counted {
    /// `per core`: once per core, the cores combined into its value and samples.
    #[serde(rename = "per core")]
    PerCore,
    /// A way this version does not know, as written.
    #[serde(untagged)]
    Other(String),
}

/// Who sampled the local counters periodically (the `sampling.method` key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Method {
    /// `kernel`: the kernel's timers wrote each period into ring buffers, drained in batches (CPU-wide
    /// counters).
    Kernel,
    /// `thread`: a thread woken every interval; what documents without the key were sampled by.
    #[default]
    Thread,
    /// `gpu`: no CPU counter was sampled, only the GPU's (on their own poller).
    Gpu,
    /// A method this version does not know, as written.
    #[serde(untagged)]
    Other(String),
}

/// Who dumped the GPU's counters every period (the `sampling.gpu.pace` key).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Pace {
    /// `periodic`: the driver, by itself every interval.
    #[default]
    Periodic,
    /// `manual`: one request per period.
    Manual,
    /// A pace this version does not know, as written.
    #[serde(untagged)]
    Other(String),
}

impl Source {
    /// The word written in the document (`gatord`, `cpu`, `gpu`).
    pub fn as_str(&self) -> &str {
        match self {
            Source::Gatord => "gatord",
            Source::Cpu => "cpu",
            Source::Gpu => "gpu",
            Source::Other(word) => word,
        }
    }
}

impl Class {
    /// The word written in the document (`absolute`, `delta`, `derived`).
    pub fn as_str(&self) -> &str {
        match self {
            Class::Absolute => "absolute",
            Class::Delta => "delta",
            Class::Derived => "derived",
            Class::Other(word) => word,
        }
    }
}

impl ValueType {
    /// The word written in the document (`int`, `double`).
    pub fn as_str(&self) -> &str {
        match self {
            ValueType::Int => "int",
            ValueType::Double => "double",
            ValueType::Other(word) => word,
        }
    }
}

impl Counted {
    /// The words written in the document (`per core`).
    pub fn as_str(&self) -> &str {
        match self {
            Counted::PerCore => "per core",
            Counted::Other(word) => word,
        }
    }
}

impl Method {
    /// The word written in the document (`kernel`, `thread`, `gpu`).
    pub fn as_str(&self) -> &str {
        match self {
            Method::Kernel => "kernel",
            Method::Thread => "thread",
            Method::Gpu => "gpu",
            Method::Other(word) => word,
        }
    }
}

impl Pace {
    /// The word written in the document (`periodic`, `manual`).
    pub fn as_str(&self) -> &str {
        match self {
            Pace::Periodic => "periodic",
            Pace::Manual => "manual",
            Pace::Other(word) => word,
        }
    }
}

/// A document of an earlier version without the key: an empty word, written back as it was read.
impl Default for Source {
    fn default() -> Self {
        Source::Other(String::new())
    }
}

/// No class given: an empty word (the document always has the key; a value built in code may not say).
impl Default for Class {
    fn default() -> Self {
        Class::Other(String::new())
    }
}

/// A document of an earlier version without the key: an empty word, written back as it was read.
impl Default for ValueType {
    fn default() -> Self {
        ValueType::Other(String::new())
    }
}

macro_rules! display_as_str {
    ($($fact:ty),*) => {$(
        /// The word written in the document.
        impl fmt::Display for $fact {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

display_as_str!(Source, Class, ValueType, Counted, Method, Pace);

impl From<crate::Source> for Source {
    fn from(source: crate::Source) -> Self {
        match source {
            crate::Source::Gatord => Source::Gatord,
            crate::Source::HwcPipeCpu => Source::Cpu,
            crate::Source::HwcPipeGpu => Source::Gpu,
        }
    }
}

impl From<crate::CounterClass> for Class {
    fn from(class: crate::CounterClass) -> Self {
        match class {
            crate::CounterClass::Absolute => Class::Absolute,
            crate::CounterClass::Delta => Class::Delta,
            crate::CounterClass::Derived => Class::Derived,
        }
    }
}

impl From<crate::ResultType> for ValueType {
    fn from(result: crate::ResultType) -> Self {
        match result {
            crate::ResultType::Integer => ValueType::Int,
            crate::ResultType::Floating => ValueType::Double,
        }
    }
}

impl From<&crate::SamplingMethod> for Method {
    fn from(method: &crate::SamplingMethod) -> Self {
        match method {
            crate::SamplingMethod::Kernel { .. } => Method::Kernel,
            crate::SamplingMethod::Thread { .. } => Method::Thread,
            crate::SamplingMethod::GpuOnly => Method::Gpu,
        }
    }
}

impl From<&crate::GpuPace> for Pace {
    fn from(pace: &crate::GpuPace) -> Self {
        match pace {
            crate::GpuPace::Periodic => Pace::Periodic,
            crate::GpuPace::Manual { .. } => Pace::Manual,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fact written and read back as JSON.
    fn round_trip<T: Serialize + serde::de::DeserializeOwned>(fact: &T) -> (String, T) {
        let text = serde_json::to_string(fact).unwrap();
        let back = serde_json::from_str(&text).unwrap();
        (text, back)
    }

    #[test]
    fn each_fact_is_written_as_the_word_the_document_has_always_had() {
        for (fact, word) in [
            (Source::Gatord, "gatord"),
            (Source::Cpu, "cpu"),
            (Source::Gpu, "gpu"),
        ] {
            assert_eq!(round_trip(&fact), (format!("\"{word}\""), fact.clone()));
        }
        for fact in [Class::Absolute, Class::Delta, Class::Derived] {
            assert_eq!(round_trip(&fact), (format!("\"{fact}\""), fact.clone()));
        }
        for fact in [ValueType::Int, ValueType::Double] {
            assert_eq!(round_trip(&fact), (format!("\"{fact}\""), fact.clone()));
        }
        for fact in [Method::Kernel, Method::Thread, Method::Gpu] {
            assert_eq!(round_trip(&fact), (format!("\"{fact}\""), fact.clone()));
        }
        for fact in [Pace::Periodic, Pace::Manual] {
            assert_eq!(round_trip(&fact), (format!("\"{fact}\""), fact.clone()));
        }
        assert_eq!(
            round_trip(&Counted::PerCore),
            ("\"per core\"".to_owned(), Counted::PerCore)
        );
        assert_eq!(Class::from(crate::CounterClass::Delta), Class::Delta);
        assert_eq!(Source::from(crate::Source::HwcPipeCpu), Source::Cpu);
        assert_eq!(
            ValueType::from(crate::ResultType::Floating),
            ValueType::Double
        );
    }

    #[test]
    fn a_word_of_a_later_version_is_kept_as_written() {
        let class: Class = serde_json::from_str("\"rate\"").unwrap();
        assert_eq!(class, Class::Other("rate".into()));
        assert_eq!(serde_json::to_string(&class).unwrap(), "\"rate\"");
        let source: Source = serde_json::from_str("\"npu\"").unwrap();
        assert_eq!(source.to_string(), "npu");
        // An empty word is what a document of an earlier version without the key stands for.
        assert_eq!(serde_json::to_string(&Source::default()).unwrap(), "\"\"");
        // Case counts: `Delta` is not the word `delta`.
        let capital: Class = serde_json::from_str("\"Delta\"").unwrap();
        assert_eq!(capital, Class::Other("Delta".into()));
    }

    #[test]
    fn a_fact_that_is_not_a_word_is_refused() {
        for text in ["5", "null", "[\"delta\"]", "{\"delta\": 1}", "true"] {
            assert!(serde_json::from_str::<Class>(text).is_err(), "{text}");
            assert!(serde_json::from_str::<Counted>(text).is_err(), "{text}");
        }
    }
}
