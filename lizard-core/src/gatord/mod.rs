//! Everything that talks to gatord: the connection (handshake, commands, responses), discovery, the capture
//! session with its receiver thread, APC frames to samples, and the XML documents.

pub(crate) mod apc;
pub(crate) mod capture;
pub(crate) mod connection;
pub(crate) mod counter_sets;
pub(crate) mod discovery;
pub(crate) mod frame_file;
pub(crate) mod metrics;
pub(crate) mod recording;
pub(crate) mod xml;
