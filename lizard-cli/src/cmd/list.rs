//! `lizard list`: the counters every source offers.

use serde_json::json;

use crate::args::{ListArgs, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::source::{self, counter_name, source_name};
use crate::table::Table;

/// Runs `lizard list`.
pub fn run(args: &ListArgs) -> Result<i32, CliError> {
    let opened = source::open(&args.source, None)?;
    eprintln!("{}", opened.summary);
    let counters = opened.lizard.counters();
    let text = match args.format {
        ListFormat::Table => {
            let mut table = Table::new(&[
                "id", "source", "category", "name", "title", "units", "class", "type",
            ]);
            for c in counters {
                table.row(vec![
                    c.id.to_string(),
                    source_name(c.source).to_owned(),
                    c.category.clone(),
                    counter_name(c).to_owned(),
                    format!("{} {}", c.title, c.name).trim().to_owned(),
                    c.units.to_string(),
                    output::class_name(c.class).to_owned(),
                    output::result_type_name(c.result_type).to_owned(),
                ]);
            }
            table.render()
        }
        ListFormat::Json => {
            let list: Vec<_> = counters.iter().map(output::counter_json).collect();
            output::to_json(&json!({ "counters": list }))
        }
    };
    output::write(None, &text)?;
    Ok(0)
}
