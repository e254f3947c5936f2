//! The Lizard engine: one counter list over gatord and HWCPipe, background capture and a bounded sample store.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
