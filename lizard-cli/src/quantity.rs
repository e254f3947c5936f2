//! Durations as people write them on the command line (`500ms`, `2s`, `250us`).

use std::time::Duration;

/// A duration text that cannot be read.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// The text does not start with a number.
    #[error("'{0}' is not a duration (try 500ms, 2s, 1m)")]
    NoNumber(String),
    /// The unit is not one of ns, us (µs), ms, s, m (min) or h.
    #[error("unknown duration unit '{0}' (use ns, us, ms, s, m or h)")]
    UnknownUnit(String),
    /// The duration is negative, not finite, or beyond what a `Duration` holds.
    #[error("'{0}' is out of range")]
    OutOfRange(String),
}

/// Reads `500ms`, `2s`, `1.5s`, `1m`, `250us`, `10ns`, `1h` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| DurationError::NoNumber(text.to_owned()))?;
    let seconds = match unit.trim() {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "ns" => value / 1e9,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(DurationError::UnknownUnit(other.to_owned())),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| DurationError::OutOfRange(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_with_their_units() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(
            parse_duration("fast"),
            Err(DurationError::NoNumber("fast".into()))
        );
        assert_eq!(
            parse_duration("3 parsecs"),
            Err(DurationError::UnknownUnit("parsecs".into()))
        );
        assert_eq!(
            parse_duration("1e400"),
            Err(DurationError::UnknownUnit("e400".into()))
        );
        assert_eq!(
            parse_duration("99999999999999999999999h"),
            Err(DurationError::OutOfRange("99999999999999999999999h".into()))
        );
    }
}
