//! Zero-copy decoding and encoding of APC frames, the capture data inside APC_DATA responses and local captures.
//!
//! [`Frame::parse`] takes the frame bytes (`packInt frame_type` + body) and the protocol version and returns a
//! view borrowing them. One module per frame type holds its layout; the private `cursor` module is the one place where field
//! bytes are consumed.

mod block_counter;
mod block_samples;
mod counter;
mod cursor;
mod error;
mod external;
mod frame;
mod frame_type;
pub mod local_capture;
mod name;
mod perf_attrs;
mod perf_aux;
mod perf_counters;
mod perf_data;
mod perf_sync;
pub mod summary;

pub use block_counter::{BlockCounter, Record, Records, KEY_CORE, KEY_TID, KEY_TIMESTAMP};
pub use block_samples::{BlockSample, BlockSamples};
pub use counter::Counter;
pub use error::FrameError;
pub use external::External;
pub use frame::Frame;
pub use frame_type::FrameType;
pub use local_capture::{LocalCaptureDecoder, LocalCaptureError, LocalCaptureReader};
pub use name::{Name, NameMessage};
pub use perf_attrs::{
    encode_counters_message, encode_keys_message, encode_pea_message, CounterValue, CounterValues,
    KeyMap, PerfAttrs, PerfAttrsMessage,
};
pub use perf_aux::PerfAux;
pub use perf_counters::PerfFrames;
pub use perf_data::PerfData;
// The perf records, samples, attributes and tracker live in the `perf-record` crate; they are re-exported
// here, where gatord's frames carry them.
pub use perf_record::{
    record_header, AttrError, Delivery, GroupValues, MetricEvent, MetricEventRole,
    PerfCounterSample, PerfCounterTracker, PerfEventAttr, PerfRecord, PerfRecordError, PerfRecords,
    ReadFormat, ReadValue, ReadValues, SampleLayout, SampleRecord, SampleType, TrackerError,
    WordSlice, Words, CLOCK_MONOTONIC_RAW, PERF_ATTR_SIZE_VER0, PERF_RECORD_LOST,
    PERF_RECORD_SAMPLE, PERF_RECORD_SWITCH_CPU_WIDE,
};
pub use perf_sync::PerfSync;
pub use summary::{Attributes, Clocks, CoreName, Summary, SummaryFrame};

/// Constants of PERF_ATTRS message codes.
pub mod perf_attrs_code {
    pub use super::perf_attrs::{
        CODE_COMM, CODE_COUNTERS, CODE_FORMAT, CODE_HEADER_EVENT, CODE_HEADER_PAGE, CODE_KALLSYMS,
        CODE_KERNEL_BUILD_ID, CODE_KERNEL_MODULE_BUILD_ID, CODE_KEYS, CODE_KEYS_OLD, CODE_MAPS,
        CODE_METRIC_EVENT_KEY, CODE_OFFLINE_CPU, CODE_ONLINE_CPU, CODE_PEA,
    };
}
