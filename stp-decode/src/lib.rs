//! Sans-IO decoder and encoder for MIPI STPv2 System Trace Macrocell streams and CoreSight formatted trace.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
