#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod connection;
mod documents;
pub mod mali_events;
pub mod perf;
mod server;
mod workload;

pub use config::{Faults, SimConfig, SimSample, Stream, Timing};
pub use mali_events::UnknownGpu;
pub use perf::PerfLeader;
pub use server::{start, SimHandle, SimStats, MAX_CONNECTIONS};
pub use workload::{synthetic_event_value, synthetic_value, DEFAULT_EVENTS_XML};
