//! `stm(path, …)`: an STM (MIPI STPv2) dump decoded into messages by stp-decode's entry point
//! ([`stp_decode::report_inputs`], as `lizard stm-report` decodes it), the files it names read under their
//! limits; what the report finds is kept (messages, torn data, losses, spans, each as stp-decode serializes
//! it) with its statistics.

use std::path::{Path, PathBuf};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use stp_decode::keystone::{Device, HardwareMasters, Masters};
use stp_decode::message::MessageKind;
use stp_decode::report::ReportEvent;
use stp_decode::report_inputs::{ReportInputs, SetupError, TraceInput};
use stp_decode::span::SpanSpec;
use stp_decode::stats::Stats;
use stp_decode::tbr::Wrap;
use stp_decode::trace_buffer::BufferError;

use super::stm_args::{ElfValues, TraceIdArg};
use crate::convert::{to_python, u64_array};
use crate::errors::{os_error, raise, FormatError};
use lizard_core::input::{InputError, InputKind, Inputs};

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
    /// The trace ID whose frames were decoded; None for a bare STP stream.
    #[pyo3(get)]
    trace_id: Option<u8>,
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

/// Why a dump could not be decoded.
enum StmFailure {
    /// A file could not be opened or read.
    Input(InputError),
    /// The inputs cannot make a report.
    Setup(SetupError),
    /// The report failed (reading the stream, putting the buffer in order).
    Report(BufferError<serde_json::Error>),
}

/// What `stm()` was asked: the files it reads, by what they are, and the rest of the report's inputs.
struct Request {
    /// The dump.
    path: PathBuf,
    /// Where a buffer held whole (`write_pointer=`) has its write pointer.
    wrap: Option<Wrap>,
    /// The `.dcm` sidecar.
    dcm: Option<PathBuf>,
    /// The framing asked for, beside a `.dcm`.
    framing: TraceIdArg,
    /// The ELF images, each with its master (None: every master's).
    elf: Vec<(Option<u16>, PathBuf)>,
    /// The dictionary.
    dictionary: Option<PathBuf>,
    /// The CP Tracer layout.
    cptracer_layout: Option<PathBuf>,
    /// The masters' names and the hardware masters.
    masters: Masters,
    /// The spans to measure.
    spans: Vec<SpanSpec>,
    /// The STM clock.
    clock_hz: Option<u64>,
    /// The CP Tracer window.
    window_ns: Option<u64>,
    /// The dump starts anywhere in the stream.
    mid_stream: bool,
}

/// What the report found, its statistics, and the trace ID decoded.
type Decoded = (Found, Stats, Option<u8>);

/// Reads the files of `request` through `inputs` and runs the report on them.
fn decode(inputs: &Inputs<'_>, request: &Request) -> Result<Decoded, StmFailure> {
    let text = |path: &Option<PathBuf>| {
        path.as_deref()
            .map(|path| inputs.read_text(path, InputKind::TextTable))
            .transpose()
            .map_err(StmFailure::Input)
    };
    let dcm = text(&request.dcm)?;
    let dictionary = text(&request.dictionary)?;
    let layout = text(&request.cptracer_layout)?;
    let images = request
        .elf
        .iter()
        .map(|(_, path)| inputs.read(path, InputKind::Elf))
        .collect::<Result<Vec<_>, _>>()
        .map_err(StmFailure::Input)?;
    let whole;
    let trace = match request.wrap {
        Some(wrap) => {
            whole = inputs
                .read(&request.path, InputKind::TraceBuffer)
                .map_err(StmFailure::Input)?;
            TraceInput::Buffer {
                bytes: &whole,
                wrap,
            }
        }
        None => TraceInput::Stream(
            inputs
                .open(&request.path, InputKind::TraceStream)
                .map_err(StmFailure::Input)?,
        ),
    };
    let mut report = ReportInputs::new(trace, request.framing.choice(dcm.as_deref()));
    report.masters = request.masters;
    report.elf = request
        .elf
        .iter()
        .map(|(master, _)| *master)
        .zip(images.iter().map(Vec::as_slice))
        .collect();
    report.dictionary = dictionary.as_deref();
    report.spans = request.spans.clone();
    report.cptracer_layout = layout.as_deref();
    report.stm_clock_hz = request.clock_hz;
    report.window = request.window_ns;
    report.starts_mid_stream = request.mid_stream;
    let prepared = report.prepare().map_err(StmFailure::Setup)?;
    let trace_id = prepared.setup.trace_id();
    let mut found = Found::default();
    let mut sink = |event: &ReportEvent<'_>| found.take(event);
    let stats = prepared.run(&mut sink).map_err(StmFailure::Report)?;
    Ok((found, stats, trace_id))
}

/// The Python exception for `failure` of the dump at `path`: OSError (and its kin) for a file that cannot
/// be read, FormatError for a file that is not what it should be, ValueError for arguments that cannot go
/// together.
fn exception(py: Python<'_>, path: &Path, failure: StmFailure) -> PyErr {
    let read = |source: std::io::Error| match InputError::from_io(source) {
        Ok(input) => crate::inputs::error(py, &input),
        Err(source) => os_error(path, &source),
    };
    match failure {
        StmFailure::Input(error) => crate::inputs::error(py, &error),
        StmFailure::Setup(SetupError::Read(source)) => read(source),
        StmFailure::Setup(SetupError::Dcm(error)) => raise::<FormatError>(py, &error),
        StmFailure::Setup(SetupError::Dictionary(error)) => raise::<FormatError>(py, &error),
        StmFailure::Setup(SetupError::Layout(error)) => raise::<FormatError>(py, &error),
        StmFailure::Setup(SetupError::Elf { source, .. }) => raise::<FormatError>(py, &source),
        StmFailure::Setup(error @ SetupError::SeveralTraceIds { .. }) => {
            PyValueError::new_err(format!("{error}: name the STM's with trace_id"))
        }
        StmFailure::Setup(error) => PyValueError::new_err(error.to_string()),
        StmFailure::Report(BufferError::Read(source)) => read(source),
        StmFailure::Report(other) => raise::<FormatError>(py, &other),
    }
}

/// Decodes the STM (MIPI STPv2) dump at `path` into an StmTrace, with what `lizard stm-report` takes beside
/// it.
///
/// How the dump carries the stream: without `trace_id` the raw STP stream; with one, CoreSight-formatted
/// 16-byte frames whose STM source has that trace ID; with `trace_id="auto"`, as the file's first 64 KiB say
/// (a bare stream, or the frames of their one trace ID, or of KeyStone II's STM, 0x40, among several); with
/// `dcm`, as that `.dcm` sidecar TI's tools saved with the dump says (frames on `trace_id`, default 0x40).
/// A dump in order is read a chunk at a time; `write_pointer` (the TBR's, in 32-bit words) reads the file
/// whole as the trace buffer's memory, its oldest word at the write pointer when `wrapped`, else words 0 to
/// `write_pointer - 1` the data. The dump starts anywhere in the stream (`mid_stream=True`) with a `dcm`, a
/// `wrapped` buffer, or when told.
///
/// `clock_hz`, the STM clock, makes times nanoseconds instead of timestamp ticks. `device` names a TI
/// KeyStone II device (`k2h`, `k2e`, `k2l`: its masters' names), `hardware_masters` the CP Tracer masters
/// (`(first, last)`, default 0x80 to 0xff), `elf` the target's images whose printf format strings decode
/// STMLib printf messages (a path or a list of them; a str may be `MASTER=PATH`, one master's image, e.g.
/// `dsp0=app.out`), `dictionary` a file naming values, `spans` the spans to measure (`NAME=START..END`, as
/// `--span`), `cptracer_layout` a layout of CP Tracer words and `window_ns` the window their throughput is
/// given per. A stream that gives nothing in its first 16 MiB is given up on (FormatError). A file that
/// cannot be read raises OSError; a dump, sidecar, ELF image, dictionary or layout that is not one,
/// FormatError; a bad trace ID, device, span or set of arguments, ValueError. Garbage in the dump decodes
/// as losses, not as an error.
#[pyfunction]
#[pyo3(signature = (
    path, *, trace_id = None, clock_hz = None, mid_stream = false, device = None, elf = None,
    dictionary = None, spans = None, dcm = None, write_pointer = None, wrapped = false,
    hardware_masters = None, cptracer_layout = None, window_ns = None
))]
#[allow(
    clippy::too_many_arguments,
    reason = "keyword arguments of one Python function"
)]
pub fn stm(
    py: Python<'_>,
    path: PathBuf,
    trace_id: Option<&Bound<'_, PyAny>>,
    clock_hz: Option<u64>,
    mid_stream: bool,
    device: Option<&str>,
    elf: Option<ElfValues>,
    dictionary: Option<PathBuf>,
    spans: Option<Vec<String>>,
    dcm: Option<PathBuf>,
    write_pointer: Option<u32>,
    wrapped: bool,
    hardware_masters: Option<(u16, u16)>,
    cptracer_layout: Option<PathBuf>,
    window_ns: Option<u64>,
) -> PyResult<StmTrace> {
    let framing = TraceIdArg::extract(trace_id, dcm.is_some())?;
    let mut masters = match device {
        None => Masters::default(),
        Some(name) => Device::from_name(name.trim())
            .map(Masters::for_device)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "device '{name}' is no KeyStone II device (k2h, k2e or k2l)"
                ))
            })?,
    };
    if let Some((first, last)) = hardware_masters {
        masters.hardware = HardwareMasters { first, last };
    }
    let wrap = match (write_pointer, wrapped) {
        (Some(write_pointer), true) => Some(Wrap::Wrapped { write_pointer }),
        (Some(write_pointer), false) => Some(Wrap::NotWrapped { write_pointer }),
        (None, true) => {
            return Err(PyValueError::new_err(
                "wrapped=True needs the buffer's write_pointer",
            ))
        }
        (None, false) => None,
    };
    let mut request = Request {
        path,
        wrap,
        dcm,
        framing,
        elf: elf.map(|e| e.images(&masters)).unwrap_or_default(),
        dictionary,
        cptracer_layout,
        masters,
        spans: Vec::new(),
        clock_hz,
        window_ns,
        mid_stream,
    };
    for span in spans.unwrap_or_default() {
        let spec: SpanSpec = span
            .parse()
            .map_err(|e| PyValueError::new_err(format!("span '{span}': {e}")))?;
        request.spans.push(spec);
    }
    let inputs = crate::inputs::inputs()?;
    let (found, stats, trace_id) = py
        .detach(|| decode(&inputs, &request))
        .map_err(|e| exception(py, &request.path, e))?;
    let times = found.messages.iter().map(|m| m.time).collect();
    let messages = found
        .messages
        .into_iter()
        .map(|m| Py::new(py, m))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(StmTrace {
        path: request.path,
        trace_id,
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
