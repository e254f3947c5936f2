//! A stand-in for NVIDIA's CUDA driver (`libcuda.so.1`) whose device memory is host shared memory, so that
//! the GPU path of `lizard-trace` and its C clients run, unchanged, on machines without a GPU. It keeps the
//! real driver's rules that those programs depend on — contexts current per thread, sub-allocation from
//! 2 MiB blocks and handles that name the block, mappings that outlive a free, forged handles that still
//! open, references counted per open, sticky errors after a fault, page-aligned host registration, MIG
//! UUIDs — each with a test of its own (`tests/rules.rs`). See the README for what it does not know.
//!
//! Build it and give it the driver's file name, then put its folder first on the loader's path:
//!
//! ```sh
//! cargo build -p cuda-standin
//! mkdir -p target/cuda-standin && cp target/debug/libcuda_standin.so target/cuda-standin/libcuda.so.1
//! LD_LIBRARY_PATH=$PWD/target/cuda-standin cargo test -p lizard-trace --features cuda --test cuda_gpu
//! ```
//!
//! The functions are exported with C linkage under the driver's names ([`api`]); Rust tests may also call
//! them directly through this crate.
#![allow(unsafe_code)]

pub mod address_space;
pub mod api;
pub mod calls;
mod context;
mod copy;
pub mod device;
mod host;
mod host_map;
pub mod ipc;
pub mod memory;
pub mod pointer;
pub mod result;
mod state;

pub use calls::{calls, FUNCTIONS};
