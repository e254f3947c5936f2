//! Arm CPU (perf_event_open) and Mali GPU (kbase ioctl) hardware counters, a Rust port of HWCPipe.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod gpu;
mod sys;
