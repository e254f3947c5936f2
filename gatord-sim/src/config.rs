//! What a simulated gatord serves and how it misbehaves.

use std::net::SocketAddr;
use std::time::Duration;

use gator_proto::ProtocolVersion;

use crate::perf::PerfLeader;

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

/// How long the simulated daemon takes where the real one takes time, and how it paces a live capture.
///
/// [`Timing::default`] is what gatord 9.7.2 was seen to do on a 2-core x86_64 Linux host (observations in
/// `docs/gatord.md` §7): a `StartCapture` of the engine's reconnecting mode (a configuration connection,
/// then a capture connection) took 0.22–0.23 s and a `StopCapture` 0.02–0.06 s; the second connection met
/// "Session already in progress" about once per capture (gatord releases a session only after its child
/// process has exited), and polled counters came every 100 ms. [`Timing::instant`] takes no time at all, for
/// tests of protocol behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Before the handshake reply on a connection that gets the session: gatord forks a child for the
    /// connection and starts its agents first. Default 30 ms.
    pub handshake: Duration,
    /// Before each XML reply (gatord builds the document on request). Default 5 ms.
    pub xml_reply: Duration,
    /// After APC_STOP, before the end-of-capture marker (gatord stops its sources and drains its buffers).
    /// Default 30 ms.
    pub stop: Duration,
    /// After a connection that held the session closes, how long the daemon still answers new connections
    /// "Session already in progress" (its child exiting). Default 100 ms.
    pub session_release: Duration,
    /// Whether perf-backed counters are sampled at the session's `sample_rate` (normal: 1009 Hz, high:
    /// 10007 Hz, low: 101 Hz) rather than with the stream's period, as gatord's sampling timer does. Default on.
    pub perf_at_sample_rate: bool,
    /// Whether captured frames reach the socket only every `live_rate` milliseconds of the session (gatord
    /// commits its buffers at that period) rather than as soon as they are made. Default on.
    pub live_rate_flush: bool,
    /// How long after APC_START the first perf sample is taken: gatord starts its perf events after its
    /// polled counters. Default 70 ms (x86_64 host); 243 ms was seen in the emulated Arm system.
    pub perf_start: Duration,
}

impl Default for Timing {
    /// What the real daemon does (see the type's documentation).
    fn default() -> Self {
        Timing {
            handshake: Duration::from_millis(30),
            xml_reply: Duration::from_millis(5),
            stop: Duration::from_millis(30),
            session_release: Duration::from_millis(100),
            perf_at_sample_rate: true,
            live_rate_flush: true,
            perf_start: Duration::from_millis(70),
        }
    }
}

impl Timing {
    /// No latency anywhere, every sample at the stream's period and sent at once.
    pub fn instant() -> Timing {
        Timing {
            handshake: Duration::ZERO,
            xml_reply: Duration::ZERO,
            stop: Duration::ZERO,
            session_release: Duration::ZERO,
            perf_at_sample_rate: false,
            live_rate_flush: false,
            perf_start: Duration::ZERO,
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
    /// What leads gatord's perf sampling group: the context-switch event (default, as without tracefs) or
    /// the `sched_switch` tracepoint (with tracefs mounted, which also sends gatord's ftrace EXTERNAL frame).
    pub perf_leader: PerfLeader,
    /// Latencies and pacing.
    pub timing: Timing,
    /// Fault injection.
    pub faults: Faults,
}

impl Default for SimConfig {
    /// Loopback, protocol 950, the built-in events, the real daemon's timing ([`Timing::default`]: polled
    /// counters every 100 ms, perf counters at the session's sample rate, frames flushed every `live_rate`),
    /// no faults.
    fn default() -> Self {
        SimConfig {
            stream: Stream::Synthetic {
                period: Duration::from_millis(100),
            },
            timing: Timing::default(),
            ..SimConfig::quick()
        }
    }
}

impl SimConfig {
    /// Loopback, protocol 950, the built-in events, a synthetic sample every millisecond for every counter,
    /// no latency ([`Timing::instant`]), no faults: for tests of what is sent rather than when.
    pub fn quick() -> Self {
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
            perf_leader: PerfLeader::default(),
            timing: Timing::instant(),
            faults: Faults::default(),
        }
    }
}
