//! Lists the counters of a gatord events file: a whole `<events>` document or one of the fragments gatord
//! ships (by default `events-Mali-G78_hw.xml` from the gatord 9.7.2 files in `../shared/data`).
//!
//! `cargo run -p gator-xml --example list_events [FILE]`

use std::path::PathBuf;

use gator_xml::Events;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../shared/data/gatord-9.7.2/events/events-Mali-G78_hw.xml")
        });
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (gatord's events files live in ../shared/data beside the repository; pass a file \
             as the first argument)",
            path.display()
        )
    })?;
    let events = Events::parse(&text)?;
    println!("{}:", path.display());
    for set in &events.counter_sets {
        println!(
            "counter set {} ({} programmable slots)",
            set.name, set.count
        );
    }
    for category in &events.categories {
        println!("\n[{}] {} events", category.name, category.events.len());
        for event in &category.events {
            let code = event
                .event
                .map_or_else(String::new, |c| format!("{c:#06x}"));
            let units = event
                .units
                .as_ref()
                .map_or_else(String::new, ToString::to_string);
            println!(
                "  {:<40} {:>6}  {:<9} {:<10} {}",
                event.counter.as_deref().unwrap_or("(programmable)"),
                code,
                event.effective_class().to_string(),
                units,
                event.label()
            );
        }
    }
    Ok(())
}
