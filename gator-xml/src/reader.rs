//! Shared reading machinery: text from bytes, the XML parse, positions and typed attribute access.
//!
//! Every document reader in this crate goes through [`parse_document`] and reads attributes through
//! [`Element`], so the rules for numbers, booleans and error positions live in this one file.

use crate::error::{NumberError, Position, XmlError};
use crate::raw::RawElement;
use roxmltree::{Document, Node, ParsingOptions};

/// UTF-8 check for the `from_bytes` readers.
pub(crate) fn text_from_bytes(bytes: &[u8]) -> Result<&str, XmlError> {
    std::str::from_utf8(bytes).map_err(|source| XmlError::Utf8 {
        valid_up_to: source.valid_up_to(),
        source,
    })
}

/// Parses `text` with roxmltree (no DTD: entity expansion bombs are refused).
///
/// `line_shift` is the number of lines a wrapper put in front of the caller's text; error positions are
/// reported relative to the caller's text.
pub(crate) fn parse_document(text: &str, line_shift: u32) -> Result<Document<'_>, XmlError> {
    let options = ParsingOptions {
        allow_dtd: false,
        ..ParsingOptions::default()
    };
    Document::parse_with_options(text, options).map_err(|source| {
        let pos = source.pos();
        XmlError::Syntax {
            position: shifted(pos.row, pos.col, line_shift),
            source,
        }
    })
}

fn shifted(row: u32, col: u32, line_shift: u32) -> Position {
    Position::new(row.saturating_sub(line_shift).max(1), col.max(1))
}

/// The root element of `doc`, checked to be named `expected`.
pub(crate) fn root<'a, 'input>(
    doc: &'a Document<'input>,
    expected: &'static str,
    line_shift: u32,
) -> Result<Element<'a, 'input>, XmlError> {
    let node = doc.root_element();
    let element = Element::new(node, expected, line_shift);
    if node.tag_name().name() != expected {
        return Err(XmlError::UnexpectedRoot {
            expected,
            found: node.tag_name().name().to_owned(),
            position: element.position(),
        });
    }
    Ok(element)
}

/// Integers that attributes may hold.
pub(crate) trait Integer: Sized {
    fn from_radix(text: &str, radix: u32) -> Result<Self, std::num::ParseIntError>;
    /// `value` when it fits.
    fn from_u64(value: u64) -> Option<Self>;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            fn from_radix(text: &str, radix: u32) -> Result<Self, std::num::ParseIntError> {
                <$t>::from_str_radix(text, radix)
            }

            fn from_u64(value: u64) -> Option<Self> {
                <$t>::try_from(value).ok()
            }
        }
    )*};
}
integer!(u32, u64, i64);

/// The value of `0x` and 1 to 15 hexadecimal digits, the form gatord writes event codes in; `None` for
/// anything else (which [`parse_int`] then reads the general way).
fn short_hex(text: &str) -> Option<u64> {
    let digits = text.strip_prefix("0x")?.as_bytes();
    if digits.is_empty() || digits.len() > 15 {
        return None;
    }
    let mut value = 0;
    for &b in digits {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        value = value << 4 | u64::from(digit);
    }
    Some(value)
}

/// Reads an integer the way gatord writes them: `0x`-prefixed hexadecimal or plain decimal.
pub(crate) fn parse_int<T: Integer>(text: &str) -> Result<T, std::num::ParseIntError> {
    if let Some(value) = short_hex(text).and_then(T::from_u64) {
        return Ok(value);
    }
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => T::from_radix(hex, 16),
        None => T::from_radix(t, 10),
    }
}

/// Reads a hexadecimal integer with or without the `0x` prefix (gatord reads configuration `event` this way).
pub(crate) fn parse_hex<T: Integer>(text: &str) -> Result<T, std::num::ParseIntError> {
    let t = text.trim();
    T::from_radix(
        t.strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t),
        16,
    )
}

/// Reads a yes/no flag; gatord writes `yes`/`no` and some files use `true`/`false`.
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "yes" | "true" | "1" | "Yes" | "True" | "YES" | "TRUE" => Some(true),
        "no" | "false" | "0" | "No" | "False" | "NO" | "FALSE" => Some(false),
        _ => None,
    }
}

/// An element being read, with the name used in error reports.
#[derive(Clone, Copy)]
pub(crate) struct Element<'a, 'input> {
    pub(crate) node: Node<'a, 'input>,
    pub(crate) name: &'static str,
    line_shift: u32,
}

impl<'a, 'input> Element<'a, 'input> {
    pub(crate) fn new(node: Node<'a, 'input>, name: &'static str, line_shift: u32) -> Self {
        Self {
            node,
            name,
            line_shift,
        }
    }

    /// A child element read under the name `name`.
    pub(crate) fn child(&self, node: Node<'a, 'input>, name: &'static str) -> Self {
        Self::new(node, name, self.line_shift)
    }

    /// The element children, in document order.
    pub(crate) fn children(&self) -> impl Iterator<Item = Node<'a, 'input>> + 'a {
        self.node.children().filter(Node::is_element)
    }

    pub(crate) fn offset_position(&self, offset: usize) -> Position {
        let pos = self.node.document().text_pos_at(offset);
        shifted(pos.row, pos.col, self.line_shift)
    }

    /// Where the element starts.
    pub(crate) fn position(&self) -> Position {
        self.offset_position(self.node.range().start)
    }

    fn attribute_position(&self, attribute: &str) -> Position {
        match self.node.attribute_node(attribute) {
            Some(a) => self.offset_position(a.range().start),
            None => self.position(),
        }
    }

    pub(crate) fn str(&self, attribute: &str) -> Option<&'a str> {
        self.node.attribute(attribute)
    }

    pub(crate) fn string(&self, attribute: &str) -> Option<String> {
        self.str(attribute).map(str::to_owned)
    }

    pub(crate) fn required(&self, attribute: &'static str) -> Result<&'a str, XmlError> {
        self.str(attribute).ok_or_else(|| self.missing(attribute))
    }

    pub(crate) fn number_error(
        &self,
        attribute: &str,
        value: &str,
        source: NumberError,
    ) -> XmlError {
        XmlError::InvalidNumber {
            element: self.name,
            attribute: attribute.to_owned(),
            value: value.to_owned(),
            position: self.attribute_position(attribute),
            source,
        }
    }

    pub(crate) fn value_error(
        &self,
        attribute: &str,
        value: &str,
        expected: &'static str,
    ) -> XmlError {
        XmlError::InvalidValue {
            element: self.name,
            attribute: attribute.to_owned(),
            value: value.to_owned(),
            expected,
            position: self.attribute_position(attribute),
        }
    }

    /// Integer value (`0x` hex or decimal) of `attribute`, if present.
    pub(crate) fn int<T: Integer>(&self, attribute: &str) -> Result<Option<T>, XmlError> {
        self.str(attribute)
            .map(|v| self.int_value(attribute, v))
            .transpose()
    }

    pub(crate) fn int_value<T: Integer>(&self, attribute: &str, v: &str) -> Result<T, XmlError> {
        parse_int(v).map_err(|e| self.number_error(attribute, v, e.into()))
    }

    /// Hexadecimal value (prefix optional) of `attribute`, if present.
    pub(crate) fn hex<T: Integer>(&self, attribute: &str) -> Result<Option<T>, XmlError> {
        self.str(attribute)
            .map(|v| self.hex_value(attribute, v))
            .transpose()
    }

    pub(crate) fn hex_value<T: Integer>(&self, attribute: &str, v: &str) -> Result<T, XmlError> {
        parse_hex(v).map_err(|e| self.number_error(attribute, v, e.into()))
    }

    pub(crate) fn float_value(&self, attribute: &str, v: &str) -> Result<f64, XmlError> {
        v.trim()
            .parse::<f64>()
            .map_err(|e| self.number_error(attribute, v, e.into()))
    }

    /// Boolean value (yes/no, true/false) of `attribute`, if present.
    pub(crate) fn boolean(&self, attribute: &str) -> Result<Option<bool>, XmlError> {
        self.str(attribute)
            .map(|v| self.bool_value(attribute, v))
            .transpose()
    }

    pub(crate) fn bool_value(&self, attribute: &str, v: &str) -> Result<bool, XmlError> {
        parse_bool(v).ok_or_else(|| self.value_error(attribute, v, "yes or no"))
    }

    /// The error for a required attribute that is absent.
    pub(crate) fn missing(&self, attribute: &'static str) -> XmlError {
        XmlError::MissingAttribute {
            element: self.name,
            attribute,
            position: self.position(),
        }
    }

    /// Reads the attributes in one pass: the values of the `known` names (in the order given) and every other
    /// attribute as [`crate::Attributes`].
    ///
    /// Gives the same values as [`Element::str`] and [`Element::extra`]: names compare by local part, and the
    /// first attribute with a known name wins.
    pub(crate) fn known<const N: usize>(
        &self,
        known: [&'static str; N],
    ) -> ([Option<&'a str>; N], crate::Attributes) {
        let mut values = [None; N];
        let mut extra = crate::Attributes::new();
        for a in self.node.attributes() {
            let name = a.name();
            match known.iter().position(|k| *k == name) {
                Some(i) => {
                    values[i].get_or_insert(a.value());
                }
                None => {
                    extra.insert(name.to_owned(), a.value().to_owned());
                }
            }
        }
        (values, extra)
    }

    /// The attributes whose names are not in `known`, kept so that nothing is lost.
    pub(crate) fn extra(&self, known: &[&str]) -> crate::Attributes {
        self.node
            .attributes()
            .filter(|a| !known.contains(&a.name()))
            .map(|a| (a.name().to_owned(), a.value().to_owned()))
            .collect()
    }

    /// The whole element, kept verbatim as a [`RawElement`].
    pub(crate) fn raw(&self) -> Result<RawElement, XmlError> {
        RawElement::from_node(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_read_the_same_on_the_short_path() {
        for text in [
            "0x11",
            "0xFF",
            "0xdeadBEEF",
            "0x0",
            "0xfffffffffffffff",
            "0xffffffff",
        ] {
            let expected = u64::from_str_radix(&text[2..], 16).ok();
            assert_eq!(parse_int::<u64>(text).ok(), expected, "{text}");
        }
        assert!(parse_int::<u32>("0x100000000").is_err());
        assert_eq!(parse_int::<u32>("0xffffffff"), Ok(u32::MAX));
        assert_eq!(parse_int::<i64>(" 0x10 "), Ok(16));
        assert_eq!(parse_int::<u64>("0xffffffffffffffff"), Ok(u64::MAX));
        assert!(parse_int::<u64>("0x").is_err());
        assert!(parse_int::<u64>("0xg").is_err());
        assert!(parse_int::<u64>("0x+1").is_ok());
        assert_eq!(parse_int::<u64>("17"), Ok(17));
    }

    proptest::proptest! {
        /// The short hexadecimal path reads what the general one reads, for any `0x` text.
        #[test]
        fn short_hex_agrees_with_the_general_path(digits in "[0-9a-fA-F+ xg]{0,17}") {
            let text = format!("0x{digits}");
            // What the general path reads: the trimmed text after `0x`, by `from_str_radix`.
            let general = text.trim().strip_prefix("0x").and_then(|hex| u64::from_str_radix(hex, 16).ok());
            if let Some(value) = short_hex(&text) {
                proptest::prop_assert_eq!(Some(value), general);
            }
            proptest::prop_assert_eq!(parse_int::<u64>(&text).ok(), general);
        }
    }
}
