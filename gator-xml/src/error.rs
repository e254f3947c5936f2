//! The one error type of this crate: why a document could not be read.

use std::fmt;

/// A place in the document text, 1-based, as editors show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Position {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column (in characters) within the line, starting at 1.
    pub column: u32,
}

impl Position {
    /// A position from a line and a column, both 1-based.
    pub const fn new(line: u32, column: u32) -> Self {
        Self { line, column }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Why a number inside an attribute could not be read; the parser's report is the `source()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NumberError {
    /// Not an integer (decimal, or hexadecimal with a `0x` prefix), or out of range.
    #[error("not an integer in range")]
    Int(#[from] std::num::ParseIntError),
    /// Not a floating-point number.
    #[error("not a number")]
    Float(#[from] std::num::ParseFloatError),
}

/// Everything that can go wrong while reading a gatord XML document.
///
/// Every variant that points into the text carries its [`Position`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum XmlError {
    /// The bytes handed to a `from_bytes` reader are not UTF-8.
    #[error("document is not valid UTF-8 (valid up to byte {valid_up_to})")]
    Utf8 {
        /// Number of leading bytes that are valid UTF-8.
        valid_up_to: usize,
        /// The decoder's report.
        #[source]
        source: std::str::Utf8Error,
    },
    /// The text is not well-formed XML (unbalanced tags, bad entity, DTD, ...).
    #[error("malformed XML at {position}")]
    Syntax {
        /// Where the XML parser stopped.
        position: Position,
        /// The XML parser's report.
        #[source]
        source: roxmltree::Error,
    },
    /// The text holds no XML element at all: it is empty, or not XML.
    #[error("no XML element: the text is empty or not XML")]
    NoElement,
    /// The root element is not the one this document type has.
    #[error("expected root element <{expected}> but found <{found}> at {position}")]
    UnexpectedRoot {
        /// The root element name this reader accepts.
        expected: &'static str,
        /// The root element name found in the text.
        found: String,
        /// Where the root element starts.
        position: Position,
    },
    /// An element lacks an attribute it cannot do without.
    #[error("<{element}> at {position} lacks the required attribute `{attribute}`")]
    MissingAttribute {
        /// The element name.
        element: &'static str,
        /// The missing attribute name.
        attribute: &'static str,
        /// Where the element starts.
        position: Position,
    },
    /// A numeric attribute does not hold a number of the expected kind.
    #[error("<{element} {attribute}={value:?}> at {position} is not a valid number")]
    InvalidNumber {
        /// The element name.
        element: &'static str,
        /// The attribute name.
        attribute: String,
        /// The attribute value as written.
        value: String,
        /// Where the attribute starts.
        position: Position,
        /// Why the number was rejected.
        #[source]
        source: NumberError,
    },
    /// An attribute holds a word outside the set this attribute allows (e.g. a boolean that is not yes/no).
    #[error("<{element} {attribute}={value:?}> at {position}: expected {expected}")]
    InvalidValue {
        /// The element name.
        element: &'static str,
        /// The attribute name.
        attribute: String,
        /// The attribute value as written.
        value: String,
        /// The values that are accepted.
        expected: &'static str,
        /// Where the attribute starts.
        position: Position,
    },
    /// A name that must be unique appears twice (e.g. a counter configured twice).
    #[error("<{element} {attribute}={value:?}> at {position} repeats an earlier entry")]
    Duplicate {
        /// The element name.
        element: &'static str,
        /// The attribute that must be unique.
        attribute: &'static str,
        /// The repeated value.
        value: String,
        /// Where the second occurrence starts.
        position: Position,
    },
    /// Elements are nested deeper than this crate keeps (see [`crate::MAX_DEPTH`]).
    #[error("elements nested deeper than {limit} levels at {position}")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
        /// Where the element that went past the limit starts.
        position: Position,
    },
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use crate::Captured;

    /// Each message says what went wrong where; the parser's report is the `source()`, not repeated.
    #[test]
    fn messages_do_not_repeat_their_source() {
        for text in [
            "<captured><counters>",
            "<captured><counters><counter key=\"zz\" type=\"a\"/></counters></captured>",
        ] {
            let err = Captured::parse(text).unwrap_err();
            let mut cause = err.source().expect("a cause is kept");
            assert!(!err.to_string().contains(&cause.to_string()), "{err}");
            while let Some(next) = cause.source() {
                assert!(!cause.to_string().contains(&next.to_string()), "{cause}");
                cause = next;
            }
        }
    }
}
