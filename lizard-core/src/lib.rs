#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "serde")]
pub mod capture;
pub mod config;
pub mod counter;
pub mod counter_names;
mod enabling;
pub mod error;
mod gatord;
pub mod hwc;
pub use lizard_input as input;
mod lizard;
pub mod machine;
pub mod reduce;
mod regions;
pub mod selection;
pub mod sources;
pub mod store;
pub mod transport;
mod units;

pub use config::{CaptureMode, Config, GpuDumps, SampleRate, MAX_CAPACITY, PER_DRAW_LIVE_RATE_MS};
pub use counter::{
    Counter, CounterClass, CounterId, CpuScope, CpuSeries, Derivation, DerivedInput, PmuPart,
    ResultType, Scope, SetEvent, Source, Units,
};
pub use enabling::{ChoiceError, Chosen, Counters, Enabled, LeftOut, Overflow};
pub use error::{error_chain, DirectError, Error, GatordError, NoValue, ProtocolFault, UsageError};
pub use gatord::apc::{FrameSink, KeyMap, KeyedSample, SinkError, Unavailable};
pub use gatord::discovery::{gatord_offer, GatordOffer};
pub use gatord::frame_file::{FrameFile, FrameFileError};
pub use gatord::recording::{
    CounterNames, PerfEvent, RecordedValue, Recording, RecordingError, RecordingIssue,
    RecordingSummary, SamplePeriod, FRAMES_FILE, LISTED_ISSUES, UNREADABLE_RUN_LIMIT,
};
pub use gatord::xml::GatordDevice;
pub use hwc::{
    open_target, CommandWatch, CpuStart, GpuDevice, GpuDump, GpuMiss, GpuPace, GpuPlan,
    GpuSampling, GpuSource, HwcBackend, HwcCounterInfo, HwcPipeBackend, KernelPlan,
    NoKernelSampling, OpenedTarget, Sampling, SamplingMethod, Scaling, StartSkew,
    UnreadableCounter, MIN_SAMPLE_INTERVAL,
};
pub use lizard::{CoreReading, Lizard};
pub use machine::Machine;
pub use regions::{RegionReading, Regions};
pub use store::{Sample, SampleStore, Value, Window};
pub use transport::{GatordAddress, Timeouts, Transport, TransportError};
