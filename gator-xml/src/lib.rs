#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod captured;
pub mod configuration;
pub mod counters;
pub mod current_config;
mod error;
mod event_class;
pub mod events;
pub mod pmus;
mod raw;
mod reader;
mod request;
pub mod session;
mod shared_str;
mod units;
pub mod write;

pub use captured::{Captured, CapturedCounter, CapturedProcess, CapturedSpe, Target};
pub use configuration::{
    Configurations, CounterConfiguration, SpeConfiguration, CONFIGURATION_REVISION,
};
pub use counters::{AvailableCounter, Cluster, Counters, Cpu};
pub use current_config::{CurrentConfig, DaemonState};
pub use error::{NumberError, Position, XmlError};
pub use event_class::{DisplayMode, EventClass};
pub use events::{Category, CounterSet, Event, Events};
pub use pmus::{Pmu, Pmus, UncorePmu};
pub use raw::{RawElement, MAX_DEPTH};
pub use request::{Request, RequestType};
pub use session::{
    BufferMode, EnergyCapture, EnergyChannel, GpuTimeline, MetricSamplingMode, SampleRate, Session,
    SessionBuilder,
};
pub use shared_str::SharedStr;
pub use units::Units;

/// The XML parser this crate reads with, re-exported so callers (and benches) use the very same version.
pub use roxmltree;

/// Attributes an element carried that the typed model does not name, by attribute name.
pub type Attributes = std::collections::BTreeMap<String, String>;
