//! [`CpuSample`]: the values of one `sample()` of the CPU profiler: each HWCPipe counter's
//! [`CpuReading`], and each Arm PMU event's [`EventReading`] (summed over the core types that count it)
//! with its [`PmuReading`] per core type.

use super::counter::CpuCounter;
use super::user_read::ReadPath;

/// One counter in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuReading {
    /// The counter.
    pub counter: CpuCounter,
    /// Change since the previous sample (or since `run()`), scaled to the whole interval when the
    /// kernel multiplexed the counter.
    pub delta: u64,
    /// Sum of every `delta` since `run()`.
    pub total: u64,
    /// Change of the raw count since the previous sample, before scaling.
    pub raw_delta: u64,
    /// Nanoseconds the counter's group was enabled during the interval.
    pub time_enabled: u64,
    /// Nanoseconds the counter's group was on the PMU during the interval.
    pub time_running: u64,
    /// How the value was read: from user space, or with `read()` and why.
    pub path: ReadPath,
}

impl CpuReading {
    /// Whether `delta` is an estimate scaled from a partial observation.
    pub fn is_multiplexed(&self) -> bool {
        self.time_running < self.time_enabled
    }

    /// Whether the counter was on the PMU at all during the interval; when it was not,
    /// `delta` is 0 because nothing was observed.
    pub fn was_counted(&self) -> bool {
        self.time_running > 0 || self.time_enabled == 0
    }
}

/// What [`commit`](super::group) records of one event on one PMU (scratch, before it is a
/// [`PmuReading`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PartValues {
    pub(crate) delta: u64,
    pub(crate) total: u64,
    pub(crate) raw_delta: u64,
    pub(crate) time_enabled: u64,
    pub(crate) time_running: u64,
    pub(crate) time_on_pmu: u64,
    pub(crate) path: ReadPath,
}

/// One Arm PMU event on one PMU (one core type) in one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PmuReading {
    /// The event: its position in [`CpuProfiler::events`](super::CpuProfiler::events).
    pub event: usize,
    /// The PMU: its position in the system's PMUs ([`Placement::pmu`](super::Placement::pmu)).
    pub pmu: usize,
    /// Change since the previous sample, scaled to the whole time on the PMU when multiplexed.
    pub delta: u64,
    /// Sum of every `delta` since `run()`.
    pub total: u64,
    /// Change of the raw count since the previous sample, before scaling.
    pub raw_delta: u64,
    /// Nanoseconds the event was enabled during the interval.
    pub time_enabled: u64,
    /// Nanoseconds it was on a counter of the PMU during the interval.
    pub time_running: u64,
    /// Nanoseconds it could have been: the whole enabled time, or on a system with several core types
    /// the time the counted task spent on this PMU's cores. `delta` is `raw_delta` scaled by
    /// `time_on_pmu / time_running`.
    pub time_on_pmu: u64,
    /// How it was read.
    pub path: ReadPath,
}

impl PmuReading {
    /// Whether the kernel multiplexed it: it was on a counter for less than the time it could have been.
    pub fn is_multiplexed(&self) -> bool {
        self.time_running < self.time_on_pmu
    }

    /// The share of the time it could count that it was counted (perf's `(50.00%)`), from 0 to 1;
    /// `None` when it had no time to count (the task never ran on these cores).
    pub fn counted_share(&self) -> Option<f64> {
        share(self.time_running, self.time_on_pmu)
    }
}

/// `running / reference`, at most 1; `None` when `reference` is 0.
fn share(running: u64, reference: u64) -> Option<f64> {
    (reference > 0).then(|| (running as f64 / reference as f64).min(1.0))
}

/// One Arm PMU event in one sample, summed over every PMU that counted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventReading {
    /// The event: its position in [`CpuProfiler::events`](super::CpuProfiler::events).
    pub event: usize,
    /// The sum of the PMUs' deltas.
    pub delta: u64,
    /// The sum of the PMUs' totals since `run()`.
    pub total: u64,
    /// The sum of the raw changes, before scaling.
    pub raw_delta: u64,
    /// The sum of the PMUs' times on a counter.
    pub time_running: u64,
    /// The sum of the PMUs' times it could have been on one.
    pub time_on_pmu: u64,
    /// How many PMUs (core types) counted it.
    pub pmus: usize,
}

impl EventReading {
    /// Whether a PMU's part was multiplexed.
    pub fn is_multiplexed(&self) -> bool {
        self.time_running < self.time_on_pmu
    }

    /// The share of the time it could count that it was counted, over every PMU (perf's `(50.00%)`).
    pub fn counted_share(&self) -> Option<f64> {
        share(self.time_running, self.time_on_pmu)
    }
}

/// The values of the enabled CPU counters at one `sample()`.
///
/// Lives inside the profiler and is overwritten by the next `sample()`, so sampling allocates
/// nothing.
#[derive(Clone, Debug)]
pub struct CpuSample {
    readings: [Option<CpuReading>; CpuCounter::COUNT],
    order: Vec<CpuCounter>,
    /// Whether each counter is in `order`, by [`CpuCounter::index`]: one look-up in `reading`.
    reported: [bool; CpuCounter::COUNT],
    multiplexed: bool,
    sequence: u64,
    /// Each event part's latest reading and the sample it is of (its [`sequence`](Self::sequence)), by
    /// part: a reading of another sample is stale.
    parts: Vec<(u64, PmuReading)>,
    /// How many events there are.
    events: usize,
}

impl CpuSample {
    #[cfg(test)]
    pub(crate) fn new(order: Vec<CpuCounter>) -> Self {
        Self::with_events(order, Vec::new(), 0)
    }

    /// A sample of the counters `order` and of `events` events counted in the parts `part_of`
    /// ((event, PMU) each).
    pub(crate) fn with_events(
        order: Vec<CpuCounter>,
        part_of: Vec<(usize, usize)>,
        events: usize,
    ) -> Self {
        let mut reported = [false; CpuCounter::COUNT];
        for c in &order {
            reported[c.index()] = true;
        }
        CpuSample {
            readings: [None; CpuCounter::COUNT],
            order,
            reported,
            multiplexed: false,
            sequence: 0,
            parts: part_of
                .into_iter()
                .map(|(event, pmu)| {
                    let reading = PmuReading {
                        event,
                        pmu,
                        delta: 0,
                        total: 0,
                        raw_delta: 0,
                        time_enabled: 0,
                        time_running: 0,
                        time_on_pmu: 0,
                        path: ReadPath::Syscall(super::SyscallReason::NotSampledYet),
                    };
                    (0, reading)
                })
                .collect(),
            events,
        }
    }

    pub(crate) fn set_order(&mut self, order: &[CpuCounter]) {
        self.order.clear();
        self.order.extend_from_slice(order);
        self.reported = [false; CpuCounter::COUNT];
        for c in order {
            self.reported[c.index()] = true;
        }
        self.readings = [None; CpuCounter::COUNT];
    }

    pub(crate) fn begin(&mut self) {
        self.multiplexed = false;
        self.sequence += 1;
    }

    /// Records part `part`'s values of this sample.
    pub(crate) fn record_part(&mut self, part: usize, values: PartValues) {
        let sequence = self.sequence;
        let Some((seen, reading)) = self.parts.get_mut(part) else {
            return;
        };
        *seen = sequence;
        reading.delta = values.delta;
        reading.total = values.total;
        reading.raw_delta = values.raw_delta;
        reading.time_enabled = values.time_enabled;
        reading.time_running = values.time_running;
        reading.time_on_pmu = values.time_on_pmu;
        reading.path = values.path;
        self.multiplexed |= reading.is_multiplexed();
    }

    #[inline]
    pub(crate) fn record(&mut self, reading: CpuReading) {
        self.multiplexed |= reading.is_multiplexed();
        self.readings[reading.counter.index()] = Some(reading);
    }

    pub(crate) fn reset(&mut self) {
        self.readings = [None; CpuCounter::COUNT];
        self.multiplexed = false;
        self.sequence = 0;
        for (seen, _) in &mut self.parts {
            *seen = 0;
        }
    }

    /// Event `event` (its position in [`CpuProfiler::events`](super::CpuProfiler::events)) in this sample,
    /// summed over the PMUs that counted it; `None` when no PMU counted it.
    pub fn event(&self, event: usize) -> Option<EventReading> {
        let mut parts = self.event_parts(event).peekable();
        parts.peek()?;
        let mut sum = EventReading {
            event,
            delta: 0,
            total: 0,
            raw_delta: 0,
            time_running: 0,
            time_on_pmu: 0,
            pmus: 0,
        };
        for reading in parts {
            sum.delta = sum.delta.saturating_add(reading.delta);
            sum.total = sum.total.saturating_add(reading.total);
            sum.raw_delta = sum.raw_delta.saturating_add(reading.raw_delta);
            sum.time_running = sum.time_running.saturating_add(reading.time_running);
            sum.time_on_pmu = sum.time_on_pmu.saturating_add(reading.time_on_pmu);
            sum.pmus += 1;
        }
        Some(sum)
    }

    /// Every counted event of this sample, in the profiler's order.
    pub fn events(&self) -> impl Iterator<Item = EventReading> + '_ {
        (0..self.events).filter_map(|event| self.event(event))
    }

    /// Event `event` on each PMU (core type) that counted it in this sample.
    pub fn event_parts(&self, event: usize) -> impl Iterator<Item = &PmuReading> + '_ {
        let sequence = self.sequence;
        self.parts
            .iter()
            .filter(move |(seen, r)| sequence > 0 && *seen == sequence && r.event == event)
            .map(|(_, r)| r)
    }

    /// The delta of `counter`, or `None` when it is not enabled or not available.
    pub fn get(&self, counter: CpuCounter) -> Option<u64> {
        self.reading(counter).map(|r| r.delta)
    }

    /// The running total of `counter` since `run()`.
    pub fn total(&self, counter: CpuCounter) -> Option<u64> {
        self.reading(counter).map(|r| r.total)
    }

    /// Everything known about `counter` in this sample.
    pub fn reading(&self, counter: CpuCounter) -> Option<&CpuReading> {
        if self.reported[counter.index()] {
            self.readings[counter.index()].as_ref()
        } else {
            None
        }
    }

    /// The readings of the enabled counters, in the order they were enabled.
    pub fn iter(&self) -> impl Iterator<Item = &CpuReading> + '_ {
        self.order
            .iter()
            .filter_map(|c| self.readings[c.index()].as_ref())
    }

    /// Whether any value of this sample was scaled because the kernel multiplexed counters.
    pub fn is_multiplexed(&self) -> bool {
        self.multiplexed
    }

    /// 1 for the first sample after `run()`, then counting up.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(counter: CpuCounter, delta: u64, enabled: u64, running: u64) -> CpuReading {
        CpuReading {
            counter,
            delta,
            total: delta,
            raw_delta: delta,
            time_enabled: enabled,
            time_running: running,
            path: ReadPath::Syscall(crate::cpu::SyscallReason::NotRequested),
        }
    }

    #[test]
    fn only_enabled_counters_are_reported() {
        let mut s = CpuSample::new(vec![CpuCounter::TaskClock]);
        s.begin();
        s.record(reading(CpuCounter::TaskClock, 5, 10, 10));
        s.record(reading(CpuCounter::PageFaults, 7, 10, 10));
        assert_eq!(s.get(CpuCounter::TaskClock), Some(5));
        assert_eq!(s.get(CpuCounter::PageFaults), None);
        assert_eq!(s.iter().count(), 1);
        assert!(!s.is_multiplexed());
        assert_eq!(s.sequence(), 1);
    }

    #[test]
    fn multiplexing_is_flagged() {
        let mut s = CpuSample::new(vec![CpuCounter::Cycles]);
        s.begin();
        s.record(reading(CpuCounter::Cycles, 5, 10, 4));
        assert!(s.is_multiplexed());
        assert!(s.reading(CpuCounter::Cycles).unwrap().was_counted());
        assert!(!reading(CpuCounter::Cycles, 0, 10, 0).was_counted());
    }
}
