//! Every way a subcommand fails, each printed as one line, and the exit status it gives (the table
//! [`EXIT_STATUSES`], which `lizard --help` prints).

use std::path::PathBuf;

use lizard_core::counter_names::SelectError;
use lizard_serve::ServeError;

/// The exit statuses of every subcommand, as `lizard --help` shows them.
pub const EXIT_STATUSES: &str = "\
Exit status:
  0    success
  1    an internal failure
  2    bad arguments: an unknown flag, counter name or process, options that do not go together
  3    a counter source is unreachable, refused or failed during the capture, or nothing was measured
  4    an input file cannot be read, is over its size limit, or holds nothing the command can use
       (Arm's PMU data in LIZARD_PMU_DATA included)
  5    lizard diff --max-increase: a judged counter grew past the limit
  130  interrupted (Ctrl-C or SIGTERM) while reading input; a capture interrupted writes what it has
  lizard stat and a capture of a command exit with the command's status.";

/// Why a subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// gatord was asked for explicitly and could not be used.
    #[error("cannot use gatord at {address}: {reason}")]
    Gatord {
        /// The address tried.
        address: String,
        /// Why it failed.
        reason: String,
    },
    /// No counter source works on this machine.
    #[error("no counter source is available: {0}")]
    NoSource(String),
    /// An address that is not HOST:PORT (a name, an IPv4 address, or an IPv6 address in brackets).
    #[error("'{text}' is not an address: {reason} (use HOST:PORT, e.g. localhost:8080, 127.0.0.1:8080 or [::1]:8080)")]
    BadAddress {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Counter names that match no counter.
    #[error("unknown counter '{name}'{hint}")]
    UnknownCounter {
        /// The name given.
        name: String,
        /// ", did you mean …?" or a pointer to `lizard list`.
        hint: String,
    },
    /// An input file could not be read (missing, a directory, over its limit, not text, interrupted).
    #[error(transparent)]
    Input(#[from] lizard_core::input::InputError),
    /// An input file was read, but nothing in it could be used: what was expected and what was found.
    #[error("{}: {expected}, but {found}", path.display())]
    NothingUsable {
        /// The file.
        path: PathBuf,
        /// What the command reads ("an events XML file with events").
        expected: String,
        /// What it found instead.
        found: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file's content is not what the subcommand reads.
    #[error("{path}: {reason}")]
    BadInput {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A capture document a report cannot be made from.
    #[error("{}", path.display())]
    BadCapture {
        /// The file (or the capture the report was to show).
        path: PathBuf,
        /// What is wrong with it.
        source: lizard_core::capture::DocumentError,
    },
    /// What the local counters were to count could not be counted.
    #[error(transparent)]
    Target(#[from] hwcpipe::counting::TargetError),
    /// The capture engine failed.
    #[error("{0}")]
    Engine(#[from] lizard_core::Error),
    /// The exporter could not start.
    #[error(transparent)]
    Serve(#[from] lizard_serve::ServeError),
    /// Arguments that do not go together or are missing, phrased for the user.
    #[error("{0}")]
    Usage(String),
    /// The CPU's PMUs could not be described: the kernel's sysfs, or Arm's PMU data the folder
    /// LIZARD_PMU_DATA names.
    #[error("{0}")]
    PmuData(String),
    /// Anything else, already phrased for the user.
    #[error("{0}")]
    Other(String),
}

impl From<lizard_core::ChoiceError> for CliError {
    fn from(error: lizard_core::ChoiceError) -> CliError {
        match error {
            lizard_core::ChoiceError::Select(SelectError::Unknown(unknown)) => {
                CliError::UnknownCounter {
                    hint: crate::names::hint(
                        &unknown.name,
                        unknown.candidates.iter().map(String::as_str),
                    ),
                    name: unknown.name,
                }
            }
            lizard_core::ChoiceError::Select(SelectError::Events(error)) => {
                CliError::events(&error)
            }
            lizard_core::ChoiceError::Select(other) => {
                CliError::Usage(lizard_core::error_chain(&other))
            }
            lizard_core::ChoiceError::Engine(error) => CliError::Engine(error),
            other => CliError::Other(other.to_string()),
        }
    }
}

impl From<lizard_core::capture::RunError> for CliError {
    fn from(error: lizard_core::capture::RunError) -> CliError {
        match error {
            lizard_core::capture::RunError::Choice(error) => error.into(),
            lizard_core::capture::RunError::Engine(error) => CliError::Engine(error),
            other => CliError::Other(other.to_string()),
        }
    }
}

impl CliError {
    /// The command line's words for Arm PMU events that could not be resolved: a name spelled as an event
    /// that is none is a bad argument, unreadable PMU data an input that cannot be read.
    pub fn events(error: &lizard_core::hwc::CpuEventsError) -> CliError {
        match error {
            lizard_core::hwc::CpuEventsError::Event(e) => {
                CliError::Usage(lizard_core::error_chain(e))
            }
            other => CliError::PmuData(lizard_core::error_chain(other)),
        }
    }

    /// The process exit status for this failure ([`EXIT_STATUSES`]): 2 for bad arguments or names (a
    /// missing process, an offline CPU, more events of a counter set than it has slots), 3 for unreachable,
    /// missing or refused sources, 4 for input files that cannot be read or hold nothing usable, 130 for a
    /// read stopped by Ctrl-C, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input(lizard_core::input::InputError::Stopped { .. }) => {
                crate::interrupt::INTERRUPTED_STATUS
            }
            CliError::Input(_) | CliError::NothingUsable { .. } => 4,
            CliError::BadAddress { .. } | CliError::UnknownCounter { .. } | CliError::Usage(_) => 2,
            CliError::Gatord { .. } | CliError::NoSource(_) => 3,
            CliError::File { .. } | CliError::BadInput { .. } | CliError::BadCapture { .. } => 4,
            CliError::PmuData(_) => 4,
            CliError::Target(e) if e.is_refusal() => 3,
            CliError::Target(hwcpipe::counting::TargetError::NoProcess(_))
            | CliError::Target(hwcpipe::counting::TargetError::CpuOffline { .. }) => 2,
            CliError::Target(_) => 1,
            // More counter-set events chosen than the set has slots: a choice of names to change.
            CliError::Engine(lizard_core::Error::Gatord(
                lizard_core::GatordError::TooManyEvents { .. },
            )) => 2,
            // An address in use or not this host's, or nothing to serve: an argument to change.
            CliError::Serve(ServeError::Bind { .. } | ServeError::NothingEnabled) => 2,
            // The engine could not capture its first window: the source is unreachable or refused.
            CliError::Serve(ServeError::FirstWindow(_)) => 3,
            CliError::Engine(_) | CliError::Serve(_) | CliError::Other(_) => 1,
        }
    }

    /// A `File` error for `path`.
    pub fn file(path: impl Into<PathBuf>, source: std::io::Error) -> CliError {
        CliError::File {
            path: path.into(),
            source,
        }
    }

    /// A `BadInput` error for `path`.
    pub fn bad_input(path: impl Into<PathBuf>, reason: impl ToString) -> CliError {
        CliError::BadInput {
            path: path.into(),
            reason: reason.to_string(),
        }
    }
}
