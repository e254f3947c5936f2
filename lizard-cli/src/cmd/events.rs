//! `lizard events FILE…`: the counters described by gatord events XML files.

use gator_xml::Events;
use serde::Serialize;

use crate::args::{EventsArgs, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::table::Table;

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
    events: Vec<Event<'e>>,
}

/// A counter set: its name and its number of slots.
#[derive(Serialize)]
struct CounterSet<'e> {
    name: &'e str,
    count: u32,
}

/// One event with its category, the class and multiplier it takes when the file gives none.
#[derive(Serialize)]
struct Event<'e> {
    category: &'e str,
    counter_set: Option<&'e str>,
    counter: Option<&'e str>,
    event: Option<u64>,
    title: Option<&'e str>,
    name: &'e str,
    description: Option<&'e str>,
    units: Option<String>,
    class: String,
    multiplier: f64,
}

/// Runs `lizard events`.
pub fn run(args: &EventsArgs) -> Result<i32, CliError> {
    let mut table = Table::new(&[
        "file", "category", "counter", "event", "title", "name", "units", "class",
    ]);
    let mut documents = Vec::new();
    for path in &args.files {
        let bytes = std::fs::read(path).map_err(|e| CliError::file(path, e))?;
        let events = Events::from_bytes(&bytes).map_err(|e| CliError::bad_input(path, e))?;
        documents.push((path, events));
    }
    let mut files = Vec::new();
    for (path, events) in &documents {
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        let mut rows = Vec::new();
        for (category, event) in events.events() {
            let code = event.event.map(|c| format!("{c:#x}"));
            table.row(vec![
                file.clone(),
                category.name.clone(),
                event.counter.clone().unwrap_or_default(),
                code.clone().unwrap_or_default(),
                event.title.as_deref().unwrap_or_default().to_owned(),
                event.name.to_string(),
                event
                    .units
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                event.effective_class().to_string(),
            ]);
            rows.push(Event {
                category: &category.name,
                counter_set: category.counter_set.as_deref(),
                counter: event.counter.as_deref(),
                event: event.event,
                title: event.title.as_deref(),
                name: event.name.as_str(),
                description: event.description.as_deref(),
                units: event.units.as_ref().map(ToString::to_string),
                class: event.effective_class().to_string(),
                multiplier: event.effective_multiplier(),
            });
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
    output::write(None, &text)?;
    Ok(0)
}
