#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod event;
mod ids;
mod interned;
pub mod proto;
mod track;
mod value;
mod writer;

pub use ids::{ArgId, CategoryId, Name, NameId, TrackId};
pub use track::{Clock, CounterTrack, GpuCounterSpec, GpuUnit, Unit};
pub use value::{Arg, CounterValue};
pub use writer::TraceWriter;
