//! Axis scales: round tick steps (1, 2 or 5 × 10ⁿ) and tick labels with SI prefixes.

/// An axis: the interval it shows and the step between its ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Axis {
    /// The value at the start of the axis.
    pub lo: f64,
    /// The value at the end of the axis.
    pub hi: f64,
    /// The distance between ticks.
    pub step: f64,
}

/// About how many ticks an axis gets.
const TICKS: f64 = 5.0;

impl Axis {
    /// An axis from zero (or below, for negative values) that covers every value in `lo..=hi` and ends on
    /// ticks: the value axis of a counter, whose zero stays visible so that sizes compare honestly.
    pub fn from_zero(lo: f64, hi: f64) -> Axis {
        let (lo, hi) = (lo.min(0.0), hi.max(0.0));
        let step = round_step(lo, hi);
        Axis {
            lo: (lo / step).floor() * step,
            hi: (hi / step).ceil() * step,
            step,
        }
    }

    /// An axis showing exactly `lo..=hi`, with ticks at the round values inside: the time axis.
    pub fn exact(lo: f64, hi: f64) -> Axis {
        // An empty interval gets a width that still shows at its magnitude.
        let hi = if hi > lo {
            hi
        } else {
            lo + lo.abs().mul_add(1e-9, 1.0)
        };
        Axis {
            lo,
            hi,
            step: round_step(lo, hi),
        }
    }

    /// The tick values, in order, including the ends where they fall on a tick.
    pub fn ticks(&self) -> Vec<f64> {
        let first = (self.lo / self.step).ceil() as i64;
        let last = (self.hi / self.step + 1e-9).floor() as i64;
        // Steps come from `round_step`, which makes about `TICKS` of them; anything else gets the ends.
        if last.saturating_sub(first) > 4 * TICKS as i64 {
            return vec![self.lo, self.hi];
        }
        (first..=last).map(|k| k as f64 * self.step).collect()
    }

    /// Where `value` falls along the axis: 0 at `lo`, 1 at `hi`.
    pub fn fraction(&self, value: f64) -> f64 {
        // Halved, so that an axis spanning most of the f64 range does not overflow to infinity.
        (value / 2.0 - self.lo / 2.0) / (self.hi / 2.0 - self.lo / 2.0)
    }

    /// The labels of `ticks()`, sharing one SI prefix and enough decimals to tell neighbours apart.
    pub fn labels(&self) -> Vec<String> {
        let (divisor, prefix) = si_prefix(self.lo.abs().max(self.hi.abs()));
        let decimals = (-(self.step / divisor).log10()).ceil().clamp(0.0, 9.0) as usize;
        self.ticks()
            .into_iter()
            .map(|value| {
                // Ticks that should be zero can come out as -0.0 or 1e-17; print them as 0.
                if value.abs() < self.step * 1e-6 {
                    "0".to_owned()
                } else {
                    format!("{:.*}{prefix}", decimals, value / divisor)
                }
            })
            .collect()
    }
}

/// SI prefixes, largest first.
const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];

/// The SI prefix (and its factor) for numbers up to `magnitude`: none below 10 000 (`1015`, not
/// `1.015k`), else the largest that keeps them at 1 or more (`12.35k`, `4.096M`, `3G`).
fn si_prefix(magnitude: f64) -> (f64, &'static str) {
    if magnitude < 1e4 {
        return (1.0, "");
    }
    PREFIXES
        .iter()
        .copied()
        .find(|&(divisor, _)| magnitude >= divisor)
        .unwrap_or((1.0, ""))
}

/// The round step (1, 2 or 5 × 10ⁿ) that cuts `lo..hi` into about `TICKS` parts.
fn round_step(lo: f64, hi: f64) -> f64 {
    // Each end divided first, so that a range wider than f64::MAX still gives a finite step.
    let rough = hi / TICKS - lo / TICKS;
    if !(rough.is_finite() && rough > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * power);
    // Below about 1e-300 a step no longer separates values; such an axis gets one tick a unit.
    if step > 0.0 && step.is_finite() {
        step
    } else {
        1.0
    }
}

/// A duration for people, in the largest unit it is at least one of (`1.499 s`, `1 ms`, `250 ns`).
pub fn duration_text(ns: f64) -> String {
    let (unit, unit_ns) = [("s", 1e9), ("ms", 1e6), ("µs", 1e3)]
        .into_iter()
        .find(|&(_, unit_ns)| ns.abs() >= unit_ns)
        .unwrap_or(("ns", 1.0));
    format!("{} {unit}", short_number(ns / unit_ns))
}

/// A unit of time for an axis spanning `span_ns`: its name and its length in nanoseconds.
pub fn time_unit(span_ns: f64) -> (&'static str, f64) {
    if span_ns >= 2e9 {
        ("s", 1e9)
    } else if span_ns >= 2e6 {
        ("ms", 1e6)
    } else {
        ("µs", 1e3)
    }
}

/// A number for people: up to four significant digits, with an SI prefix from 10 000 up (`1015`,
/// `12.35k`, `4.096M`).
pub fn short_number(value: f64) -> String {
    let (divisor, prefix) = si_prefix(value.abs());
    let scaled = value / divisor;
    let digits = scaled.abs().max(1.0).log10().floor() as i32 + 1;
    let decimals = (4 - digits).clamp(0, 3) as usize;
    let text = format!("{scaled:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text}{prefix}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn value_axes_start_at_zero_and_end_on_a_tick() {
        let axis = Axis::from_zero(1000.0, 1015.0);
        assert_eq!(
            axis,
            Axis {
                lo: 0.0,
                hi: 1500.0,
                step: 500.0
            }
        );
        assert_eq!(axis.labels(), ["0", "500", "1000", "1500"]);
        let big = Axis::from_zero(4096.0, 81920.0);
        assert_eq!(big.labels(), ["0", "20k", "40k", "60k", "80k", "100k"]);
        let small = Axis::from_zero(0.0, 0.042);
        assert_eq!(
            small.labels(),
            ["0", "0.01", "0.02", "0.03", "0.04", "0.05"]
        );
        let negative = Axis::from_zero(-3.0, 7.0);
        assert_eq!(negative.labels(), ["-4", "-2", "0", "2", "4", "6", "8"]);
    }

    #[test]
    fn flat_and_empty_ranges_still_make_an_axis() {
        assert_eq!(Axis::from_zero(0.0, 0.0).labels(), ["0"]);
        let exact = Axis::exact(5.0, 5.0);
        assert!(
            exact.lo == 5.0 && (exact.hi - 6.0).abs() < 1e-6,
            "{exact:?}"
        );
        let far = Axis::exact(1.8e16, 1.8e16);
        assert!(far.hi > far.lo, "a width that shows at {far:?}");
        assert!(!exact.ticks().is_empty());
    }

    #[test]
    fn time_axes_keep_their_ends_and_pick_a_unit() {
        let axis = Axis::exact(-0.004, 1.985);
        assert_eq!(axis.ticks().first().copied(), Some(0.0));
        assert_eq!(axis.labels().last().map(String::as_str), Some("1.5"));
        assert_eq!(time_unit(3e9), ("s", 1e9));
        assert_eq!(time_unit(500e6), ("ms", 1e6));
        assert_eq!(time_unit(15e3), ("µs", 1e3));
    }

    #[test]
    fn short_numbers_read_well() {
        assert_eq!(short_number(400.0), "400");
        assert_eq!(short_number(1015.0), "1015");
        assert_eq!(short_number(3.007e9), "3.007G");
        assert_eq!(short_number(12346.0), "12.35k");
        assert_eq!(short_number(4_096_000.0), "4.096M");
        assert_eq!(short_number(0.0421), "0.042");
        assert_eq!(short_number(-2.5), "-2.5");
    }

    #[test]
    fn durations_take_the_largest_whole_unit() {
        assert_eq!(duration_text(1.499e9), "1.499 s");
        assert_eq!(duration_text(1e6), "1 ms");
        assert_eq!(duration_text(2500.0), "2.5 µs");
        assert_eq!(duration_text(250.0), "250 ns");
    }

    #[test]
    fn large_axes_use_the_largest_prefix() {
        assert_eq!(
            Axis::from_zero(3e9, 3.015e9).labels(),
            ["0", "1G", "2G", "3G", "4G"]
        );
    }

    proptest! {
        #[test]
        fn every_value_lies_on_its_axis_with_a_handful_of_ticks(
            a in -1e12f64..1e12, b in -1e12f64..1e12
        ) {
            let (lo, hi) = (a.min(b), a.max(b));
            let axis = Axis::from_zero(lo, hi);
            prop_assert!(axis.lo <= lo && hi <= axis.hi);
            let ticks = axis.ticks().len();
            prop_assert!((1..=12).contains(&ticks), "{axis:?} has {ticks} ticks");
            prop_assert_eq!(axis.labels().len(), ticks);
        }
    }
}
