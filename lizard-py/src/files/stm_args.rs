//! `stm()`'s arguments that take more than one form: `trace_id` (a number, or `"auto"`) and `elf` (a path
//! or a list of paths; a str may name its master as `lizard stm-report --elf` does, read by stp-decode's
//! [`ElfArg`]).

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use stp_decode::keystone::Masters;
use stp_decode::report_inputs::{ElfArg, FramingChoice};

/// `trace_id=`: how the dump is framed, beside a `.dcm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceIdArg {
    /// Not given: a bare STP stream (or as the `.dcm` says, on KeyStone II's trace ID).
    Bare,
    /// `"auto"`: as the dump's first bytes say.
    Auto,
    /// Frames of this trace ID.
    Id(u8),
}

impl TraceIdArg {
    /// `trace_id` as given (None, an int, or `"auto"`, which a `.dcm` replaces: `dcm`, whether one is given).
    pub fn extract(value: Option<&Bound<'_, PyAny>>, dcm: bool) -> PyResult<TraceIdArg> {
        let Some(value) = value else {
            return Ok(TraceIdArg::Bare);
        };
        let Ok(text) = value.cast::<PyString>() else {
            return Ok(TraceIdArg::Id(value.extract()?));
        };
        match &*text.to_cow()? {
            "auto" if dcm => Err(PyValueError::new_err(
                "trace_id='auto' reads the framing from the dump's first bytes; with dcm, the sidecar says it",
            )),
            "auto" => Ok(TraceIdArg::Auto),
            other => Err(PyValueError::new_err(format!(
                "trace_id '{other}' is neither a trace ID nor 'auto'"
            ))),
        }
    }

    /// The framing to report with, `dcm` the `.dcm` sidecar's text when one is given.
    pub fn choice(self, dcm: Option<&str>) -> FramingChoice<'_> {
        let trace_id = match self {
            TraceIdArg::Id(id) => Some(id),
            TraceIdArg::Bare | TraceIdArg::Auto => None,
        };
        match (dcm, self) {
            (Some(text), _) => FramingChoice::Dcm { text, trace_id },
            (None, TraceIdArg::Bare) => FramingChoice::Bare,
            (None, TraceIdArg::Auto) => FramingChoice::Sniff,
            (None, TraceIdArg::Id(id)) => FramingChoice::TraceId(id),
        }
    }
}

/// One `elf=` value: a str (`PATH` or `MASTER=PATH`) or a path object (always a path, every master's).
#[derive(Debug, FromPyObject)]
pub enum ElfValue {
    /// A str, read as `--elf` reads its value.
    Text(String),
    /// An `os.PathLike`.
    Path(PathBuf),
}

/// `elf=`: one image, or a list of them.
#[derive(Debug, FromPyObject)]
pub enum ElfValues {
    /// One.
    One(ElfValue),
    /// Several.
    Many(Vec<ElfValue>),
}

impl ElfValues {
    /// Each image's master (None: every master's) and path, masters named as `masters` names them.
    pub fn images(self, masters: &Masters) -> Vec<(Option<u16>, PathBuf)> {
        let values = match self {
            ElfValues::One(value) => vec![value],
            ElfValues::Many(values) => values,
        };
        values
            .into_iter()
            .map(|value| match value {
                ElfValue::Text(text) => {
                    let arg = ElfArg::parse(&text, masters);
                    (arg.master, PathBuf::from(arg.path))
                }
                ElfValue::Path(path) => (None, path),
            })
            .collect()
    }
}
