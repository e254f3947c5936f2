//! `lizard list`: the counters every source offers.

use serde_json::json;

use crate::args::{ListArgs, ListFormat};
use crate::document::collect;
use crate::error::CliError;
use crate::output;
use crate::source::{self, counter_name};
use crate::table::Table;

/// Runs `lizard list`.
pub fn run(args: &ListArgs) -> Result<i32, CliError> {
    let target = args.target.target()?;
    let opened = source::open(&args.source, target.as_ref(), source::Purpose::List, None)?;
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
                    output::class_name(c.class).to_owned(),
                    output::result_type_name(c.result_type).to_owned(),
                    note,
                ]);
            }
            table.render()
        }
        ListFormat::Json => {
            let list = counters
                .iter()
                .map(|c| {
                    let mut entry = serde_json::to_value(collect::info(c))
                        .map_err(|e| CliError::Other(e.to_string()))?;
                    entry["unavailable"] =
                        json!(opened.lizard.unavailable(c.id)?.map(|why| why.to_string()));
                    Ok(entry)
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            output::to_json(&json!({ "counters": list }))
        }
    };
    output::write(None, &text)?;
    Ok(0)
}
