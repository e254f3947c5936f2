//! What a simulated gatord serves and how it misbehaves.

use std::net::SocketAddr;
use std::time::Duration;

use gator_proto::ProtocolVersion;

/// One sample the simulator sends in a scripted capture: a timestamp and values by counter name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimSample {
    /// Nanoseconds since the capture started (the BLOCK_COUNTER timestamp marker).
    pub timestamp_ns: i64,
    /// `(gatord counter name, raw value)`; names not bound in the session are skipped.
    pub values: Vec<(String, i64)>,
}

/// What the simulator streams after APC_START (after the SUMMARY frame).
#[derive(Debug, Clone, PartialEq)]
pub enum Stream {
    /// One frame every `period` until APC_STOP, stamped with the real time since APC_START, holding
    /// [`synthetic_value`](super::synthetic_value) for every bound counter.
    Synthetic {
        /// Time between samples.
        period: Duration,
    },
    /// These samples, one frame each, right after APC_START; then nothing until APC_STOP.
    Samples(Vec<SimSample>),
    /// These APC payloads (`packInt frame_type` + body) verbatim, right after APC_START (for replaying a
    /// recording); then nothing until APC_STOP. No SUMMARY frame is added.
    Raw(Vec<Vec<u8>>),
}

impl Default for Stream {
    /// A synthetic sample every millisecond, gatord's hardware-counter rate.
    fn default() -> Self {
        Stream::Synthetic {
            period: Duration::from_millis(1),
        }
    }
}

/// Ways the simulator can break the protocol or the connection, to test a client's error paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Close the capture connection abruptly (no end marker) after sending this many APC frames.
    pub die_after_frames: Option<usize>,
    /// After sending this many APC frames, send RESPONSE_ERROR with this text and close, as gatord does when
    /// a capture fails on its side (e.g. "Perf agent failed. Invalid event and/or could not online CPUs").
    pub error_after_frames: Option<(usize, String)>,
    /// Ignore APC_STOP: stop streaming but never send the end marker, keeping the connection open.
    pub no_end_marker: bool,
    /// Replace APC frame number `n` (0-based, SUMMARY excluded) by a malformed BLOCK_COUNTER frame (a value
    /// whose SLEB128 never ends).
    pub malformed_frame_at: Option<usize>,
    /// At APC frame number `n`, send an APC_DATA header announcing a 4 GiB payload instead, then nothing.
    pub oversize_length_at: Option<usize>,
    /// Answer the first command of every connection with RESPONSE_ERROR "Session already in progress" and
    /// close, as gatord does while another client's session runs.
    pub busy: bool,
}

/// The configuration of a simulated gatord.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Where to listen; port 0 picks a free port. Default `127.0.0.1:0`.
    pub bind: SocketAddr,
    /// The protocol version announced (`GATOR <n>`) and spoken: 670 (gatord 6.7: 3-clock SUMMARY, requests
    /// accepted without an XML declaration, COUNTER frames possible) or 950 (gatord 9.5+: 4 clocks, requests
    /// without the declaration refused with "Unknown request").
    pub protocol: ProtocolVersion,
    /// The events document served; `None` serves [`DEFAULT_EVENTS_XML`](super::DEFAULT_EVENTS_XML). A
    /// fragment file (no `<events>` root) is wrapped as gatord does.
    pub events_xml: Option<String>,
    /// The counter names the counters document lists (and which get keys); `None` lists every event of the
    /// events document that has a `counter` attribute.
    pub counters: Option<Vec<String>>,
    /// A `captured` document served verbatim instead of the generated one (for replaying a recording whose
    /// frames use the recorded keys).
    pub captured_xml: Option<String>,
    /// What is streamed after APC_START.
    pub stream: Stream,
    /// Send COUNTER frames (type 4, one value each, as gatord ≤ 9.1 did for some sources) instead of
    /// BLOCK_COUNTER frames.
    pub counter_frames: bool,
    /// Counters served the way gatord serves CPU PMU counters: announced in PERF_ATTRS and read in every
    /// sample of gatord's sampling group (PERF_DATA, one frame per core), never in BLOCK_COUNTER frames. Each
    /// core's value grows per sample by what a BLOCK_COUNTER counter would report (its [`Stream`] value), so
    /// a reading summed over the cores is `cores` times that.
    pub perf_counters: Vec<String>,
    /// Counters served the way gatord serves a `PERF_COUNT_SW_*` counter configured without a `count`:
    /// announced in PERF_ATTRS and given perf ids, but opened for counting only and never sent.
    pub counting_only_counters: Vec<String>,
    /// The CPUs perf data comes from (one PERF_DATA frame per core per sample). Default 2.
    pub cores: u32,
    /// Fault injection.
    pub faults: Faults,
}

impl Default for SimConfig {
    /// Loopback, protocol 950, the built-in events, a synthetic sample every millisecond, no faults.
    fn default() -> Self {
        SimConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            protocol: ProtocolVersion::V950,
            events_xml: None,
            counters: None,
            captured_xml: None,
            stream: Stream::default(),
            counter_frames: false,
            perf_counters: Vec::new(),
            counting_only_counters: Vec::new(),
            cores: 2,
            faults: Faults::default(),
        }
    }
}
