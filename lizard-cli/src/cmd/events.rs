//! `lizard events FILE…`: the counters described by gatord events XML files.

use gator_xml::Events;
use serde_json::json;

use crate::args::{EventsArgs, ListFormat};
use crate::error::CliError;
use crate::output;
use crate::table::Table;

/// Runs `lizard events`.
pub fn run(args: &EventsArgs) -> Result<i32, CliError> {
    let mut table = Table::new(&[
        "file", "category", "counter", "event", "title", "name", "units", "class",
    ]);
    let mut files = Vec::new();
    for path in &args.files {
        let bytes = std::fs::read(path).map_err(|e| CliError::file(path, e))?;
        let events = Events::from_bytes(&bytes).map_err(|e| CliError::bad_input(path, e))?;
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
            rows.push(json!({
                "category": category.name,
                "counter_set": category.counter_set,
                "counter": event.counter,
                "event": event.event,
                "title": event.title.as_deref(),
                "name": event.name.as_str(),
                "description": event.description.as_deref(),
                "units": event.units.as_ref().map(ToString::to_string),
                "class": event.effective_class().to_string(),
                "multiplier": event.effective_multiplier(),
            }));
        }
        let counter_sets: Vec<_> = events
            .counter_sets
            .iter()
            .map(|s| json!({ "name": s.name, "count": s.count }))
            .collect();
        files.push(json!({ "file": path.display().to_string(), "counter_sets": counter_sets, "events": rows }));
    }
    let text = match args.format {
        ListFormat::Table => table.render(),
        ListFormat::Json => output::to_json(&json!({ "files": files })),
    };
    output::write(None, &text)?;
    Ok(0)
}
