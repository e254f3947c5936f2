//! Engine configuration: which sources to use, timeouts, buffer sizes and the capture mode.

use std::time::Duration;

use crate::store::DEFAULT_CAPACITY;
use crate::transport::{GatordAddress, Timeouts};

/// The longest XML or APC payload accepted from gatord by default: 64 MiB, far above the 3 MB merged events
/// document a real gatord 9.7 sends, far below gatord's own 256 MiB ceiling.
pub const DEFAULT_MAX_MESSAGE_LEN: u32 = 64 * 1024 * 1024;

/// The `live_rate` (ms) of [`Config::per_draw`]: gatord flushes what it captured every millisecond (it
/// accepts any positive value), so the sample that closes a short window reaches the client about one
/// sample period after the window ends instead of up to 100 ms later at the default rate.
pub const PER_DRAW_LIVE_RATE_MS: u32 = 1;

/// How gatord sessions map onto `start_capture` / `stop_capture` pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureMode {
    /// Every start opens a fresh gatord session (configuration connection, then capture connection) and every
    /// stop ends it (APC_STOP, drain to the end marker, close). Exact: all samples gatord produced during the
    /// capture are kept. Costs two TCP connections and a gatord session per pair, and gatord needs about a
    /// second to release a session, so back-to-back pairs can hit "Session already in progress".
    #[default]
    Reconnecting,
    /// One gatord session stays open across many start/stop pairs; each pair selects the samples whose
    /// timestamps fall in its window. A pair opens no connection and waits for nothing, which suits
    /// per-draw use (see [`Config::per_draw`]).
    ///
    /// Trade-off: gatord samples at its own rate (every `1/sample_rate` for perf counters, every 100 ms for
    /// the counters it polls, such as memory and network), so a window is usually shorter than the sample
    /// period, and its reading comes from the rules of [`crate::reduce`]: an absolute counter reads the
    /// level in force, a delta counter the apportioned part of the sample whose interval encloses the window.
    /// `stop_capture` returns at once; a read of a delta counter whose enclosing sample has not arrived yet
    /// waits for it, up to [`Config::read_timeout`] (about one sample period plus one `live_rate` flush).
    Persistent,
}

/// The `sample_rate` the session XML asks gatord for (`gator-xml`'s type).
pub use gator_xml::SampleRate;

/// Everything [`crate::Lizard::configure`] needs.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// Where gatord listens; `None` does not use gatord at all.
    pub gatord: Option<GatordAddress>,
    /// Whether to read counters directly through HWCPipe (CPU perf events, Mali GPU).
    pub hwcpipe: bool,
    /// Connect and per-read/write timeouts for every gatord socket.
    pub timeouts: Timeouts,
    /// The longest a `stop_capture` waits for gatord's end-of-capture marker before closing the connection.
    pub stop_timeout: Duration,
    /// Persistent mode only: the longest a read of a delta counter waits for gatord to deliver the sample whose
    /// interval encloses the end of the window (the read has no value if it does not come).
    pub read_timeout: Duration,
    /// The HWCPipe sampling interval (the sampler sleeps between samples; it never spins).
    pub sample_interval: Duration,
    /// The most samples kept per counter; older samples are dropped and counted.
    pub capacity: usize,
    /// The longest payload accepted from gatord; a longer announced length is a protocol error and is never
    /// allocated.
    pub max_message_len: u32,
    /// How gatord sessions map onto capture pairs.
    pub mode: CaptureMode,
    /// The `sample_rate` asked of gatord.
    pub sample_rate: SampleRate,
    /// The `live_rate` (ms) asked of gatord: how often it flushes captured data to the socket.
    pub live_rate_ms: u32,
    /// How long to keep retrying a connection that gatord answers with "Session already in progress" (it
    /// releases a session shortly after the previous connection closes); after that the error is returned.
    pub busy_retry: Duration,
    /// Arm PMU events the local CPU counters count beside HWCPipe's, by the names users type (Arm's
    /// mnemonic, the kernel's name, a number such as `0x4005`): the names that are events of this CPU are
    /// opened on every core type that has them ([`crate::hwc::resolve_cpu_events`]); the others are left to
    /// the other sources. None by default: the local counters are HWCPipe's set.
    pub cpu_events: Vec<String>,
    /// The HWCPipe CPU counters a target's local counters open (`None`: all of them). Fewer counters leave
    /// the PMU's hardware counters to the events named in [`cpu_events`](Self::cpu_events), which the
    /// kernel otherwise multiplexes and scales.
    pub cpu_counters: Option<Vec<hwcpipe::CpuCounter>>,
    /// Whether a target's CPU counters count kernel execution too where the kernel allows it
    /// ([`hwcpipe::KernelCounting::Auto`], the default) or user space only.
    pub kernel: hwcpipe::KernelCounting,
    /// When the Mali GPU is dumped: at the driver's own pace (the default) or with each sample of the other
    /// local counters and once at the stop.
    pub gpu_dumps: GpuDumps,
}

/// When the engine dumps the Mali GPU's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GpuDumps {
    /// The driver dumps by itself every sampling interval, where it can, and the engine takes its dumps as
    /// they come on a thread of its own: samples at the driver's pace and timestamps, but the part of a
    /// period left at the stop is not dumped. Where the driver cannot dump by itself, the engine asks for
    /// a dump each interval and one at the stop.
    #[default]
    DriverPaced,
    /// The engine asks for a dump with each sample of the other local counters and one at the stop, so that
    /// the samples cover the whole window however short: for a total over a counted command (`lizard stat`)
    /// rather than a time series.
    WithSamples,
}

impl Default for Config {
    /// gatord at `127.0.0.1:8080` and HWCPipe both on, reconnecting mode, 1 ms HWCPipe interval.
    fn default() -> Self {
        Config {
            gatord: Some(GatordAddress::default()),
            hwcpipe: true,
            timeouts: Timeouts::default(),
            stop_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_millis(500),
            sample_interval: Duration::from_millis(1),
            capacity: DEFAULT_CAPACITY,
            max_message_len: DEFAULT_MAX_MESSAGE_LEN,
            mode: CaptureMode::Reconnecting,
            sample_rate: SampleRate::Normal,
            live_rate_ms: 100,
            busy_retry: Duration::from_secs(2),
            cpu_events: Vec::new(),
            cpu_counters: None,
            kernel: hwcpipe::KernelCounting::Auto,
            gpu_dumps: GpuDumps::DriverPaced,
        }
    }
}

/// The most samples [`Config::size_for`] keeps per counter, however long and fine a capture: 4 Mi samples
/// (128 MiB a counter); beyond it the oldest are dropped, and counted.
pub const MAX_CAPACITY: usize = 1 << 22;

impl Config {
    /// Sizes the store for a capture of `length` sampled every [`sample_interval`](Self::sample_interval):
    /// every period of every CPU (the kernel samples each CPU's ring), a quarter more for the start and
    /// stop samples and late periods, never fewer than the default capacity nor more than
    /// [`MAX_CAPACITY`].
    pub fn size_for(&mut self, length: Duration) {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let periods = length.as_nanos() / self.sample_interval.as_nanos().max(1) + 2;
        let wanted = periods.saturating_mul(cpus as u128).saturating_mul(5) / 4;
        self.capacity = usize::try_from(wanted)
            .unwrap_or(MAX_CAPACITY)
            .clamp(DEFAULT_CAPACITY, MAX_CAPACITY);
    }

    /// Only gatord at `address`, no HWCPipe.
    pub fn gatord_only(address: impl Into<GatordAddress>) -> Config {
        Config {
            gatord: Some(address.into()),
            hwcpipe: false,
            ..Config::default()
        }
    }

    /// Per-draw capture against gatord at `address` (what the C API uses): persistent mode, so a
    /// start/stop pair costs no connection; `live_rate` [`PER_DRAW_LIVE_RATE_MS`], so gatord hands each
    /// sample to the socket within a millisecond and a read rarely waits; `sample_rate` normal (about 1 kHz
    /// for perf counters). HWCPipe stays on, as in [`Config::default`].
    pub fn per_draw(address: impl Into<GatordAddress>) -> Config {
        Config {
            gatord: Some(address.into()),
            mode: CaptureMode::Persistent,
            live_rate_ms: PER_DRAW_LIVE_RATE_MS,
            ..Config::default()
        }
    }

    /// Only HWCPipe, no gatord.
    pub fn hwcpipe_only() -> Config {
        Config {
            gatord: None,
            hwcpipe: true,
            ..Config::default()
        }
    }
}

#[cfg(test)]
mod sizing_tests {
    use super::*;

    #[test]
    fn a_store_holds_every_period_of_a_capture_within_its_bounds() {
        let mut config = Config::default();
        config.size_for(Duration::from_millis(1));
        assert_eq!(config.capacity, DEFAULT_CAPACITY);
        config.sample_interval = Duration::from_micros(100);
        config.size_for(Duration::from_secs(3600));
        assert_eq!(config.capacity, MAX_CAPACITY);
        config.sample_interval = Duration::from_millis(1);
        config.size_for(Duration::from_secs(100));
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(config.capacity, (100_002 * cpus * 5 / 4).min(MAX_CAPACITY));
    }
}
