//! `lizard diff BASE.json NEW.json`: two captures compared counter by counter, and with `--max-increase` a
//! gate that fails (exit 5) when a judged counter grew past it.

use std::path::Path;

use lizard_core::capture::Capture;
use lizard_render::diff::{self, Basis, Comparison, CounterChange};

use crate::args::{DiffArgs, ListFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output;
use crate::table::Table;
use lizard_core::input::InputKind;

/// The exit status when a judged counter grew past `--max-increase`.
const REGRESSED: i32 = 5;

/// Runs `lizard diff`.
pub fn run(args: &DiffArgs) -> Result<i32, CliError> {
    let destination = output::Destination::open(args.output.as_deref())?;
    let base = read(&args.base)?;
    let new = read(&args.new)?;
    let basis = match args.per_second {
        true => Basis::PerSecond,
        false => Basis::AsCaptured,
    };
    let changes = diff::compare_on(&base, &new, basis);
    if diff::compared(&changes) == 0 {
        return Err(CliError::NothingUsable {
            path: args.new.clone(),
            expected: format!(
                "a capture to compare with {}: a counter with a value in both",
                args.base.display()
            ),
            found: match changes
                .iter()
                .any(|c| c.note.as_deref().is_some_and(|n| n.starts_with("no value")))
            {
                true => "no counter the two have in common has a value in both".to_owned(),
                false => "the two have no counter in common".to_owned(),
            },
        });
    }
    let differ = diff::windows_differ(&base, &new).filter(|_| basis == Basis::AsCaptured);
    if let Some((b, n)) = differ {
        eprintln!(
            "lizard: the windows differ (base {b:.3} s, new {n:.3} s): totals of delta counters differ \
             by as much; --per-second compares their rates"
        );
    }
    let regressions = args
        .max_increase
        .map(|limit| diff::regressions(&changes, &args.counters, limit))
        .unwrap_or_default();
    let text = match args.format {
        ListFormat::Table => table(&base, &new, &changes, basis),
        ListFormat::Json => {
            let document = Comparison::new(
                (&args.base, &base),
                (&args.new, &new),
                (&changes, basis),
                args.max_increase,
                &regressions,
            );
            // Through a `serde_json::Value`, whose members are sorted by name: the order this output has.
            output::to_json(
                &serde_json::to_value(document).map_err(|e| CliError::Other(e.to_string()))?,
            )
        }
    };
    destination.write_text(&text)?;
    for regression in &regressions {
        match differ {
            Some(_) => eprintln!("lizard: {regression} (over windows of different lengths)"),
            None => eprintln!("lizard: {regression}"),
        }
    }
    Ok(if regressions.is_empty() { 0 } else { REGRESSED })
}

fn read(path: &Path) -> Result<Capture, CliError> {
    let text = inputs()?.read_text(path, InputKind::CaptureDocument)?;
    Capture::from_json(&text).map_err(|source| CliError::BadCapture {
        path: path.to_owned(),
        source,
    })
}

/// A reading as the table shows it: integers as they are, fractions to at most six decimals.
fn number(value: Option<f64>) -> String {
    value
        .and_then(serde_json::Number::from_f64)
        .map_or_else(String::new, |n| output::reading_text(&n))
}

fn table(base: &Capture, new: &Capture, changes: &[CounterChange], basis: Basis) -> String {
    let mut table = Table::new(&["counter", "units", "base", "new", "change", "ratio", "note"]);
    for c in changes {
        table.row(vec![
            c.counter.clone(),
            c.units.clone(),
            number(c.base),
            number(c.new),
            c.change.map_or_else(String::new, |d| {
                let sign = if d > 0.0 { "+" } else { "" };
                format!("{sign}{}", number(Some(d)))
            }),
            c.ratio.map_or_else(String::new, |r| format!("{r:.4}")),
            c.note.clone().unwrap_or_default(),
        ]);
    }
    let window = |c: &Capture| {
        c.duration_s
            .map_or_else(|| "no samples".to_owned(), |s| format!("{s:.3} s"))
    };
    let run = |c: &Capture| {
        c.run
            .as_ref()
            .map_or_else(|| "not recorded".to_owned(), |r| r.summary())
    };
    let how = match basis {
        Basis::AsCaptured => {
            "readings are compared as they are: totals of delta counters, means of absolute ones"
        }
        Basis::PerSecond => {
            "delta counters are compared per second of their window; others as they are"
        }
    };
    format!(
        "{}\nwindows: base {}, new {} ({how})\nbase run: {}\nnew run:  {}\n",
        table.render(),
        window(base),
        window(new),
        run(base),
        run(new)
    )
}
