//! `lizard list`: the counters every source offers, and those the direct source knows of but cannot read
//! here (with the reason); then the Arm PMU events of this CPU, per core type, which are counted when named.

use hwcpipe::counting::format_cpu_list;
use hwcpipe::cpu::{Checked, CpuPmus, NotOnPmu, PMU_DATA_VAR};
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

/// The Arm PMU events of this CPU, a table per PMU (core type): every event the kernel or Arm's list for
/// the core names, with its number, description and whether the core has it. They are counted only when
/// named (`--counters`, `stat -e`); the default capture stays HWCPipe's set.
fn pmu_tables(pmus: &CpuPmus) -> String {
    if pmus.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\nArm PMU events of this CPU (not captured by default: name them with --counters, or -e in \
         stat; each is counted on every core type that has it):\n",
    );
    for pmu in pmus.pmus() {
        let list = match &pmu.core_events {
            Some(_) => "Arm's event list for the core".to_owned(),
            None => format!(
                "the kernel's event list only; Arm's per-core list adds every event of the core and its \
                 description: set {PMU_DATA_VAR} to a copy of github.com/ARM-software/data"
            ),
        };
        let core = match (&pmu.core, pmu.midr) {
            (Some(core), _) => core.clone(),
            (None, Some(midr)) => format!("MIDR {midr:#010x}"),
            (None, None) => "core unknown".to_owned(),
        };
        text.push_str(&format!(
            "\n{} ({core}; CPUs {}; perf type {}; {list}):\n",
            pmu.name,
            format_cpu_list(&pmu.cpus),
            pmu.perf_type,
        ));
        let mut table = Table::new(&["event", "code", "description", "here"]);
        for event in pmu.events() {
            let here = match &event.status {
                Ok(Checked::Unchecked) => "unchecked",
                Ok(_) => "yes",
                Err(NotOnPmu::NotImplemented { .. }) => "no (PMCEID)",
                Err(NotOnPmu::NotInEventList { .. }) => "no (Arm's list)",
                Err(NotOnPmu::UnknownName { .. }) => "no",
            };
            table.row(vec![
                event.name.clone(),
                format!("{:#06x}", event.code),
                event.description.clone().unwrap_or_default(),
                here.to_owned(),
            ]);
        }
        text.push_str(&table.render());
    }
    text.push_str(
        "\nhere: yes, the core has it; no (PMCEID), the kernel's event list for the PMU, which follows \
         PMCEID0/1_EL0, lacks it; no (Arm's list), Arm's event list for the core lacks it; unchecked, \
         neither can say (an IMPLEMENTATION DEFINED number without Arm's list).\n",
    );
    text
}

/// The Arm PMU events of this CPU as JSON, for the listing document.
fn pmu_json(pmus: &CpuPmus) -> serde_json::Value {
    let pmus: Vec<serde_json::Value> = pmus
        .pmus()
        .iter()
        .map(|pmu| {
            let events: Vec<serde_json::Value> = pmu
                .events()
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "name": e.name,
                        "code": e.code,
                        "description": e.description,
                        "implemented": e.status.is_ok(),
                        "checked": e.status.as_ref().ok().map(|c| !matches!(c, Checked::Unchecked)),
                        "unavailable": e.status.as_ref().err().map(ToString::to_string),
                    })
                })
                .collect();
            serde_json::json!({
                "pmu": pmu.name,
                "core": pmu.core,
                "midr": pmu.midr,
                "cpus": pmu.cpus,
                "perf_type": pmu.perf_type,
                "counters": pmu.counters,
                "slots": pmu.slots,
                "events": events,
            })
        })
        .collect();
    serde_json::Value::Array(pmus)
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
        &[],
    )?;
    eprintln!("{}", opened.summary);
    let counters = opened.lizard.counters();
    let pmus = CpuPmus::discover().map_err(|e| CliError::PmuData(lizard_core::error_chain(&e)))?;
    let text = match args.format {
        ListFormat::Table => {
            let mut text = table(&opened.lizard, counters)?;
            text.push_str(&pmu_tables(&pmus));
            text
        }
        ListFormat::Json => {
            let document = Listing::of(&opened.lizard)?;
            // Through a `serde_json::Value`, whose members are sorted by name: the order this output has.
            let mut value =
                serde_json::to_value(document).map_err(|e| CliError::Other(e.to_string()))?;
            if let Some(object) = value.as_object_mut() {
                object.insert("pmu_events".to_owned(), pmu_json(&pmus));
            }
            output::to_json(&value)
        }
    };
    destination.write_text(&text)?;
    Ok(0)
}
