//! Parsing a byte count written by a person (`--capacity 64MiB`): `65536`, `64KiB`, `64MiB`, `1GiB`, `64K`,
//! `64M`, `500KB`.

/// A capacity text that cannot be read.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CapacityError {
    /// No digits before the unit.
    #[error("capacity {0:?} does not start with a number")]
    NoNumber(String),
    /// The unit is not one of B, K/KiB, M/MiB, G/GiB, KB, MB, GB.
    #[error("unknown capacity unit {0:?}")]
    UnknownUnit(String),
    /// The value does not fit in `usize`.
    #[error("capacity {0:?} is too large")]
    Overflow(String),
}

/// Reads a byte count: digits, then an optional unit. `K`, `M`, `G` and `KiB`, `MiB`, `GiB` are powers of
/// 1024; `KB`, `MB`, `GB` powers of 1000; `B` or nothing means bytes. Units ignore case; spaces are allowed
/// between the number and the unit.
pub fn parse_capacity(text: &str) -> Result<usize, CapacityError> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(CapacityError::NoNumber(text.to_string()));
    }
    let number: usize = text[..digits]
        .parse()
        .map_err(|_| CapacityError::Overflow(text.to_string()))?;
    let unit = text[digits..].trim_start().to_ascii_lowercase();
    let scale: usize = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        _ => {
            return Err(CapacityError::UnknownUnit(
                text[digits..].trim_start().to_string(),
            ))
        }
    };
    number
        .checked_mul(scale)
        .ok_or_else(|| CapacityError::Overflow(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_capacity("65536"), Ok(65536));
        assert_eq!(parse_capacity("64MiB"), Ok(64 << 20));
        assert_eq!(parse_capacity("64 mib"), Ok(64 << 20));
        assert_eq!(parse_capacity("64K"), Ok(64 << 10));
        assert_eq!(parse_capacity("1GiB"), Ok(1 << 30));
        assert_eq!(parse_capacity("500KB"), Ok(500_000));
        assert_eq!(parse_capacity("7B"), Ok(7));
    }

    #[test]
    fn errors() {
        assert_eq!(
            parse_capacity("MiB"),
            Err(CapacityError::NoNumber("MiB".into()))
        );
        assert_eq!(
            parse_capacity("64 parsecs"),
            Err(CapacityError::UnknownUnit("parsecs".into()))
        );
        assert!(matches!(
            parse_capacity("99999999999999999999999"),
            Err(CapacityError::Overflow(_))
        ));
        assert!(matches!(
            parse_capacity("18446744073709551615G"),
            Err(CapacityError::Overflow(_))
        ));
    }
}
