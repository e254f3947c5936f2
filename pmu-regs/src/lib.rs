//! Typed, no_std model of the Armv8/Armv9 PMUv3 performance monitor registers, events and overflow arithmetic, with a software PMU.
//!
//! See `README.md` beside this crate for an overview and an example.
#![no_std]
#![deny(missing_docs)]
#![cfg_attr(not(target_arch = "aarch64"), forbid(unsafe_code))]

