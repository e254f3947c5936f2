//! Reductions: how the samples of one capture become one reading. This is the only place a value is reduced.
//!
//! A reading is computed over either every sample of a capture ([`read_int`], [`read_double`]: reconnecting
//! mode, where a capture's store holds exactly its own samples) or a start/stop window ([`read_int_in`],
//! [`read_double_in`]: persistent mode, where one gatord session serves many windows). The rules, identical
//! for integer and double reads except for the final type:
//!
//! 1. **Delta** counters (gatord `class="delta"` or no class, and every HWCPipe counter, whose samples are
//!    counts since the previous sample) reduce to the **sum** of their samples. In a window, each sample
//!    stands for its interval `(previous timestamp, timestamp]`, spread evenly over that time, and
//!    contributes the part of its value that falls inside the window: a sample wholly inside counts in full,
//!    the samples enclosing the window's edges count in proportion to their overlap (linear in time). So a
//!    window shorter than the source's sample period, lying between two samples, reads
//!    `value × window length ÷ sample interval` of the sample that closes it. A counter counted per core
//!    (perf counters, one sample per core) is apportioned core by core: each sample's interval runs from the
//!    previous sample of the same core. A sample with no predecessor (the first of a capture, or of its
//!    core) has no known interval: it counts in full when its timestamp lies in the window.
//! 2. **Absolute** counters (gatord `class="absolute"`: levels such as free memory) reduce to the **mean** of
//!    the samples in the window (or of the capture). A window holding no sample reads the **last sample at or
//!    before the window's end** (the level in force during the window). Integer reads truncate the mean
//!    toward zero; double reads keep the fraction.
//! 3. **Derived** counters (Arm's Mali database: ratios, rates, constants, sums of other counters) reduce to
//!    their **equation over the window's totals** of their inputs ([`derived`]): each counter input's total is
//!    its delta reading over the window (rule 1; a derived input is its own equation over the same window),
//!    `MALI_CONFIG_TIME_SPAN` is the window's length, and the other device constants are themselves. So a
//!    constant reads as the constant, a ratio as the ratio of the window's totals, a rate as a total over the
//!    window's length. Nothing is clamped; a divisor that is 0 over the window is no value, named
//!    ([`NoValue::DivisorZero`]); results that cannot happen on working hardware are marked ([`implausible`]).
//!    (The sample-level functions of this module, given a derived counter's own samples, treat them as
//!    absolute: its series, per core or combined, are the per-sample values of its equation.)
//! 4. The reduced value is multiplied by the counter's `multiplier` and, for MHz counters, by 1 000 000 (so
//!    readings are in Hz). Both reads apply exactly the same scale.
//! 5. **No usable sample is no value**, never 0: every read returns `None` when the rule has no sample to use
//!    (no sample at all; an absolute window with no sample at or before its end; a delta window that no
//!    sample's interval overlaps).
//!
//! Integer samples are summed exactly (in 128 bits), so an integer counter with a scale of 1 reads back the
//! exact sum or mean when no sample is apportioned. Integers are converted to doubles numerically, never
//! reinterpreted. Results outside the `i64` range saturate; a NaN integer read is 0 (only a fractional
//! sample can make one).

use std::fmt;

use crate::counter::{Counter, CounterClass, CounterId, Derivation, DerivedInput, Source};
use crate::error::NoValue;
use crate::store::{Sample, Value, Window};

/// The exact aggregate of a set of samples before scaling.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Aggregate {
    /// Every sample was an integer and counted whole: the exact sum or truncated mean.
    Int(i128),
    /// At least one sample was fractional or apportioned.
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
            CounterClass::Absolute | CounterClass::Derived if truncate_mean => {
                Aggregate::Int(sum / count as i128)
            }
            CounterClass::Absolute | CounterClass::Derived => {
                Aggregate::Float(sum as f64 / count as f64)
            }
        });
    }
    let sum: f64 = samples.iter().map(|s| s.value.as_f64()).sum();
    Some(Aggregate::Float(match class {
        CounterClass::Delta => sum,
        CounterClass::Absolute | CounterClass::Derived => sum / count as f64,
    }))
}

/// The aggregate of `samples` (oldest first) over `window`, by the rules of the module documentation.
fn aggregate_in(
    class: CounterClass,
    samples: &[Sample],
    window: Window,
    truncate_mean: bool,
) -> Option<Aggregate> {
    match class {
        CounterClass::Absolute | CounterClass::Derived => {
            let inside: Vec<Sample> = samples
                .iter()
                .filter(|s| window.contains(s.timestamp_ns))
                .copied()
                .collect();
            if inside.is_empty() {
                let last = samples.iter().rfind(|s| s.timestamp_ns <= window.end_ns)?;
                aggregate(class, std::slice::from_ref(last), truncate_mean)
            } else {
                aggregate(class, &inside, truncate_mean)
            }
        }
        CounterClass::Delta => apportion(samples, window),
    }
}

/// One core's position while walking a delta counter's samples.
struct Series {
    core: Option<u32>,
    /// Where the interval of the samples stamped at `current` began.
    interval_start: Option<u64>,
    /// The latest timestamp seen.
    current: u64,
}

impl Series {
    /// Takes a sample stamped `end`: the start of its interval.
    fn advance(&mut self, end: u64) -> Option<u64> {
        if end > self.current {
            self.interval_start = Some(self.current);
            self.current = end;
        }
        self.interval_start
    }
}

/// The part of a delta counter's samples that falls inside `window` (linear in time within each sample's
/// interval); `None` when no sample's interval meets the window.
fn apportion(samples: &[Sample], window: Window) -> Option<Aggregate> {
    let mut whole: i128 = 0;
    let mut whole_float = 0.0;
    let mut parts = 0.0;
    let mut exact = true;
    let mut used = false;
    // Each core's samples form their own series: a sample stands for the time since the previous sample of
    // the same core. Samples of one core (or of no core) stamped at the same instant share one interval:
    // the time since that core's previous distinct timestamp.
    let mut series: Vec<Series> = Vec::new();
    for sample in samples {
        let end = sample.timestamp_ns;
        let interval_start = match series.iter_mut().find(|s| s.core == sample.core) {
            Some(s) => s.advance(end),
            None => {
                series.push(Series {
                    core: sample.core,
                    interval_start: None,
                    current: end,
                });
                None
            }
        };
        let fraction = match interval_start {
            None => window.contains(end).then_some(1.0),
            Some(start) if end <= start => window.contains(end).then_some(1.0),
            Some(start) if start < window.end_ns && end >= window.start_ns => {
                let overlap = end
                    .min(window.end_ns)
                    .saturating_sub(start.max(window.start_ns));
                Some(overlap as f64 / (end - start) as f64)
            }
            Some(_) => None,
        };
        let Some(fraction) = fraction else {
            continue;
        };
        used = true;
        match sample.value {
            Value::Int(v) if fraction >= 1.0 => whole += i128::from(v),
            Value::Float(v) if fraction >= 1.0 => {
                whole_float += v;
                exact = false;
            }
            value => {
                parts += value.as_f64() * fraction;
                exact = false;
            }
        }
    }
    if !used {
        return None;
    }
    Some(if exact {
        Aggregate::Int(whole)
    } else {
        Aggregate::Float(whole as f64 + whole_float + parts)
    })
}

fn saturate(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

fn to_int(counter: &Counter, aggregate: Option<Aggregate>) -> Option<i64> {
    let scale = counter.scale();
    Some(match aggregate? {
        Aggregate::Int(v) if scale == 1.0 => saturate(v),
        Aggregate::Int(v) => (v as f64 * scale) as i64,
        Aggregate::Float(v) => (v * scale) as i64,
    })
}

fn to_double(counter: &Counter, aggregate: Option<Aggregate>) -> Option<f64> {
    let scale = counter.scale();
    Some(match aggregate? {
        Aggregate::Int(v) => v as f64 * scale,
        Aggregate::Float(v) => v * scale,
    })
}

/// The integer reading of `counter` over all of `samples` (see the module documentation for the rules);
/// `None` when there is no sample.
///
/// Fractional results are truncated toward zero; out-of-range results saturate; NaN reads as 0.
pub fn read_int(counter: &Counter, samples: &[Sample]) -> Option<i64> {
    to_int(counter, aggregate(counter.class, samples, true))
}

/// The floating-point reading of `counter` over all of `samples` (see the module documentation); `None`
/// when there is no sample.
pub fn read_double(counter: &Counter, samples: &[Sample]) -> Option<f64> {
    to_double(counter, aggregate(counter.class, samples, false))
}

/// The integer reading of `counter` over `window`, from `samples` (oldest first; they may extend beyond the
/// window, and should include the sample before and the sample after it, which the rules use). `None` when
/// no sample is usable.
pub fn read_int_in(counter: &Counter, samples: &[Sample], window: Window) -> Option<i64> {
    to_int(counter, aggregate_in(counter.class, samples, window, true))
}

/// The floating-point reading of `counter` over `window` (see [`read_int_in`]).
pub fn read_double_in(counter: &Counter, samples: &[Sample], window: Window) -> Option<f64> {
    to_double(counter, aggregate_in(counter.class, samples, window, false))
}

/// Whether any of `samples` was counted on a given core.
pub fn has_cores(samples: &[Sample]) -> bool {
    samples.iter().any(|s| s.core.is_some())
}

/// The series of a counter counted per core: `samples` (oldest first) with the samples of one instant from
/// different cores combined into one, as the counter's reading combines them: added (saturating) for a delta
/// counter, averaged for an absolute one (an integer when exact). Samples without a core pass through
/// unchanged.
pub fn combined(counter: &Counter, samples: &[Sample]) -> Vec<Sample> {
    if !has_cores(samples) {
        return samples.to_vec();
    }
    let mut out: Vec<Sample> = Vec::with_capacity(samples.len());
    let mut run: Vec<Sample> = Vec::new();
    let flush = |run: &mut Vec<Sample>, out: &mut Vec<Sample>| {
        if let Some(first) = run.first() {
            out.push(Sample {
                timestamp_ns: first.timestamp_ns,
                value: combine(counter.class, run),
                core: None,
            });
        }
        run.clear();
    };
    for sample in samples {
        if sample.core.is_none() {
            flush(&mut run, &mut out);
            out.push(*sample);
            continue;
        }
        if run
            .first()
            .is_some_and(|f| f.timestamp_ns != sample.timestamp_ns)
        {
            flush(&mut run, &mut out);
        }
        run.push(*sample);
    }
    flush(&mut run, &mut out);
    out
}

/// The values of one instant combined: their sum (delta), or their mean (absolute; an integer when exact).
fn combine(class: CounterClass, run: &[Sample]) -> Value {
    let all_int: Option<i64> = run.iter().try_fold(0i64, |acc, s| match s.value {
        Value::Int(v) => Some(acc.saturating_add(v)),
        Value::Float(_) => None,
    });
    let count = run.len().max(1);
    match (class, all_int) {
        (CounterClass::Delta, Some(sum)) => Value::Int(sum),
        (CounterClass::Absolute | CounterClass::Derived, Some(sum)) if sum % count as i64 == 0 => {
            Value::Int(sum / count as i64)
        }
        (class, _) => {
            let sum: f64 = run.iter().map(|s| s.value.as_f64()).sum();
            Value::Float(match class {
                CounterClass::Delta => sum,
                CounterClass::Absolute | CounterClass::Derived => sum / count as f64,
            })
        }
    }
}

/// What [`derived`] is given for one counter input of an equation.
#[derive(Debug)]
pub enum DerivedSource<'a> {
    /// An input counted by the hardware: its samples (oldest first, including those enclosing the window),
    /// whose total over the window is its delta reading.
    Samples(Vec<Sample>),
    /// A derived input: its own equation, evaluated over the same window.
    Derivation(&'a Derivation),
}

/// The deepest nesting of derived inputs [`derived`] follows (the database's is a few levels).
pub const MAX_DERIVED_DEPTH: usize = 16;

/// The reading of a derived counter over `window`: its equation over the window's totals of its inputs, by
/// rule 3 of the module documentation. `source` gives each counter input (by id).
pub fn derived<'a>(
    derivation: &Derivation,
    window: Window,
    source: &dyn Fn(CounterId) -> Option<DerivedSource<'a>>,
) -> Result<f64, NoValue> {
    derived_at(derivation, window, source, 0)
}

/// [`derived`] at nesting `depth`.
fn derived_at<'a>(
    derivation: &Derivation,
    window: Window,
    source: &dyn Fn(CounterId) -> Option<DerivedSource<'a>>,
    depth: usize,
) -> Result<f64, NoValue> {
    let span_s = window.end_ns.saturating_sub(window.start_ns) as f64 / 1e9;
    let mut values = Vec::with_capacity(derivation.inputs.len());
    for (n, input) in derivation.inputs.iter().enumerate() {
        let missing = |reason: NoValue| NoValue::InputMissing {
            input: derivation.names.get(n).cloned().unwrap_or_default(),
            reason: Box::new(reason),
        };
        values.push(match *input {
            DerivedInput::Constant(value) => value,
            DerivedInput::TimeSpan => span_s,
            DerivedInput::Counter(id) => match source(id) {
                None => return Err(missing(NoValue::NotCaptured)),
                Some(DerivedSource::Samples(samples)) if samples.is_empty() => {
                    return Err(missing(NoValue::NoSamples))
                }
                Some(DerivedSource::Samples(samples)) => match apportion(&samples, window) {
                    Some(Aggregate::Int(v)) => v as f64,
                    Some(Aggregate::Float(v)) => v,
                    None => return Err(missing(NoValue::NotEnclosed)),
                },
                Some(DerivedSource::Derivation(inner)) if depth < MAX_DERIVED_DEPTH => {
                    derived_at(inner, window, source, depth + 1).map_err(missing)?
                }
                Some(DerivedSource::Derivation(_)) => return Err(missing(NoValue::TooDeep)),
            },
        });
    }
    derivation.equation.eval(&values).map_err(|err| match err {
        hwcpipe::gpu::EvalError::DivisionByZero { divisor } => NoValue::DivisorZero {
            divisor: derivation.render(&divisor),
        },
        _ => NoValue::NotEnclosed,
    })
}

/// Why a reading cannot happen on working hardware.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implausible {
    /// A count, a sum of counts or a rate below zero.
    Negative,
    /// A percentage above 100.
    OverHundredPercent,
}

impl fmt::Display for Implausible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Implausible::Negative => {
                "negative, which working hardware cannot count: a hardware erratum, a wrapped counter or a reader bug"
            }
            Implausible::OverHundredPercent => {
                "over 100 %, which working hardware cannot reach: a hardware erratum, a wrapped counter or a reader bug"
            }
        })
    }
}

/// Whether `value`, a reading or sample of `counter`, cannot happen on working hardware. Only the local GPU's
/// counters (Mali: counts, and equations over counts) are judged: a gatord counter may legitimately be
/// negative (a temperature), and nothing is judged that is not a number.
pub fn implausible(counter: &Counter, value: f64) -> Option<Implausible> {
    if counter.source != Source::HwcPipeGpu || !value.is_finite() {
        return None;
    }
    if value < 0.0 {
        return Some(Implausible::Negative);
    }
    let percent = matches!(&counter.units, crate::units::Units::Other(u) if u == "%");
    (percent && value > 100.0).then_some(Implausible::OverHundredPercent)
}

/// Each core's samples of `samples`, by ascending core (samples without a core are left out).
pub fn by_core(samples: &[Sample]) -> Vec<(u32, Vec<Sample>)> {
    let mut out: Vec<(u32, Vec<Sample>)> = Vec::new();
    for sample in samples {
        let Some(core) = sample.core else { continue };
        match out.iter_mut().find(|(c, _)| *c == core) {
            Some((_, list)) => list.push(*sample),
            None => out.push((core, vec![*sample])),
        }
    }
    out.sort_by_key(|(core, _)| *core);
    out
}
