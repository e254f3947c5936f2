#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod availability;
mod counter_info;
pub mod counting;
pub mod cpu;
pub mod cpu_list;
mod error;
pub mod gpu;
mod hwc_pipe;
mod measurements;
mod selection;
pub mod sys;
mod unit;
mod value;

pub use availability::Availability;
pub use counter_info::{gpu_info, Counter, CounterInfo};
pub use cpu::{
    CpuConfig, CpuCounter, CpuError, CpuProfiler, CpuReading, CpuSample, CpuTarget, KernelCounting,
    ReadPath, SyscallReason, UnavailableReason, UserReads,
};
pub use error::Error;
pub use gpu::{GpuCounter, GpuError, GpuProfiler, GpuSample};
pub use hwc_pipe::HwcPipe;
pub use measurements::Measurements;
pub use selection::{CounterSelection, SelectionError};
pub use unit::Unit;
pub use value::Value;
