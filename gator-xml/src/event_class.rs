//! [`EventClass`] and [`DisplayMode`]: how an event's values are combined and shown.

use std::fmt;

/// The `class` attribute: how successive values of a counter relate to each other.
///
/// gatord treats a missing `class` as [`EventClass::Delta`]; see [`crate::Event::effective_class`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventClass {
    /// `delta`: each value is the count since the previous sample (summed over time).
    Delta,
    /// `absolute`: each value is a level (averaged over time).
    Absolute,
    /// `activity`: an activity timeline.
    Activity,
    /// `incident`: discrete occurrences.
    Incident,
    /// `constant`: a value fixed for the capture (Mali constants in `captured` replies).
    Constant,
    /// Any other text, kept as written.
    Unknown(String),
}

impl EventClass {
    /// Maps the text of a `class` attribute.
    pub fn parse(text: &str) -> Self {
        match text {
            "delta" => Self::Delta,
            "absolute" => Self::Absolute,
            "activity" => Self::Activity,
            "incident" => Self::Incident,
            "constant" => Self::Constant,
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// The text gatord writes for this class.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Delta => "delta",
            Self::Absolute => "absolute",
            Self::Activity => "activity",
            Self::Incident => "incident",
            Self::Constant => "constant",
            Self::Unknown(text) => text,
        }
    }
}

impl fmt::Display for EventClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `display` attribute: how a viewer reduces the values of one counter across cores or time.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DisplayMode {
    /// `accumulate`.
    Accumulate,
    /// `average`.
    Average,
    /// `maximum`.
    Maximum,
    /// `minimum`.
    Minimum,
    /// `hertz`.
    Hertz,
    /// Any other text, kept as written.
    Unknown(String),
}

impl DisplayMode {
    /// Maps the text of a `display` attribute.
    pub fn parse(text: &str) -> Self {
        match text {
            "accumulate" => Self::Accumulate,
            "average" => Self::Average,
            "maximum" => Self::Maximum,
            "minimum" => Self::Minimum,
            "hertz" => Self::Hertz,
            other => Self::Unknown(other.to_owned()),
        }
    }

    /// The text gatord writes for this mode.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Accumulate => "accumulate",
            Self::Average => "average",
            Self::Maximum => "maximum",
            Self::Minimum => "minimum",
            Self::Hertz => "hertz",
            Self::Unknown(text) => text,
        }
    }
}

impl fmt::Display for DisplayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_trip_and_unknown_text_is_kept() {
        for text in [
            "delta", "absolute", "activity", "incident", "constant", "Absolute", "",
        ] {
            assert_eq!(EventClass::parse(text).as_str(), text);
        }
        assert_eq!(
            EventClass::parse("Absolute"),
            EventClass::Unknown("Absolute".into())
        );
    }

    #[test]
    fn display_modes_round_trip_and_unknown_text_is_kept() {
        for text in [
            "accumulate",
            "average",
            "maximum",
            "minimum",
            "hertz",
            "median",
        ] {
            assert_eq!(DisplayMode::parse(text).as_str(), text);
        }
        assert_eq!(
            DisplayMode::parse("median"),
            DisplayMode::Unknown("median".into())
        );
    }
}
