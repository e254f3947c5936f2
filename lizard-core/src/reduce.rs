//! Reductions: how the samples of one capture become one reading. This is the only place a value is reduced.
//!
//! The rules, identical for [`read_int`] and [`read_double`] except for the final type:
//!
//! 1. **Delta** counters (gatord `class="delta"` or no class, and every HWCPipe counter, whose samples are
//!    counts since the previous sample) reduce to the **sum** of their samples.
//! 2. **Absolute** counters (gatord `class="absolute"`: levels such as free memory) reduce to the **mean**.
//!    [`read_int`] truncates the mean toward zero; [`read_double`] keeps the fraction.
//! 3. The reduced value is multiplied by the counter's `multiplier` and, for MHz counters, by 1 000 000 (so
//!    readings are in Hz). Both reads apply exactly the same scale.
//! 4. No samples read as 0.
//!
//! Integer samples are summed exactly (in 128 bits), so an integer counter with a scale of 1 reads back the
//! exact sum or mean. Integers are converted to doubles numerically, never reinterpreted. Results outside the
//! `i64` range saturate.

use crate::counter::{Counter, CounterClass};
use crate::store::{Sample, Value};

/// The exact aggregate of a set of samples before scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    /// Every sample was an integer: the exact sum or truncated mean.
    Int(i128),
    /// At least one sample was fractional.
    Float(f64),
}

/// Sum (delta) or mean (absolute) of the samples, without scaling. `None` when there are no samples.
fn aggregate(class: CounterClass, samples: &[Sample], truncate_mean: bool) -> Option<Aggregate> {
    if samples.is_empty() {
        return None;
    }
    let count = samples.len();
    let all_int = samples.iter().all(|s| matches!(s.value, Value::Int(_)));
    if all_int {
        let sum: i128 = samples
            .iter()
            .map(|s| match s.value {
                Value::Int(v) => i128::from(v),
                Value::Float(_) => 0,
            })
            .sum();
        return Some(match class {
            CounterClass::Delta => Aggregate::Int(sum),
            CounterClass::Absolute if truncate_mean => Aggregate::Int(sum / count as i128),
            CounterClass::Absolute => Aggregate::Float(sum as f64 / count as f64),
        });
    }
    let sum: f64 = samples.iter().map(|s| s.value.as_f64()).sum();
    Some(Aggregate::Float(match class {
        CounterClass::Delta => sum,
        CounterClass::Absolute => sum / count as f64,
    }))
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// The integer reading of `counter` over `samples` (see the module documentation for the rules).
///
/// Fractional results are truncated toward zero; out-of-range results saturate; NaN reads as 0.
pub fn read_int(counter: &Counter, samples: &[Sample]) -> i64 {
    let scale = counter.scale();
    match aggregate(counter.class, samples, true) {
        None => 0,
        Some(Aggregate::Int(v)) if scale == 1.0 => saturate(v),
        Some(Aggregate::Int(v)) => (v as f64 * scale) as i64,
        Some(Aggregate::Float(v)) => (v * scale) as i64,
    }
}

/// The floating-point reading of `counter` over `samples` (see the module documentation for the rules).
pub fn read_double(counter: &Counter, samples: &[Sample]) -> f64 {
    let scale = counter.scale();
    match aggregate(counter.class, samples, false) {
        None => 0.0,
        Some(Aggregate::Int(v)) => v as f64 * scale,
        Some(Aggregate::Float(v)) => v * scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::{ResultType, Source, Units};
    use proptest::prelude::*;

    fn counter(class: CounterClass, multiplier: f64, units: Units) -> Counter {
        Counter {
            id: 1,
            key: "k".into(),
            name: "n".into(),
            title: "t".into(),
            description: "d".into(),
            category: "c".into(),
            multiplier,
            units,
            class,
            source: Source::Gatord,
            result_type: ResultType::Integer,
        }
    }

    fn ints(values: &[i64]) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(t, &v)| Sample {
                timestamp_ns: t as u64,
                value: Value::Int(v),
            })
            .collect()
    }

    fn floats(values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(t, &v)| Sample {
                timestamp_ns: t as u64,
                value: Value::Float(v),
            })
            .collect()
    }

    #[test]
    fn delta_sums_absolute_means() {
        let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let a = counter(CounterClass::Absolute, 1.0, Units::Unknown);
        let s = ints(&[1, 2, 4]);
        assert_eq!(read_int(&d, &s), 7);
        assert_eq!(read_double(&d, &s), 7.0);
        assert_eq!(read_int(&a, &s), 2);
        assert!((read_double(&a, &s) - 7.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            read_int(&a, &ints(&[-1, -2, -4])),
            -2,
            "truncates toward zero"
        );
    }

    #[test]
    fn empty_reads_zero() {
        let d = counter(CounterClass::Delta, 3.0, Units::MegaHertz);
        assert_eq!(read_int(&d, &[]), 0);
        assert_eq!(read_double(&d, &[]), 0.0);
    }

    #[test]
    fn multiplier_and_mhz_apply_to_both_reads() {
        let c = counter(CounterClass::Absolute, 0.5, Units::MegaHertz);
        let s = ints(&[800, 1000]);
        assert_eq!(read_int(&c, &s), 450_000_000);
        assert_eq!(read_double(&c, &s), 450_000_000.0);
    }

    #[test]
    fn large_integers_are_exact_not_reinterpreted() {
        let c = counter(CounterClass::Absolute, 1.0, Units::Bytes);
        let s = ints(&[24_318_210_048]);
        assert_eq!(read_int(&c, &s), 24_318_210_048);
        assert_eq!(read_double(&c, &s), 24_318_210_048.0);
    }

    #[test]
    fn sums_beyond_i64_saturate() {
        let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
        assert_eq!(read_int(&c, &ints(&[i64::MAX, i64::MAX])), i64::MAX);
        assert_eq!(read_int(&c, &ints(&[i64::MIN, -1])), i64::MIN);
        let f = floats(&[f64::NAN]);
        assert_eq!(read_int(&c, &f), 0);
    }

    #[test]
    fn fractional_samples_keep_fractions_in_double() {
        let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let s = floats(&[0.25, 0.5]);
        assert_eq!(read_double(&c, &s), 0.75);
        assert_eq!(read_int(&c, &s), 0);
    }

    proptest! {
        #[test]
        fn delta_int_read_is_exact_sum(values in proptest::collection::vec(-1_000_000_000i64..1_000_000_000, 0..100)) {
            let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
            let s = ints(&values);
            prop_assert_eq!(read_int(&c, &s), values.iter().sum::<i64>());
        }

        #[test]
        fn absolute_mean_lies_between_min_and_max(values in proptest::collection::vec(any::<i64>(), 1..100)) {
            let c = counter(CounterClass::Absolute, 1.0, Units::Unknown);
            let s = ints(&values);
            let mean = read_int(&c, &s);
            prop_assert!(mean >= *values.iter().min().unwrap());
            prop_assert!(mean <= *values.iter().max().unwrap());
            let mean_f = read_double(&c, &s);
            prop_assert!(mean_f >= *values.iter().min().unwrap() as f64);
            prop_assert!(mean_f <= *values.iter().max().unwrap() as f64);
        }

        #[test]
        fn int_and_double_reads_agree(values in proptest::collection::vec(-1_000_000i64..1_000_000, 0..50),
                                      multiplier in 0.001f64..1000.0,
                                      absolute in any::<bool>(), mhz in any::<bool>()) {
            let class = if absolute { CounterClass::Absolute } else { CounterClass::Delta };
            let units = if mhz { Units::MegaHertz } else { Units::Unknown };
            let c = counter(class, multiplier, units);
            let s = ints(&values);
            let i = read_int(&c, &s) as f64;
            let d = read_double(&c, &s);
            // The int read truncates the mean before scaling and the product after it.
            let tolerance = c.scale() + 1.0 + d.abs() * 1e-12;
            prop_assert!((i - d).abs() <= tolerance, "int {} double {}", i, d);
        }

        #[test]
        fn scale_is_linear(values in proptest::collection::vec(-1e9f64..1e9, 1..50), multiplier in 0.001f64..1000.0) {
            let one = counter(CounterClass::Delta, 1.0, Units::Unknown);
            let scaled = counter(CounterClass::Delta, multiplier, Units::Unknown);
            let s = floats(&values);
            let a = read_double(&one, &s) * multiplier;
            let b = read_double(&scaled, &s);
            prop_assert!((a - b).abs() <= a.abs() * 1e-12 + 1e-6);
        }
    }
}
