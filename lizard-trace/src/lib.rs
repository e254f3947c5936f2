//! Application GPU trace records sent to a server that keeps them in a bounded, overwrite-oldest ring.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]

