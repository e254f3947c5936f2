//! `lizard list`: the counters every source offers, and those the direct source knows of but cannot read
//! here (with the reason).

use lizard_core::capture::{collect, Class, ValueType};
use lizard_render::Listing;

use crate::args::{ListArgs, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::source::{self, counter_name};
use crate::table::Table;

/// The listing for people: a section per source (its scope said once, in the heading), a row per counter
/// with what a user types (`counter`), its description, unit, class and type; the reasons a counter is
/// unavailable listed after the table, keyed by id, so that no long note widens every row.
fn table(
    lizard: &lizard_core::Lizard,
    counters: &[lizard_core::Counter],
) -> Result<String, CliError> {
    let mut text = String::new();
    let mut notes = Vec::new();
    let mut start = 0;
    while start < counters.len() {
        let label = collect::info(&counters[start]).source_label();
        let end = counters[start..]
            .iter()
            .position(|c| collect::info(c).source_label() != label)
            .map_or(counters.len(), |n| start + n);
        text.push_str(&format!("{label}:\n"));
        let mut table = Table::new(&[
            "id",
            "counter",
            "event",
            "description",
            "units",
            "class",
            "type",
        ]);
        for c in &counters[start..end] {
            if let Some(reason) = lizard.unavailable(c.id)? {
                notes.push(format!("  {} {}: {reason}", c.id, counter_name(c)));
            }
            // What the counter measures, without what the heading and the name already say.
            let description = match (c.title.as_str(), c.name.as_str()) {
                (_, name) if name == counter_name(c) => String::new(),
                (title, name) if title.is_empty() || c.category == title => name.to_owned(),
                (title, name) if title.starts_with("HWCPipe") => name.to_owned(),
                (title, name) => format!("{title}: {name}"),
            };
            let unavailable = match lizard.unavailable(c.id)? {
                Some(_) => " (unavailable)",
                None => "",
            };
            table.row(vec![
                c.id.to_string(),
                format!("{}{unavailable}", counter_name(c)),
                // A counter-set event's code, which gatord programs into one of the set's slots.
                c.set_event
                    .as_ref()
                    .map_or_else(String::new, |e| format!("{:#04x}", e.code)),
                description,
                c.units.of_readings().to_string(),
                Class::from(c.class).to_string(),
                ValueType::from(c.result_type).to_string(),
            ]);
        }
        text.push_str(&table.render());
        text.push('\n');
        start = end;
    }
    if !notes.is_empty() {
        text.push_str("unavailable here:\n");
        for note in notes {
            text.push_str(&note);
            text.push('\n');
        }
    }
    // Counters the direct source knows of but cannot read here have no id: listed after the table.
    let unreadable = lizard.unreadable();
    if !unreadable.is_empty() {
        text.push_str(&format!(
            "\n{} more counter(s) of Arm's database for this GPU are not readable here:\n",
            unreadable.len()
        ));
        for u in unreadable {
            text.push_str(&format!("  {}: {}\n", u.name, u.reason));
        }
    }
    Ok(text)
}

/// Runs `lizard list`.
pub fn run(args: &ListArgs) -> Result<i32, CliError> {
    let target = args.target.target()?;
    let destination = output::Destination::open(args.output.as_deref())?;
    let opened = source::open(
        &args.source,
        target.as_ref(),
        source::Purpose::List,
        None,
        None,
    )?;
    eprintln!("{}", opened.summary);
    let counters = opened.lizard.counters();
    let text = match args.format {
        ListFormat::Table => table(&opened.lizard, counters)?,
        ListFormat::Json => {
            let document = Listing::of(&opened.lizard)?;
            // Through a `serde_json::Value`, whose members are sorted by name: the order this output has.
            output::to_json(
                &serde_json::to_value(document).map_err(|e| CliError::Other(e.to_string()))?,
            )
        }
    };
    destination.write_text(&text)?;
    Ok(0)
}
