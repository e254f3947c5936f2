//! Reduction of raw counts to per-interval deltas, scaled when the kernel multiplexed the group.

/// One interval of one counter: the raw change and the group's enabled and running time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Change of the raw count over the interval.
    pub raw: u64,
    /// Nanoseconds the group was enabled during the interval.
    pub enabled: u64,
    /// Nanoseconds the group was on the PMU during the interval.
    pub running: u64,
}

impl Interval {
    /// Whether the group shared the PMU with others (ran for less time than it was enabled).
    pub fn is_multiplexed(&self) -> bool {
        self.running < self.enabled
    }

    /// The count estimated for the whole enabled time: `raw × enabled / running`, rounded to the
    /// nearest integer and saturated at `u64::MAX`. Equal to `raw` when the group was never
    /// switched out, and 0 when it never ran (nothing was observed).
    pub fn scaled(&self) -> u64 {
        if !self.is_multiplexed() {
            return self.raw;
        }
        if self.running == 0 {
            return 0;
        }
        let num = u128::from(self.raw) * u128::from(self.enabled);
        let den = u128::from(self.running);
        let rounded = (num + den / 2) / den;
        u64::try_from(rounded).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn half_the_time_on_the_pmu_doubles_the_count() {
        let i = Interval {
            raw: 1000,
            enabled: 200,
            running: 100,
        };
        assert!(i.is_multiplexed());
        assert_eq!(i.scaled(), 2000);
    }

    #[test]
    fn never_scheduled_gives_zero_not_a_division_by_zero() {
        assert_eq!(
            Interval {
                raw: 5,
                enabled: 10,
                running: 0
            }
            .scaled(),
            0
        );
    }

    #[test]
    fn huge_values_saturate() {
        let i = Interval {
            raw: u64::MAX,
            enabled: u64::MAX,
            running: 1,
        };
        assert_eq!(i.scaled(), u64::MAX);
    }

    proptest! {
        #[test]
        fn scaled_is_raw_times_ratio(raw in 0u64..1 << 40, running in 1u64..1 << 30, extra in 0u64..1 << 30) {
            let enabled = running + extra;
            let i = Interval { raw, enabled, running };
            let exact = raw as f64 * enabled as f64 / running as f64;
            prop_assert!((i.scaled() as f64 - exact).abs() <= 0.5 + exact * 1e-12);
            prop_assert!(i.scaled() >= raw);
        }

        #[test]
        fn not_multiplexed_is_unchanged(raw in any::<u64>(), t in any::<u64>()) {
            prop_assert_eq!(Interval { raw, enabled: t, running: t }.scaled(), raw);
        }
    }
}
