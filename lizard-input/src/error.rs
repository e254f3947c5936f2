//! Why an input file could not be read.

use std::path::PathBuf;

use super::kind::{size_text, InputKind};

/// Why an input file could not be read. Each names the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be opened (missing, no permission).
    #[error("{}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path names a directory where a file is read.
    #[error("{} is a directory, not {kind}", path.display())]
    Directory {
        /// The path.
        path: PathBuf,
        /// What was to be read.
        kind: InputKind,
    },
    /// The file is larger than the limit of its kind.
    #[error(
        "{}: {} is larger than the limit for {kind}, {} (a larger limit: --max-input SIZE, or {} in the environment)",
        path.display(),
        size.map_or_else(|| "the input".to_owned(), |s| format!("its size, {},", size_text(s))),
        size_text(*limit),
        super::MAX_INPUT_VAR
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: InputKind,
        /// The limit it passed.
        limit: u64,
        /// Its size, when the file system gives one (a regular file).
        size: Option<u64>,
    },
    /// Reading failed part way.
    #[error("{}: cannot read", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading was stopped (SIGINT or SIGTERM in the command) before the end.
    #[error("{}: reading stopped after {read} bytes (interrupted)", path.display())]
    Stopped {
        /// The file.
        path: PathBuf,
        /// Bytes read by then.
        read: u64,
    },
    /// The process could not get the memory to hold the file (a memory limit below the input limit).
    #[error("{}: no memory for {} of it (a memory limit such as `ulimit -v` is lower than the input's size)", path.display(), super::kind::size_text(*needed))]
    OutOfMemory {
        /// The file.
        path: PathBuf,
        /// The bytes asked for.
        needed: u64,
    },
    /// A text input is not UTF-8.
    #[error("{}: {kind} is text, but this is not UTF-8 (the first bad byte is at offset {valid_up_to})", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
        /// What it was read as.
        kind: InputKind,
        /// Bytes of valid UTF-8 before the first bad one.
        valid_up_to: usize,
    },
}

impl InputError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            InputError::Open { path, .. }
            | InputError::Directory { path, .. }
            | InputError::TooLarge { path, .. }
            | InputError::Read { path, .. }
            | InputError::Stopped { path, .. }
            | InputError::OutOfMemory { path, .. }
            | InputError::NotText { path, .. } => path,
        }
    }

    /// The input error an I/O error of a [`Stream`](super::Stream) carries, if it is one (a limit passed,
    /// a stop), so that a decoder reading through `std::io::Read` keeps the typed cause.
    pub fn of_io(error: &std::io::Error) -> Option<&InputError> {
        error.get_ref()?.downcast_ref::<InputError>()
    }

    /// Takes back the input error an I/O error of a [`Stream`](super::Stream) carries; any other I/O
    /// error is returned as it is.
    pub fn from_io(error: std::io::Error) -> Result<InputError, std::io::Error> {
        if !error.get_ref().is_some_and(|e| e.is::<InputError>()) {
            return Err(error);
        }
        let kind = error.kind();
        match error
            .into_inner()
            .map(|inner| inner.downcast::<InputError>())
        {
            Some(Ok(input)) => Ok(*input),
            Some(Err(other)) => Err(std::io::Error::new(kind, other)),
            None => Err(std::io::Error::from(kind)),
        }
    }
}
