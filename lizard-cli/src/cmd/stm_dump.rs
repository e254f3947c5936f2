//! `lizard stm-dump FILE`: decode a raw CoreSight trace buffer holding an STM (MIPI STPv2) stream.
//!
//! The file is read in fixed chunks and every record is written as soon as it is decoded, so memory use
//! does not grow with the size of the trace. Its first 64 KiB say whether it holds CoreSight frames or a
//! bare STP stream ([`stp_decode::sniff`]) when no flag says so.

use std::io::Read;

use lizard_core::input::{InputError, InputKind};
use stp_decode::dump::{DumpOptions, Dumper, Item, Record};
use stp_decode::sniff::{Census, Layout, SNIFF_LEN};

use crate::args::{StmDumpArgs, TextFormat};
use crate::error::CliError;
use crate::inputs::inputs;
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
    /// Packets and elements written.
    decoded: u64,
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
        if matches!(record.item, Item::Packet(_) | Item::Element(_)) {
            self.decoded += 1;
        }
        match self.args.format {
            TextFormat::Table => self.out.write_fmt(format_args!("{record}\n")),
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

/// How many bytes without a single decoded packet end the listing: a file with no STP sync (ASYNC) this
/// far into it is not an STP stream (or is frames read as bare bytes), and reading on would take as long as
/// the file is (`/dev/zero`).
const GIVE_UP_AFTER: u64 = 16 << 20;

/// Runs `lizard stm-dump`. With `--trace-id` the file is read as CoreSight formatted 16-byte frames of which
/// only that trace ID is decoded; with `--bare`, as a bare STP byte stream; with neither, its first 64 KiB
/// say which (frames carrying one trace ID are decoded for that ID; frames of several IDs need
/// `--trace-id`).
pub fn run(args: &StmDumpArgs) -> Result<i32, CliError> {
    let destination = crate::output::Destination::open(args.output.as_deref())?;
    let mut file = inputs()?.open(&args.file, InputKind::TraceStream)?;
    let mut chunk = vec![0u8; CHUNK.max(SNIFF_LEN)];
    let mut head = 0;
    while head < SNIFF_LEN {
        match file.read(&mut chunk[head..SNIFF_LEN]) {
            Ok(0) => break,
            Ok(n) => head += n,
            Err(e) => return Err(read_error(&args.file, e)),
        }
    }
    let census = Census::of(&chunk[..head]);
    let trace_id = match (args.trace_id, args.bare, census.layout()) {
        (Some(id), _, _) => {
            if census.layout() == Layout::Frames && census.bytes_of(id) == 0 {
                eprintln!(
                    "lizard: warning: trace ID {id:#04x} carries nothing in the first {} KiB of {} \
                     (IDs seen there: {census})",
                    head / 1024,
                    args.file.display()
                );
            }
            Some(id)
        }
        (None, true, _) | (None, false, Layout::Bare) => None,
        (None, false, Layout::Frames) => match census.only_id() {
            Some(id) => {
                eprintln!(
                    "lizard: {} holds CoreSight frames of trace ID {id:#04x}: decoding them \
                     (--bare reads the file as a bare STP stream)",
                    args.file.display()
                );
                Some(id)
            }
            None => {
                return Err(CliError::Usage(format!(
                "{} holds CoreSight frames of several trace IDs ({census}): name the STM's with \
                     --trace-id",
                args.file.display()
            )))
            }
        },
    };
    let mut options = trace_id.map_or_else(DumpOptions::raw, DumpOptions::formatted);
    if args.elements {
        options = options.elements();
    }
    let mut dumper = Dumper::new(options);
    let mut listing = Listing {
        args,
        out: destination.stream(),
        first: true,
        decoded: 0,
    };
    listing.start()?;
    let mut fed = 0u64;
    let mut n = head;
    loop {
        if n == 0 {
            break;
        }
        fed += n as u64;
        for record in dumper.feed(&chunk[..n]) {
            listing.record(&record)?;
        }
        if listing.out.is_closed() {
            return Ok(0);
        }
        if listing.decoded == 0 && fed >= GIVE_UP_AFTER {
            listing.end()?;
            return Err(nothing_decoded(args, trace_id, &census, fed, true));
        }
        n = match file.read(&mut chunk[..CHUNK]) {
            Ok(n) => n,
            Err(e) => return Err(read_error(&args.file, e)),
        };
    }
    for record in dumper.finish() {
        listing.record(&record)?;
    }
    let decoded = listing.decoded;
    listing.end()?;
    if decoded == 0 {
        return Err(nothing_decoded(args, trace_id, &census, fed, false));
    }
    Ok(0)
}

/// A read error of the trace, its typed input error kept.
fn read_error(path: &std::path::Path, error: std::io::Error) -> CliError {
    match InputError::from_io(error) {
        Ok(input) => CliError::Input(input),
        Err(error) => CliError::file(path, error),
    }
}

/// The error of a file in which no packet could be decoded, with what to try.
fn nothing_decoded(
    args: &StmDumpArgs,
    trace_id: Option<u8>,
    census: &Census,
    bytes: u64,
    gave_up: bool,
) -> CliError {
    let read = match gave_up {
        true => format!("the first {} MiB", bytes >> 20),
        false => format!("its {bytes} bytes"),
    };
    let found = match trace_id {
        Some(id) => format!(
            "no packet of trace ID {id:#04x} decoded in {read} (trace IDs in its first frames: {census})"
        ),
        None if census.layout() == Layout::Frames => format!(
            "no STP packet decoded in {read} read as a bare stream; it looks like CoreSight frames \
             (trace IDs: {census}): try --trace-id"
        ),
        None => format!("no STP synchronisation (ASYNC) in {read}"),
    };
    CliError::NothingUsable {
        path: args.file.clone(),
        expected: "an STM trace (a bare STP stream, or CoreSight frames with --trace-id)"
            .to_owned(),
        found,
    }
}
