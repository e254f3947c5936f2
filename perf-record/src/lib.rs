#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod attr;
mod record;
mod sample;
pub mod sleb128;
mod tracker;
mod words;

pub use attr::{
    AttrError, PerfEventAttr, ReadFormat, SampleType, CLOCK_MONOTONIC_RAW, PERF_ATTR_SIZE_VER0,
};
pub use record::{
    record_header, PerfRecord, PerfRecordError, PerfRecords, PERF_RECORD_LOST, PERF_RECORD_SAMPLE,
    PERF_RECORD_SWITCH_CPU_WIDE,
};
pub use sample::{GroupValues, ReadValue, ReadValues, SampleLayout, SampleRecord};
pub use tracker::{
    Delivery, MetricEvent, MetricEventRole, PerfCounterSample, PerfCounterTracker, TrackerError,
};
pub use words::{WordSlice, Words};
