#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

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
