//! An OpenMetrics / Prometheus exporter over the engine (feature `serve`): what `lizard serve` runs, for a
//! device farm's time-series database.
//!
//! [`Exporter::start`] takes a configured [`Lizard`](crate::Lizard) with the counters to serve enabled and
//! serves them at `http://ADDRESS/metrics`, listening on loopback unless told otherwise
//! ([`DEFAULT_LISTEN`]). Naming follows the conventions ([`metric_name`]); the families are described in
//! [`exposition`]; the exporter's own account (windows, failures, time covered, scrapes, refused requests)
//! is served beside the counters and returned by [`Exporter::account`].

mod exporter;
pub mod exposition;
pub mod http;
pub mod metric_name;
mod stats;
mod windows;

pub use exporter::{Exporter, ServeConfig, ServeError, DEFAULT_LISTEN};
pub use exposition::{DeviceLabels, Format};
pub use stats::{Account, Refusals};
pub use windows::device_labels;
