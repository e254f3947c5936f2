//! `lizard list`: the counters every source offers, and those the direct source knows of but cannot read
//! here (with the reason).

use lizard_core::capture::{collect, Class, Listing, ValueType};

use crate::args::{ListArgs, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::source::{self, counter_name};
use crate::table::Table;

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
        ListFormat::Table => {
            let mut table = Table::new(&[
                "id", "source", "category", "name", "event", "title", "units", "class", "type",
                "note",
            ]);
            for c in counters {
                let note = match opened.lizard.unavailable(c.id)? {
                    Some(reason) => format!("unavailable here: {reason}"),
                    None => String::new(),
                };
                table.row(vec![
                    c.id.to_string(),
                    collect::info(c).source_label(),
                    c.category.clone(),
                    counter_name(c).to_owned(),
                    // A counter-set event's code, which gatord programs into one of the set's slots.
                    c.set_event
                        .as_ref()
                        .map_or_else(String::new, |e| format!("{:#04x}", e.code)),
                    format!("{} {}", c.title, c.name).trim().to_owned(),
                    c.units.of_readings().to_string(),
                    Class::from(c.class).to_string(),
                    ValueType::from(c.result_type).to_string(),
                    note,
                ]);
            }
            let mut text = table.render();
            // Counters the direct source knows of but cannot read here have no id: listed after the table.
            let unreadable = opened.lizard.unreadable();
            if !unreadable.is_empty() {
                text.push_str(&format!(
                    "\n{} more counter(s) of Arm's database for this GPU are not readable here:\n",
                    unreadable.len()
                ));
                for u in unreadable {
                    text.push_str(&format!("  {}: {}\n", u.name, u.reason));
                }
            }
            text
        }
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
