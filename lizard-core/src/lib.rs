//! The Lizard engine: one counter list over gatord and HWCPipe, background capture and a bounded sample store.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod counter;
pub mod reduce;
pub mod store;
pub mod transport;

pub use counter::{Counter, CounterClass, CounterId, ResultType, Source, Units};
pub use store::{Sample, SampleStore, Value, Window};
pub use transport::{GatordAddress, Timeouts, Transport, TransportError};
