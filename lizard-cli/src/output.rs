//! Shared pieces of the outputs: numbers and CSV fields as text, writing to a file or stdout.

use std::io::Write;
use std::path::Path;

use serde_json::Value as Json;

use crate::error::CliError;

pub use lizard_core::capture::text::{csv_field, reading_text};

/// Warnings printed one by one before the rest are only counted.
pub const WARNINGS_SHOWN: usize = 5;

/// Prints the first [`WARNINGS_SHOWN`] of `listed` as warnings on standard error, then one line counting
/// the rest of `total`.
pub fn warn_some<T: std::fmt::Display>(listed: &[T], total: u64) {
    for warning in listed.iter().take(WARNINGS_SHOWN) {
        eprintln!("lizard: warning: {warning}");
    }
    let shown = listed.len().min(WARNINGS_SHOWN) as u64;
    if total > shown {
        eprintln!(
            "lizard: warning: {} more like these (--format json lists the first {})",
            total - shown,
            listed.len()
        );
    }
}

/// Pretty JSON text with a final newline.
pub fn to_json(value: &Json) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_owned());
    text.push('\n');
    text
}

/// Writes `text` to `path`, or to standard output when `path` is `None`.
pub fn write(path: Option<&Path>, text: &str) -> Result<(), CliError> {
    match path {
        Some(path) => std::fs::write(path, text).map_err(|e| CliError::file(path, e)),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // A closed pipe (`lizard list | head`) is not an error worth a message.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(CliError::file("<stdout>", e)),
                Ok(()) => Ok(()),
            }
        }
    }
}

/// Writes binary output through `write` to `path`, or to standard output when `path` is `None` and it is
/// not a terminal (`what` names the format in the refusal).
pub fn write_binary(
    path: Option<&Path>,
    what: &str,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), CliError> {
    use std::io::IsTerminal;
    match path {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| CliError::file(path, e))?;
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)
                .and_then(|()| out.flush())
                .map_err(|e| CliError::file(path, e))
        }
        None if std::io::stdout().is_terminal() => Err(CliError::Usage(format!(
            "{what} is binary: write it to a file with --output FILE, or pipe it"
        ))),
        None => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match write(&mut out).and_then(|()| out.flush()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(CliError::file("<stdout>", e)),
                Ok(()) => Ok(()),
            }
        }
    }
}

/// Standard output (or an output file) for listings written as they are produced (buffered, never held
/// whole in memory). A closed pipe (`lizard stm-dump ... | head`) ends the output quietly:
/// [`Stream::is_closed`] turns true and later writes are dropped.
pub struct Stream {
    out: std::io::BufWriter<Box<dyn Write>>,
    closed: bool,
}

impl Stream {
    /// Locks standard output for the rest of the command.
    pub fn stdout() -> Stream {
        Stream {
            out: std::io::BufWriter::with_capacity(64 << 10, Box::new(std::io::stdout().lock())),
            closed: false,
        }
    }

    /// Writes to `file`, opened beforehand (so that a path that cannot be written fails before the work).
    pub fn file(file: std::fs::File) -> Stream {
        Stream {
            out: std::io::BufWriter::with_capacity(64 << 10, Box::new(file)),
            closed: false,
        }
    }

    /// True once the reader has gone away.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn check(&mut self, result: std::io::Result<()>) -> Result<(), CliError> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(CliError::file("<stdout>", e)),
            Ok(()) => Ok(()),
        }
    }

    /// Writes formatted text (nothing once the pipe is closed).
    pub fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.write_fmt(args);
        self.check(result)
    }

    /// Flushes what is buffered.
    pub fn finish(mut self) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.flush();
        self.check(result)
    }
}
