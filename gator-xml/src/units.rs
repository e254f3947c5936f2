//! [`Units`]: the `units` attribute of an event.

use std::fmt;

/// What an event counts, from its `units` attribute.
///
/// The common spellings map to named variants (matching is exact, as gatord writes them); anything else is kept as
/// [`Units::Other`] with the original text, so no unit is ever lost or guessed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Units {
    /// `B`: bytes.
    Bytes,
    /// `bytes`: bytes, spelled out (Mali files use this spelling).
    BytesWord,
    /// `Hz`.
    Hertz,
    /// `MHz`.
    Megahertz,
    /// `pages`: memory pages.
    Pages,
    /// `s`: seconds.
    Seconds,
    /// `ms`: milliseconds.
    Milliseconds,
    /// `us`: microseconds.
    Microseconds,
    /// `ns`: nanoseconds.
    Nanoseconds,
    /// `V`: volts.
    Volts,
    /// `mV`: millivolts.
    Millivolts,
    /// `°C`: degrees Celsius.
    Celsius,
    /// `RPM`: revolutions per minute.
    Rpm,
    /// `%`: percent.
    Percent,
    /// `W`: watts.
    Watts,
    /// `mW`: milliwatts.
    Milliwatts,
    /// `J`: joules.
    Joules,
    /// `A`: amperes.
    Amperes,
    /// `mA`: milliamperes.
    Milliamperes,
    /// `cycles`: clock cycles.
    Cycles,
    /// `instructions`.
    Instructions,
    /// Any other text, kept as written (including the empty string).
    Other(String),
}

impl Units {
    /// Maps the text of a `units` attribute.
    pub fn parse(text: &str) -> Self {
        match text {
            "B" => Self::Bytes,
            "bytes" => Self::BytesWord,
            "Hz" => Self::Hertz,
            "MHz" => Self::Megahertz,
            "pages" => Self::Pages,
            "s" => Self::Seconds,
            "ms" => Self::Milliseconds,
            "us" => Self::Microseconds,
            "ns" => Self::Nanoseconds,
            "V" => Self::Volts,
            "mV" => Self::Millivolts,
            "°C" => Self::Celsius,
            "RPM" => Self::Rpm,
            "%" => Self::Percent,
            "W" => Self::Watts,
            "mW" => Self::Milliwatts,
            "J" => Self::Joules,
            "A" => Self::Amperes,
            "mA" => Self::Milliamperes,
            "cycles" => Self::Cycles,
            "instructions" => Self::Instructions,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The text gatord writes for this unit (the original text for [`Units::Other`]).
    pub fn as_str(&self) -> &str {
        match self {
            Self::Bytes => "B",
            Self::BytesWord => "bytes",
            Self::Hertz => "Hz",
            Self::Megahertz => "MHz",
            Self::Pages => "pages",
            Self::Seconds => "s",
            Self::Milliseconds => "ms",
            Self::Microseconds => "us",
            Self::Nanoseconds => "ns",
            Self::Volts => "V",
            Self::Millivolts => "mV",
            Self::Celsius => "°C",
            Self::Rpm => "RPM",
            Self::Percent => "%",
            Self::Watts => "W",
            Self::Milliwatts => "mW",
            Self::Joules => "J",
            Self::Amperes => "A",
            Self::Milliamperes => "mA",
            Self::Cycles => "cycles",
            Self::Instructions => "instructions",
            Self::Other(text) => text,
        }
    }

    /// True for the two byte spellings (`B` and `bytes`).
    pub fn is_bytes(&self) -> bool {
        matches!(self, Self::Bytes | Self::BytesWord)
    }
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_unit_round_trips_through_its_text() {
        for text in [
            "B",
            "bytes",
            "Hz",
            "MHz",
            "pages",
            "s",
            "ms",
            "us",
            "ns",
            "V",
            "mV",
            "°C",
            "RPM",
            "%",
            "W",
            "mW",
            "J",
            "A",
            "mA",
            "cycles",
            "instructions",
        ] {
            let units = Units::parse(text);
            assert!(!matches!(units, Units::Other(_)), "{text} should be named");
            assert_eq!(units.as_str(), text);
        }
    }

    #[test]
    fn unknown_and_empty_units_are_kept_verbatim() {
        assert_eq!(Units::parse("beats"), Units::Other("beats".into()));
        assert_eq!(Units::parse(""), Units::Other(String::new()));
        // Matching is exact, as in gatord: a different case is a different unit.
        assert_eq!(Units::parse("hz"), Units::Other("hz".into()));
    }
}
