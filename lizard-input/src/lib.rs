#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod kind;
mod reader;
mod size;

pub use error::InputError;
pub use kind::InputKind;
pub use reader::{Inputs, Stream, MAX_INPUT_VAR};
pub use size::{parse_byte_count, ByteCountError};
