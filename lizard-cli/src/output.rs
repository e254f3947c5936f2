//! Shared pieces of the outputs: numbers and CSV fields as text, writing to a file or stdout.

use std::io::Write;
use std::path::Path;

use serde_json::Value as Json;

use crate::error::CliError;

pub use lizard_render::text::{csv_field, reading_text};

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

/// Where a subcommand's output goes: standard output, or the file `-o/--output` names, opened (created)
/// before the subcommand does its work, so that a path that cannot be written fails first.
pub enum Destination {
    /// Standard output.
    Stdout,
    /// A file, created already.
    File {
        /// The open file.
        file: std::fs::File,
        /// Its path, for errors.
        path: std::path::PathBuf,
    },
}

impl Destination {
    /// Creates the file at `path`, or standard output without one.
    pub fn open(path: Option<&Path>) -> Result<Destination, CliError> {
        match path {
            None => Ok(Destination::Stdout),
            Some(path) => {
                let file = std::fs::File::create(path).map_err(|e| CliError::file(path, e))?;
                Ok(Destination::File {
                    file,
                    path: path.to_owned(),
                })
            }
        }
    }

    /// Refuses binary output (`what` names the format) to a terminal, before any work.
    pub fn check_binary(&self, what: &str) -> Result<(), CliError> {
        use std::io::IsTerminal;
        match self {
            Destination::Stdout if std::io::stdout().is_terminal() => Err(CliError::Usage(
                format!("{what} is binary: write it to a file with --output FILE, or pipe it"),
            )),
            _ => Ok(()),
        }
    }

    /// Writes `text`. A closed pipe (`lizard list | head`) is not an error worth a message.
    pub fn write_text(self, text: &str) -> Result<(), CliError> {
        self.write_with(|out| out.write_all(text.as_bytes()))
    }

    /// Writes through `write`, buffered. A closed pipe is not an error worth a message.
    pub fn write_with(
        self,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<(), CliError> {
        match self {
            Destination::File { file, path } => {
                let mut out = std::io::BufWriter::new(file);
                write(&mut out)
                    .and_then(|()| out.flush())
                    .map_err(|e| CliError::file(path, e))
            }
            Destination::Stdout => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                match write(&mut out).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                    Err(e) => Err(CliError::file("<stdout>", e)),
                    Ok(()) => Ok(()),
                }
            }
        }
    }

    /// A [`Stream`] to this destination, for listings written as they are produced.
    pub fn stream(self) -> Stream {
        match self {
            Destination::Stdout => Stream::stdout(),
            Destination::File { file, .. } => Stream::file(file),
        }
    }
}

/// Writes `text` to standard output (or, with `path`, to that file).
pub fn write(path: Option<&Path>, text: &str) -> Result<(), CliError> {
    Destination::open(path)?.write_text(text)
}

/// Standard output put aside: while it lives, file descriptor 1 is standard error, so that a child started
/// meanwhile (a counted command) writes its output there; dropping it puts standard output back.
pub struct StdoutAside {
    saved: std::os::fd::OwnedFd,
}

impl StdoutAside {
    /// Puts standard output aside.
    pub fn new() -> Result<StdoutAside, CliError> {
        let error = |e: rustix::io::Errno| CliError::file("<stdout>", e.into());
        std::io::stdout()
            .flush()
            .map_err(|e| CliError::file("<stdout>", e))?;
        let saved = rustix::io::dup(std::io::stdout()).map_err(error)?;
        rustix::stdio::dup2_stdout(std::io::stderr()).map_err(error)?;
        Ok(StdoutAside { saved })
    }
}

impl Drop for StdoutAside {
    fn drop(&mut self) {
        let _ = rustix::stdio::dup2_stdout(&self.saved);
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

    /// Writes out what is buffered, keeping the stream (a listing that waits between its parts).
    pub fn flush(&mut self) -> Result<(), CliError> {
        if self.closed {
            return Ok(());
        }
        let result = self.out.flush();
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
