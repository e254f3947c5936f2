#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod child_times;
mod choice;
mod count;
mod document;
mod error;
mod events;
mod exit_status;
mod report;

pub use child_times::ChildTimes;
pub use choice::Choice;
pub use count::{count, Options};
pub use error::{GpuUnavailable, StatError};
pub use exit_status::shell_status;
pub use report::{
    CpuTotal, CpuUnavailable, DatabaseTotal, EventNote, EventTotal, GpuTotal, MetricTotal, Report,
};
