//! One entry point for a report on a trace buffer (feature `std`): everything read beside the buffer, as
//! `lizard stm-report` and `lizard_rs.stm` take it, described once ([`ReportInputs`]), checked and parsed
//! ([`ReportInputs::prepare`]), then run into a [`ReportSink`] ([`PreparedReport::run`]).
//!
//! Files are the caller's to read, bounded as it sees fit: the inputs are their contents (the `.dcm`
//! sidecar's text, the ELF images' bytes, the dictionary's text) and the buffer, held whole or as a reader.
//! What an argument names is parsed here, once: an ELF image's `MASTER=PATH` ([`ElfArg`]), how the buffer is
//! framed ([`FramingChoice`]: given, from the `.dcm`, or from the buffer's first bytes).
//!
//! ```
//! use stp_decode::encoder::StpEncoder;
//! use stp_decode::report::ReportEvent;
//! use stp_decode::report_inputs::{FramingChoice, ReportInputs, TraceInput};
//! use stp_decode::stmlib::{message_words, Protocol};
//! use stp_decode::{DataWidth, IdWidth, PacketKind, Timestamp};
//!
//! // A putMsg "hello" from master 2 on channel 5, as a bare STP stream.
//! let mut e = StpEncoder::new();
//! e.async_packet();
//! e.packet(&PacketKind::Version { version: 3 })?;
//! e.packet(&PacketKind::Master { width: IdWidth::W8, master: 2 })?;
//! e.packet(&PacketKind::Channel { width: IdWidth::W8, channel: 5 })?;
//! let words = message_words(Protocol::PutMsg, b"hello");
//! for (i, &w) in words.iter().enumerate() {
//!     let last = i + 1 == words.len();
//!     let ts = last.then_some(Timestamp { nibbles: 4, update: 0x1234, absolute: None });
//!     e.packet(&PacketKind::Data { width: DataWidth::W32, value: w.into(), marker: last, ts })?;
//! }
//! let bytes = e.finish().into_bytes();
//!
//! // The stream read as a file would be; its first bytes say that it holds no frames.
//! let inputs = ReportInputs::new(TraceInput::Stream(&bytes[..]), FramingChoice::Sniff);
//! let report = inputs.prepare()?;
//! assert_eq!(report.setup.trace_id(), None);
//! let mut texts = Vec::new();
//! let mut sink = |event: &ReportEvent<'_>| -> Result<(), std::convert::Infallible> {
//!     if let ReportEvent::Message { message, .. } = event {
//!         texts.push(message.text.to_owned());
//!     }
//!     Ok(())
//! };
//! let stats = report.run(&mut sink)?;
//! assert_eq!(texts, ["hello"]);
//! assert_eq!(stats.stream.messages, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::boxed::Box;
use std::io::Read;
use std::vec::Vec;

use crate::cptracer::{Layout, LayoutError};
use crate::dcm::{Dcm, DcmError};
use crate::deformat::FrameMode;
use crate::dict::{DictError, Dictionary};
use crate::dump::Framing;
#[cfg(feature = "elf")]
use crate::elf::{ElfError, ElfImage, ElfImages};
use crate::keystone::{Masters, STM_TRACE_ID};
use crate::message::FormatStrings;
use crate::report::{ReportConfig, ReportSink};
use crate::sniff::{Census, Layout as SniffedLayout, SNIFF_LEN};
use crate::span::SpanSpec;
use crate::stats::Stats;
use crate::tbr::Wrap;
use crate::trace_buffer::{report_buffer, report_stream_within, BufferError};

/// How many bytes of a stream without one event of the report [`ReportInputs::new`] reads before it gives
/// up ([`BufferError::NothingFound`]): 16 MiB, far more than a real trace needs to give its first message.
pub const GIVE_UP_AFTER: u64 = 16 << 20;

/// The trace buffer.
#[derive(Debug)]
pub enum TraceInput<'a, R> {
    /// A dump in order (a capture from its start, a dump TI's tools saved), read a chunk at a time: memory
    /// stays constant whatever its size.
    Stream(R),
    /// A buffer held whole as the trace buffer left it (a TBR read out), put in order by `wrap`.
    Buffer {
        /// The buffer's bytes.
        bytes: &'a [u8],
        /// Where its write pointer is, and whether it wrapped.
        wrap: Wrap,
    },
}

/// How the buffer carries the STP stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FramingChoice<'a> {
    /// As the buffer's first [`SNIFF_LEN`] bytes say ([`Census`]): a bare stream, or the frames of their one
    /// trace ID, or of KeyStone II's STM ([`STM_TRACE_ID`]) among several.
    Sniff,
    /// A bare STP byte stream, whatever its first bytes look like.
    Bare,
    /// TWP / CoreSight frames; the STM's trace ID.
    TraceId(u8),
    /// As the `.dcm` sidecar TI's tools saved with the dump says (its text): frames on `trace_id`
    /// (default [`STM_TRACE_ID`]), or a bare stream. A dump TI's tools saved starts wherever the oldest
    /// word was ([`ReportConfig::starts_mid_stream`]).
    Dcm {
        /// The sidecar's text.
        text: &'a str,
        /// The STM's trace ID, when its frames carry it on another than KeyStone II's.
        trace_id: Option<u8>,
    },
}

/// An ELF image as `--elf` names it: `PATH`, every master's image, or `MASTER=PATH`, one master's, where
/// `MASTER` is a number (`12`, `0x8c`) or, with a device, a core (`DSP3`, `arm0`). A value whose text before
/// its first `=` names no master is a path.
///
/// ```
/// use stp_decode::keystone::{Device, Masters};
/// use stp_decode::report_inputs::ElfArg;
/// let k2h = Masters::for_device(Device::K2h);
/// assert_eq!(ElfArg::parse("dsp1=app.out", &k2h), ElfArg { master: Some(1), path: "app.out" });
/// assert_eq!(ElfArg::parse("app.out", &k2h), ElfArg { master: None, path: "app.out" });
/// assert_eq!(ElfArg::parse("a=b.out", &k2h), ElfArg { master: None, path: "a=b.out" });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElfArg<'t> {
    /// The master whose image it is; `None`: every master's.
    pub master: Option<u16>,
    /// The image's path.
    pub path: &'t str,
}

impl<'t> ElfArg<'t> {
    /// Reads `text` with the masters' names of `masters`.
    pub fn parse(text: &'t str, masters: &Masters) -> ElfArg<'t> {
        let named = text
            .split_once('=')
            .and_then(|(master, path)| Some((masters.parse(master)?, path)));
        match named {
            Some((master, path)) => ElfArg {
                master: Some(master),
                path,
            },
            None => ElfArg {
                master: None,
                path: text,
            },
        }
    }
}

/// What a report reads: the buffer, how it is framed, and what decodes its messages. Built with
/// [`ReportInputs::new`], its fields set, then [`prepared`](ReportInputs::prepare).
#[derive(Debug)]
#[non_exhaustive]
pub struct ReportInputs<'a, R> {
    /// The buffer.
    pub trace: TraceInput<'a, R>,
    /// How it carries the STP stream.
    pub framing: FramingChoice<'a>,
    /// The masters' names and the hardware (CP Tracer) masters.
    pub masters: Masters,
    /// The target's ELF images (printf format strings), each with its master (`None`: every master's, see
    /// [`ElfArg`]) and its file's bytes.
    #[cfg(feature = "elf")]
    pub elf: Vec<(Option<u16>, &'a [u8])>,
    /// A dictionary's text, naming values and channels ([`Dictionary::parse`]).
    pub dictionary: Option<&'a str>,
    /// Spans to measure.
    pub spans: Vec<SpanSpec>,
    /// A CP Tracer layout's text ([`Layout::parse`]).
    pub cptracer_layout: Option<&'a str>,
    /// The STM timestamp clock in Hz (else a FREQ packet's, else times are ticks).
    pub stm_clock_hz: Option<u64>,
    /// With a CP Tracer layout: the window its throughput is given per, in the report's time unit.
    pub window: Option<u64>,
    /// The buffer starts in the middle of the stream even when neither the `.dcm` nor a wrapped buffer
    /// says so (a dump saved without its write pointer).
    pub starts_mid_stream: bool,
    /// A stream that gives no event in this many bytes ends the report with
    /// [`BufferError::NothingFound`]; `None` reads it all. [`GIVE_UP_AFTER`] unless set.
    pub give_up_after: Option<u64>,
}

impl<'a, R> ReportInputs<'a, R> {
    /// The inputs of a report on `trace` framed as `framing`, nothing else given: masters by number, no
    /// images, dictionary, spans or layout, giving up after [`GIVE_UP_AFTER`] bytes with nothing.
    pub fn new(trace: TraceInput<'a, R>, framing: FramingChoice<'a>) -> Self {
        ReportInputs {
            trace,
            framing,
            masters: Masters::default(),
            #[cfg(feature = "elf")]
            elf: Vec::new(),
            dictionary: None,
            spans: Vec::new(),
            cptracer_layout: None,
            stm_clock_hz: None,
            window: None,
            starts_mid_stream: false,
            give_up_after: Some(GIVE_UP_AFTER),
        }
    }
}

/// Why a report's inputs cannot make a report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// A trace ID that cannot carry trace data: 0x00 is padding, 0x7F and above are not trace IDs.
    #[error("trace ID {id:#04x} cannot carry trace data (0x01 to 0x7e)")]
    BadTraceId {
        /// The ID given.
        id: u8,
    },
    /// The hardware masters' range is empty.
    #[error("the hardware masters {first:#x}-{last:#x} are no range: the first is above the last")]
    HardwareMasters {
        /// The first master given.
        first: u16,
        /// The last master given.
        last: u16,
    },
    /// A `.dcm` sidecar describes a dump TI's tools saved in order; a buffer put in order by its write
    /// pointer is not one.
    #[error("a .dcm sidecar describes a dump saved in order, not a buffer put in order by its write pointer")]
    DcmOfABuffer,
    /// A CP Tracer window without a layout to read the words' bytes with.
    #[error("a CP Tracer window needs a CP Tracer layout")]
    WindowWithoutLayout,
    /// The `.dcm` sidecar cannot be read, or describes a dump this decoder does not read.
    #[error("the .dcm sidecar is not usable")]
    Dcm(#[source] DcmError),
    /// The dictionary cannot be read.
    #[error("the dictionary is not valid")]
    Dictionary(#[source] DictError),
    /// The CP Tracer layout cannot be read.
    #[error("the CP Tracer layout is not valid")]
    Layout(#[source] LayoutError),
    /// An ELF image (the `index`th of [`ReportInputs::elf`]) is not one.
    #[cfg(feature = "elf")]
    #[error("ELF image {index} is not usable")]
    Elf {
        /// Its position in [`ReportInputs::elf`].
        index: usize,
        /// Why.
        #[source]
        source: ElfError,
    },
    /// With [`FramingChoice::Sniff`]: the buffer holds the frames of several trace IDs, none of them
    /// KeyStone II's STM; which is the STM's must be given.
    #[error(
        "the buffer holds TWP / CoreSight frames of several trace IDs ({census}), none of them {stm:#04x}",
        stm = STM_TRACE_ID
    )]
    SeveralTraceIds {
        /// What the buffer's first bytes carry.
        census: Box<Census>,
    },
    /// Reading the stream's first bytes failed.
    #[error("cannot read the trace stream")]
    Read(#[source] std::io::Error),
}

/// How the framing of a report was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FramingSource {
    /// Given ([`FramingChoice::Bare`], [`FramingChoice::TraceId`]).
    Given,
    /// By the `.dcm` sidecar.
    Dcm,
    /// By the buffer's first bytes, which carry these trace IDs.
    Census(Box<Census>),
}

/// A report ready to run: its [`setup`](ReportSetup) and its [`trace`](PreparedTrace), apart so that a
/// sink may borrow the setup (its dictionary, its masters) while the trace is read.
#[derive(Debug)]
pub struct PreparedReport<'a, R> {
    /// The configuration, the strings and the dictionary.
    pub setup: ReportSetup<'a>,
    /// The buffer, its first bytes already read when it is a stream.
    pub trace: PreparedTrace<'a, R>,
}

impl<R: Read> PreparedReport<'_, R> {
    /// Runs the report: each event to `sink`, the statistics back.
    pub fn run<S: ReportSink>(self, sink: &mut S) -> Result<Stats, BufferError<S::Error>> {
        self.setup.run(self.trace, sink)
    }
}

/// What a report is run with: its [`ReportConfig`], the target's strings, the dictionary, and how its
/// framing was decided.
#[derive(Debug)]
pub struct ReportSetup<'a> {
    config: ReportConfig,
    #[cfg(feature = "elf")]
    images: ElfImages<'a>,
    dict: Dictionary,
    source: FramingSource,
    give_up_after: Option<u64>,
    lifetime: core::marker::PhantomData<&'a ()>,
}

/// The buffer of a [`PreparedReport`].
#[derive(Debug)]
pub struct PreparedTrace<'a, R>(Prepared<'a, R>);

#[derive(Debug)]
enum Prepared<'a, R> {
    Stream { head: Vec<u8>, rest: R },
    Buffer { bytes: &'a [u8], wrap: Wrap },
}

impl<'a, R: Read> ReportInputs<'a, R> {
    /// Checks and parses the inputs, and decides the framing (reading a stream's first [`SNIFF_LEN`] bytes,
    /// which the report reads again from memory).
    pub fn prepare(self) -> Result<PreparedReport<'a, R>, SetupError> {
        let hardware = self.masters.hardware;
        if hardware.first > hardware.last {
            return Err(SetupError::HardwareMasters {
                first: hardware.first,
                last: hardware.last,
            });
        }
        let given_id = match self.framing {
            FramingChoice::TraceId(id) => Some(id),
            FramingChoice::Dcm { trace_id, .. } => trace_id,
            FramingChoice::Sniff | FramingChoice::Bare => None,
        };
        if let Some(id) = given_id.filter(|&id| id == 0 || id >= 0x7f) {
            return Err(SetupError::BadTraceId { id });
        }
        let dcm = matches!(self.framing, FramingChoice::Dcm { .. });
        if dcm && matches!(self.trace, TraceInput::Buffer { .. }) {
            return Err(SetupError::DcmOfABuffer);
        }
        if self.window.is_some() && self.cptracer_layout.is_none() {
            return Err(SetupError::WindowWithoutLayout);
        }
        let layout = self
            .cptracer_layout
            .map(Layout::parse)
            .transpose()
            .map_err(SetupError::Layout)?;
        let dict = match self.dictionary {
            Some(text) => Dictionary::parse(text, &self.masters).map_err(SetupError::Dictionary)?,
            None => Dictionary::new(),
        };
        #[cfg(feature = "elf")]
        let images = images(&self.elf)?;
        let trace = match self.trace {
            TraceInput::Stream(mut reader) => {
                let mut head = Vec::with_capacity(SNIFF_LEN);
                (&mut reader)
                    .take(SNIFF_LEN as u64)
                    .read_to_end(&mut head)
                    .map_err(SetupError::Read)?;
                Prepared::Stream { head, rest: reader }
            }
            TraceInput::Buffer { bytes, wrap } => Prepared::Buffer { bytes, wrap },
        };
        let head = match &trace {
            Prepared::Stream { head, .. } => &head[..],
            Prepared::Buffer { bytes, .. } => &bytes[..bytes.len().min(SNIFF_LEN)],
        };
        let (trace_id, source) = framing(self.framing, head)?;
        let mut config = match trace_id {
            Some(id) => ReportConfig::new(Framing::Formatted(FrameMode::Memory), id),
            None => ReportConfig::new(Framing::Raw, 0),
        };
        let wrapped = matches!(
            &trace,
            Prepared::Buffer {
                wrap: Wrap::Wrapped { .. },
                ..
            }
        );
        config.masters = self.masters;
        config.stm_clock_hz = self.stm_clock_hz;
        config.window = self.window;
        config.starts_mid_stream = self.starts_mid_stream || dcm || wrapped;
        config.spans = self.spans;
        config.cptracer_layout = layout;
        Ok(PreparedReport {
            setup: ReportSetup {
                config,
                #[cfg(feature = "elf")]
                images,
                dict,
                source,
                give_up_after: self.give_up_after,
                lifetime: core::marker::PhantomData,
            },
            trace: PreparedTrace(trace),
        })
    }
}

/// The images of `elf`, each parsed.
#[cfg(feature = "elf")]
fn images<'a>(elf: &[(Option<u16>, &'a [u8])]) -> Result<ElfImages<'a>, SetupError> {
    let mut images = ElfImages::new();
    for (index, &(master, bytes)) in elf.iter().enumerate() {
        let image = ElfImage::parse(bytes).map_err(|source| SetupError::Elf { index, source })?;
        match master {
            Some(master) => images.set_master(master, image),
            None => images.set_default(image),
        }
    }
    Ok(images)
}

/// The trace ID the buffer's frames carry the STM on (`None`: a bare stream), by `choice` and the buffer's
/// first bytes `head`.
fn framing(
    choice: FramingChoice<'_>,
    head: &[u8],
) -> Result<(Option<u8>, FramingSource), SetupError> {
    match choice {
        FramingChoice::Bare => Ok((None, FramingSource::Given)),
        FramingChoice::TraceId(id) => Ok((Some(id), FramingSource::Given)),
        FramingChoice::Dcm { text, trace_id } => {
            let dcm = Dcm::parse(text).map_err(SetupError::Dcm)?;
            let framed = dcm.layout().map_err(SetupError::Dcm)?.twp_frames;
            let id = framed.then(|| trace_id.unwrap_or(STM_TRACE_ID));
            Ok((id, FramingSource::Dcm))
        }
        FramingChoice::Sniff => {
            let census = Box::new(Census::of(head));
            if census.layout() == SniffedLayout::Bare {
                return Ok((None, FramingSource::Census(census)));
            }
            // Frames: of one source, or of several with KeyStone II's STM among them.
            let id = census
                .only_id()
                .or_else(|| (census.bytes_of(STM_TRACE_ID) > 0).then_some(STM_TRACE_ID));
            match id {
                Some(id) => Ok((Some(id), FramingSource::Census(census))),
                None => Err(SetupError::SeveralTraceIds { census }),
            }
        }
    }
}

impl ReportSetup<'_> {
    /// The report's configuration: its framing, masters, spans, CP Tracer layout.
    pub fn config(&self) -> &ReportConfig {
        &self.config
    }

    /// The dictionary.
    pub fn dictionary(&self) -> &Dictionary {
        &self.dict
    }

    /// The trace ID whose frames are decoded; `None` for a bare stream.
    pub fn trace_id(&self) -> Option<u8> {
        match self.config.framing {
            Framing::Formatted(_) => Some(self.config.trace_id),
            _ => None,
        }
    }

    /// How the framing was decided.
    pub fn framing_source(&self) -> &FramingSource {
        &self.source
    }

    /// The target's strings.
    fn strings(&self) -> &dyn FormatStrings {
        #[cfg(feature = "elf")]
        return &self.images;
        #[cfg(not(feature = "elf"))]
        return &crate::message::NoImages;
    }

    /// Runs the report on `trace`: each event to `sink`, the statistics back.
    pub fn run<R: Read, S: ReportSink>(
        &self,
        trace: PreparedTrace<'_, R>,
        sink: &mut S,
    ) -> Result<Stats, BufferError<S::Error>> {
        let config = self.config.clone();
        match trace.0 {
            Prepared::Buffer { bytes, wrap } => {
                report_buffer(config, self.strings(), &self.dict, bytes, wrap, sink)
            }
            Prepared::Stream { head, rest } => report_stream_within(
                config,
                self.strings(),
                &self.dict,
                std::io::Cursor::new(head).chain(rest),
                sink,
                self.give_up_after,
            ),
        }
    }
}

#[cfg(test)]
mod tests;
