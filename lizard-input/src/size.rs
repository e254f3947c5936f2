//! Byte counts as people write them (`64MiB`, `500KB`): a size limit given on the command line, in
//! `LIZARD_MAX_INPUT` or to a binding.

/// A byte count text that cannot be read.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ByteCountError {
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
pub fn parse_byte_count(text: &str) -> Result<usize, ByteCountError> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(ByteCountError::NoNumber(text.to_string()));
    }
    let number: usize = text[..digits]
        .parse()
        .map_err(|_| ByteCountError::Overflow(text.to_string()))?;
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
            return Err(ByteCountError::UnknownUnit(
                text[digits..].trim_start().to_string(),
            ))
        }
    };
    number
        .checked_mul(scale)
        .ok_or_else(|| ByteCountError::Overflow(text.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_read_with_their_units() {
        assert_eq!(parse_byte_count("65536"), Ok(65536));
        assert_eq!(parse_byte_count("64MiB"), Ok(64 << 20));
        assert_eq!(parse_byte_count("64 mib"), Ok(64 << 20));
        assert_eq!(parse_byte_count("64K"), Ok(64 << 10));
        assert_eq!(parse_byte_count("1GiB"), Ok(1 << 30));
        assert_eq!(parse_byte_count("500KB"), Ok(500_000));
        assert_eq!(parse_byte_count("7B"), Ok(7));
    }

    #[test]
    fn byte_count_errors_say_what_is_wrong() {
        assert_eq!(
            parse_byte_count("MiB"),
            Err(ByteCountError::NoNumber("MiB".into()))
        );
        assert_eq!(
            parse_byte_count("64 parsecs"),
            Err(ByteCountError::UnknownUnit("parsecs".into()))
        );
        assert!(matches!(
            parse_byte_count("99999999999999999999999"),
            Err(ByteCountError::Overflow(_))
        ));
        assert!(matches!(
            parse_byte_count("18446744073709551615G"),
            Err(ByteCountError::Overflow(_))
        ));
    }
}
