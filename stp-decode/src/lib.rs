#![doc = include_str!("../README.md")]
#![no_std]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(test, feature = "std", feature = "perfetto"))]
extern crate std;

#[cfg(feature = "alloc")]
pub mod cptracer;
pub mod dcm;
pub mod decoder;
pub mod deformat;
#[cfg(feature = "alloc")]
pub mod dict;
pub mod dump;
pub mod element;
#[cfg(feature = "elf")]
pub mod elf;
#[cfg(feature = "alloc")]
pub mod encoder;
pub mod error;
#[cfg(feature = "alloc")]
pub mod formatter;
pub mod keystone;
#[cfg(feature = "alloc")]
pub mod message;
pub mod opcode;
pub mod packet;
#[cfg(feature = "alloc")]
pub mod report;
#[cfg(feature = "std")]
pub mod report_inputs;
pub mod sniff;
#[cfg(feature = "alloc")]
pub mod span;
#[cfg(feature = "alloc")]
pub mod stats;
pub mod stmlib;
pub mod tbr;
#[cfg(all(test, feature = "alloc"))]
mod test_streams;
#[cfg(feature = "perfetto")]
pub mod timeline;
pub mod timestamp;
#[cfg(feature = "alloc")]
pub mod trace_buffer;

pub use decoder::{Event, Events, StpDecoder, Unsynced};
pub use dump::{dump, DumpOptions, Dumper, Framing, Item, Record};
pub use element::{Element, ElementDecoder, ElementKind};
pub use error::{DecodeError, EncodeError, FrameError, FrameErrorAt, StpError, Truncation};
pub use packet::{DataWidth, IdWidth, Packet, PacketKind, PacketType};
pub use timestamp::{Timestamp, TsFormat};
