//! [`Value`]: one measured number, an integer count or a fraction from a formula.

use core::fmt;

/// A measured value. CPU counters are integer counts; GPU values come from formulas and may be
/// fractional. Conversions between the two convert the number, never reinterpret bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An integer count (CPU counters).
    Int(u64),
    /// A number that may be fractional (GPU formulas).
    Float(f64),
}

impl Value {
    /// The value as `f64` (an integer above 2^53 is rounded to the nearest representable value).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
        }
    }

    /// The value as an integer: fractions are rounded to the nearest integer, negative numbers and
    /// NaN give 0, numbers above `u64::MAX` give `u64::MAX`.
    pub fn as_u64(self) -> u64 {
        match self {
            Value::Int(v) => v,
            Value::Float(v) => v.round() as u64,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
        }
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_convert_numbers() {
        assert_eq!(Value::Int(3).as_f64(), 3.0);
        assert_eq!(Value::Float(2.6).as_u64(), 3);
        assert_eq!(Value::Float(-1.0).as_u64(), 0);
        assert_eq!(Value::Float(f64::NAN).as_u64(), 0);
        assert_eq!(Value::Float(1e30).as_u64(), u64::MAX);
        assert_eq!(Value::from(7u64).to_string(), "7");
    }
}
