//! The engine opened from the arguments Python callers give: `gatord=` and `target=`, by the same policy
//! (`lizard_core::sources`) as the `lizard` command and the C API.

use std::time::Duration;

use hwcpipe::counting::Target;
use lizard_core::sources::{self, Gatord, Join, Local, Refusal, SourceError, Sources};
use lizard_core::{Config, GatordAddress, Lizard};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::errors::{self, GatordError as PyGatordError, SourceError as PySourceError};

/// How long the implicit gatord (`gatord=None`, 127.0.0.1:8080) is given to answer, as `lizard` gives it.
const PROBE_CONNECT_TIMEOUT: Duration = Duration::from_millis(300);

/// What the caller's `gatord=` argument says.
#[derive(Debug, Clone)]
pub enum GatordArg {
    /// `None`: the default address, used when a gatord answers there.
    Probe,
    /// `False`: not at all.
    Off,
    /// `"host:port"`: this gatord, which must give counters.
    Required(GatordAddress),
}

impl GatordArg {
    /// Reads `gatord=`: `None`, `False`, or a `"host:port"` string.
    pub fn extract(value: Option<&Bound<'_, PyAny>>) -> PyResult<GatordArg> {
        let Some(value) = value.filter(|v| !v.is_none()) else {
            return Ok(GatordArg::Probe);
        };
        if let Ok(flag) = value.extract::<bool>() {
            return match flag {
                false => Ok(GatordArg::Off),
                true => Ok(GatordArg::Probe),
            };
        }
        let text: String = value.extract().map_err(|_| {
            PyTypeError::new_err("gatord must be None, False or a \"host:port\" string")
        })?;
        text.parse::<GatordAddress>()
            .map(GatordArg::Required)
            .map_err(|_| {
                PySourceError::new_err(format!(
                    "'{text}' is not a gatord address (expected host:port)"
                ))
            })
    }

    fn policy(&self) -> Gatord {
        match self {
            GatordArg::Probe => Gatord::Probe(GatordAddress::default()),
            GatordArg::Off => Gatord::Off,
            GatordArg::Required(address) => Gatord::Required(address.clone()),
        }
    }
}

/// What the caller's `target=` argument says the local CPU counters count.
pub fn local(target: Option<&Bound<'_, PyAny>>, default: Local) -> PyResult<Local> {
    let Some(target) = target.filter(|t| !t.is_none()) else {
        return Ok(default);
    };
    let py = target.py();
    if let Ok(pid) = target.extract::<i32>() {
        return match pid > 0 {
            true => Ok(Local::Target(Target::Pid(pid))),
            false => Err(PySourceError::new_err(format!("{pid} is not a process id"))),
        };
    }
    let text: String = target.extract().map_err(|_| {
        PyTypeError::new_err(
            "target must be None, a process id, \"self\", \"system\", \"pid:PID\" or \"cpus:LIST\"",
        )
    })?;
    match text.trim() {
        "self" => Ok(Local::ThisProcess),
        spec => Target::parse(spec)
            .map(Local::Target)
            .map_err(|e| errors::raise::<PySourceError>(py, &e)),
    }
}

/// The engine on `gatord` and `local`, the local counters joining gatord as `join` says, configured by
/// `config` (its sources replaced).
pub fn open(
    py: Python<'_>,
    gatord: &GatordArg,
    local: Local,
    join: Join,
    mut config: Config,
) -> PyResult<sources::Opened> {
    if matches!(gatord, GatordArg::Probe) {
        config.timeouts.connect = PROBE_CONNECT_TIMEOUT;
    }
    let sources = Sources {
        gatord: gatord.policy(),
        local,
        join,
    };
    sources::open(&sources, config).map_err(|error| match &error {
        SourceError::Gatord { .. } => errors::raise::<PyGatordError>(py, &error),
        _ => errors::raise::<PySourceError>(py, &error),
    })
}

/// The default local counters of a capture or a listing: every CPU where the kernel allows it (as the
/// `lizard` command counts); a listing falls back to probing this process.
pub fn system_wide(listing: bool) -> Local {
    Local::SystemWide {
        on_refusal: match listing {
            true => Refusal::Probe,
            false => Refusal::Fail,
        },
    }
}

/// The engine a listing opens.
pub fn for_listing(py: Python<'_>, gatord: &GatordArg) -> PyResult<Lizard> {
    Ok(open(
        py,
        gatord,
        system_wide(true),
        Join::WithoutGatord,
        Config::default(),
    )?
    .lizard)
}
