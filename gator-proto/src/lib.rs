//! Sans-IO client and daemon state machines, framing and APC frame decoding for the Arm Streamline gatord protocol.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
