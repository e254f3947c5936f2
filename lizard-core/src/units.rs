//! [`Units`]: the engine's one unit vocabulary, and the one place the sources' units convert into it.
//!
//! Each source crate keeps the units of its own domain: `gator_xml::Units` is the `units` attribute of
//! gatord's events XML, spelled as the daemon writes it; `hwcpipe::Unit` is what an HWCPipe counter counts.
//! Neither leaf crate depends on the other, and both sit below this crate, so the shared vocabulary lives
//! here, at the first crate that sees both: `From<&gator_xml::Units>` and `From<hwcpipe::Unit>` below are
//! the only conversions, and every counter's [`Units`] comes through them. The named units are spelled the
//! same way in all three enums (`Megahertz`, `Millivolts`, `Bytes`, …).

use std::fmt;

/// The unit of a counter's values as the source declares it (before the multiplier and the unit scale).
///
/// The named variants are the units the Lizard C API can describe plus `Megahertz` and `Millivolts`, which it
/// folds (MHz readings are scaled to Hz, see [`Units::of_readings`]; mV is its own unit here). Any other unit
/// text is kept in `Other`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Units {
    /// No unit given.
    #[default]
    Unknown,
    /// Bytes (`B`, or `bytes`).
    Bytes,
    /// Degrees Celsius (`°C`).
    Celsius,
    /// Hertz (`Hz`).
    Hertz,
    /// Megahertz (`MHz`): readings are multiplied by 1 000 000 and so come out in Hz.
    Megahertz,
    /// Memory pages (`pages`).
    Pages,
    /// Revolutions per minute (`RPM`).
    Rpm,
    /// Seconds (`s`).
    Seconds,
    /// Volts (`V`).
    Volts,
    /// Millivolts (`mV`).
    Millivolts,
    /// Any other unit text, verbatim (`cycles`, `%`, `instructions`, `ns`, ...).
    Other(String),
}

impl Units {
    /// Maps a unit string as gatord's events XML and HWCPipe spell it (exact, case-sensitive) to a unit.
    pub fn parse(text: &str) -> Units {
        match text {
            "" => Units::Unknown,
            "B" | "bytes" => Units::Bytes,
            "°C" => Units::Celsius,
            "Hz" => Units::Hertz,
            "MHz" => Units::Megahertz,
            "pages" => Units::Pages,
            "RPM" => Units::Rpm,
            "s" => Units::Seconds,
            "V" => Units::Volts,
            "mV" => Units::Millivolts,
            other => Units::Other(other.to_owned()),
        }
    }

    /// The factor a raw value is scaled by because of the unit: 1 000 000 for MHz (readings are in Hz), else 1.
    pub fn scale(&self) -> f64 {
        match self {
            Units::Megahertz => 1_000_000.0,
            _ => 1.0,
        }
    }

    /// The unit the engine's readings and samples of such a counter are in, once [`scale`](Self::scale) is
    /// applied: Hz for MHz, the unit itself otherwise. Print this next to a reading.
    pub fn of_readings(&self) -> Units {
        match self {
            Units::Megahertz => Units::Hertz,
            other => other.clone(),
        }
    }
}

impl fmt::Display for Units {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Units::Unknown => "",
            Units::Bytes => "B",
            Units::Celsius => "°C",
            Units::Hertz => "Hz",
            Units::Megahertz => "MHz",
            Units::Pages => "pages",
            Units::Rpm => "RPM",
            Units::Seconds => "s",
            Units::Volts => "V",
            Units::Millivolts => "mV",
            Units::Other(text) => text,
        };
        f.write_str(text)
    }
}

/// A unit is written as its text (`MHz`, `B`, `cycles`, empty for none) and read back by [`Units::parse`].
#[cfg(feature = "serde")]
impl serde::Serialize for Units {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Units {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(Units::parse(&text))
    }
}

impl From<&gator_xml::Units> for Units {
    /// The unit of an event of gatord's events XML.
    fn from(units: &gator_xml::Units) -> Units {
        use gator_xml::Units as Xml;
        match units {
            Xml::Bytes | Xml::BytesWord => Units::Bytes,
            Xml::Hertz => Units::Hertz,
            Xml::Megahertz => Units::Megahertz,
            Xml::Pages => Units::Pages,
            Xml::Seconds => Units::Seconds,
            Xml::Volts => Units::Volts,
            Xml::Millivolts => Units::Millivolts,
            Xml::Celsius => Units::Celsius,
            Xml::Rpm => Units::Rpm,
            // The empty text, and spellings gator-xml does not name, read as the text says.
            Xml::Other(text) => Units::parse(text),
            other => Units::Other(other.as_str().to_owned()),
        }
    }
}

impl From<hwcpipe::Unit> for Units {
    /// The unit of an HWCPipe CPU or GPU counter.
    fn from(unit: hwcpipe::Unit) -> Units {
        match unit {
            hwcpipe::Unit::Bytes => Units::Bytes,
            other => Units::Other(other.as_str().to_owned()),
        }
    }
}
