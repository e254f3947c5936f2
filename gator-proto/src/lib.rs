//! Sans-IO client and daemon state machines, framing and APC frame decoding for the Arm Streamline gatord protocol.
//!
//! No sockets, clocks or threads: bytes go in, events and bytes come out.
//!
//! - [`sleb128`]: gatord's `packInt`/`packInt64` integers.
//! - [`header`], [`message`]: the 5-byte-header messages, one generic codec for both directions;
//!   [`command`] and [`response`]: each direction's type bytes.
//! - [`handshake`]: `STREAMLINE\n` and `GATOR <n>\n`; [`ProtocolVersion`].
//! - [`recorded`]: the responses and APC frames of a recorded daemon-to-client stream.
//! - [`apc`]: zero-copy APC frames ([`apc::Frame::parse`]) and their encoders; local capture files.
//! - [`client::Session`] and [`daemon::Session`]: the two ends of a connection.
#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod apc;
pub mod client;
pub mod command;
pub mod daemon;
pub mod handshake;
pub mod header;
pub mod message;
pub mod recorded;
pub mod response;
pub use perf_record::sleb128;
mod status;
mod version;

pub use status::Decoded;
pub use version::ProtocolVersion;
