#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod attr;
mod lost;
mod read;
mod record;
mod sample;
pub mod sleb128;
mod throttle;
mod tracker;
mod words;

pub use attr::{
    flag, AttrError, PerfEventAttr, ReadFormat, SampleType, CLOCK_MONOTONIC_RAW,
    PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER3,
};
pub use lost::LostRecord;
pub use read::{GroupValues, ReadValue, ReadValues};
pub use record::{
    record_header, PerfRecord, PerfRecordError, PerfRecords, TypedRecord, PERF_RECORD_LOST,
    PERF_RECORD_SAMPLE, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE,
};
pub use sample::{SampleLayout, SampleRecord};
pub use throttle::{ThrottleRecord, Throttling};
pub use tracker::{
    Delivery, MetricEvent, MetricEventRole, PerfCounterSample, PerfCounterTracker, TrackerError,
};
pub use words::{WordSlice, Words};
