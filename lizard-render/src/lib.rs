#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod chrome_trace;
pub mod csv;
pub mod diff;
mod listing;
#[cfg(feature = "perfetto")]
pub mod perfetto;
pub mod report;
pub mod table;
pub mod text;

pub use listing::{ListedCounter, Listing};
