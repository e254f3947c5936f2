//! `stm(path, …)`: an STM (MIPI STPv2) dump decoded into messages by [`report_stream`], read from the file a
//! chunk at a time; what the report finds is kept (messages, torn data, losses, spans) with its statistics.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stp_decode::deformat::FrameMode;
use stp_decode::dict::Dictionary;
use stp_decode::dump::Framing;
use stp_decode::elf::{ElfImage, ElfImages};
use stp_decode::keystone::{Device, Masters};
use stp_decode::message::MessageKind;
use stp_decode::report::{ReportConfig, ReportEvent};
use stp_decode::span::SpanSpec;
use stp_decode::stats::Stats;
use stp_decode::trace_buffer::{report_stream, BufferError};

use crate::convert::{to_python, u64_array};
use crate::errors::{os_error, raise, FormatError};
use lizard_core::input::{InputError, InputKind};

/// One message of an STM trace, decoded (or kept raw, with the reason).
#[pyclass(frozen, module = "lizard_rs")]
pub struct StmMessage {
    /// When its last packet was written (ns with a clock, else STM timestamp ticks).
    #[pyo3(get)]
    time: u64,
    /// The master that wrote it.
    #[pyo3(get)]
    master: u16,
    /// The channel.
    #[pyo3(get)]
    channel: u16,
    /// The absolute STM timestamp of its last packet, None without one.
    #[pyo3(get)]
    timestamp: Option<u64>,
    /// Nibble offset of its first packet in the stream.
    #[pyo3(get)]
    offset: u64,
    /// Its data packets.
    #[pyo3(get)]
    packets: u32,
    /// What it says: the formatted printf, the putMsg text, bytes in hexadecimal, or the values.
    #[pyo3(get)]
    text: String,
    /// `stmlib` (a decoded STMLib message), `values` (no STMLib header) or `undecodable`.
    #[pyo3(get)]
    kind: &'static str,
    /// The STMLib protocol (`printf`, `putMsg`, …), None for values.
    #[pyo3(get)]
    protocol: Option<String>,
    /// Why an undecodable message could not be decoded, None otherwise.
    #[pyo3(get)]
    reason: Option<String>,
    /// Its bytes as assembled (header included).
    data: Vec<u8>,
    /// For a `values` message: each packet's value.
    #[pyo3(get)]
    values: Vec<u64>,
}

#[pymethods]
impl StmMessage {
    /// Its bytes as assembled, header included (bytes).
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    fn __repr__(&self) -> String {
        format!(
            "StmMessage(time={}, master={}, channel={}, kind={:?}, text={:?})",
            self.time, self.master, self.channel, self.kind, self.text
        )
    }
}

/// Everything the report found, in stream order per kind.
#[derive(Default)]
struct Found {
    /// The messages.
    messages: Vec<StmMessage>,
    /// The torn data, each event's fields ([`ReportEvent::fields`]).
    torn: Vec<serde_json::Value>,
    /// The losses, likewise.
    losses: Vec<serde_json::Value>,
    /// The spans, likewise.
    spans: Vec<serde_json::Value>,
}

impl Found {
    /// Keeps what `event` says.
    fn take(&mut self, event: &ReportEvent<'_>) -> Result<(), serde_json::Error> {
        let fields = || serde_json::to_value(event.fields());
        match *event {
            ReportEvent::Message { time, message } => {
                let reason = match message.kind {
                    MessageKind::Undecodable { reason, .. } => Some(reason.to_string()),
                    _ => None,
                };
                self.messages.push(StmMessage {
                    time,
                    master: message.master,
                    channel: message.channel,
                    timestamp: message.timestamp,
                    offset: message.offset,
                    packets: message.packets,
                    text: message.text.to_owned(),
                    kind: message.kind_name(),
                    protocol: message.kind.protocol().map(|p| p.to_string()),
                    reason,
                    data: message.bytes.to_vec(),
                    values: message.values.to_vec(),
                });
            }
            ReportEvent::Torn { .. } => self.torn.push(fields()?),
            ReportEvent::Loss { .. } => self.losses.push(fields()?),
            ReportEvent::Span { .. } => self.spans.push(fields()?),
            _ => {}
        }
        Ok(())
    }
}

/// An STM trace decoded: its messages, the data that did not make a message, the trace lost, and the
/// report's statistics.
#[pyclass(frozen, module = "lizard_rs")]
pub struct StmTrace {
    /// The file read.
    #[pyo3(get)]
    path: PathBuf,
    /// The messages, in stream order (a list of StmMessage).
    #[pyo3(get)]
    messages: Py<PyAny>,
    /// Data that did not make a whole message: dicts of `time`, `master`, `channel`, `packets`, `bytes`,
    /// `offset`, `cause`.
    #[pyo3(get)]
    torn: Py<PyAny>,
    /// Trace lost: dicts of `time`, `kind` and, by kind, `nibbles`, `error`, `master`, `value`.
    #[pyo3(get)]
    losses: Py<PyAny>,
    /// The spans measured (`spans=`), one dict each: `span` (its position in `spans`), `name`, `master`,
    /// `begin`, `end`.
    #[pyo3(get)]
    spans: Py<PyAny>,
    /// Everything the report counted, as `lizard stm-report --format json` writes its `stats`.
    #[pyo3(get)]
    stats: Py<PyAny>,
    /// Each message's `time`, in stream order (uint64).
    #[pyo3(get)]
    times: Py<numpy::PyArray1<u64>>,
}

#[pymethods]
impl StmTrace {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "StmTrace(path={:?}, messages={}, torn={}, losses={})",
            self.path.display().to_string(),
            self.messages.bind(py).len()?,
            self.torn.bind(py).len()?,
            self.losses.bind(py).len()?
        ))
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.messages.bind(py).len()
    }
}

/// Why a dump could not be decoded: its file could not be opened or read.
enum StmFailure {
    /// The limits could not be read (a bad `LIZARD_MAX_INPUT`).
    Python(PyErr),
    /// Opening the file failed.
    Input(InputError),
    /// The report failed (reading the stream).
    Report(BufferError<serde_json::Error>),
}

/// What decodes the messages beside the dump: the KeyStone II device's masters, the target's ELF images
/// (printf format strings, per master or for all) and the dictionary naming values.
struct Context {
    masters: Masters,
    /// Each image's master (None: every master's) and its file's bytes.
    images: Vec<(Option<u16>, PathBuf, Vec<u8>)>,
    dict: Dictionary,
}

impl Context {
    /// Reads the files `elf` (`PATH` or `MASTER=PATH`, as `lizard stm-report --elf` takes them) and
    /// `dictionary` for `device` (`k2h`, `k2e`, `k2l`).
    fn read(
        py: Python<'_>,
        device: Option<&str>,
        elf: &[String],
        dictionary: Option<&Path>,
    ) -> PyResult<Context> {
        let masters = match device {
            None => Masters::default(),
            Some(name) => Device::ALL
                .into_iter()
                .find(|d| d.name() == name.trim().to_ascii_lowercase())
                .map(Masters::for_device)
                .ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "device '{name}' is no KeyStone II device (k2h, k2e or k2l)"
                    ))
                })?,
        };
        let mut images = Vec::new();
        for value in elf {
            let (master, path) = match value.split_once('=') {
                Some((m, file)) if masters.parse(m).is_some() => {
                    (masters.parse(m), PathBuf::from(file))
                }
                _ => (None, PathBuf::from(value)),
            };
            let bytes = crate::inputs::read(py, &path, InputKind::Elf)?;
            ElfImage::parse(&bytes).map_err(|e| raise::<FormatError>(py, &e))?;
            images.push((master, path, bytes));
        }
        let dict = match dictionary {
            None => Dictionary::new(),
            Some(path) => {
                let text = crate::inputs::read_text(py, path, InputKind::TextTable)?;
                Dictionary::parse(&text, &masters).map_err(|e| raise::<FormatError>(py, &e))?
            }
        };
        Ok(Context {
            masters,
            images,
            dict,
        })
    }
}

/// Decodes the dump at `path` with `config` and `context`.
fn decode(
    path: &Path,
    config: ReportConfig,
    context: &Context,
) -> Result<(Found, Stats), StmFailure> {
    let file = crate::inputs::inputs()
        .map_err(StmFailure::Python)?
        .open(path, InputKind::TraceStream)
        .map_err(StmFailure::Input)?;
    let mut images = ElfImages::new();
    for (master, _, bytes) in &context.images {
        // Each image parsed once already in `Context::read`.
        if let Ok(image) = ElfImage::parse(bytes) {
            match master {
                Some(m) => images.set_master(*m, image),
                None => images.set_default(image),
            }
        }
    }
    let mut found = Found::default();
    let mut sink = |event: &ReportEvent<'_>| found.take(event);
    let stats = report_stream(config, &images, &context.dict, file, &mut sink)
        .map_err(StmFailure::Report)?;
    Ok((found, stats))
}

/// Decodes the STM (MIPI STPv2) dump at `path` into an StmTrace, reading it a chunk at a time.
///
/// Without `trace_id` the file is the raw STP stream; with one, CoreSight-formatted 16-byte frames whose
/// STM source has that trace ID (`mid_stream=True`: the dump starts anywhere in a frame, as a wrapped buffer
/// saved without its write pointer does). `clock_hz`, the STM clock, makes times nanoseconds instead of
/// timestamp ticks. As `lizard stm-report` takes them: `device` names a TI KeyStone II device (`k2h`,
/// `k2e`, `k2l`: its masters' names), `elf` the target's images whose printf format strings decode STMLib
/// printf messages (`PATH`, or `MASTER=PATH` for one master's, e.g. `dsp0=app.out`), `dictionary` a file
/// naming values, and `spans` the spans to measure (`NAME=START..END`, as `--span`). A file that cannot be
/// read raises OSError; an ELF image or dictionary that is not one, FormatError; a bad trace ID, device or
/// span, ValueError. Garbage in the dump decodes as losses, not as an error.
#[pyfunction]
#[pyo3(signature = (path, *, trace_id = None, clock_hz = None, mid_stream = false, device = None, elf = None, dictionary = None, spans = None))]
#[allow(
    clippy::too_many_arguments,
    reason = "keyword arguments of one Python function"
)]
pub fn stm(
    py: Python<'_>,
    path: PathBuf,
    trace_id: Option<u8>,
    clock_hz: Option<u64>,
    mid_stream: bool,
    device: Option<&str>,
    elf: Option<Vec<String>>,
    dictionary: Option<PathBuf>,
    spans: Option<Vec<String>>,
) -> PyResult<StmTrace> {
    let mut config = match trace_id {
        Some(id) if id >= 0x7f => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "trace_id {id:#x} is not a CoreSight trace ID (0x01 to 0x7e)"
            )))
        }
        Some(id) => ReportConfig::new(Framing::Formatted(FrameMode::Memory), id),
        None => ReportConfig::new(Framing::Raw, 0),
    };
    let context = Context::read(py, device, &elf.unwrap_or_default(), dictionary.as_deref())?;
    config.masters = context.masters;
    for span in spans.unwrap_or_default() {
        let spec: SpanSpec = span
            .parse()
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("span '{span}': {e}")))?;
        config.spans.push(spec);
    }
    config.stm_clock_hz = clock_hz;
    config.starts_mid_stream = mid_stream;
    let (found, stats) = py
        .detach(|| decode(&path, config, &context))
        .map_err(|e| match e {
            StmFailure::Python(error) => error,
            StmFailure::Input(error) => crate::inputs::error(py, &error),
            StmFailure::Report(BufferError::Read(source)) => match InputError::from_io(source) {
                Ok(input) => crate::inputs::error(py, &input),
                Err(source) => os_error(&path, &source),
            },
            StmFailure::Report(other) => raise::<FormatError>(py, &other),
        })?;
    let times = found.messages.iter().map(|m| m.time).collect();
    let messages = found
        .messages
        .into_iter()
        .map(|m| Py::new(py, m))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(StmTrace {
        path,
        messages: messages.into_pyobject(py)?.into_any().unbind(),
        torn: to_python(py, &found.torn)?.unbind(),
        losses: to_python(py, &found.losses)?.unbind(),
        spans: to_python(py, &found.spans)?.unbind(),
        stats: to_python(py, &stats)?.unbind(),
        times: u64_array(py, times),
    })
}

/// Adds `stm` and its classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<StmTrace>()?;
    module.add_class::<StmMessage>()?;
    module.add_function(wrap_pyfunction!(stm, module)?)?;
    Ok(())
}
