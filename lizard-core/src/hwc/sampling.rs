//! How the direct source's periodic sampling went: periods expected in the window, samples delivered,
//! periods missed and the largest gap, so that a late or starved sampler is counted and shown, never silent.

use std::time::{Duration, Instant};

/// The shortest sampling interval the engine accepts for its direct (HWCPipe) source. Shorter intervals are
/// refused with [`UsageError::SampleInterval`](crate::UsageError::SampleInterval): a thread woken that
/// often spends more time being woken than counting, and misses periods.
pub const MIN_SAMPLE_INTERVAL: Duration = Duration::from_micros(100);

/// How the direct source's periodic sampling went over one capture window (from `start_capture` to
/// `stop_capture`): the sampler takes one sample at the start, one per interval and one at the stop; a
/// period it could not sample in time (the thread was woken late by a whole period or more) is missed and
/// counted, not made up later.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Sampling {
    /// The interval asked for.
    pub interval: Duration,
    /// The window: from the start sample to the stop sample. Sampled by the kernel, the longest of the
    /// rings' windows, each from just before its timer's start to just after its stop.
    pub window: Duration,
    /// Whole periods in the window: `window / interval` (by the kernel, summed over the rings' windows).
    pub expected: u64,
    /// Periodic samples taken (the start and stop samples not included).
    pub delivered: u64,
    /// Periods skipped because the sampler woke a whole period or more late.
    pub missed: u64,
    /// The longest time between two consecutive samples (start, periodic and stop samples).
    pub largest_gap: Duration,
    /// Who took the samples.
    pub method: SamplingMethod,
    /// When the kernel started each CPU's counters, against the capture's start: sampled by the kernel
    /// only (`None` for a thread, which reads every CPU's counters at once).
    pub start: Option<StartSkew>,
    /// How the GPU's counters were sampled, on their own and at the driver's pace where it offers one
    /// (`None` when no GPU counter was captured). The fields above are the CPUs' account, or, with
    /// [`SamplingMethod::GpuOnly`], a copy of this one's.
    pub gpu: Option<GpuSampling>,
}

/// When each CPU's counters started counting, as the kernel says: CPU-wide counters are enabled one
/// counter group after another (an `ioctl` each, which the kernel carries to the group's CPU with an
/// interrupt), so the last group starts later than the first. Counts of two CPUs over "the same" first
/// period differ by what ran in between.
///
/// Each group's start is its timer's first record time less the timer's own count (the CPU time since
/// its enable): the kernel's clock, not the caller's, so a thread preempted between two enables shows as
/// skew and a slow `ioctl` return does not.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StartSkew {
    /// From the first counter group to start to the last, on any CPUs.
    pub largest: Duration,
    /// Each CPU's start after the capture's start (when the engine began enabling): the latest of its
    /// groups, from when all of the CPU's counters count. In CPU order.
    pub cpus: Vec<CpuStart>,
    /// Counter groups whose timer wrote no record to tell their start from (their CPUs are absent
    /// above); 0 in a capture of more than a few periods.
    pub unknown: usize,
}

/// One CPU's start (see [`StartSkew`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuStart {
    /// The CPU.
    pub cpu: u32,
    /// When its last counter group started, after the capture's start.
    pub after_start: Duration,
}

impl StartSkew {
    /// The skew of counter groups on `cpus` (one entry a group: its CPU, and its start in ns on any
    /// clock, `None` if unknown) against the capture's `started` on the same clock. `None` when no
    /// group's start is known.
    pub(crate) fn of_groups(groups: &[(u32, Option<i64>)], started: i64) -> Option<StartSkew> {
        let known = groups.iter().filter_map(|&(cpu, at)| Some((cpu, at?)));
        let first = known.clone().map(|(_, at)| at).min()?;
        let last = known.clone().map(|(_, at)| at).max()?;
        let mut cpus: Vec<CpuStart> = Vec::new();
        let mut sorted: Vec<(u32, i64)> = known.collect();
        sorted.sort_unstable();
        for (cpu, at) in sorted {
            let after_start = duration_ns(at.saturating_sub(started));
            match cpus.last_mut() {
                Some(last) if last.cpu == cpu => {
                    last.after_start = last.after_start.max(after_start)
                }
                _ => cpus.push(CpuStart { cpu, after_start }),
            }
        }
        Some(StartSkew {
            largest: duration_ns(last.saturating_sub(first)),
            cpus,
            unknown: groups.iter().filter(|(_, at)| at.is_none()).count(),
        })
    }

    /// True when the skew reaches one sampling `interval`: the first period's counts of the CPUs cover
    /// visibly different stretches.
    pub fn exceeds(&self, interval: Duration) -> bool {
        self.largest >= interval
    }
}

/// `ns` as a duration, 0 when negative.
fn duration_ns(ns: i64) -> Duration {
    Duration::from_nanos(u64::try_from(ns).unwrap_or(0))
}

/// How the GPU's counters were sampled over one capture window, apart from the CPUs: a poller of their own
/// takes the driver's dumps as they come, each wait bounded by a deadline. Every period of the window is
/// delivered (a sample of one period), folded (into a sample covering several), missed (no counts for it)
/// or not counting yet (a CSF GPU's first dumps); so `expected` ≈ `delivered + folded + missed +
/// not_counting`, the last period of the window possibly still under way at the stop.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuSampling {
    /// Who dumped the counters.
    pub pace: GpuPace,
    /// The interval asked for (the driver's dump period when it dumps by itself).
    pub interval: Duration,
    /// From the start of counting to the stop.
    pub window: Duration,
    /// Whole periods in the window.
    pub expected: u64,
    /// Samples stored (each one dump of the driver).
    pub delivered: u64,
    /// Periods whose counts came folded into a sample covering more than one period (by the dumps'
    /// own timestamps, kinstr_prfcnt's stretched flag, or, for manual dumps, a poller woken late): the
    /// counts are kept, only the series is coarser there.
    pub folded: u64,
    /// Periods without their counts: a dump flagged erroneous, or no dump by the deadline and none later
    /// covering the period (a dump that comes late covers the periods since the previous one: they are
    /// folded into it), the periods at the stop whose dump had not come included.
    pub missed: u64,
    /// Why periods were missed: an erroneous dump's reason, else the first deadline's, else the stop.
    pub missed_reason: Option<String>,
    /// Dumps at the start that counted nothing yet (left out of the series rather than stored as zeros).
    pub not_counting: u64,
    /// Why, when `not_counting` is not zero.
    pub not_counting_reason: Option<String>,
    /// The longest time between two consecutive dumps taken.
    pub largest_gap: Duration,
}

/// Who dumped the GPU's counters in a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuPace {
    /// The driver, by itself, every interval (vinstr's dump interval, kinstr_prfcnt's periodic mode): no
    /// dump request waits in the kernel, and a poller late by a few periods loses nothing (the driver's
    /// ring holds the dumps).
    Periodic,
    /// The poller, one dump request per period, because the driver refused to dump by itself.
    Manual {
        /// The driver's refusal.
        reason: String,
    },
}

impl GpuPace {
    /// `periodic` or `manual`.
    pub fn name(&self) -> &'static str {
        match self {
            GpuPace::Periodic => "periodic",
            GpuPace::Manual { .. } => "manual",
        }
    }
}

/// Why a CSF GPU's first dumps count nothing.
pub(crate) const NOT_COUNTING_YET: &str = "nothing counted yet: a CSF GPU's firmware enables counting \
     asynchronously after setup, and dumps taken before it read every counter zero (such dumps within \
     100 ms of the start are left out rather than reported as zeros)";

/// Who took a capture's periodic samples.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingMethod {
    /// The engine's sampler thread, woken every interval to read the counters.
    Thread {
        /// Why the kernel did not sample instead (a task's counters, a GPU, a refusal of the kernel).
        reason: String,
    },
    /// The kernel's timers: one per CPU and counter group, each writing a read of its group into a ring
    /// buffer every interval, drained in batches. Expected, delivered and missed count periods of every
    /// ring.
    Kernel {
        /// Rings sampled (CPUs × counter groups).
        rings: usize,
        /// Records the kernel could not write because a ring was full (`PERF_RECORD_LOST`).
        lost_records: u64,
        /// Times the kernel throttled a timer (`PERF_RECORD_THROTTLE`): more samples than
        /// `perf_event_max_sample_rate` allows per scheduler tick, which a tickless idle CPU soon has at short
        /// intervals. A throttled timer takes no samples until the next tick.
        throttled: u64,
        /// How long the timers were throttled, summed over the rings. On Linux 6.16 and later the timer's
        /// whole group stops meanwhile, so its counters miss what happened then.
        throttled_time: Duration,
        /// Missed periods that neither throttling nor a lost record explains: periods whose timer wrote
        /// nothing because its CPU was idle. Linux's CPU-clock timer takes no sample on an idle CPU (`perf
        /// record -a -e cpu-clock` has the same holes); the group goes on counting, so the CPU's next
        /// sample, or the read at the stop, holds the counts of the whole stretch: the totals are exact,
        /// only that CPU's series is coarser there.
        idle_periods: u64,
    },
    /// No CPU counter was sampled: the numbers are the GPU's ([`Sampling::gpu`]).
    GpuOnly,
}

impl SamplingMethod {
    /// `kernel`, `thread` or `gpu`.
    pub fn name(&self) -> &'static str {
        match self {
            SamplingMethod::Thread { .. } => "thread",
            SamplingMethod::Kernel { .. } => "kernel",
            SamplingMethod::GpuOnly => "gpu",
        }
    }
}

impl Sampling {
    /// The share of the expected periods delivered, 0 to 1 (1 for a window shorter than one period).
    pub fn delivered_fraction(&self) -> f64 {
        if self.expected == 0 {
            1.0
        } else {
            (self.delivered as f64 / self.expected as f64).min(1.0)
        }
    }

    /// The same account, taken by `method`.
    pub(crate) fn with_method(mut self, method: SamplingMethod) -> Sampling {
        self.method = method;
        self
    }

    /// The same account, with the counters' `start`.
    pub(crate) fn with_start(mut self, start: Option<StartSkew>) -> Sampling {
        self.start = start;
        self
    }

    /// Several rings' accounts as one: periods summed, the longest window and gap.
    pub(crate) fn merge(accounts: &[Sampling], method: SamplingMethod) -> Option<Sampling> {
        let first = accounts.first()?;
        Some(Sampling {
            interval: first.interval,
            window: accounts.iter().map(|a| a.window).max().unwrap_or_default(),
            expected: accounts.iter().map(|a| a.expected).sum(),
            delivered: accounts.iter().map(|a| a.delivered).sum(),
            missed: accounts.iter().map(|a| a.missed).sum(),
            largest_gap: accounts
                .iter()
                .map(|a| a.largest_gap)
                .max()
                .unwrap_or_default(),
            method,
            start: None,
            gpu: None,
        })
    }

    /// The account of a capture that sampled only GPU counters.
    pub(crate) fn gpu_only(gpu: GpuSampling) -> Sampling {
        Sampling {
            interval: gpu.interval,
            window: gpu.window,
            expected: gpu.expected,
            delivered: gpu.delivered,
            missed: gpu.missed,
            largest_gap: gpu.largest_gap,
            method: SamplingMethod::GpuOnly,
            start: None,
            gpu: Some(gpu),
        }
    }
}

/// The sampler's running count: when the next sample is due, and what happened so far. Pure bookkeeping
/// over the instants it is given, so its rules are tested without waiting.
#[derive(Debug, Clone)]
pub(crate) struct Tally {
    interval: Duration,
    started: Instant,
    next: Instant,
    last: Instant,
    delivered: u64,
    missed: u64,
    largest_gap: Duration,
}

impl Tally {
    /// The count for a window whose start sample was taken at `started`.
    pub(crate) fn new(started: Instant, interval: Duration) -> Tally {
        Tally {
            interval,
            started,
            next: started + interval,
            last: started,
            delivered: 0,
            missed: 0,
            largest_gap: Duration::ZERO,
        }
    }

    /// When the next periodic sample is due.
    pub(crate) fn next_due(&self) -> Instant {
        self.next
    }

    /// A periodic sample was taken at `at`. The next one is due a period after the one just served; the
    /// periods already wholly past by `at` are missed.
    pub(crate) fn sampled(&mut self, at: Instant) {
        self.delivered += 1;
        self.gap_to(at);
        self.next += self.interval;
        if self.next <= at {
            let behind = at.duration_since(self.next).as_nanos() / self.interval.as_nanos().max(1);
            let behind = u64::try_from(behind).unwrap_or(u64::MAX).saturating_add(1);
            self.missed = self.missed.saturating_add(behind);
            self.next += self
                .interval
                .saturating_mul(u32::try_from(behind).unwrap_or(u32::MAX));
        }
    }

    /// The stop sample was taken at `at`: the window's account. Periods due before the stop and wholly
    /// past by it (the sampler was late when the stop came) are missed; the last one due within a period
    /// of the stop is served by the stop sample.
    pub(crate) fn finish(mut self, at: Instant) -> Sampling {
        self.gap_to(at);
        if self.next <= at {
            let behind = at.duration_since(self.next).as_nanos() / self.interval.as_nanos().max(1);
            self.missed = self
                .missed
                .saturating_add(u64::try_from(behind).unwrap_or(u64::MAX));
        }
        let window = at.saturating_duration_since(self.started);
        let expected = window.as_nanos() / self.interval.as_nanos().max(1);
        Sampling {
            interval: self.interval,
            window,
            expected: u64::try_from(expected).unwrap_or(u64::MAX),
            delivered: self.delivered,
            missed: self.missed,
            largest_gap: self.largest_gap,
            method: SamplingMethod::Thread {
                reason: String::new(),
            },
            start: None,
            gpu: None,
        }
    }

    fn gap_to(&mut self, at: Instant) {
        self.largest_gap = self
            .largest_gap
            .max(at.saturating_duration_since(self.last));
        self.last = at;
    }
}

/// The GPU poller's running count. Periods are numbered from the start of counting: `covered` of them are
/// covered by the dumps taken so far (a dump covers the periods since the previous one, by the dumps'
/// timestamps or, for manual dumps, the host's clock), `pending` more are past their deadline without a
/// dump, and the next dump is due at the end of the period after those. A dump that comes after all covers
/// the pending periods too: they are folded into it, their counts kept. Pure bookkeeping over the instants
/// and spans it is given.
#[derive(Debug, Clone)]
pub(crate) struct GpuTally {
    interval: Duration,
    started: Instant,
    covered: u64,
    pending: u64,
    /// Periods of erroneous dumps, which the next dump's span includes.
    skip: u64,
    last: Instant,
    counted_yet: bool,
    delivered: u64,
    folded: u64,
    /// Periods of erroneous dumps (their counts lost).
    lost: u64,
    lost_reason: Option<String>,
    pending_reason: Option<String>,
    not_counting: u64,
    largest_gap: Duration,
}

/// Why periods at the end of a window have no dump.
const STOPPED_BEFORE_THE_DUMP: &str =
    "the capture stopped before the driver's dumps of the last periods came";

impl GpuTally {
    /// The count for counting started at `started`.
    pub(crate) fn new(started: Instant, interval: Duration) -> GpuTally {
        GpuTally {
            interval,
            started,
            covered: 0,
            pending: 0,
            skip: 0,
            last: started,
            counted_yet: false,
            delivered: 0,
            folded: 0,
            lost: 0,
            lost_reason: None,
            pending_reason: None,
            not_counting: 0,
            largest_gap: Duration::ZERO,
        }
    }

    /// The interval.
    pub(crate) fn interval(&self) -> Duration {
        self.interval
    }

    fn period_end(&self, period: u64) -> Instant {
        let ns = self.interval.as_nanos().saturating_mul(u128::from(period));
        self.started + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// Whole periods from the start to `at`.
    fn periods_to(&self, at: Instant) -> u64 {
        let n =
            at.saturating_duration_since(self.started).as_nanos() / self.interval.as_nanos().max(1);
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// When the next dump is due: the end of the first period neither covered nor past its deadline.
    pub(crate) fn next_due(&self) -> Instant {
        self.period_end(self.covered + self.pending + 1)
    }

    /// The periods in a span of `span_ns` between two dumps' timestamps, rounded to the nearest (at least one).
    pub(crate) fn periods_in(&self, span_ns: u64) -> u64 {
        let interval = self.interval.as_nanos().max(1);
        let n = (u128::from(span_ns) + interval / 2) / interval;
        u64::try_from(n).unwrap_or(u64::MAX).max(1)
    }

    /// A dump taken at `at`, covering `periods` since the previous dump (from the dumps' timestamps);
    /// `None` for a manual dump, which covers the periods wholly past by `at`. Returns whether it is to
    /// be stored: a dump that counted nothing before any that counted is not.
    pub(crate) fn dump(&mut self, at: Instant, periods: Option<u64>, counting: bool) -> bool {
        let periods =
            periods.unwrap_or_else(|| self.periods_to(at).saturating_sub(self.covered).max(1));
        let periods = periods
            .saturating_sub(std::mem::take(&mut self.skip))
            .max(1);
        self.covered = self.covered.saturating_add(periods);
        self.pending = self.pending.saturating_sub(periods);
        self.folded += periods - 1;
        let stored = counting || self.counted_yet;
        self.counted_yet = stored;
        if stored {
            self.delivered += 1;
        } else {
            self.not_counting += 1;
        }
        self.largest_gap = self
            .largest_gap
            .max(at.saturating_duration_since(self.last));
        self.last = at;
        stored
    }

    /// The dump due next did not come by its deadline, for `reason`: its period is missed unless a later
    /// dump covers it.
    pub(crate) fn missed(&mut self, reason: String) {
        self.pending += 1;
        self.pending_reason.get_or_insert(reason);
    }

    /// The dump due next came flagged erroneous, for `reason`: its period's counts are lost.
    pub(crate) fn lost(&mut self, reason: String) {
        self.lost += 1;
        self.covered += 1;
        self.skip += 1;
        self.lost_reason.get_or_insert(reason);
    }

    /// The account at the stop, at `at`. Periods wholly past by then without a dump are missed: those past
    /// their deadline, and those whose dump had not come yet.
    pub(crate) fn finish(self, at: Instant, pace: GpuPace) -> GpuSampling {
        let window = at.saturating_duration_since(self.started);
        let expected = self.periods_to(at);
        let unaccounted = expected.saturating_sub(self.covered + self.pending);
        let missed = self.lost + self.pending + unaccounted;
        let missed_reason = if self.lost > 0 {
            self.lost_reason
        } else if self.pending > 0 {
            self.pending_reason
        } else {
            (unaccounted > 0).then(|| STOPPED_BEFORE_THE_DUMP.to_owned())
        };
        GpuSampling {
            pace,
            interval: self.interval,
            window,
            expected,
            delivered: self.delivered,
            folded: self.folded,
            missed,
            missed_reason,
            not_counting: self.not_counting,
            not_counting_reason: (self.not_counting > 0).then(|| NOT_COUNTING_YET.to_owned()),
            largest_gap: self
                .largest_gap
                .max(at.saturating_duration_since(self.last)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_dumps_on_time_are_delivered_one_period_each() {
        let t0 = Instant::now();
        let mut tally = GpuTally::new(t0, MS);
        for n in 1..=5 {
            assert_eq!(tally.next_due(), t0 + MS * n);
            assert!(tally.dump(t0 + MS * n, Some(1), true));
        }
        let gpu = tally.finish(t0 + MS * 5 + MS / 2, GpuPace::Periodic);
        assert_eq!(
            (gpu.expected, gpu.delivered, gpu.folded, gpu.missed),
            (5, 5, 0, 0)
        );
        assert_eq!(gpu.largest_gap, MS);
    }

    #[test]
    fn a_gpu_dump_spanning_periods_folds_them_and_moves_the_schedule_on() {
        let t0 = Instant::now();
        let mut tally = GpuTally::new(t0, MS);
        tally.dump(t0 + MS, Some(1), true);
        tally.dump(t0 + MS * 4, Some(3), true);
        assert_eq!(tally.next_due(), t0 + MS * 5);
        // A manual dump taken 2.5 periods after the last covers the two periods wholly past.
        tally.dump(t0 + MS * 6 + MS / 2, None, true);
        let gpu = tally.finish(t0 + MS * 6 + MS / 2, GpuPace::Periodic);
        assert_eq!((gpu.delivered, gpu.folded, gpu.missed), (3, 3, 0));
        assert_eq!(gpu.expected, 6);
    }

    #[test]
    fn a_gpu_dump_that_never_comes_is_missed_with_its_reason() {
        let t0 = Instant::now();
        let mut tally = GpuTally::new(t0, MS);
        tally.dump(t0 + MS, Some(1), true);
        tally.missed("no dump came within 20 ms".into());
        tally.lost("the driver flagged the dump as erroneous".into());
        assert_eq!(tally.next_due(), t0 + MS * 4);
        // The next dump covers the late period (folded into it), the erroneous one and its own.
        tally.dump(t0 + MS * 4, Some(3), true);
        let gpu = tally.finish(t0 + MS * 4, GpuPace::Periodic);
        assert_eq!((gpu.delivered, gpu.folded, gpu.missed), (2, 1, 1));
        assert_eq!(
            gpu.missed_reason.as_deref(),
            Some("the driver flagged the dump as erroneous")
        );
        // No dump at all after the first: the periods past their deadline, and the rest to the stop.
        let mut tally = GpuTally::new(t0, MS);
        tally.dump(t0 + MS, Some(1), true);
        tally.missed("no dump came within 20 ms".into());
        let gpu = tally.finish(t0 + MS * 5, GpuPace::Periodic);
        assert_eq!((gpu.delivered, gpu.folded, gpu.missed), (1, 0, 4));
        assert_eq!(
            gpu.missed_reason.as_deref(),
            Some("no dump came within 20 ms")
        );
        let gpu = GpuTally::new(t0, MS).finish(t0 + MS * 2, GpuPace::Periodic);
        assert_eq!(gpu.missed, 2);
        assert_eq!(gpu.missed_reason.as_deref(), Some(STOPPED_BEFORE_THE_DUMP));
    }

    #[test]
    fn a_gpu_dump_after_its_deadline_is_delivered_not_missed() {
        let t0 = Instant::now();
        let mut tally = GpuTally::new(t0, MS);
        tally.missed("no dump came within 2 ms".into());
        // It came after all, covering the first period.
        tally.dump(t0 + MS + MS / 2, Some(1), true);
        assert_eq!(tally.next_due(), t0 + MS * 2);
        let gpu = tally.finish(t0 + MS + MS / 2, GpuPace::Periodic);
        assert_eq!((gpu.delivered, gpu.folded, gpu.missed), (1, 0, 0));
        assert_eq!(gpu.missed_reason, None);
    }

    #[test]
    fn gpu_dumps_before_counting_starts_are_not_counting_yet_and_not_stored() {
        let t0 = Instant::now();
        let mut tally = GpuTally::new(t0, MS);
        assert!(!tally.dump(t0 + MS, Some(1), false));
        assert!(!tally.dump(t0 + MS * 2, Some(1), false));
        assert!(tally.dump(t0 + MS * 3, Some(1), true));
        // Once counting, a dump of a block-less moment is stored as what it is.
        assert!(tally.dump(t0 + MS * 4, Some(1), false));
        let gpu = tally.finish(t0 + MS * 4, GpuPace::Periodic);
        assert_eq!((gpu.delivered, gpu.not_counting), (2, 2));
        assert_eq!(gpu.not_counting_reason.as_deref(), Some(NOT_COUNTING_YET));
    }

    #[test]
    fn periods_in_a_span_round_to_the_nearest_and_are_at_least_one() {
        let tally = GpuTally::new(Instant::now(), MS);
        assert_eq!(tally.periods_in(0), 1);
        assert_eq!(tally.periods_in(1_400_000), 1);
        assert_eq!(tally.periods_in(1_600_000), 2);
        assert_eq!(tally.periods_in(3_000_000), 3);
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_sampler_on_time_delivers_every_period() {
        let t0 = Instant::now();
        let mut tally = Tally::new(t0, MS);
        for n in 1..=10 {
            assert_eq!(tally.next_due(), t0 + MS * n);
            tally.sampled(t0 + MS * n + Duration::from_micros(20));
        }
        let sampling = tally.finish(t0 + MS * 10 + Duration::from_micros(500));
        assert_eq!(sampling.expected, 10);
        assert_eq!(sampling.delivered, 10);
        assert_eq!(sampling.missed, 0);
        assert_eq!(sampling.largest_gap, Duration::from_micros(1020));
        assert_eq!(sampling.delivered_fraction(), 1.0);
    }

    #[test]
    fn a_late_wake_up_misses_the_periods_it_slept_through() {
        let t0 = Instant::now();
        let mut tally = Tally::new(t0, MS);
        tally.sampled(t0 + MS);
        // Woken 3.5 periods late for the sample due at 2 ms: the ones due at 3, 4 and 5 ms are past.
        tally.sampled(t0 + MS * 2 + Duration::from_micros(3500));
        assert_eq!(tally.next_due(), t0 + MS * 6);
        tally.sampled(t0 + MS * 6);
        let sampling = tally.finish(t0 + MS * 6);
        assert_eq!((sampling.delivered, sampling.missed), (3, 3));
        assert_eq!(sampling.expected, 6);
        assert_eq!(sampling.largest_gap, Duration::from_micros(4500));
        assert_eq!(sampling.delivered_fraction(), 0.5);
    }

    #[test]
    fn a_late_wake_up_within_the_period_misses_nothing() {
        let t0 = Instant::now();
        let mut tally = Tally::new(t0, MS);
        tally.sampled(t0 + MS + Duration::from_micros(999));
        assert_eq!(tally.next_due(), t0 + MS * 2);
        let sampling = tally.finish(t0 + MS * 2);
        assert_eq!((sampling.delivered, sampling.missed), (1, 0));
    }

    #[test]
    fn a_sampler_late_when_the_stop_comes_misses_the_periods_wholly_past() {
        let t0 = Instant::now();
        let mut tally = Tally::new(t0, MS);
        tally.sampled(t0 + MS);
        // Due at 2 ms, still asleep when the stop comes at 9.4 ms: the periods due at 2..=8 ms are
        // wholly past; the one due at 9 ms is served by the stop sample.
        let sampling = tally.finish(t0 + MS * 9 + Duration::from_micros(400));
        assert_eq!(sampling.expected, 9);
        assert_eq!((sampling.delivered, sampling.missed), (1, 7));
        assert_eq!(sampling.largest_gap, Duration::from_micros(8400));
    }

    #[test]
    fn every_period_is_delivered_or_missed() {
        let t0 = Instant::now();
        let mut tally = Tally::new(t0, MS);
        for late_us in [0, 2500, 300, 7000, 999, 1000] {
            let due = tally.next_due();
            tally.sampled(due + Duration::from_micros(late_us));
        }
        let stop = tally.next_due() + Duration::from_micros(4200);
        let sampling = tally.finish(stop);
        let handled = sampling.delivered + sampling.missed;
        assert!(
            handled <= sampling.expected && sampling.expected <= handled + 1,
            "{sampling:?}"
        );
    }

    #[test]
    fn the_skew_spans_every_group_and_each_cpu_starts_with_its_last_group() {
        let groups = [
            (1, Some(1_030)),
            (0, Some(1_010)),
            (0, Some(1_050)),
            (2, None),
            (1, Some(1_020)),
        ];
        let skew = StartSkew::of_groups(&groups, 1_000).expect("known starts");
        assert_eq!(skew.largest, Duration::from_nanos(40));
        let cpus: Vec<(u32, u64)> = skew
            .cpus
            .iter()
            .map(|c| (c.cpu, c.after_start.as_nanos() as u64))
            .collect();
        assert_eq!(cpus, [(0, 50), (1, 30)]);
        assert_eq!(skew.unknown, 1);
        assert!(skew.exceeds(Duration::from_nanos(40)));
        assert!(!skew.exceeds(Duration::from_nanos(41)));
    }

    #[test]
    fn no_known_start_is_no_skew_and_a_start_before_the_capture_is_zero_after_it() {
        assert_eq!(StartSkew::of_groups(&[(0, None), (1, None)], 0), None);
        assert_eq!(StartSkew::of_groups(&[], 0), None);
        let skew = StartSkew::of_groups(&[(3, Some(5))], 10).expect("one start");
        assert_eq!(skew.largest, Duration::ZERO);
        assert_eq!(skew.cpus[0].after_start, Duration::ZERO);
    }

    #[test]
    fn a_window_shorter_than_a_period_expects_nothing() {
        let t0 = Instant::now();
        let sampling = Tally::new(t0, MS).finish(t0 + Duration::from_micros(300));
        assert_eq!((sampling.expected, sampling.delivered), (0, 0));
        assert_eq!(sampling.delivered_fraction(), 1.0);
        assert_eq!(sampling.largest_gap, Duration::from_micros(300));
    }
}
