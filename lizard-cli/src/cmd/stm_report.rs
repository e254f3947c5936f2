//! `lizard stm-report FILE`: an STM trace buffer read as messages (`stp_decode::report`): a Perfetto
//! timeline (`--perfetto`), the messages (`--messages`) and statistics (text or JSON). Everything is done
//! by stp-decode; this module reads the files the flags name and prints.
//!
//! A dump in order is read a chunk at a time (`stp_decode::trace_buffer::report_stream`); a raw circular
//! buffer (`--wrapped`) is read whole (`report_buffer`), since its oldest word is anywhere in it (a TBR holds
//! 32 KiB on KeyStone II).

use std::cell::Cell;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use lizard_core::error_chain;
use lizard_core::input::{InputError, InputKind, Inputs};
use serde::Serialize;
use stp_decode::cptracer;
use stp_decode::dcm::Dcm;
use stp_decode::deformat::FrameMode;
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::elf::{ElfImage, ElfImages};
use stp_decode::keystone::{Device, HardwareMasters, Masters};
use stp_decode::message::{Message, MessageKind};
use stp_decode::report::{ReportConfig, ReportEvent, ReportSink};
use stp_decode::sniff::{self, Census, SNIFF_LEN};
use stp_decode::span::SpanSpec;
use stp_decode::stats::Stats;
use stp_decode::tbr::Wrap;
use stp_decode::timeline::PerfettoTimeline;
use stp_decode::trace_buffer::{report_buffer, report_stream, BufferError};

use crate::args::{StmDevice, StmReportArgs, TextFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output::Stream;

/// KeyStone II's STM trace ID in TWP frames.
const KEYSTONE_STM_ID: u8 = 0x40;

/// The members of the JSON document of `--format json` after its `messages` (which are written as the
/// report finds them, before these).
#[derive(Serialize)]
struct DocumentTail<'a> {
    file: &'a Path,
    perfetto: Option<&'a Path>,
    stats: &'a Stats,
}

/// One message in JSON: when, the master's name, and the message's own members.
#[derive(Serialize)]
struct MessageEntry<'a> {
    time: u64,
    master_name: &'a str,
    #[serde(flatten)]
    message: &'a Message<'a>,
}

/// How many bytes of a dump in order without one message, torn piece or span end the report: such a file
/// is not a trace of this setup, and reading on would take as long as the file is (`/dev/zero`).
const GIVE_UP_AFTER: u64 = 16 << 20;

fn bad_input(path: &Path, error: &(dyn std::error::Error + 'static)) -> CliError {
    CliError::BadInput {
        path: path.to_path_buf(),
        reason: error_chain(error),
    }
}

/// A read error of the trace, its typed input error kept.
fn read_error(path: &Path, error: std::io::Error) -> CliError {
    match InputError::from_io(error) {
        Ok(input) => CliError::Input(input),
        Err(error) => CliError::file(path, error),
    }
}

/// `--elf` values: `(master, file)`; a value is `MASTER=FILE` when what precedes its first `=` names a
/// master.
fn elf_files(values: &[String], masters: &Masters) -> Vec<(Option<u16>, PathBuf)> {
    values
        .iter()
        .map(|v| match v.split_once('=') {
            Some((m, file)) if masters.parse(m).is_some() => {
                (masters.parse(m), PathBuf::from(file))
            }
            _ => (None, PathBuf::from(v)),
        })
        .collect()
}

/// How `--messages` are written: not at all, a line of text each, or as the members of the JSON
/// document's `messages` array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Messages {
    /// Not asked for.
    None,
    /// One line each.
    Lines,
    /// The JSON document's `messages` array; `first` until one is written.
    Json { first: bool },
}

/// Prints messages (`--messages`), writes the timeline (`--perfetto`) and counts what the report finds.
struct Sinks<'d, 'c> {
    timeline: Option<PerfettoTimeline<'d, BufWriter<std::fs::File>>>,
    out: Stream,
    messages: Messages,
    masters: Masters,
    /// Events of the report so far.
    events: &'c Cell<u64>,
}

impl ReportSink for Sinks<'_, '_> {
    type Error = std::io::Error;

    fn event(&mut self, event: &ReportEvent<'_>) -> std::io::Result<()> {
        self.events.set(self.events.get() + 1);
        if let Some(timeline) = &mut self.timeline {
            timeline.event(event)?;
        }
        let ReportEvent::Message { time, message } = event else {
            return Ok(());
        };
        let who = self.masters.name(message.master);
        let out = &mut self.out;
        let written = match &mut self.messages {
            Messages::None => Ok(()),
            Messages::Lines => {
                let line = match message.kind {
                    MessageKind::Undecodable { reason, .. } => {
                        format!("raw ({reason}): {}", message.text)
                    }
                    _ => message.text.to_owned(),
                };
                out.write_fmt(format_args!(
                    "{time:>14} {who:<10} ch {:<5} {line}\n",
                    message.channel
                ))
            }
            Messages::Json { first } => {
                let entry = MessageEntry {
                    time: *time,
                    master_name: &who.to_string(),
                    message,
                };
                let comma = if *first { "" } else { "," };
                *first = false;
                let text = serde_json::to_string(&entry).map_err(std::io::Error::other)?;
                out.write_fmt(format_args!("{comma}\n    {text}"))
            }
        };
        written.map_err(|e| std::io::Error::other(e.to_string()))
    }
}

/// A trace read with a deadline on finding something: past [`GIVE_UP_AFTER`] bytes with no event of the
/// report, the read fails.
struct GiveUp<'c, R> {
    inner: R,
    read: u64,
    events: &'c Cell<u64>,
}

/// The error a [`GiveUp`] read ends with.
#[derive(Debug, thiserror::Error)]
#[error("nothing found in the first {} MiB", GIVE_UP_AFTER >> 20)]
struct GaveUp;

impl<R: Read> Read for GiveUp<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read >= GIVE_UP_AFTER && self.events.get() == 0 {
            return Err(std::io::Error::other(GaveUp));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// How the buffer carries the STP stream, from the flags or the buffer's first bytes: `Some(trace ID)` for
/// frames, `None` for a bare stream.
fn framing(args: &StmReportArgs, inputs: &Inputs<'_>, head: &[u8]) -> Result<Option<u8>, CliError> {
    if let Some(path) = &args.dcm {
        let text = inputs.read_text(path, InputKind::TextTable)?;
        let dcm = Dcm::parse(&text).map_err(|e| bad_input(path, &e))?;
        let framed = dcm.layout().map_err(|e| bad_input(path, &e))?.twp_frames;
        return Ok(framed.then(|| args.trace_id.unwrap_or(KEYSTONE_STM_ID)));
    }
    if args.trace_id.is_some() || args.bare {
        return Ok(args.trace_id);
    }
    let census = Census::of(head);
    if census.layout() == sniff::Layout::Bare {
        return Ok(None);
    }
    // Frames: of one source, or of several with KeyStone II's STM among them.
    let id = census
        .only_id()
        .or_else(|| (census.bytes_of(KEYSTONE_STM_ID) > 0).then_some(KEYSTONE_STM_ID));
    match id {
        Some(id) => {
            eprintln!(
                "lizard: {} holds TWP / CoreSight frames (trace IDs: {census}): decoding trace ID {id:#04x} \
                 (--trace-id to choose another, --bare to read a bare STP stream)",
                args.file.display()
            );
            Ok(Some(id))
        }
        None => Err(CliError::Usage(format!(
            "{} holds TWP / CoreSight frames of several trace IDs ({census}): name the STM's with --trace-id",
            args.file.display()
        ))),
    }
}

/// Runs `lizard stm-report`.
pub fn run(args: &StmReportArgs) -> Result<i32, CliError> {
    let inputs = inputs()?;
    // Every output is opened before the trace is read: a path that cannot be written fails first.
    let destination = crate::output::Destination::open(args.output.as_deref())?;
    let perfetto_file = args
        .perfetto
        .as_deref()
        .map(|path| std::fs::File::create(path).map_err(|e| CliError::file(path, e)))
        .transpose()?;

    let mut masters = args
        .device
        .map(|d| {
            Masters::for_device(match d {
                StmDevice::K2h => Device::K2h,
                StmDevice::K2e => Device::K2e,
                StmDevice::K2l => Device::K2l,
            })
        })
        .unwrap_or_default();
    if let Some((first, last)) = args.hardware_masters {
        masters.hardware = HardwareMasters { first, last };
    }

    let mut spans = Vec::new();
    for span in &args.spans {
        let spec: SpanSpec = span
            .parse()
            .map_err(|e| CliError::Usage(format!("--span '{span}': {e}")))?;
        spans.push(spec);
    }
    let layout = match &args.cptracer_layout {
        Some(path) => {
            let text = inputs.read_text(path, InputKind::TextTable)?;
            Some(cptracer::Layout::parse(&text).map_err(|e| bad_input(path, &e))?)
        }
        None => None,
    };
    let dict = match &args.dict {
        Some(path) => {
            let text = inputs.read_text(path, InputKind::TextTable)?;
            Dictionary::parse(&text, &masters).map_err(|e| bad_input(path, &e))?
        }
        None => Dictionary::new(),
    };
    let elf_paths = elf_files(&args.elf, &masters);
    let elf_bytes = elf_paths
        .iter()
        .map(|(_, path)| inputs.read(path, InputKind::Elf))
        .collect::<Result<Vec<_>, _>>()?;
    let mut images = ElfImages::new();
    for ((master, path), bytes) in elf_paths.iter().zip(&elf_bytes) {
        let image = ElfImage::parse(bytes).map_err(|e| bad_input(path, &e))?;
        match master {
            Some(m) => images.set_master(*m, image),
            None => images.set_default(image),
        }
    }

    // The trace: a raw circular buffer is read whole (its oldest word is anywhere in it), a dump in order a
    // chunk at a time; its first 64 KiB say how it is framed when no flag does.
    let wrap = args.write_pointer.map(|write_pointer| match args.wrapped {
        true => Wrap::Wrapped { write_pointer },
        false => Wrap::NotWrapped { write_pointer },
    });
    enum Trace<'s> {
        Whole(Vec<u8>, Wrap),
        Stream {
            head: Vec<u8>,
            rest: lizard_core::input::Stream<'s>,
        },
    }
    let trace = match wrap {
        Some(wrap) => Trace::Whole(inputs.read(&args.file, InputKind::TraceBuffer)?, wrap),
        None => {
            let mut stream = inputs.open(&args.file, InputKind::TraceStream)?;
            let mut head = Vec::with_capacity(SNIFF_LEN);
            (&mut stream)
                .take(SNIFF_LEN as u64)
                .read_to_end(&mut head)
                .map_err(|e| read_error(&args.file, e))?;
            Trace::Stream { head, rest: stream }
        }
    };
    let head = match &trace {
        Trace::Whole(bytes, _) => &bytes[..bytes.len().min(SNIFF_LEN)],
        Trace::Stream { head, .. } => &head[..],
    };
    let mut config = match framing(args, &inputs, head)? {
        Some(id) => ReportConfig::new(Framing::Formatted(FrameMode::Memory), id),
        None => ReportConfig::new(Framing::Raw, 0),
    };
    config.masters = masters;
    config.stm_clock_hz = args.stm_clock;
    config.window = args
        .window
        .map(|w| u64::try_from(w.as_nanos()).unwrap_or(u64::MAX));
    // A dump saved by TI's tools, or a wrapped buffer, starts wherever the oldest word was.
    config.starts_mid_stream = args.dcm.is_some() || args.wrapped;
    config.spans = spans;
    config.cptracer_layout = layout;
    let framed = matches!(config.framing, Framing::Formatted(_));

    let timeline = match (perfetto_file, &args.perfetto) {
        (Some(file), Some(path)) => {
            let title = format!("STM {}", args.file.display());
            let mut timeline = PerfettoTimeline::new(BufWriter::new(file), masters, &dict, &title)
                .map_err(|e| CliError::file(path, e))?;
            if let Some(layout) = &config.cptracer_layout {
                timeline = timeline.with_layout(layout.clone());
            }
            Some(timeline)
        }
        _ => None,
    };
    let mut out = destination.stream();
    let json = args.format == TextFormat::Json;
    let messages = match (args.messages, json) {
        (false, _) => Messages::None,
        (true, false) => Messages::Lines,
        (true, true) => Messages::Json { first: true },
    };
    if json {
        out.write_fmt(format_args!("{{"))?;
        if args.messages {
            out.write_fmt(format_args!("\n  \"messages\": ["))?;
        }
    }
    let events = Cell::new(0);
    let mut sinks = Sinks {
        timeline,
        out,
        messages,
        masters,
        events: &events,
    };
    let buffer_error = |e: BufferError<std::io::Error>| match e {
        BufferError::Sink(e) => match &args.perfetto {
            Some(path) => CliError::file(path, e),
            None => CliError::Other(e.to_string()),
        },
        BufferError::Read(e) if e.get_ref().is_some_and(|e| e.is::<GaveUp>()) => nothing_found(
            args,
            framed,
            format!("nothing in its first {} MiB", GIVE_UP_AFTER >> 20),
        ),
        BufferError::Read(e) => read_error(&args.file, e),
        BufferError::Order(e) => bad_input(&args.file, &e),
        e => bad_input(&args.file, &e),
    };
    let stats = match trace {
        Trace::Whole(buffer, wrap) => {
            report_buffer(config, &images, &dict, &buffer, wrap, &mut sinks)
        }
        Trace::Stream { head, rest } => {
            let reader = GiveUp {
                inner: std::io::Cursor::new(head).chain(rest),
                read: 0,
                events: &events,
            };
            report_stream(config, &images, &dict, reader, &mut sinks)
        }
    }
    .map_err(buffer_error)?;
    if let Some(timeline) = sinks.timeline.take() {
        let path = args.perfetto.as_deref().unwrap_or(Path::new(""));
        timeline
            .finish()
            .and_then(|mut w| w.flush())
            .map_err(|e| CliError::file(path, e))?;
    }
    let mut out = sinks.out;
    match args.format {
        TextFormat::Table => out.write_fmt(format_args!("{stats}"))?,
        TextFormat::Json => {
            let tail = DocumentTail {
                file: &args.file,
                perfetto: args.perfetto.as_deref(),
                stats: &stats,
            };
            let members =
                serde_json::to_value(&tail).map_err(|e| CliError::Other(e.to_string()))?;
            let mut comma = match sinks.messages {
                Messages::Json { first: true } => {
                    out.write_fmt(format_args!("]"))?;
                    ","
                }
                Messages::Json { first: false } => {
                    out.write_fmt(format_args!("\n  ]"))?;
                    ","
                }
                _ => "",
            };
            if let serde_json::Value::Object(members) = members {
                for (name, value) in members {
                    let value = serde_json::to_string_pretty(&value)
                        .map_err(|e| CliError::Other(e.to_string()))?
                        .replace('\n', "\n  ");
                    let name = serde_json::Value::from(name);
                    out.write_fmt(format_args!("{comma}\n  {name}: {value}"))?;
                    comma = ",";
                }
            }
            out.write_fmt(format_args!("\n}}\n"))?;
        }
    }
    out.finish()?;
    if stats.stream.messages == 0 && stats.stream.data_packets == 0 {
        let found = match stats.stream.asyncs {
            0 => format!(
                "no STP synchronisation (ASYNC) in {} nibbles",
                stats.stream.nibbles_before_first_sync
            ),
            _ => "no data packet after synchronising".to_owned(),
        };
        return Err(nothing_found(args, framed, found));
    }
    Ok(0)
}

/// The error of a trace in which nothing was found, with what to try.
fn nothing_found(args: &StmReportArgs, framed: bool, found: String) -> CliError {
    let hint = match (framed, args.dcm.is_some()) {
        (true, _) => " (read as TWP / CoreSight frames: is --trace-id the STM's?)",
        (false, false) => " (read as a bare STP stream: a KeyStone II buffer of TWP frames needs --dcm or --trace-id)",
        (false, true) => "",
    };
    CliError::NothingUsable {
        path: args.file.clone(),
        expected: "an STM trace with messages".to_owned(),
        found: format!("{found}{hint}"),
    }
}
