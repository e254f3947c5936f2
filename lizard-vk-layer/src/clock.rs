//! The host's clocks: `CLOCK_MONOTONIC`, which workload times are put on, and `CLOCK_BOOTTIME`, the
//! Perfetto trace's clock; and the trace's time zero, where both were read together.

use rustix::time::{clock_gettime, ClockId};

/// Nanoseconds of `clock`.
fn read(clock: ClockId) -> u64 {
    let t = clock_gettime(clock);
    u64::try_from(t.tv_sec)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(t.tv_nsec).unwrap_or(0))
}

/// `CLOCK_MONOTONIC`, in nanoseconds.
pub(crate) fn monotonic_ns() -> u64 {
    read(ClockId::Monotonic)
}

/// The trace's time zero: `CLOCK_MONOTONIC` and `CLOCK_BOOTTIME` read at the same instant (the boot time
/// read on each side of the monotonic one, and their mean taken). The two clocks differ by the time the
/// machine spent suspended, which does not change while the application runs unless it suspends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Zero {
    /// `CLOCK_MONOTONIC` at zero.
    pub monotonic_ns: u64,
    /// `CLOCK_BOOTTIME` at zero.
    pub boottime_ns: u64,
}

impl Zero {
    /// Now.
    pub(crate) fn now() -> Zero {
        let before = read(ClockId::Boottime);
        let monotonic_ns = read(ClockId::Monotonic);
        let after = read(ClockId::Boottime);
        Zero {
            monotonic_ns,
            boottime_ns: before + (after - before) / 2,
        }
    }

    /// `monotonic_ns` as nanoseconds after zero (0 for a time before it).
    pub(crate) fn since(&self, monotonic_ns: u64) -> u64 {
        monotonic_ns.saturating_sub(self.monotonic_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_reads_both_clocks_together() {
        let zero = Zero::now();
        // (Boot time runs ahead of monotonic time by the time suspended; in a time namespace either may
        // lead, so only their reading together is checked.)
        assert!(zero.boottime_ns > 0 && zero.monotonic_ns > 0);
        let later = monotonic_ns();
        assert!(zero.since(later) < 1_000_000_000);
        assert_eq!(zero.since(0), 0);
    }
}
