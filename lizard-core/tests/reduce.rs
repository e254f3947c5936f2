//! The reductions (`lizard_core::reduce`): deltas summed and apportioned over a window, absolutes
//! averaged, derived counters evaluated over a window's totals, scales applied once, no value never 0.

use lizard_core::reduce::*;
use lizard_core::{
    Counter, CounterClass, CounterId, Derivation, DerivedInput, NoValue, Sample, Source, Units,
    Value, Window,
};
use proptest::prelude::*;

/// A derivation of `text`, whose names `a`, `b`, … are counters 1, 2, … and `TIME`/`CORES` the time
/// span and a constant 4.
fn derivation(text: &str) -> Derivation {
    let mut names: Vec<String> = Vec::new();
    let equation = hwcpipe::gpu::equation::parse(text, |name| {
        let at = names.iter().position(|n| n == name).unwrap_or_else(|| {
            names.push(name.to_owned());
            names.len() - 1
        });
        Ok::<usize, ()>(at)
    })
    .unwrap()
    .unwrap();
    let inputs = names
        .iter()
        .map(|name| match name.as_str() {
            "TIME" => DerivedInput::TimeSpan,
            "CORES" => DerivedInput::Constant(4.0),
            other => DerivedInput::Counter(u32::from(other.as_bytes()[0] - b'a') + 1),
        })
        .collect();
    Derivation {
        equation,
        inputs,
        names,
    }
}

/// Samples at the given (ns, value) points.
fn float_at(points: &[(u64, f64)]) -> Vec<Sample> {
    points
        .iter()
        .map(|&(timestamp_ns, v)| Sample {
            timestamp_ns,
            value: Value::Float(v),
            core: None,
        })
        .collect()
}

#[test]
fn a_rate_is_the_windows_total_over_its_length_not_the_mean_of_sample_rates() {
    // Two samples of different lengths: 100 bytes in the first millisecond, 300 in the next two.
    let bytes = float_at(&[(1_000_000, 100.0), (3_000_000, 300.0)]);
    let rate = derivation("a / TIME");
    let window = Window {
        start_ns: 0,
        end_ns: 3_000_000,
    };
    let value = derived(&rate, window, &|_| {
        Some(DerivedSource::Samples(bytes.clone()))
    })
    .unwrap();
    // 400 bytes over 3 ms; the mean of the samples' own rates would be (100/1 ms + 300/2 ms) / 2 = 125000/s.
    assert!((value - 400.0 / 0.003).abs() < 1e-6, "{value}");
    assert!((value - 125_000.0).abs() > 1000.0);
}

#[test]
fn ratios_constants_and_nested_equations_use_the_windows_totals() {
    let a = float_at(&[(10, 6.0), (20, 2.0), (30, 2.0)]);
    let b = float_at(&[(10, 1.0), (20, 3.0), (30, 16.0)]);
    let window = Window {
        start_ns: 0,
        end_ns: 30,
    };
    let source = |id: CounterId| {
        Some(DerivedSource::Samples(match id {
            1 => a.clone(),
            _ => b.clone(),
        }))
    };
    // The ratio of the totals (10 / 20), not the sum (6 + 0.67 + 0.125) or mean of the samples' ratios.
    assert_eq!(derived(&derivation("a / b"), window, &source), Ok(0.5));
    // A constant is the constant, however many samples.
    assert_eq!(derived(&derivation("CORES"), window, &source), Ok(4.0));
    // A derived input is its own equation over the same window.
    let inner = derivation("a + b");
    let nested = Derivation {
        inputs: vec![DerivedInput::Counter(9), DerivedInput::Constant(2.0)],
        ..derivation("x * y")
    };
    let value = derived(&nested, window, &|id| match id {
        9 => Some(DerivedSource::Derivation(&inner)),
        other => source(other),
    });
    assert_eq!(value, Ok(60.0));
}

#[test]
fn nothing_is_clamped_and_a_zero_divisor_is_named() {
    let a = float_at(&[(10, 5.0)]);
    let b = float_at(&[(10, 7.0)]);
    let window = Window {
        start_ns: 0,
        end_ns: 10,
    };
    let source = |id: CounterId| {
        Some(DerivedSource::Samples(if id == 1 {
            a.clone()
        } else {
            b.clone()
        }))
    };
    assert_eq!(derived(&derivation("a - b"), window, &source), Ok(-2.0));
    assert_eq!(
        derived(&derivation("a / (b - b)"), window, &source),
        Err(NoValue::DivisorZero {
            divisor: "b - b".to_owned()
        })
    );
    assert_eq!(
        derived(&derivation("a / b"), window, &|id| (id == 1)
            .then(|| DerivedSource::Samples(a.clone()))),
        Err(NoValue::InputMissing {
            input: "b".to_owned(),
            reason: Box::new(NoValue::NotCaptured)
        })
    );
    assert_eq!(
        derived(&derivation("a / b"), window, &|_| Some(
            DerivedSource::Samples(Vec::new())
        )),
        Err(NoValue::InputMissing {
            input: "a".to_owned(),
            reason: Box::new(NoValue::NoSamples)
        })
    );
}

#[test]
fn equations_nested_past_the_limit_end() {
    let looped = Derivation {
        inputs: vec![DerivedInput::Counter(1)],
        ..derivation("a")
    };
    let window = Window {
        start_ns: 0,
        end_ns: 10,
    };
    let err = derived(&looped, window, &|_| {
        Some(DerivedSource::Derivation(&looped))
    })
    .unwrap_err();
    let mut reason = &err;
    let mut depth = 0;
    while let NoValue::InputMissing { reason: inner, .. } = reason {
        reason = inner;
        depth += 1;
    }
    assert_eq!(*reason, NoValue::TooDeep);
    assert_eq!(depth, MAX_DERIVED_DEPTH + 1);
}

#[test]
fn only_the_local_gpus_impossible_values_are_implausible() {
    let mut gpu = counter(CounterClass::Derived, 1.0, Units::Other("%".into()));
    gpu.source = Source::HwcPipeGpu;
    assert_eq!(implausible(&gpu, -588.0), Some(Implausible::Negative));
    assert_eq!(
        implausible(&gpu, 100.5),
        Some(Implausible::OverHundredPercent)
    );
    assert_eq!(implausible(&gpu, 100.0), None);
    assert_eq!(implausible(&gpu, f64::NAN), None);
    gpu.units = Units::Other("cycles".into());
    assert_eq!(implausible(&gpu, 1e12), None);
    let temperature = counter(CounterClass::Absolute, 1.0, Units::Celsius);
    assert_eq!(implausible(&temperature, -5.0), None);
    assert!(Implausible::Negative.to_string().contains("erratum"));
}

fn counter(class: CounterClass, multiplier: f64, units: Units) -> Counter {
    Counter {
        name: "n".into(),
        title: "t".into(),
        description: "d".into(),
        category: "c".into(),
        multiplier,
        units,
        class,
        ..Counter::gatord_delta(1, "k")
    }
}

fn ints(values: &[i64]) -> Vec<Sample> {
    values
        .iter()
        .enumerate()
        .map(|(t, &v)| Sample {
            timestamp_ns: t as u64,
            value: Value::Int(v),
            core: None,
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
            core: None,
        })
        .collect()
}

#[test]
fn samples_of_several_cores_are_apportioned_core_by_core() {
    let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
    let at = |t: u64, core: u32, v: i64| Sample {
        timestamp_ns: t,
        value: Value::Int(v),
        core: Some(core),
    };
    // Two cores sampled together every 1000 ns, 100 events each per interval.
    let s = [
        at(0, 0, 100),
        at(0, 1, 100),
        at(1000, 0, 100),
        at(1000, 1, 100),
    ];
    let window = Window {
        start_ns: 250,
        end_ns: 750,
    };
    // Half of the interval (0, 1000] of both cores: 2 × 100 × 0.5.
    assert_eq!(read_double_in(&d, &s, window), Some(100.0));
    // Cores sampled at their own instants, as a real daemon's per-CPU timers do: core 1 half a
    // period after core 0. Each sample spreads over the time since its own core's previous one.
    let s = [
        at(500, 1, 100),
        at(1000, 0, 100),
        at(1500, 1, 100),
        at(2000, 0, 100),
        at(2500, 1, 100),
    ];
    let window = Window {
        start_ns: 1250,
        end_ns: 1750,
    };
    // Core 0: (1000, 2000] overlaps by 500 → 50; core 1: (500, 1500] and (1500, 2500] by 250 each →
    // 25 + 25.
    assert_eq!(read_double_in(&d, &s, window), Some(100.0));
}

#[test]
fn delta_sums_absolute_means() {
    let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
    let a = counter(CounterClass::Absolute, 1.0, Units::Unknown);
    let s = ints(&[1, 2, 4]);
    assert_eq!(read_int(&d, &s), Some(7));
    assert_eq!(read_double(&d, &s), Some(7.0));
    assert_eq!(read_int(&a, &s), Some(2));
    assert!((read_double(&a, &s).unwrap() - 7.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        read_int(&a, &ints(&[-1, -2, -4])),
        Some(-2),
        "truncates toward zero"
    );
}

#[test]
fn no_samples_is_no_value_not_zero() {
    let d = counter(CounterClass::Delta, 3.0, Units::Megahertz);
    assert_eq!(read_int(&d, &[]), None);
    assert_eq!(read_double(&d, &[]), None);
    let w = Window {
        start_ns: 0,
        end_ns: 10,
    };
    assert_eq!(read_int_in(&d, &[], w), None);
    let a = counter(CounterClass::Absolute, 1.0, Units::Bytes);
    assert_eq!(read_double_in(&a, &[], w), None);
}

#[test]
fn multiplier_and_mhz_apply_to_both_reads() {
    let c = counter(CounterClass::Absolute, 0.5, Units::Megahertz);
    let s = ints(&[800, 1000]);
    assert_eq!(read_int(&c, &s), Some(450_000_000));
    assert_eq!(read_double(&c, &s), Some(450_000_000.0));
}

#[test]
fn large_integers_are_exact_not_reinterpreted() {
    let c = counter(CounterClass::Absolute, 1.0, Units::Bytes);
    let s = ints(&[24_318_210_048]);
    assert_eq!(read_int(&c, &s), Some(24_318_210_048));
    assert_eq!(read_double(&c, &s), Some(24_318_210_048.0));
}

#[test]
fn sums_beyond_i64_saturate() {
    let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
    assert_eq!(read_int(&c, &ints(&[i64::MAX, i64::MAX])), Some(i64::MAX));
    assert_eq!(read_int(&c, &ints(&[i64::MIN, -1])), Some(i64::MIN));
    let f = floats(&[f64::NAN]);
    assert_eq!(read_int(&c, &f), Some(0));
}

#[test]
fn fractional_samples_keep_fractions_in_double() {
    let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
    let s = floats(&[0.25, 0.5]);
    assert_eq!(read_double(&c, &s), Some(0.75));
    assert_eq!(read_int(&c, &s), Some(0));
}

fn at(points: &[(u64, i64)]) -> Vec<Sample> {
    points
        .iter()
        .map(|&(t, v)| Sample {
            timestamp_ns: t,
            value: Value::Int(v),
            core: None,
        })
        .collect()
}

fn window(start_ns: u64, end_ns: u64) -> Window {
    Window { start_ns, end_ns }
}

#[test]
fn short_window_between_samples_reads_the_gauge_in_force() {
    // gatord polls memory every 100 ms; a 5 ms window at 120..125 ms holds no sample.
    let a = counter(CounterClass::Absolute, 1.0, Units::Bytes);
    let s = at(&[(100_000_000, 4_000), (200_000_000, 6_000)]);
    let w = window(120_000_000, 125_000_000);
    assert_eq!(read_int_in(&a, &s, w), Some(4_000));
    assert_eq!(read_double_in(&a, &s, w), Some(4_000.0));
    // A sample exactly at the end counts; a window before every sample has no value.
    assert_eq!(
        read_int_in(&a, &s, window(150_000_000, 200_000_000)),
        Some(6_000)
    );
    assert_eq!(read_int_in(&a, &s, window(10, 20)), None);
    // Samples inside the window are averaged as before.
    assert_eq!(read_int_in(&a, &s, window(0, 300_000_000)), Some(5_000));
}

#[test]
fn short_window_between_samples_apportions_the_enclosing_delta() {
    // 1000 events over the 100 ms between the samples: a 5 ms window inside gets 50.
    let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
    let s = at(&[(100_000_000, 700), (200_000_000, 1_000)]);
    let w = window(120_000_000, 125_000_000);
    assert_eq!(read_double_in(&d, &s, w), Some(50.0));
    assert_eq!(read_int_in(&d, &s, w), Some(50));
    // The sample closing the window has not arrived: no value.
    assert_eq!(read_int_in(&d, &s, window(210_000_000, 220_000_000)), None);
    // Before the first sample, whose interval is unknown: no value.
    assert_eq!(read_int_in(&d, &s, window(10, 20)), None);
    // Whole samples inside count exactly; the first sample (no predecessor) counts in full.
    assert_eq!(read_int_in(&d, &s, window(0, 200_000_000)), Some(1_700));
    // Edges in proportion: 150..250 ms gets half of the second sample.
    let three = at(&[(100, 700), (200, 1_000), (300, 2_000)]);
    assert_eq!(read_double_in(&d, &three, window(150, 250)), Some(1_500.0));
}

proptest! {
    #[test]
    fn delta_int_read_is_exact_sum(values in proptest::collection::vec(-1_000_000_000i64..1_000_000_000, 0..100)) {
        let c = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let s = ints(&values);
        let expected = (!values.is_empty()).then(|| values.iter().sum::<i64>());
        prop_assert_eq!(read_int(&c, &s), expected);
    }

    #[test]
    fn absolute_mean_lies_between_min_and_max(values in proptest::collection::vec(any::<i64>(), 1..100)) {
        let c = counter(CounterClass::Absolute, 1.0, Units::Unknown);
        let s = ints(&values);
        let mean = read_int(&c, &s).unwrap();
        prop_assert!(mean >= *values.iter().min().unwrap());
        prop_assert!(mean <= *values.iter().max().unwrap());
        let mean_f = read_double(&c, &s).unwrap();
        prop_assert!(mean_f >= *values.iter().min().unwrap() as f64);
        prop_assert!(mean_f <= *values.iter().max().unwrap() as f64);
    }

    #[test]
    fn int_and_double_reads_agree(values in proptest::collection::vec(-1_000_000i64..1_000_000, 0..50),
                                  multiplier in 0.001f64..1000.0,
                                  absolute in any::<bool>(), mhz in any::<bool>()) {
        let class = if absolute { CounterClass::Absolute } else { CounterClass::Delta };
        let units = if mhz { Units::Megahertz } else { Units::Unknown };
        let c = counter(class, multiplier, units);
        let s = ints(&values);
        let (i, d) = match (read_int(&c, &s), read_double(&c, &s)) {
            (Some(i), Some(d)) => (i as f64, d),
            (None, None) => return Ok(()),
            other => return Err(TestCaseError::fail(format!("one read without value: {other:?}"))),
        };
        // The int read truncates the mean before scaling and the product after it.
        let tolerance = c.scale() + 1.0 + d.abs() * 1e-12;
        prop_assert!((i - d).abs() <= tolerance, "int {} double {}", i, d);
    }

    #[test]
    fn scale_is_linear(values in proptest::collection::vec(-1e9f64..1e9, 1..50), multiplier in 0.001f64..1000.0) {
        let one = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let scaled = counter(CounterClass::Delta, multiplier, Units::Unknown);
        let s = floats(&values);
        let a = read_double(&one, &s).unwrap() * multiplier;
        let b = read_double(&scaled, &s).unwrap();
        prop_assert!((a - b).abs() <= a.abs() * 1e-12 + 1e-6);
    }

    #[test]
    fn apportioning_matches_a_constant_rate(gaps in proptest::collection::vec(1u64..1_000_000, 2..40),
                                            rate in 1u64..1000, a in 0.0f64..1.0, b in 0.0f64..1.0) {
        // Events at a constant rate: each sample holds rate × its interval, so any window after the first
        // sample reads rate × its length.
        let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let mut t = 1_000u64;
        let mut points = vec![(t, 0i64)];
        for gap in &gaps {
            t += gap;
            points.push((t, (rate * gap) as i64));
        }
        let s = at(&points);
        let span = (t - 1_000) as f64;
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let w = window(1_000 + 1 + (lo * (span - 1.0)) as u64, 1_000 + 1 + (hi * (span - 1.0)) as u64);
        let expected = rate as f64 * (w.end_ns - w.start_ns) as f64;
        let got = read_double_in(&d, &s, w).unwrap();
        prop_assert!((got - expected).abs() <= expected * 1e-9 + 1e-6, "got {} expected {}", got, expected);
    }

    #[test]
    fn apportioning_is_additive_over_split_windows(values in proptest::collection::vec(0i64..1_000_000, 2..40),
                                                    gap in 1u64..10_000, cuts in proptest::collection::vec(any::<u64>(), 3)) {
        // Splitting a window at any point splits its reading: nothing is counted twice or lost.
        let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let points: Vec<(u64, i64)> = values.iter().enumerate().map(|(i, &v)| (i as u64 * gap, v)).collect();
        let s = at(&points);
        let last = points.last().unwrap().0;
        let mut cuts: Vec<u64> = cuts.iter().map(|c| 1 + c % last).collect();
        cuts.sort_unstable();
        let whole = read_double_in(&d, &s, window(cuts[0], cuts[2])).unwrap();
        let left = read_double_in(&d, &s, window(cuts[0], cuts[1])).unwrap();
        let right = read_double_in(&d, &s, window(cuts[1], cuts[2])).unwrap();
        prop_assert!((whole - left - right).abs() <= whole.abs() * 1e-9 + 1e-6, "{} != {} + {}", whole, left, right);
    }

    #[test]
    fn window_reading_lies_within_the_enclosing_samples(values in proptest::collection::vec(0i64..1_000_000, 2..40),
                                                        gap in 1u64..10_000, from in any::<u64>(), len in any::<u64>()) {
        let d = counter(CounterClass::Delta, 1.0, Units::Unknown);
        let points: Vec<(u64, i64)> = values.iter().enumerate().map(|(i, &v)| (i as u64 * gap, v)).collect();
        let s = at(&points);
        let last = points.last().unwrap().0;
        let start = 1 + from % last;
        let end = start + len % (last - start + 1);
        let got = read_double_in(&d, &s, window(start, end)).unwrap();
        let total: i64 = values[1..].iter().sum();
        prop_assert!(got >= 0.0 && got <= total as f64 + 1e-6);
    }
}

fn on_core(t: u64, v: i64, core: Option<u32>) -> Sample {
    Sample {
        timestamp_ns: t,
        value: Value::Int(v),
        core,
    }
}

#[test]
fn one_instant_of_several_cores_becomes_one_sample() {
    let samples = [
        on_core(10, 7, Some(0)),
        on_core(10, 100, Some(1)),
        on_core(20, 8, Some(0)),
        on_core(25, 3, None),
        on_core(30, 9, Some(1)),
    ];
    let delta = combined(&counter(CounterClass::Delta, 1.0, Units::Unknown), &samples);
    assert_eq!(
        delta,
        [
            on_core(10, 107, None),
            on_core(20, 8, None),
            on_core(25, 3, None),
            on_core(30, 9, None)
        ]
    );
    let absolute = combined(
        &counter(CounterClass::Absolute, 1.0, Units::Unknown),
        &samples[..2],
    );
    assert_eq!(absolute[0].value, Value::Float(53.5));
    let even = combined(
        &counter(CounterClass::Absolute, 1.0, Units::Unknown),
        &[on_core(1, 4, Some(0)), on_core(1, 6, Some(1))],
    );
    assert_eq!(even[0].value, Value::Int(5));
    // Without cores nothing changes.
    let plain = [on_core(1, 1, None), on_core(1, 2, None)];
    assert_eq!(
        combined(&counter(CounterClass::Delta, 1.0, Units::Unknown), &plain),
        plain
    );
}

#[test]
fn cores_are_split_in_order() {
    let samples = [
        on_core(10, 7, Some(1)),
        on_core(10, 100, Some(0)),
        on_core(20, 8, Some(1)),
        on_core(25, 3, None),
    ];
    let split = by_core(&samples);
    assert_eq!(
        split,
        [
            (0, vec![on_core(10, 100, Some(0))]),
            (1, vec![on_core(10, 7, Some(1)), on_core(20, 8, Some(1))])
        ]
    );
    assert!(has_cores(&samples));
    assert!(!has_cores(&samples[3..]));
}
