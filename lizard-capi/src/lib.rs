//! `liblizard.so`: the Lizard C API over [`lizard_core`].
//!
//! The library exports `LoadApi`, which hands out the `LizardApi` function table described by the
//! committed header `include/lizard/lizard_api.h`. The table, its enums and its structs are laid out
//! exactly as in the original Lizard header (see [`abi`]), so callers written for the original library
//! work unchanged. Three extensions sit beside the table, leaving its layout alone: `LizardGetSampling`,
//! how the local counters' sampling went in the last capture, `LizardGetSamplingDetail`, who sampled
//! them and why missed periods were missed, and `LizardGetStartSkew`, how far apart the CPUs' counters
//! started. Beside the Lizard API sits the trace client of
//! `include/lizard/lizard_trace.h` ([`trace`]): application records, GPU device memory included, sent to a
//! `lizard trace-server`. Unlike the original, no call can crash the host process: every exported
//! function runs inside a panic boundary, checks every pointer and id, and never raises SIGPIPE.
#![deny(missing_docs)]

pub mod abi;
mod api;
mod panic;
mod registry;
pub mod trace;
pub mod trace_abi;

pub use api::{
    LizardGetGpuSampling, LizardGetSampling, LizardGetSamplingDetail, LizardGetStartSkew, LoadApi,
};
