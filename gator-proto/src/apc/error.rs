//! The error type of APC frame decoding.

use thiserror::Error;

use crate::sleb128::Sleb128Error;

/// Why an APC frame body could not be decoded.
///
/// `field` names the field being read so that a failure points at the byte that broke it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame has no bytes at all, not even the frame type.
    #[error("empty APC frame")]
    Empty,
    /// A SLEB128 integer field could not be decoded.
    #[error("bad integer in field `{field}`")]
    Int {
        /// The field being read.
        field: &'static str,
        /// The SLEB128 failure.
        #[source]
        source: Sleb128Error,
    },
    /// A fixed-size or length-prefixed field runs past the end of the frame.
    #[error("field `{field}` needs {needed} byte(s) but only {available} remain")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// The bytes the field claims.
        needed: u64,
        /// The bytes left in the frame.
        available: usize,
    },
    /// A length prefix is negative.
    #[error("field `{field}` has a negative length {length}")]
    NegativeLength {
        /// The field being read.
        field: &'static str,
        /// The decoded length.
        length: i64,
    },
    /// A NUL-terminated text field has no terminator before the end of the frame.
    #[error("text field `{field}` has no NUL terminator")]
    MissingTerminator {
        /// The field being read.
        field: &'static str,
    },
    /// Bytes remain after a frame whose layout ends at a fixed point.
    #[error("{count} unexpected trailing byte(s) after field `{after}`")]
    TrailingBytes {
        /// The last field read.
        after: &'static str,
        /// How many bytes were left.
        count: usize,
    },
}
