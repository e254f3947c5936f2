//! Reading the files a user names, in bounded memory and time.
//!
//! Every command of the `lizard` binary and every loader of the Python module reads its input files through
//! [`Inputs`]: a file is refused at the limit of its [`InputKind`] (so `/dev/zero`, a FIFO fed forever or a
//! wrong 10 GB file costs at most the limit), a directory is refused before it is read, a pipe or process
//! substitution (`<(zcat trace.gz)`) reads as a file does, and a wait for a FIFO's writer ends when the
//! caller's stop test says so (SIGINT or SIGTERM in the command). Inputs read whole come back as bytes or
//! text ([`Inputs::read`], [`Inputs::read_text`]); inputs decoded as they are read (a local capture's frame
//! file, a trace stream, a ring file) come back as a [`Stream`] that ends with the same typed errors.
//!
//! The limits are per kind ([`InputKind::default_limit`]); one override, for files larger than a limit
//! allows, is [`Inputs::with_max_bytes`], which [`Inputs::from_env`] takes from `LIZARD_MAX_INPUT`.

mod error;
mod kind;
mod reader;
mod size;

pub use error::InputError;
pub use kind::InputKind;
pub use reader::{Inputs, Stream, MAX_INPUT_VAR};
pub use size::{parse_byte_count, ByteCountError};
