//! When a capture's next sample is due: a fixed period from a start, stamped with the time it was due, never
//! bursting to catch up after a stall.

use std::time::{Duration, Instant};

/// How far behind a schedule may fall before it skips ahead instead of sending every missed sample: this
/// many periods.
const MAX_BEHIND_PERIODS: u32 = 100;

/// A sample every `period` from `next_due` on, numbered from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Schedule {
    /// How many samples were taken.
    pub(super) sample: u64,
    /// When the next one is due.
    pub(super) next_due: Instant,
    /// The time between two samples.
    pub(super) period: Duration,
}

impl Schedule {
    /// Sample 0 due at `first`.
    pub(super) fn starting(first: Instant, period: Duration) -> Schedule {
        Schedule {
            sample: 0,
            next_due: first,
            period,
        }
    }

    /// The next sample due at `now`, if one is: the time it was due and its number. Several may be due
    /// at once (a late wake-up); a schedule far behind (a stalled machine) restarts from `now`.
    pub(super) fn take_due(&mut self, now: Instant) -> Option<(Instant, u64)> {
        if now < self.next_due {
            return None;
        }
        let behind = self.period.saturating_mul(MAX_BEHIND_PERIODS);
        if self
            .next_due
            .checked_add(behind)
            .is_some_and(|limit| limit < now)
        {
            self.next_due = now;
        }
        let due = self.next_due;
        // A period too long to add is a schedule with no further sample.
        self.next_due = due
            .checked_add(self.period)
            .unwrap_or(now + Duration::from_secs(1 << 30));
        let sample = self.sample;
        self.sample += 1;
        Some((due, sample))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_due_one_period_apart_and_stamped_when_due() {
        let start = Instant::now();
        let period = Duration::from_millis(10);
        let mut schedule = Schedule::starting(start, period);
        assert_eq!(schedule.take_due(start), Some((start, 0)));
        assert_eq!(schedule.take_due(start + Duration::from_millis(5)), None);
        // A late look finds every sample due since, each stamped with its own time.
        let late = start + Duration::from_millis(31);
        assert_eq!(schedule.take_due(late), Some((start + period, 1)));
        assert_eq!(schedule.take_due(late), Some((start + period * 2, 2)));
        assert_eq!(schedule.take_due(late), Some((start + period * 3, 3)));
        assert_eq!(schedule.take_due(late), None);
    }

    #[test]
    fn a_period_too_long_to_add_ends_the_schedule_without_overflow() {
        let start = Instant::now();
        let mut schedule = Schedule::starting(start, Duration::MAX);
        assert_eq!(schedule.take_due(start), Some((start, 0)));
        assert_eq!(schedule.take_due(start + Duration::from_secs(3600)), None);
    }

    #[test]
    fn a_schedule_far_behind_skips_ahead_instead_of_bursting() {
        let start = Instant::now();
        let period = Duration::from_millis(1);
        let mut schedule = Schedule::starting(start, period);
        let stalled = start + Duration::from_secs(1);
        assert_eq!(schedule.take_due(stalled), Some((stalled, 0)));
        assert_eq!(schedule.take_due(stalled), None);
        assert_eq!(schedule.next_due, stalled + period);
    }
}
