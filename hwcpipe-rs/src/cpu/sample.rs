//! [`CpuSample`]: the values of one `sample()` of the CPU profiler.

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
}

impl CpuSample {
    pub(crate) fn new(order: Vec<CpuCounter>) -> Self {
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

    #[inline]
    pub(crate) fn record(&mut self, reading: CpuReading) {
        self.multiplexed |= reading.is_multiplexed();
        self.readings[reading.counter.index()] = Some(reading);
    }

    pub(crate) fn reset(&mut self) {
        self.readings = [None; CpuCounter::COUNT];
        self.multiplexed = false;
        self.sequence = 0;
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
