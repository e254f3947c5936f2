//! Two capture documents compared counter by counter: what `lizard diff` prints and what its threshold
//! judges. Counters are matched by name; each side's reading is compared as it is (delta counters' totals,
//! absolute counters' means), so runs of the same workload (`capture -- CMD`) compare directly, and the
//! windows' lengths are given beside them for captures of a fixed duration.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::text::reading_text;
use serde_json::Number;

use lizard_core::capture::{Capture, CapturedCounter};

/// One counter in the two captures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CounterChange {
    /// The counter's name.
    pub counter: String,
    /// The unit of both readings.
    pub units: String,
    /// The reading in the base capture (`None`: no value there, or not captured).
    pub base: Option<f64>,
    /// The reading in the new capture.
    pub new: Option<f64>,
    /// `new − base`, when both have a value.
    pub change: Option<f64>,
    /// `new / base`, when both have a value and the base is not 0.
    pub ratio: Option<f64>,
    /// Why there is nothing to compare, when so: `only in base`, `only in new`, or a side's reason for
    /// having no value.
    pub note: Option<String>,
}

impl CounterChange {
    /// The change in percent of the base (`None` without a ratio).
    pub fn percent(&self) -> Option<f64> {
        self.ratio.map(|r| (r - 1.0) * 100.0)
    }
}

/// How two readings of a counter are put side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// As captured: delta counters' totals, absolute counters' means. Right for runs of the same workload
    /// (`capture -- CMD`); totals of captures of different lengths differ by their lengths.
    #[default]
    AsCaptured,
    /// Delta counters' totals divided by their capture's window, in units per second; every other class
    /// (levels, equations) as captured. Right for captures of different lengths.
    PerSecond,
}

/// Every counter of either capture, compared as captured: the base's in its order, then those only in the
/// new one.
pub fn compare(base: &Capture, new: &Capture) -> Vec<CounterChange> {
    compare_on(base, new, Basis::AsCaptured)
}

/// Every counter of either capture, compared on `basis`: the base's in its order, then those only in the
/// new one.
pub fn compare_on(base: &Capture, new: &Capture, basis: Basis) -> Vec<CounterChange> {
    let mut names: Vec<&str> = base.counters.iter().map(|c| c.counter_name()).collect();
    for c in &new.counters {
        if !names.contains(&c.counter_name()) {
            names.push(c.counter_name());
        }
    }
    let base = Reading {
        capture: base,
        basis,
    };
    let new = Reading {
        capture: new,
        basis,
    };
    names
        .into_iter()
        .map(|name| change(name, base.of(name), new.of(name)))
        .collect()
}

/// The number of counters among `changes` that have a value on both sides: a comparison without any
/// compares nothing.
pub fn compared(changes: &[CounterChange]) -> usize {
    changes.iter().filter(|c| c.change.is_some()).count()
}

/// The two windows' lengths in seconds, when both are known and differ by more than 1 %: totals of delta
/// counters then differ by the windows as much as by the workload ([`Basis::PerSecond`] compares rates).
pub fn windows_differ(base: &Capture, new: &Capture) -> Option<(f64, f64)> {
    let (b, n) = base.duration_s.zip(new.duration_s)?;
    let larger = b.max(n);
    (larger > 0.0 && (b - n).abs() / larger > 0.01).then_some((b, n))
}

/// A capture's counters read on a basis.
struct Reading<'c> {
    capture: &'c Capture,
    basis: Basis,
}

/// A counter's value on a basis, or why it has none, with its unit.
struct Value {
    value: Result<f64, String>,
    units: String,
}

impl Reading<'_> {
    fn of(&self, name: &str) -> Option<Value> {
        let counter = self
            .capture
            .counters
            .iter()
            .find(|c| c.counter_name() == name)?;
        let value = counter
            .value
            .as_ref()
            .and_then(Number::as_f64)
            .ok_or_else(|| reason(counter).to_owned());
        let units = counter.value_units().to_string();
        Some(match (self.basis, counter.is_delta()) {
            (Basis::PerSecond, true) => Value {
                value: value.and_then(|v| match self.capture.duration_s {
                    Some(s) if s > 0.0 => Ok(v / s),
                    _ => Err("no window length to take a rate over".to_owned()),
                }),
                units: format!("{units}/s"),
            },
            _ => Value { value, units },
        })
    }
}

fn change(name: &str, base: Option<Value>, new: Option<Value>) -> CounterChange {
    let value = |s: &Option<Value>| s.as_ref().and_then(|s| s.value.as_ref().ok().copied());
    let (b, n) = (value(&base), value(&new));
    let note = match (&base, &new) {
        (None, _) => Some("only in new".to_owned()),
        (_, None) => Some("only in base".to_owned()),
        (Some(base), Some(new)) => match (&base.value, &new.value) {
            (Err(why), _) => Some(format!("no value in base: {why}")),
            (_, Err(why)) => Some(format!("no value in new: {why}")),
            _ => None,
        },
    };
    let units = base
        .as_ref()
        .or(new.as_ref())
        .map(|s| s.units.clone())
        .unwrap_or_default();
    CounterChange {
        counter: name.to_owned(),
        units,
        base: b,
        new: n,
        change: b.zip(n).map(|(b, n)| n - b),
        ratio: b.zip(n).filter(|(b, _)| *b != 0.0).map(|(b, n)| n / b),
        note,
    }
}

fn reason(c: &CapturedCounter) -> &str {
    c.no_value.as_deref().unwrap_or("no value")
}

/// The counters among `changes` named in `watched` (all when empty) that grew by more than
/// `max_increase_percent` of their base, or that have no value to judge on either side: what fails a
/// build. Names not in either capture are returned as their own entries, with a note saying so.
pub fn regressions<'a>(
    changes: &'a [CounterChange],
    watched: &[String],
    max_increase_percent: f64,
) -> Vec<Regression<'a>> {
    let judged = |c: &&CounterChange| {
        watched.is_empty() || watched.iter().any(|w| w.eq_ignore_ascii_case(&c.counter))
    };
    let mut out: Vec<Regression<'a>> = changes
        .iter()
        .filter(judged)
        .filter_map(|c| match (c.percent(), &c.note, c.change) {
            (Some(p), _, _) if p > max_increase_percent => Some(Regression::Grew(c)),
            // A base of 0 that became more: no percentage, but growth all the same.
            (None, None, Some(change)) if change > 0.0 => Some(Regression::Grew(c)),
            (_, Some(_), _) if !watched.is_empty() => Some(Regression::Unjudged(c)),
            _ => None,
        })
        .collect();
    for name in watched {
        if !changes.iter().any(|c| c.counter.eq_ignore_ascii_case(name)) {
            out.push(Regression::Missing(name.clone()));
        }
    }
    out
}

/// Why a watched counter fails the comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Regression<'a> {
    /// It grew past the threshold.
    Grew(&'a CounterChange),
    /// It was watched but one side has no value for it.
    Unjudged(&'a CounterChange),
    /// It was watched but neither capture has it.
    Missing(String),
}

/// A reading as text: integers as they are, fractions to at most six decimals; empty without one.
fn number_text(value: Option<f64>) -> String {
    value
        .and_then(serde_json::Number::from_f64)
        .map_or_else(String::new, |n| reading_text(&n))
}

/// One line saying why the counter fails the comparison.
impl fmt::Display for Regression<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regression::Grew(c) => match c.percent() {
                Some(p) => write!(
                    f,
                    "{} grew {p:+.2}% ({} to {} {}), past the limit",
                    c.counter,
                    number_text(c.base),
                    number_text(c.new),
                    c.units
                ),
                None => write!(
                    f,
                    "{} grew from 0 to {} {}",
                    c.counter,
                    number_text(c.new),
                    c.units
                ),
            },
            Regression::Unjudged(c) => write!(
                f,
                "{} cannot be judged: {}",
                c.counter,
                c.note.as_deref().unwrap_or("no value")
            ),
            Regression::Missing(name) => write!(f, "{name} is in neither capture"),
        }
    }
}

/// One capture of a [`Comparison`]: its file and its window's length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window<'d> {
    /// The capture document's file.
    pub path: &'d Path,
    /// Its window's length in seconds ([`Capture::duration_s`]).
    pub duration_s: Option<f64>,
}

/// Two captures compared, as one document: both captures, the changes, and the threshold's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison<'d> {
    /// The base capture.
    pub base: Window<'d>,
    /// The new capture.
    pub new: Window<'d>,
    /// Every counter of either capture ([`compare`]).
    pub counters: &'d [CounterChange],
    /// How the readings are compared.
    pub basis: Basis,
    /// Whether the windows' lengths differ by more than 1 % ([`windows_differ`]).
    pub windows_differ: bool,
    /// The largest increase allowed, in percent, if one was given.
    pub max_increase_percent: Option<f64>,
    /// Each regression's line ([`Regression`]'s text).
    pub regressed: Vec<String>,
}

impl<'d> Comparison<'d> {
    /// The comparison of `base` (read from `base_path`) with `new` (from `new_path`), given its `changes`,
    /// the threshold and what it found.
    pub fn new(
        (base_path, base): (&'d Path, &Capture),
        (new_path, new): (&'d Path, &Capture),
        (changes, basis): (&'d [CounterChange], Basis),
        max_increase_percent: Option<f64>,
        regressions: &[Regression<'_>],
    ) -> Comparison<'d> {
        Comparison {
            base: Window {
                path: base_path,
                duration_s: base.duration_s,
            },
            new: Window {
                path: new_path,
                duration_s: new.duration_s,
            },
            counters: changes,
            basis,
            windows_differ: windows_differ(base, new).is_some(),
            max_increase_percent,
            regressed: regressions.iter().map(ToString::to_string).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(counters: &[(&str, Option<i64>)]) -> Capture {
        let counters: Vec<String> = counters
            .iter()
            .enumerate()
            .map(|(i, (name, value))| {
                let value = match value {
                    Some(v) => v.to_string(),
                    None => "null, \"no_value\": \"no samples\"".to_owned(),
                };
                format!(
                    r#"{{"id": {}, "counter": "{name}", "units": "cycles", "class": "delta", "value": {value},
                       "samples": []}}"#,
                    i + 1
                )
            })
            .collect();
        Capture::from_json(&format!(
            r#"{{"window_ns": null, "counters": [{}]}}"#,
            counters.join(",")
        ))
        .unwrap()
    }

    #[test]
    fn counters_are_matched_by_name_and_compared() {
        let base = document(&[
            ("A", Some(100)),
            ("B", Some(0)),
            ("C", Some(5)),
            ("D", None),
        ]);
        let new = document(&[
            ("B", Some(7)),
            ("A", Some(150)),
            ("D", Some(1)),
            ("E", Some(2)),
        ]);
        let changes = compare(&base, &new);
        let names: Vec<&str> = changes.iter().map(|c| c.counter.as_str()).collect();
        assert_eq!(names, ["A", "B", "C", "D", "E"]);
        assert_eq!(
            (
                changes[0].base,
                changes[0].new,
                changes[0].change,
                changes[0].ratio
            ),
            (Some(100.0), Some(150.0), Some(50.0), Some(1.5))
        );
        assert_eq!(changes[0].percent(), Some(50.0));
        assert_eq!(changes[0].units, "cycles");
        assert_eq!(
            (changes[1].change, changes[1].ratio),
            (Some(7.0), None),
            "a base of 0"
        );
        assert_eq!(changes[2].note.as_deref(), Some("only in base"));
        assert_eq!(
            changes[3].note.as_deref(),
            Some("no value in base: no samples")
        );
        assert_eq!(changes[4].note.as_deref(), Some("only in new"));
    }

    #[test]
    fn growth_past_the_threshold_regresses_and_watched_counters_must_be_judged() {
        let base = document(&[
            ("A", Some(100)),
            ("B", Some(0)),
            ("C", Some(100)),
            ("D", None),
        ]);
        let new = document(&[
            ("A", Some(111)),
            ("B", Some(3)),
            ("C", Some(90)),
            ("D", Some(1)),
        ]);
        let changes = compare(&base, &new);
        // Everything judged: A grew 11 %, B grew from 0; C fell; D has no base to judge and is not watched.
        let all = regressions(&changes, &[], 10.0);
        assert_eq!(
            all,
            [Regression::Grew(&changes[0]), Regression::Grew(&changes[1])]
        );
        assert!(regressions(&changes, &[], 12.0)
            .iter()
            .all(|r| *r != Regression::Grew(&changes[0])));
        // Watched: C is within, D cannot be judged, Z is in neither capture.
        let watched = ["c".to_owned(), "D".to_owned(), "Z".to_owned()];
        assert_eq!(
            regressions(&changes, &watched, 10.0),
            [
                Regression::Unjudged(&changes[3]),
                Regression::Missing("Z".into())
            ]
        );
        assert!(regressions(&changes, &["C".to_owned()], 10.0).is_empty());
    }

    #[test]
    fn regressions_are_one_line_each_and_the_comparison_carries_them() {
        let base = document(&[("A", Some(100)), ("B", Some(0)), ("D", None)]);
        let new = document(&[("A", Some(111)), ("B", Some(3)), ("D", Some(1))]);
        let changes = compare(&base, &new);
        let watched = [
            "A".to_owned(),
            "B".to_owned(),
            "D".to_owned(),
            "Z".to_owned(),
        ];
        let found = regressions(&changes, &watched, 10.0);
        let lines: Vec<String> = found.iter().map(ToString::to_string).collect();
        assert!(
            lines[0].starts_with("A grew +11.00% (100 to 111 "),
            "{lines:?}"
        );
        assert!(lines[0].ends_with(", past the limit"), "{lines:?}");
        assert!(lines[1].starts_with("B grew from 0 to 3 "), "{lines:?}");
        assert!(
            lines[2].starts_with("D cannot be judged: no value in base"),
            "{lines:?}"
        );
        assert_eq!(lines[3], "Z is in neither capture");
        let comparison = Comparison::new(
            (Path::new("base.json"), &base),
            (Path::new("new.json"), &new),
            (&changes, Basis::AsCaptured),
            Some(10.0),
            &found,
        );
        assert_eq!(comparison.regressed, lines);
        assert_eq!(comparison.base.path, Path::new("base.json"));
        assert_eq!(comparison.counters.len(), 3);
    }
}
