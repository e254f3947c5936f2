//! Typed reader and writer for the XML documents of the Arm Streamline gatord daemon (events, counters, captured, configuration, session, request).
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
