//! `lizard stm-dump FILE`: decode a raw CoreSight trace buffer holding an STM (MIPI STPv2) stream.
//!
//! The file is read in fixed chunks and every record is written as soon as it is decoded, so memory use
//! does not grow with the size of the trace.

use std::io::Read;

use stp_decode::dump::{DumpOptions, Dumper, Record};

use crate::args::{StmDumpArgs, TextFormat};
use crate::error::CliError;
use crate::output::Stream;

/// Bytes read from the file at a time.
const CHUNK: usize = 64 << 10;

/// `value` as compact JSON, its objects' members sorted by name (the order of a [`serde_json::Value`]).
fn sorted_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<serde_json::Value, CliError> {
    serde_json::to_value(value).map_err(|e| CliError::Other(e.to_string()))
}

/// Writes records as text lines or as the elements of a JSON array.
struct Listing<'a> {
    args: &'a StmDumpArgs,
    out: Stream,
    first: bool,
}

impl Listing<'_> {
    fn start(&mut self) -> Result<(), CliError> {
        if self.args.format == TextFormat::Json {
            let file = sorted_json(&self.args.file.display().to_string())?;
            self.out
                .write_fmt(format_args!("{{\n  \"file\": {file},\n  \"records\": ["))?;
        }
        Ok(())
    }

    fn record(&mut self, record: &Record) -> Result<(), CliError> {
        match self.args.format {
            TextFormat::Text => self.out.write_fmt(format_args!("{record}\n")),
            TextFormat::Json => {
                let fields = sorted_json(record)?;
                let comma = if self.first { "" } else { "," };
                self.first = false;
                self.out.write_fmt(format_args!("{comma}\n    {fields}"))
            }
        }
    }

    fn end(mut self) -> Result<(), CliError> {
        if self.args.format == TextFormat::Json {
            let close = if self.first { "]\n}\n" } else { "\n  ]\n}\n" };
            self.out.write_fmt(format_args!("{close}"))?;
        }
        self.out.finish()
    }
}

/// Runs `lizard stm-dump`. Without `--trace-id` the file is taken as a bare STP byte stream; with it, as
/// CoreSight formatted 16-byte frames of which only that trace ID is decoded.
pub fn run(args: &StmDumpArgs) -> Result<i32, CliError> {
    let mut file = std::fs::File::open(&args.file).map_err(|e| CliError::file(&args.file, e))?;
    let mut options = args
        .trace_id
        .map_or_else(DumpOptions::raw, DumpOptions::formatted);
    if args.elements {
        options = options.elements();
    }
    let mut dumper = Dumper::new(options);
    let mut listing = Listing {
        args,
        out: Stream::stdout(),
        first: true,
    };
    listing.start()?;
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CliError::file(&args.file, e)),
        };
        for record in dumper.feed(&chunk[..n]) {
            listing.record(&record)?;
        }
        if listing.out.is_closed() {
            return Ok(0);
        }
    }
    for record in dumper.finish() {
        listing.record(&record)?;
    }
    listing.end()?;
    Ok(0)
}
