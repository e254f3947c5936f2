//! Per-core samples in the outputs: gatord reads its per-CPU counters (perf-backed PMU events) once per core,
//! and the engine keeps each sample's CPU. A counter's reading combines every core's samples; its series
//! combines the samples of one instant (`combined`), and `capture --per-core` also shows each core's part
//! (`by_core`), named `COUNTER@cpuN` like the local counters' per-CPU series.

use lizard_core::{Counter, CounterClass, Sample, Value};

/// How the outputs show a counter counted per core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cores {
    /// One series and one reading per counter, the cores combined.
    Combined,
    /// The combined series and reading, and beside them one per core.
    PerCore,
}

impl Cores {
    /// `combined` or `per-core`, as the JSON and chrome-trace outputs say it.
    pub fn name(self) -> &'static str {
        match self {
            Cores::Combined => "combined",
            Cores::PerCore => "per-core",
        }
    }
}

/// The sentence the outputs carry when a counter was counted per core.
pub const COMBINED_NOTE: &str =
    "values counted per core are combined: delta counters summed over the cores \
     (the samples of one instant added), absolute ones averaged";

/// Whether any of `samples` was counted on a given core.
pub fn has_cores(samples: &[Sample]) -> bool {
    samples.iter().any(|s| s.core.is_some())
}

/// The name of `counter`'s series on `core`: `NAME@cpuN`.
pub fn core_name(name: &str, core: u32) -> String {
    format!("{name}@cpu{core}")
}

/// `samples` (oldest first) with the samples of one instant from different cores combined into one, as the
/// counter's reading combines them: added for a delta counter, averaged for an absolute one. Samples
/// without a core pass through unchanged.
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
        (CounterClass::Absolute, Some(sum)) if sum % count as i64 == 0 => {
            Value::Int(sum / count as i64)
        }
        (class, _) => {
            let sum: f64 = run.iter().map(|s| s.value.as_f64()).sum();
            Value::Float(match class {
                CounterClass::Delta => sum,
                CounterClass::Absolute => sum / count as f64,
            })
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use lizard_core::{ResultType, Source, Units};

    fn counter(class: CounterClass) -> Counter {
        Counter {
            id: 1,
            key: "ARMv8_Cortex_A72_ccnt".into(),
            name: String::new(),
            title: String::new(),
            description: String::new(),
            category: String::new(),
            multiplier: 1.0,
            units: Units::Unknown,
            class,
            source: Source::Gatord,
            result_type: ResultType::Integer,
            set_event: None,
        }
    }

    fn s(t: u64, v: i64, core: Option<u32>) -> Sample {
        Sample {
            timestamp_ns: t,
            value: Value::Int(v),
            core,
        }
    }

    #[test]
    fn one_instant_of_several_cores_becomes_one_sample() {
        let samples = [
            s(10, 7, Some(0)),
            s(10, 100, Some(1)),
            s(20, 8, Some(0)),
            s(25, 3, None),
            s(30, 9, Some(1)),
        ];
        let delta = combined(&counter(CounterClass::Delta), &samples);
        assert_eq!(
            delta,
            [
                s(10, 107, None),
                s(20, 8, None),
                s(25, 3, None),
                s(30, 9, None)
            ]
        );
        let absolute = combined(&counter(CounterClass::Absolute), &samples[..2]);
        assert_eq!(absolute[0].value, Value::Float(53.5));
        let even = combined(
            &counter(CounterClass::Absolute),
            &[s(1, 4, Some(0)), s(1, 6, Some(1))],
        );
        assert_eq!(even[0].value, Value::Int(5));
        // Without cores nothing changes.
        let plain = [s(1, 1, None), s(1, 2, None)];
        assert_eq!(combined(&counter(CounterClass::Delta), &plain), plain);
    }

    #[test]
    fn cores_are_split_in_order() {
        let samples = [
            s(10, 7, Some(1)),
            s(10, 100, Some(0)),
            s(20, 8, Some(1)),
            s(25, 3, None),
        ];
        let split = by_core(&samples);
        assert_eq!(
            split,
            [
                (0, vec![s(10, 100, Some(0))]),
                (1, vec![s(10, 7, Some(1)), s(20, 8, Some(1))])
            ]
        );
        assert!(has_cores(&samples));
        assert!(!has_cores(&samples[3..]));
        assert_eq!(core_name("X", 3), "X@cpu3");
    }
}
