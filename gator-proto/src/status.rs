//! [`Decoded`]: the outcome of an incremental decode that may need more bytes.

/// The result of decoding from a buffer that may hold only part of a message.
///
/// "Need more bytes" is not an error: [`Decoded::Partial`] means every byte seen so far is a valid prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a Partial decode asks for more bytes; a Complete one says how many bytes were used"]
pub enum Decoded<T> {
    /// A whole message was decoded.
    Complete {
        /// The decoded message.
        value: T,
        /// How many bytes of the buffer it used.
        consumed: usize,
    },
    /// The buffer is a valid but incomplete prefix; call again with more bytes.
    Partial,
}

impl<T> Decoded<T> {
    /// True for [`Decoded::Partial`].
    pub fn is_partial(&self) -> bool {
        matches!(self, Decoded::Partial)
    }

    /// The value and consumed length of a complete decode.
    pub fn complete(self) -> Option<(T, usize)> {
        match self {
            Decoded::Complete { value, consumed } => Some((value, consumed)),
            Decoded::Partial => None,
        }
    }
}
