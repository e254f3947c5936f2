//! The exporter's account of itself: windows sampled and failed, time covered, scrapes answered and
//! requests refused by reason. Served as metrics with the counters, and returned by
//! [`Exporter::account`](super::Exporter::account).

/// What the exporter has done since it started.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Account {
    /// Sampling windows completed (with or without an error).
    pub windows: u64,
    /// Windows whose capture could not start or stopped with an error.
    pub window_failures: u64,
    /// Seconds inside windows (the wall time between windows is in no total).
    pub covered_s: f64,
    /// Local sampling periods missed (the sampler woke a whole period late), the CPUs'.
    pub periods_missed: u64,
    /// The GPU's dumps taken, one sample each ([`GpuSampling`](lizard_core::GpuSampling)).
    pub gpu_delivered: u64,
    /// The GPU's periods folded into a dump covering several.
    pub gpu_folded: u64,
    /// The GPU's periods without their counts (an erroneous dump, or none by the stop).
    pub gpu_missed: u64,
    /// Scrapes answered with the metrics.
    pub scrapes: u64,
    /// Requests refused, by reason.
    pub refused: Refusals,
}

/// HTTP requests refused, by reason. Each is answered (where the connection still allows it) and closed;
/// none stops the exporter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusals {
    /// Not an HTTP/1.x request (answered 400).
    pub malformed: u64,
    /// A request head larger than the exporter reads (answered 431).
    pub too_large: u64,
    /// A request not complete within the deadline, or a peer that closed before finishing it.
    pub incomplete: u64,
    /// A path other than `/metrics` and `/` (answered 404).
    pub not_found: u64,
    /// A method other than GET and HEAD (answered 405).
    pub method: u64,
}

impl Refusals {
    /// Each reason's label and count, in a fixed order.
    pub fn by_reason(&self) -> [(&'static str, u64); 5] {
        [
            ("malformed", self.malformed),
            ("too_large", self.too_large),
            ("incomplete", self.incomplete),
            ("not_found", self.not_found),
            ("method", self.method),
        ]
    }

    /// All refusals.
    pub fn total(&self) -> u64 {
        self.by_reason().iter().map(|(_, n)| n).sum()
    }
}
