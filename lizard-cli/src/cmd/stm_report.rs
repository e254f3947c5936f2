//! `lizard stm-report FILE`: an STM trace buffer read as messages (`stp_decode::report`): a Perfetto
//! timeline (`--perfetto`), the messages (`--messages`) and statistics (text or JSON). Everything is done
//! by stp-decode's entry point (`stp_decode::report_inputs`); this module reads the files the flags name
//! and prints.
//!
//! A dump in order is read a chunk at a time; a raw circular buffer (`--wrapped`, `--write-pointer`) is
//! read whole, since its oldest word is anywhere in it (a TBR holds 32 KiB on KeyStone II).

use std::io::{BufWriter, Write};
use std::path::Path;

use lizard_core::error_chain;
use lizard_core::input::{InputError, InputKind};
use serde::Serialize;
use stp_decode::keystone::{Device, HardwareMasters, Masters};
use stp_decode::message::{Message, MessageKind};
use stp_decode::report::{ReportEvent, ReportSink};
use stp_decode::report_inputs::{
    ElfArg, FramingChoice, FramingSource, PreparedReport, ReportInputs, SetupError, TraceInput,
    GIVE_UP_AFTER,
};
use stp_decode::span::SpanSpec;
use stp_decode::stats::Stats;
use stp_decode::tbr::Wrap;
use stp_decode::timeline::PerfettoTimeline;
use stp_decode::trace_buffer::BufferError;

use crate::args::{StmDevice, StmReportArgs, TextFormat};
use crate::error::CliError;
use crate::inputs::inputs;
use crate::output::Stream;

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

/// Prints messages (`--messages`) and writes the timeline (`--perfetto`).
struct Sinks<'d> {
    timeline: Option<PerfettoTimeline<'d, BufWriter<std::fs::File>>>,
    out: Stream,
    messages: Messages,
    masters: Masters,
}

impl ReportSink for Sinks<'_> {
    type Error = std::io::Error;

    fn event(&mut self, event: &ReportEvent<'_>) -> std::io::Result<()> {
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

/// The framing the flags choose: as the `.dcm` sidecar says (its `text`), a trace ID's frames, a bare
/// stream, or as the buffer's first bytes say.
fn framing<'a>(args: &StmReportArgs, dcm: Option<&'a str>) -> FramingChoice<'a> {
    match (dcm, args.trace_id) {
        (Some(text), trace_id) => FramingChoice::Dcm { text, trace_id },
        (None, Some(id)) => FramingChoice::TraceId(id),
        (None, None) if args.bare => FramingChoice::Bare,
        (None, None) => FramingChoice::Sniff,
    }
}

/// The error of inputs that cannot make a report, said of the file at fault.
fn setup_error(args: &StmReportArgs, elf: &[ElfArg<'_>], error: SetupError) -> CliError {
    let at = |path: Option<&Path>, cause: &(dyn std::error::Error + 'static)| {
        bad_input(path.unwrap_or(&args.file), cause)
    };
    match error {
        SetupError::Dcm(e) => at(args.dcm.as_deref(), &e),
        SetupError::Dictionary(e) => at(args.dict.as_deref(), &e),
        SetupError::Layout(e) => at(args.cptracer_layout.as_deref(), &e),
        SetupError::Elf { index, source } => at(elf.get(index).map(|e| Path::new(e.path)), &source),
        SetupError::SeveralTraceIds { census } => CliError::Usage(format!(
            "{} holds TWP / CoreSight frames of several trace IDs ({census}): name the STM's with --trace-id",
            args.file.display()
        )),
        SetupError::Read(e) => read_error(&args.file, e),
        // The flags' own parsers and conflicts refuse the rest before the report is set up.
        other => CliError::Usage(error_chain(&other)),
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
    let read_text = |path: &Option<std::path::PathBuf>| {
        path.as_deref()
            .map(|path| inputs.read_text(path, InputKind::TextTable))
            .transpose()
    };
    let layout = read_text(&args.cptracer_layout)?;
    let dict = read_text(&args.dict)?;
    let elf: Vec<ElfArg<'_>> = args
        .elf
        .iter()
        .map(|v| ElfArg::parse(v, &masters))
        .collect();
    let elf_bytes = elf
        .iter()
        .map(|e| inputs.read(Path::new(e.path), InputKind::Elf))
        .collect::<Result<Vec<_>, _>>()?;

    // The trace: a raw circular buffer is read whole (its oldest word is anywhere in it), a dump in order a
    // chunk at a time.
    let wrap = args.write_pointer.map(|write_pointer| match args.wrapped {
        true => Wrap::Wrapped { write_pointer },
        false => Wrap::NotWrapped { write_pointer },
    });
    let whole;
    let trace = match wrap {
        Some(wrap) => {
            whole = inputs.read(&args.file, InputKind::TraceBuffer)?;
            TraceInput::Buffer {
                bytes: &whole,
                wrap,
            }
        }
        None => TraceInput::Stream(inputs.open(&args.file, InputKind::TraceStream)?),
    };
    let dcm = read_text(&args.dcm)?;
    let mut report = ReportInputs::new(trace, framing(args, dcm.as_deref()));
    report.masters = masters;
    report.elf = elf
        .iter()
        .map(|e| e.master)
        .zip(elf_bytes.iter().map(Vec::as_slice))
        .collect();
    report.dictionary = dict.as_deref();
    report.spans = spans;
    report.cptracer_layout = layout.as_deref();
    report.stm_clock_hz = args.stm_clock;
    report.window = args
        .window
        .map(|w| u64::try_from(w.as_nanos()).unwrap_or(u64::MAX));
    let PreparedReport { setup, trace } =
        report.prepare().map_err(|e| setup_error(args, &elf, e))?;
    let framed = setup.trace_id().is_some();
    if let (Some(id), FramingSource::Census(census)) = (setup.trace_id(), setup.framing_source()) {
        eprintln!(
            "lizard: {} holds TWP / CoreSight frames (trace IDs: {census}): decoding trace ID {id:#04x} \
             (--trace-id to choose another, --bare to read a bare STP stream)",
            args.file.display()
        );
    }

    let timeline = match (perfetto_file, &args.perfetto) {
        (Some(file), Some(path)) => {
            let title = format!("STM {}", args.file.display());
            let config = setup.config();
            let mut timeline = PerfettoTimeline::new(
                BufWriter::new(file),
                config.masters,
                setup.dictionary(),
                &title,
            )
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
    let mut sinks = Sinks {
        timeline,
        out,
        messages,
        masters,
    };
    let buffer_error = |e: BufferError<std::io::Error>| match e {
        BufferError::Sink(e) => match &args.perfetto {
            Some(path) => CliError::file(path, e),
            None => CliError::Other(e.to_string()),
        },
        BufferError::NothingFound { .. } => nothing_found(
            args,
            framed,
            format!("nothing in its first {} MiB", GIVE_UP_AFTER >> 20),
        ),
        BufferError::Read(e) => read_error(&args.file, e),
        BufferError::Order(e) => bad_input(&args.file, &e),
        e => bad_input(&args.file, &e),
    };
    let stats = setup.run(trace, &mut sinks).map_err(buffer_error)?;
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
