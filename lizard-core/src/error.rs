//! The engine's error type: one variant per way a call can fail, the cause kept.

use std::time::Duration;

use crate::counter::CounterId;
use crate::transport::TransportError;

/// Why an engine call failed: a misuse of the API, a fault of gatord or of the direct (HWCPipe) source, a
/// counter without a value, or a capture that measured nothing. Each concern has its own type with the
/// typed causes; every message reads as the concern's own (the wrapping adds no text).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API was called out of order or with a bad id.
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// gatord (its socket, its protocol, its documents, its session) failed.
    #[error(transparent)]
    Gatord(#[from] GatordError),
    /// The direct counter source (HWCPipe, or a caller's [`HwcBackend`](crate::HwcBackend)) failed.
    #[error(transparent)]
    Direct(#[from] DirectError),
    /// No counter source could be configured: neither gatord nor HWCPipe gave any counter.
    #[error(
        "no counter source is available (gatord: {}; HWCPipe: {})",
        error_chain(gatord),
        error_chain(hwcpipe)
    )]
    NoSource {
        /// Why gatord gave no counters.
        gatord: Box<Error>,
        /// Why HWCPipe gave no counters.
        hwcpipe: Box<Error>,
    },
    /// The source was switched off in the configuration.
    #[error("disabled in the configuration")]
    SourceDisabled,
    /// The source was reachable but offered no counter this engine can use.
    #[error("the source offers no usable counter")]
    NoCounters,
    /// Counter `id` has no value: no sample exists that the reading rule (see [`crate::reduce`]) can use.
    /// Never read as 0.
    #[error("counter {id} has no value: {reason}")]
    NoValue {
        /// The counter.
        id: CounterId,
        /// Why.
        reason: NoValue,
    },
    /// The capture ended with no sample at all for any enabled counter: nothing was measured.
    #[error("the capture got no sample for any of the {0} enabled counter(s)")]
    NothingCaptured(usize),
    /// A capture thread could not be started.
    #[error("cannot start a capture thread")]
    Thread(#[source] std::io::Error),
}

/// A call the engine's order or ids do not allow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UsageError {
    /// A counter id outside `1..=N`.
    #[error("unknown counter id {id} (valid ids are 1..={count})")]
    UnknownCounter {
        /// The id given.
        id: CounterId,
        /// The number of counters.
        count: usize,
    },
    /// `start_capture` while a capture is running.
    #[error("a capture is already running")]
    CaptureRunning,
    /// `stop_capture` with no capture running.
    #[error("no capture is running")]
    NotCapturing,
    /// A direct-source sampling interval shorter than the engine samples at
    /// ([`MIN_SAMPLE_INTERVAL`](crate::hwc::MIN_SAMPLE_INTERVAL)).
    #[error("a sampling interval of {interval:?} is shorter than the shortest the engine samples at, {min:?}")]
    SampleInterval {
        /// The interval asked for.
        interval: Duration,
        /// The shortest accepted.
        min: Duration,
    },
    /// `start_capture` with no counter enabled.
    #[error("no counter is enabled")]
    NothingEnabled,
}

/// What went wrong with gatord.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatordError {
    /// The socket to gatord failed (connect, timeout, closed, OS error).
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// gatord closed the connection during a capture. Samples received before are kept and readable.
    #[error("gatord disconnected during the capture; samples received before are kept")]
    Disconnected,
    /// Some APC frames from gatord were malformed, or their perf records could not be turned into values.
    /// They were skipped (values decoded before the fault in a frame are kept); every other sample is readable.
    #[error("{count} malformed APC frame(s) from gatord were skipped")]
    MalformedFrames {
        /// How many frames were malformed.
        count: u64,
        /// The fault in the first one.
        #[source]
        first: crate::gatord::apc::SinkError,
    },
    /// More events of a programmable counter set are enabled than gatord offers slots for: gatord counts at
    /// most one event per slot. Disable some of them.
    #[error("counter set {set} has {slots} slots but {} of its events are enabled ({}); disable some of them", .events.len(), .events.join(", "))]
    TooManyEvents {
        /// The counter set (`ARMv8_Cortex_A72_cnt`).
        set: String,
        /// How many slots gatord lists for it.
        slots: usize,
        /// The enabled events of the set, by counter name.
        events: Vec<String>,
    },
    /// An enabled event belongs to a counter set for which gatord lists no slot.
    #[error("gatord offers no slot of counter set {set}")]
    NoSlots {
        /// The counter set.
        set: String,
    },
    /// gatord's `captured` key map bound no key to any enabled counter, so no value could be attributed.
    #[error("gatord bound no capture key to the enabled counters {0:?}")]
    KeysNotBound(Vec<String>),
    /// The receiver thread panicked (a bug); the connection was closed.
    #[error("the gatord receiver thread panicked")]
    ReceiverPanicked,
    /// gatord did not send the end-of-capture marker within the stop deadline; the connection was closed and
    /// the samples received before are kept.
    #[error("gatord sent no end-of-capture marker within {0:?}; samples received before are kept")]
    StopTimeout(Duration),
    /// gatord is serving another client ("Session already in progress"), and still was after `waited` of
    /// retries ([`Config::busy_retry`](crate::Config::busy_retry)). gatord allows one session at a time and
    /// says nothing about when the other one ends, so no retry time is claimed: retry when the other client
    /// has finished (a session this engine just closed is released by gatord within about a second).
    #[error(
        "gatord is busy with another session (another client's capture, or the previous session not yet \
         released) and still was after {:.1} s of retries; gatord does not say when that session ends: \
         retry once it has",
        .waited.as_secs_f64()
    )]
    SessionInProgress {
        /// How long the engine kept retrying before giving up (zero when it did not retry).
        waited: Duration,
    },
    /// gatord reported an error (`RESPONSE_ERROR`) with this text.
    #[error("gatord reported an error: {0}")]
    Daemon(String),
    /// gatord refused a request (`RESPONSE_NAK`), with its text if any.
    #[error("gatord refused {what}: {text:?}")]
    Refused {
        /// The request that was refused.
        what: &'static str,
        /// gatord's explanation, possibly empty.
        text: String,
    },
    /// gatord answered with a response of an unexpected type.
    #[error("gatord answered {what} with response type {response_type:#04x}")]
    UnexpectedResponse {
        /// The request that was answered.
        what: &'static str,
        /// The response type byte received.
        response_type: u8,
    },
    /// The bytes from gatord broke the protocol (bad handshake, bad header, malformed frame, oversize length).
    #[error("protocol error from gatord while {what}")]
    Protocol {
        /// What the engine was doing.
        what: &'static str,
        /// What was wrong.
        #[source]
        source: ProtocolFault,
    },
    /// An XML document from gatord could not be read.
    #[error("cannot read the {document} XML from gatord")]
    Xml {
        /// Which document (`events`, `counters`, `captured`).
        document: &'static str,
        /// The reader's error.
        #[source]
        source: gator_xml::XmlError,
    },
    /// A gatord reply is not UTF-8 text.
    #[error("the {0} XML from gatord is not UTF-8")]
    NotUtf8(&'static str),
}

/// What went wrong with the direct counter source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DirectError {
    /// HWCPipe failed while starting or sampling.
    #[error("HWCPipe failed")]
    HwcPipe(#[from] hwcpipe::Error),
    /// A direct counter source other than HWCPipe (an [`HwcBackend`](crate::HwcBackend) of the caller's)
    /// failed while starting or sampling.
    #[error("the direct counter source failed")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// HWCPipe reads no counter on this machine, for these reasons.
    #[error(
        "HWCPipe reads no counter here (CPU: {}; GPU: {})",
        side_reason(cpu.as_ref()),
        side_reason(gpu.as_ref())
    )]
    HwcPipeUnavailable {
        /// Why the CPU side gives nothing: its profiler could not be opened, or (`None`) it opened and
        /// offers no counter.
        cpu: Option<hwcpipe::CpuError>,
        /// Why the GPU side gives nothing: its profiler could not be opened (no Mali device, a refused
        /// driver), or (`None`) it offers no counter.
        gpu: Option<hwcpipe::GpuError>,
    },
    /// The sampler thread panicked (a bug in a backend); the capture was stopped.
    #[error("the HWCPipe sampler thread panicked")]
    SamplerPanicked,
    /// The Arm PMU events named for the local CPU counters could not be resolved.
    #[error("the local CPU counters' Arm PMU events")]
    Events(#[from] crate::hwc::CpuEventsError),
    /// The GPU's poller did not end within `waited` of the stop: it is stuck in the driver (a GPU or
    /// driver that stopped answering). The capture stopped without it; the GPU samples stored before
    /// are kept, and its account is missing.
    #[error("the GPU's poller did not end within {waited:?} of the stop (stuck in the driver)")]
    GpuStalled {
        /// How long the stop waited for the poller.
        waited: std::time::Duration,
    },
}

impl From<TransportError> for Error {
    fn from(error: TransportError) -> Error {
        Error::Gatord(GatordError::Transport(error))
    }
}

impl From<hwcpipe::Error> for Error {
    fn from(error: hwcpipe::Error) -> Error {
        Error::Direct(DirectError::HwcPipe(error))
    }
}

/// What was wrong with gatord's bytes, the cause of [`GatordError::Protocol`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolFault {
    /// `gator-proto`'s client state machine refused them (handshake, header, length limit, reply order); the
    /// typed error says which.
    #[error(transparent)]
    Client(#[from] gator_proto::client::ClientError),
    /// A well-formed reply that does not answer the request made (`"ACK"`, `"APC_DATA"`, …).
    #[error("unexpected {0} reply")]
    UnexpectedReply(&'static str),
    /// The `captured` key map gives a counter a key that does not fit the 32-bit keys of APC frames.
    #[error("counter {counter:?} has the out-of-range key {key:#x}")]
    KeyOutOfRange {
        /// The counter.
        counter: String,
        /// The key as written.
        key: u64,
    },
}

/// The text of one side of [`DirectError::HwcPipeUnavailable`].
fn side_reason(error: Option<&impl std::fmt::Display>) -> String {
    error.map_or_else(|| "no counter is available".to_owned(), ToString::to_string)
}

/// An error and its causes on one line, `error: cause: cause…`, a cause whose text the line already holds
/// left out: for messages to people, and for errors kept inside another's message.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// Why a counter has no value over a capture window.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoValue {
    /// The capture stored no sample of the counter.
    #[error("no samples")]
    NoSamples,
    /// Samples exist, but none the window rule can use: for an absolute counter none at or before the
    /// window's end, for a delta counter none whose interval overlaps the window (the sample closing the
    /// window has not arrived, or the window lies before the first sample).
    #[error("no sample encloses the capture window")]
    NotEnclosed,
    /// The counter was not enabled in the running or last capture (or no capture has run yet).
    #[error("not enabled in the capture")]
    NotCaptured,
    /// The source listed the counter but does not deliver it here, for this reason.
    #[error("unavailable here: {0}")]
    Unavailable(crate::gatord::apc::Unavailable),
    /// A derived counter's equation divides by an expression of its inputs that is 0 over the window (the
    /// unit it measures never ran, say).
    #[error("{divisor} is 0")]
    DivisorZero {
        /// The divisor, with its inputs' names (`MaliFragRastQd - MaliFragEZSKillQd`).
        divisor: String,
    },
    /// Derived inputs are nested deeper than the engine follows (the equations are not acyclic).
    #[error("its equations are nested too deep")]
    TooDeep,
    /// An input of a derived counter has no usable sample in the window.
    #[error("its input {input} has no value: {reason}")]
    InputMissing {
        /// The input's name.
        input: String,
        /// Why it has none.
        reason: Box<NoValue>,
    },
}

impl Error {
    /// Whether retrying the same call later may succeed (the daemon busy or slow).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::Gatord(
                GatordError::SessionInProgress { .. }
                    | GatordError::StopTimeout(_)
                    | GatordError::Transport(TransportError::Timeout(..))
            )
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hwcpipe_unavailable_keeps_each_sides_cause() {
        let err = Error::from(DirectError::HwcPipeUnavailable {
            cpu: Some(hwcpipe::CpuError::NothingSelected),
            gpu: None,
        });
        assert_eq!(
            err.to_string(),
            format!(
                "HWCPipe reads no counter here (CPU: {}; GPU: no counter is available)",
                hwcpipe::CpuError::NothingSelected
            )
        );
        assert!(matches!(
            err,
            Error::Direct(DirectError::HwcPipeUnavailable {
                cpu: Some(hwcpipe::CpuError::NothingSelected),
                ..
            })
        ));
    }

    #[test]
    fn a_concern_adds_no_text_and_keeps_the_cause() {
        let timeout = || TransportError::Timeout(Duration::from_secs(1), "connecting");
        let error = Error::from(timeout());
        assert_eq!(error.to_string(), timeout().to_string());
        assert!(matches!(
            error,
            Error::Gatord(GatordError::Transport(TransportError::Timeout(..)))
        ));
        assert!(error.is_retryable());
        let usage = Error::from(UsageError::UnknownCounter { id: 9, count: 2 });
        assert_eq!(
            usage.to_string(),
            "unknown counter id 9 (valid ids are 1..=2)"
        );
        assert!(!usage.is_retryable());
        let xml = Error::from(GatordError::Xml {
            document: "events",
            source: gator_xml::Counters::parse("<").unwrap_err(),
        });
        assert!(
            std::error::Error::source(&xml).is_some(),
            "the XML reader's error stays the cause"
        );
    }
}
