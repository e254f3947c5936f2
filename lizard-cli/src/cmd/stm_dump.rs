//! `lizard stm-dump FILE`: decode a raw CoreSight trace buffer holding an STM (MIPI STPv2) stream.

use serde_json::{json, Map, Value as Json};
use stp_decode::dump::{dump, DumpOptions, Field, Item};

use crate::args::{StmDumpArgs, TextFormat};
use crate::error::CliError;
use crate::output;

fn field_json(value: Field) -> Json {
    match value {
        Field::U64(v) => json!(v),
        Field::Bool(v) => json!(v),
        Field::Str(v) => json!(v),
    }
}

/// Runs `lizard stm-dump`. Without `--trace-id` the file is taken as a bare STP byte stream; with it, as
/// CoreSight formatted 16-byte frames of which only that trace ID is decoded.
pub fn run(args: &StmDumpArgs) -> Result<i32, CliError> {
    let buffer = std::fs::read(&args.file).map_err(|e| CliError::file(&args.file, e))?;
    let options = args
        .trace_id
        .map_or_else(DumpOptions::raw, DumpOptions::formatted);
    let wanted = |item: &Item| !args.elements || matches!(item, Item::Element(_));
    let mut text = String::new();
    let mut records = Vec::new();
    for record in dump(&buffer, options).filter(|r| wanted(&r.item)) {
        match args.format {
            TextFormat::Text => {
                text.push_str(&record.to_string());
                text.push('\n');
            }
            TextFormat::Json => {
                let mut fields = Map::new();
                record.visit_fields(&mut |name, value| {
                    fields.insert(name.to_owned(), field_json(value));
                });
                records.push(Json::Object(fields));
            }
        }
    }
    if args.format == TextFormat::Json {
        text = output::to_json(
            &json!({ "file": args.file.display().to_string(), "records": records }),
        );
    }
    output::write(None, &text)?;
    Ok(0)
}
