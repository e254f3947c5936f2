//! Native Perfetto traces (feature `perfetto`): counter tracks with their units, Mali GPU counters as
//! Perfetto's GPU counters, instants and slices on any track, written packet by packet.
//!
//! A Perfetto trace is a sequence of `TracePacket`s, each the `packet` field (1) of the `Trace` message;
//! [`TraceWriter`] encodes one packet at a time and writes it at once, so memory does not grow with the
//! length of the trace. The messages are the subset of Perfetto's schema this writer uses
//! ([`proto`], field numbers from `protos/perfetto/trace/`): tracks, the clock and GPU counters are
//! encoded by `prost`, the events (instants, slices, counter values) field by field into the same bytes.
//! Names, categories and argument names many events share are interned: written once, referred to by id.
//!
//! ```
//! use lizard_core::perfetto::{Arg, Clock, CounterTrack, CounterValue, Name, TraceWriter, Unit};
//!
//! let mut trace = TraceWriter::new(Vec::new(), Clock::Boottime { zero_ns: 1_000_000 })?;
//! let group = trace.group("cpu (process 42)", None)?;
//! let clock = trace.counter_track(&CounterTrack {
//!     unit: Unit::TimeNs,
//!     incremental: true,
//!     ..CounterTrack::new("TaskClock", Some(group))
//! })?;
//! trace.counter(clock, 10_000_000, CounterValue::Int(9_950_000))?;
//! // Strings many events share are interned once; a one-off name is passed as text.
//! let draw = trace.intern_name("draw");
//! let app = trace.intern_category("app");
//! let frame = trace.intern_arg("frame");
//! trace.instant(group, 11_000_000, draw.into(), Some(app), &[(frame, Arg::Uint(7))])?;
//! trace.instant(group, 12_000_000, Name::Text("frame 7 late"), Some(app), &[])?;
//! let bytes = trace.finish()?;
//! assert_eq!(bytes[0], 0x0a); // Trace.packet, length-delimited
//! # Ok::<(), std::io::Error>(())
//! ```

mod event;
pub mod proto;
mod writer;

pub use writer::{
    Arg, ArgId, CategoryId, Clock, CounterTrack, CounterValue, GpuCounterSpec, GpuUnit, Name,
    NameId, TraceWriter, TrackId, Unit,
};
