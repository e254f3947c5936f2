//! `lizard events FILE…`: the counters described by gatord events XML files.

use gator_xml::events::EventRow;
use gator_xml::Events;
use serde::Serialize;

use crate::args::{EventsArgs, ListFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output;
use crate::table::Table;
use lizard_core::input::InputKind;

/// The JSON document: every file read.
#[derive(Serialize)]
struct Document<'e> {
    files: Vec<File<'e>>,
}

/// One events XML file: its counter sets and its events.
#[derive(Serialize)]
struct File<'e> {
    file: String,
    counter_sets: Vec<CounterSet<'e>>,
    events: Vec<EventRow<'e>>,
}

/// A counter set: its name and its number of slots.
#[derive(Serialize)]
struct CounterSet<'e> {
    name: &'e str,
    count: u32,
}

/// Runs `lizard events`.
pub fn run(args: &EventsArgs) -> Result<i32, CliError> {
    let mut table = Table::new(&[
        "file", "category", "counter", "event", "title", "name", "units", "class",
    ]);
    let destination = output::Destination::open(args.output.as_deref())?;
    let mut documents = Vec::new();
    for path in &args.files {
        let bytes = inputs()?.read(path, InputKind::EventsXml)?;
        let events = Events::from_bytes(&bytes).map_err(|e| CliError::bad_input(path, e))?;
        if events.event_count() == 0 && events.counter_sets.is_empty() {
            return Err(CliError::NothingUsable {
                path: path.clone(),
                expected: "an events XML file with counter sets or events".to_owned(),
                found: "it has none".to_owned(),
            });
        }
        documents.push((path, events));
    }
    let mut files = Vec::new();
    for (path, events) in &documents {
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let rows: Vec<EventRow<'_>> = events.rows().collect();
        for row in &rows {
            table.row(vec![
                file.clone(),
                row.category.to_owned(),
                row.counter.unwrap_or_default().to_owned(),
                row.event.map(|c| format!("{c:#x}")).unwrap_or_default(),
                row.title.unwrap_or_default().to_owned(),
                row.name.to_owned(),
                row.units.map(ToString::to_string).unwrap_or_default(),
                row.class.to_string(),
            ]);
        }
        let counter_sets = events
            .counter_sets
            .iter()
            .map(|s| CounterSet {
                name: &s.name,
                count: s.count,
            })
            .collect();
        files.push(File {
            file: path.display().to_string(),
            counter_sets,
            events: rows,
        });
    }
    let text = match args.format {
        ListFormat::Table => table.render(),
        // Through a `serde_json::Value`, whose members are sorted by name: the order this output has.
        ListFormat::Json => output::to_json(
            &serde_json::to_value(Document { files })
                .map_err(|e| CliError::Other(e.to_string()))?,
        ),
    };
    destination.write_text(&text)?;
    Ok(0)
}
