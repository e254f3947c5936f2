//! `lizard stm-report FILE`: an STM trace buffer read as messages (`stp_decode::report`): a Perfetto
//! timeline (`--perfetto`), the messages (`--messages`) and statistics (text or JSON). Everything is done
//! by stp-decode; this module reads the files the flags name and prints.
//!
//! A dump in order is read a chunk at a time (`stp_decode::trace_buffer::report_stream`); a raw circular
//! buffer (`--wrapped`) is read whole (`report_buffer`), since its oldest word is anywhere in it (a TBR holds
//! 32 KiB on KeyStone II).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use lizard_core::error_chain;
use serde::Serialize;
use stp_decode::cptracer::Layout;
use stp_decode::dcm::Dcm;
use stp_decode::deformat::FrameMode;
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::elf::{ElfImage, ElfImages};
use stp_decode::keystone::{Device, HardwareMasters, Masters};
use stp_decode::message::MessageKind;
use stp_decode::report::{ReportConfig, ReportEvent, ReportSink};
use stp_decode::span::SpanSpec;
use stp_decode::stats::Stats;
use stp_decode::tbr::Wrap;
use stp_decode::timeline::PerfettoTimeline;
use stp_decode::trace_buffer::{report_buffer, report_stream, BufferError};

use crate::args::{StmDevice, StmReportArgs, TextFormat};
use crate::error::CliError;
use crate::output::Stream;

/// KeyStone II's STM trace ID in TWP frames.
const KEYSTONE_STM_ID: u8 = 0x40;

/// The JSON document of `--format json`.
#[derive(Serialize)]
struct Document<'a> {
    file: &'a Path,
    perfetto: Option<&'a Path>,
    stats: &'a Stats,
}

fn bad_input(path: &Path, error: &(dyn std::error::Error + 'static)) -> CliError {
    CliError::BadInput {
        path: path.to_path_buf(),
        reason: error_chain(error),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| CliError::file(path, e))
}

fn read_text(path: &Path) -> Result<String, CliError> {
    String::from_utf8(read(path)?).map_err(|e| bad_input(path, &e))
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

/// Prints messages (`--messages`) and writes the timeline (`--perfetto`).
struct Sinks<'d> {
    timeline: Option<PerfettoTimeline<'d, BufWriter<std::fs::File>>>,
    lines: Option<Stream>,
    masters: Masters,
}

impl ReportSink for Sinks<'_> {
    type Error = std::io::Error;

    fn event(&mut self, event: &ReportEvent<'_>) -> std::io::Result<()> {
        if let Some(timeline) = &mut self.timeline {
            timeline.event(event)?;
        }
        if let (Some(out), ReportEvent::Message { time, message }) = (&mut self.lines, event) {
            let who = self.masters.name(message.master);
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
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        }
        Ok(())
    }
}

/// Runs `lizard stm-report`.
pub fn run(args: &StmReportArgs) -> Result<i32, CliError> {
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

    // How the buffer carries the stream.
    let framed = match &args.dcm {
        Some(path) => {
            let dcm = Dcm::parse(&read_text(path)?).map_err(|e| bad_input(path, &e))?;
            dcm.layout().map_err(|e| bad_input(path, &e))?.twp_frames
        }
        None => args.trace_id.is_some(),
    };
    let mut config = if framed {
        ReportConfig::new(
            Framing::Formatted(FrameMode::Memory),
            args.trace_id.unwrap_or(KEYSTONE_STM_ID),
        )
    } else {
        ReportConfig::new(Framing::Raw, 0)
    };
    config.masters = masters;
    config.stm_clock_hz = args.stm_clock;
    config.window = args
        .window
        .map(|w| u64::try_from(w.as_nanos()).unwrap_or(u64::MAX));
    // A dump saved by TI's tools, or a wrapped buffer, starts wherever the oldest word was.
    config.starts_mid_stream = args.dcm.is_some() || args.wrapped;
    for span in &args.spans {
        let spec: SpanSpec = span
            .parse()
            .map_err(|e| CliError::Usage(format!("--span '{span}': {e}")))?;
        config.spans.push(spec);
    }
    if let Some(path) = &args.cptracer_layout {
        config.cptracer_layout =
            Some(Layout::parse(&read_text(path)?).map_err(|e| bad_input(path, &e))?);
    }
    let dict = match &args.dict {
        Some(path) => {
            Dictionary::parse(&read_text(path)?, &masters).map_err(|e| bad_input(path, &e))?
        }
        None => Dictionary::new(),
    };
    let elf_paths = elf_files(&args.elf, &masters);
    let elf_bytes = elf_paths
        .iter()
        .map(|(_, path)| read(path))
        .collect::<Result<Vec<_>, _>>()?;
    let mut images = ElfImages::new();
    for ((master, path), bytes) in elf_paths.iter().zip(&elf_bytes) {
        let image = ElfImage::parse(bytes).map_err(|e| bad_input(path, &e))?;
        match master {
            Some(m) => images.set_master(*m, image),
            None => images.set_default(image),
        }
    }

    let timeline = match &args.perfetto {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| CliError::file(path, e))?;
            let title = format!("STM {}", args.file.display());
            let mut timeline = PerfettoTimeline::new(BufWriter::new(file), masters, &dict, &title)
                .map_err(|e| CliError::file(path, e))?;
            if let Some(layout) = &config.cptracer_layout {
                timeline = timeline.with_layout(layout.clone());
            }
            Some(timeline)
        }
        None => None,
    };
    let mut sinks = Sinks {
        timeline,
        lines: args.messages.then(Stream::stdout),
        masters,
    };
    let buffer_error = |e: BufferError<std::io::Error>| match e {
        BufferError::Sink(e) => match &args.perfetto {
            Some(path) => CliError::file(path, e),
            None => CliError::Other(e.to_string()),
        },
        BufferError::Read(e) => CliError::file(&args.file, e),
        BufferError::Order(e) => bad_input(&args.file, &e),
        e => bad_input(&args.file, &e),
    };

    let wrap = args.write_pointer.map(|write_pointer| {
        if args.wrapped {
            Wrap::Wrapped { write_pointer }
        } else {
            Wrap::NotWrapped { write_pointer }
        }
    });
    let stats = match wrap {
        Some(wrap) => {
            let buffer = read(&args.file)?;
            report_buffer(config, &images, &dict, &buffer, wrap, &mut sinks)
        }
        None => {
            let file =
                std::fs::File::open(&args.file).map_err(|e| CliError::file(&args.file, e))?;
            report_stream(config, &images, &dict, file, &mut sinks)
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
    let mut out = sinks.lines.take().unwrap_or_else(Stream::stdout);
    match args.format {
        TextFormat::Text => out.write_fmt(format_args!("{stats}"))?,
        TextFormat::Json => {
            let document = Document {
                file: &args.file,
                perfetto: args.perfetto.as_deref(),
                stats: &stats,
            };
            let text = serde_json::to_string_pretty(&document)
                .map_err(|e| CliError::Other(e.to_string()))?;
            out.write_fmt(format_args!("{text}\n"))?;
        }
    }
    out.finish()?;
    Ok(0)
}
