//! Two capture documents compared counter by counter: what `lizard diff` prints and what its threshold
//! judges. Counters are matched by name; each side's reading is compared as it is (delta counters' totals,
//! absolute counters' means), so runs of the same workload (`capture -- CMD`) compare directly, and the
//! windows' lengths are given beside them for captures of a fixed duration.

use serde::Serialize;

use super::{Capture, CapturedCounter};

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

/// Every counter of either capture: the base's in its order, then those only in the new one.
pub fn compare(base: &Capture, new: &Capture) -> Vec<CounterChange> {
    fn find<'c>(capture: &'c Capture, name: &str) -> Option<&'c CapturedCounter> {
        capture.counters.iter().find(|c| c.counter_name() == name)
    }
    let mut names: Vec<&str> = base.counters.iter().map(|c| c.counter_name()).collect();
    for c in &new.counters {
        if !names.contains(&c.counter_name()) {
            names.push(c.counter_name());
        }
    }
    names
        .into_iter()
        .map(|name| change(name, find(base, name), find(new, name)))
        .collect()
}

fn change(
    name: &str,
    base: Option<&CapturedCounter>,
    new: Option<&CapturedCounter>,
) -> CounterChange {
    let value = |c: Option<&CapturedCounter>| c.and_then(|c| c.value.as_ref()?.as_f64());
    let (b, n) = (value(base), value(new));
    let note = match (base, new) {
        (None, _) => Some("only in new".to_owned()),
        (_, None) => Some("only in base".to_owned()),
        (Some(base), Some(new)) => match (b, n) {
            (None, _) => Some(format!("no value in base: {}", reason(base))),
            (_, None) => Some(format!("no value in new: {}", reason(new))),
            _ => None,
        },
    };
    let units = base
        .or(new)
        .map(|c| c.value_units().to_owned())
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
}
