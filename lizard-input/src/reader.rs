//! Opening and reading input files under their limits, ending a wait when the caller stops.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags};

use super::error::InputError;
use super::kind::InputKind;

/// The environment variable that raises every input limit: a byte count such as `4GiB`.
pub const MAX_INPUT_VAR: &str = "LIZARD_MAX_INPUT";

/// How long a read waits for a pipe's writer before asking the stop test again.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// Bytes read at a time.
const CHUNK: usize = 64 << 10;

/// Never stopped.
fn never() -> bool {
    false
}

/// How input files are read: the limits, and the test that ends a read early.
///
/// ```
/// use lizard_input::{InputError, InputKind, Inputs};
///
/// let inputs = Inputs::new().with_max_bytes(Some(1 << 20));
/// let error = inputs.read("/dev/zero".as_ref(), InputKind::CaptureDocument).unwrap_err();
/// assert!(matches!(error, InputError::TooLarge { limit: 1048576, .. }));
/// ```
#[derive(Clone, Copy)]
pub struct Inputs<'s> {
    max_bytes: Option<u64>,
    stop: &'s (dyn Fn() -> bool + Sync),
}

impl std::fmt::Debug for Inputs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inputs")
            .field("max_bytes", &self.max_bytes)
            .finish_non_exhaustive()
    }
}

impl Default for Inputs<'static> {
    fn default() -> Self {
        Inputs::new()
    }
}

impl Inputs<'static> {
    /// Each kind's default limit; reads are never stopped.
    pub fn new() -> Inputs<'static> {
        Inputs {
            max_bytes: None,
            stop: &never,
        }
    }

    /// The limits [`MAX_INPUT_VAR`] sets (every kind's limit, when it holds a byte count), else the
    /// defaults. A value that is not a byte count is an error naming the variable.
    pub fn from_env() -> Result<Inputs<'static>, super::ByteCountError> {
        match std::env::var(MAX_INPUT_VAR) {
            Ok(text) => {
                let bytes = super::parse_byte_count(&text)?;
                Ok(Inputs::new().with_max_bytes(Some(bytes as u64)))
            }
            Err(_) => Ok(Inputs::new()),
        }
    }
}

impl<'s> Inputs<'s> {
    /// Every kind's limit set to `max_bytes` (`None`: each kind's default).
    #[must_use]
    pub fn with_max_bytes(self, max_bytes: Option<u64>) -> Inputs<'s> {
        Inputs { max_bytes, ..self }
    }

    /// Reads stop with [`InputError::Stopped`] once `stop` returns true (checked between reads and at
    /// least every 100 ms while a pipe has nothing to read).
    pub fn stopped_by<'t>(self, stop: &'t (dyn Fn() -> bool + Sync)) -> Inputs<'t> {
        Inputs {
            max_bytes: self.max_bytes,
            stop,
        }
    }

    /// The limit for `kind`.
    pub fn limit(&self, kind: InputKind) -> u64 {
        self.max_bytes.unwrap_or(kind.default_limit())
    }

    /// Opens `path` to be read as `kind`: a directory and a regular file over the limit are refused here,
    /// before anything is read; opening a FIFO does not wait for its writer.
    pub fn open(&self, path: &Path, kind: InputKind) -> Result<Stream<'s>, InputError> {
        let open_error = |source: std::io::Error| InputError::Open {
            path: path.to_owned(),
            source,
        };
        // Non-blocking, so that opening a FIFO without a writer returns at once; reads then wait in poll,
        // where the stop test is asked.
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| open_error(e.into()))?;
        let file = File::from(fd);
        let metadata = file.metadata().map_err(open_error)?;
        let limit = self.limit(kind);
        let file_type = metadata.file_type();
        if file_type.is_dir() {
            return Err(InputError::Directory {
                path: path.to_owned(),
                kind,
            });
        }
        let regular = file_type.is_file();
        if regular && metadata.len() > limit {
            return Err(InputError::TooLarge {
                path: path.to_owned(),
                kind,
                limit,
                size: Some(metadata.len()),
            });
        }
        let waits = file_type.is_fifo() || file_type.is_socket() || file_type.is_char_device();
        Ok(Stream {
            file,
            path: path.to_owned(),
            kind,
            limit,
            read: 0,
            size: regular.then_some(metadata.len()),
            waits,
            over: false,
            stop: self.stop,
        })
    }

    /// Reads all of `path` as `kind`, refusing it at the limit (memory stays within the limit and one
    /// chunk).
    pub fn read(&self, path: &Path, kind: InputKind) -> Result<Vec<u8>, InputError> {
        let mut stream = self.open(path, kind)?;
        let limit = usize::try_from(stream.limit).unwrap_or(usize::MAX);
        let expected = stream
            .size
            .map_or(CHUNK, |s| usize::try_from(s).unwrap_or(limit));
        // Memory the process may not have (a `ulimit -v` below the limit) is an error, not an abort.
        let out_of_memory = |needed: usize| InputError::OutOfMemory {
            path: path.to_owned(),
            needed: needed as u64,
        };
        let mut bytes = Vec::new();
        let first = expected.min(limit);
        bytes
            .try_reserve_exact(first)
            .map_err(|_| out_of_memory(first))?;
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let n = stream.read_some(&mut chunk)?;
            if n == 0 {
                return Ok(bytes);
            }
            let need = bytes.len() + n;
            if need > bytes.capacity() {
                // Doubling, but never past the limit: a stream refused at the limit holds at most that.
                let target = bytes
                    .capacity()
                    .saturating_mul(2)
                    .max(need)
                    .min(limit.max(need));
                bytes
                    .try_reserve_exact(target - bytes.len())
                    .map_err(|_| out_of_memory(target))?;
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
    }

    /// Reads all of `path` as UTF-8 text of `kind` (see [`Inputs::read`]).
    pub fn read_text(&self, path: &Path, kind: InputKind) -> Result<String, InputError> {
        let bytes = self.read(path, kind)?;
        String::from_utf8(bytes).map_err(|e| InputError::NotText {
            path: path.to_owned(),
            kind,
            valid_up_to: e.utf8_error().valid_up_to(),
        })
    }
}

/// An input file open for reading under its limit: a [`Read`] whose errors carry an [`InputError`]
/// ([`InputError::from_io`]) when the limit is passed or the read is stopped.
pub struct Stream<'s> {
    file: File,
    path: PathBuf,
    kind: InputKind,
    limit: u64,
    read: u64,
    size: Option<u64>,
    waits: bool,
    over: bool,
    stop: &'s (dyn Fn() -> bool + Sync),
}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("limit", &self.limit)
            .field("read", &self.read)
            .finish_non_exhaustive()
    }
}

impl Stream<'_> {
    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// The file's size when it is a regular file.
    pub fn size(&self) -> Option<u64> {
        self.size
    }

    /// Reads into `buf`: 0 at the end; past the limit, [`InputError::TooLarge`].
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, InputError> {
        loop {
            if self.over {
                return Err(InputError::TooLarge {
                    path: self.path.clone(),
                    kind: self.kind,
                    limit: self.limit,
                    size: self.size,
                });
            }
            if (self.stop)() {
                return Err(InputError::Stopped {
                    path: self.path.clone(),
                    read: self.read,
                });
            }
            if self.waits {
                let mut fds = [PollFd::new(&self.file, PollFlags::IN)];
                let slice = Timespec {
                    tv_sec: 0,
                    tv_nsec: WAIT_SLICE.as_nanos() as _,
                };
                match poll(&mut fds, Some(&slice)) {
                    Ok(0) => continue,
                    Ok(_) => {}
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => return Err(self.read_error(e.into())),
                }
            }
            // Reading one byte past the limit tells a file of exactly the limit from a longer one.
            let room = self.limit.saturating_sub(self.read).saturating_add(1);
            let want = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
            match self.file.read(&mut buf[..want]) {
                Ok(n) => {
                    // The bytes up to the limit are handed out; the next read is the refusal.
                    let n = match self.read + n as u64 > self.limit {
                        true => {
                            self.over = true;
                            (self.limit - self.read) as usize
                        }
                        false => n,
                    };
                    self.read += n as u64;
                    if n == 0 && self.over {
                        continue;
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Nothing to read yet: wait in poll from now on, where the stop test is asked.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.waits = true,
                Err(e) => return Err(self.read_error(e)),
            }
        }
    }

    fn read_error(&self, source: std::io::Error) -> InputError {
        InputError::Read {
            path: self.path.clone(),
            source,
        }
    }
}

impl Read for Stream<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.read_some(buf).map_err(|e| match e {
            InputError::Read { source, .. } => source,
            other => std::io::Error::other(other),
        })
    }
}
