//! The values a trace's events carry: counter values and instants' arguments.

/// A counter value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CounterValue {
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

/// A named value shown with an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg<'a> {
    /// Text.
    Str(&'a str),
    /// An unsigned integer.
    Uint(u64),
    /// A signed integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}
