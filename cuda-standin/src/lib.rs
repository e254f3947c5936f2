#![doc = include_str!("../README.md")]
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
