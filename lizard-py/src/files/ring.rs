//! `trace_ring(path)`: a trace ring saved by `lizard trace-server --output` ([`TraceRing::load`]), its
//! records copied out once so that the ring's memory is given back.

use std::path::{Path, PathBuf};

use lizard_core::input::{InputError, InputKind, Inputs};
use lizard_trace::ring_dump::{ClientDump, RecordDump};
use lizard_trace::ring_file::DEFAULT_LOAD_LIMIT;
use lizard_trace::shared_ring::{RingReader, SharedRingError};
use lizard_trace::{Directory, RingFileError, TraceRing as Ring};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{to_python, u64_array};
use crate::errors::{os_error, raise, FormatError};

/// One record of a saved trace ring, as its client made it ([`RecordDump`]).
#[pyclass(frozen, module = "lizard_rs")]
pub struct TraceRecord(RecordDump);

#[pymethods]
impl TraceRecord {
    /// The ring's sequence number.
    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }

    /// When the client made the record (CLOCK_MONOTONIC_RAW, ns).
    #[getter]
    fn timestamp_ns(&self) -> u64 {
        self.0.timestamp_ns
    }

    /// When the server copied the payload (CLOCK_MONOTONIC_RAW, ns; 0: not known).
    #[getter]
    fn stored_ns(&self) -> u64 {
        self.0.stored_ns
    }

    /// The module the client named.
    #[getter]
    fn module(&self) -> &str {
        &self.0.module
    }

    /// The source file the client named.
    #[getter]
    fn file(&self) -> &str {
        &self.0.file
    }

    /// The source line the client named.
    #[getter]
    fn line(&self) -> u32 {
        self.0.line
    }

    /// The client's process id.
    #[getter]
    fn pid(&self) -> u32 {
        self.0.pid
    }

    /// The client's own sequence number.
    #[getter]
    fn client_seq(&self) -> u64 {
        self.0.client_seq
    }

    /// The payload (bytes).
    #[getter]
    fn payload<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.payload)
    }

    /// Where the payload came from: a dict with `kind` (`unknown`, `inline`, `memfd`, `device`; a device
    /// record also has `mode`, `device` and `offset`).
    #[getter]
    fn origin<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.0.origin)
    }

    fn __repr__(&self) -> String {
        let r = &self.0;
        format!(
            "TraceRecord(seq={}, timestamp_ns={}, module={:?}, file={:?}, line={}, pid={}, payload={} bytes)",
            r.seq,
            r.timestamp_ns,
            r.module,
            r.file,
            r.line,
            r.pid,
            r.payload.len()
        )
    }
}

impl TraceRecord {
    /// A copy of this record (a new Python object of the same values).
    fn duplicate(&self) -> TraceRecord {
        TraceRecord(self.0.clone())
    }
}

/// A saved trace ring: its records oldest first (iterate it, index it, `len()` it), its directory and
/// every client's account.
#[pyclass(frozen, name = "TraceRing", module = "lizard_rs", sequence)]
pub struct SavedRing {
    /// The file read.
    #[pyo3(get)]
    path: PathBuf,
    /// The records, oldest first.
    records: Vec<TraceRecord>,
    /// What the ring holds and what it lost.
    directory: Directory,
    /// What each client process stored, lost and had refused, with the records of it the ring holds.
    clients: Vec<ClientDump>,
}

#[pymethods]
impl SavedRing {
    /// What the ring holds and what it lost: a dict of `capacity`, `first_seq`, `next_seq`, `record_count`,
    /// `bytes_used`, `records_overwritten`.
    #[getter]
    fn directory<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.directory)
    }

    /// One dict per client process: `pid`, `stored`, `overwritten`, `refused`, `connections_refused`,
    /// `device_sync`, `device_async`, `held`.
    #[getter]
    fn clients<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.clients)
    }

    /// Each record's `timestamp_ns`, oldest first (uint64).
    #[getter]
    fn timestamps(&self, py: Python<'_>) -> Py<numpy::PyArray1<u64>> {
        u64_array(py, self.records.iter().map(|r| r.0.timestamp_ns).collect())
    }

    fn __len__(&self) -> usize {
        self.records.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<TraceRecord> {
        let len = self.records.len() as isize;
        let at = if index < 0 { index + len } else { index };
        usize::try_from(at)
            .ok()
            .and_then(|at| self.records.get(at))
            .map(TraceRecord::duplicate)
            .ok_or_else(|| PyIndexError::new_err("trace ring index out of range"))
    }

    fn __iter__(slf: Bound<'_, Self>) -> TraceRingIter {
        TraceRingIter {
            ring: slf.unbind(),
            next: 0,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "TraceRing(path={:?}, records={}, capacity={}, clients={})",
            self.path.display().to_string(),
            self.records.len(),
            self.directory.capacity,
            self.clients.len()
        )
    }
}

/// An iterator over a TraceRing's records, oldest first.
#[pyclass(module = "lizard_rs")]
pub struct TraceRingIter {
    /// The ring.
    ring: Py<SavedRing>,
    /// The index of the next record.
    next: usize,
}

#[pymethods]
impl TraceRingIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> Option<TraceRecord> {
        let record = self.ring.get().records.get(self.next)?.duplicate();
        self.next += 1;
        Some(record)
    }
}

/// What a ring file gives: its records, directory and client accounts.
type Loaded = (Vec<TraceRecord>, Directory, Vec<ClientDump>);

/// The saved ring at `path`, its records copied out.
fn load(path: &Path, inputs: &Inputs<'_>) -> Result<Loaded, RingFileError> {
    let stream = inputs
        .open(path, InputKind::RingFile)
        .map_err(|e| RingFileError::Io(std::io::Error::other(e)))?;
    let ring = Ring::read_from(&mut std::io::BufReader::new(stream), DEFAULT_LOAD_LIMIT)?;
    let records = ring
        .iter()
        .map(|r| TraceRecord(RecordDump::of(r.head(), r.payload())))
        .collect();
    let clients = ring
        .ledger()
        .accounts()
        .map(|&account| ClientDump {
            account,
            held: ring.held_by(account.pid),
        })
        .collect();
    Ok((records, ring.directory(), clients))
}

/// A consistent snapshot of the shared ring file at `path` (its server may be writing it): its records and
/// directory; a shared ring keeps no client accounts.
fn load_shared(path: &Path) -> Result<Loaded, SharedRingError> {
    let snapshot = RingReader::open(path)?.snapshot();
    let records = snapshot
        .records
        .iter()
        .map(|r| TraceRecord(RecordDump::of(&r.head, &r.payload)))
        .collect();
    Ok((records, snapshot.directory, Vec::new()))
}

/// Reads the trace ring at `path` into a TraceRing: a ring saved by `lizard trace-server --output`, or the
/// shared ring file of `lizard trace-server --ring`, read while its server may write it (a consistent
/// snapshot: every record whole, sequence numbers consecutive). A file that cannot be opened or read raises
/// OSError; one that is not a valid ring file, FormatError.
#[pyfunction]
pub fn trace_ring(py: Python<'_>, path: PathBuf) -> PyResult<SavedRing> {
    let (records, directory, clients) = match RingReader::is_shared_ring(&path) {
        true => py.detach(|| load_shared(&path)).map_err(|e| match e {
            SharedRingError::Io { source, .. } => os_error(&path, &source),
            other => raise::<FormatError>(py, &other),
        })?,
        false => {
            let inputs = crate::inputs::inputs()?;
            py.detach(|| load(&path, &inputs)).map_err(|e| match e {
                RingFileError::Io(source) => match InputError::from_io(source) {
                    Ok(input) => crate::inputs::error(py, &input),
                    Err(source) => os_error(&path, &source),
                },
                other => raise::<FormatError>(py, &other),
            })?
        }
    };
    Ok(SavedRing {
        path,
        records,
        directory,
        clients,
    })
}

/// Adds `trace_ring` and its classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<SavedRing>()?;
    module.add_class::<TraceRecord>()?;
    module.add_class::<TraceRingIter>()?;
    module.add_function(wrap_pyfunction!(trace_ring, module)?)?;
    Ok(())
}
