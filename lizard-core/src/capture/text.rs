//! The pieces of text the written formats share: a series' name, a reading, a CSV field.

use serde_json::Number;

use super::cores::core_name;
use super::CapturedCounter;

/// The counter's name on one of its series: its own, or `NAME@cpuN` for a core's part.
pub(crate) fn series_name(c: &CapturedCounter, core: Option<u32>) -> String {
    match core {
        Some(core) => core_name(c.counter_name(), core),
        None => c.counter_name().to_owned(),
    }
}

/// A reading for a table: integers as they are, fractions to at most six decimals.
pub(crate) fn reading_text(value: &Number) -> String {
    match value.as_f64() {
        Some(f) if value.is_f64() => {
            let text = format!("{f:.6}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        _ => value.to_string(),
    }
}

/// A CSV field: quoted (with inner quotes doubled) when it holds a comma, a quote or a newline.
pub(crate) fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn readings_keep_integers_and_trim_fractions() {
        assert_eq!(reading_text(&Number::from(42)), "42");
        assert_eq!(reading_text(&Number::from_f64(2.5).unwrap()), "2.5");
        assert_eq!(reading_text(&Number::from_f64(1.0).unwrap()), "1");
        assert_eq!(
            reading_text(&Number::from_f64(0.1234567).unwrap()),
            "0.123457"
        );
    }
}
