//! [`RawElement`]: an element this crate does not model, kept whole instead of dropped.

use crate::error::XmlError;
use crate::reader::Element;

/// How deep [`RawElement`] trees may nest before reading stops with [`XmlError::TooDeep`].
pub const MAX_DEPTH: usize = 128;

/// An element kept verbatim: name, attributes in document order, text and child elements.
///
/// Readers use it for elements gatord may add that have no typed model here (for example `<templates>` in a
/// configuration, or an element a newer daemon introduces), so that nothing the daemon sent is silently lost.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawElement {
    /// The element name (local part).
    pub name: String,
    /// The attributes in document order, entities decoded.
    pub attributes: Vec<(String, String)>,
    /// The text directly inside the element (all text nodes joined), entities decoded.
    pub text: String,
    /// The child elements in document order.
    pub children: Vec<RawElement>,
}

impl RawElement {
    /// The value of attribute `name`, if present.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn from_node(element: Element<'_, '_>) -> Result<Self, XmlError> {
        Self::build(element, 0)
    }

    fn build(element: Element<'_, '_>, depth: usize) -> Result<Self, XmlError> {
        if depth >= MAX_DEPTH {
            return Err(XmlError::TooDeep {
                limit: MAX_DEPTH,
                position: element.position(),
            });
        }
        let node = element.node;
        let mut raw = RawElement {
            name: node.tag_name().name().to_owned(),
            attributes: node
                .attributes()
                .map(|a| (a.name().to_owned(), a.value().to_owned()))
                .collect(),
            ..RawElement::default()
        };
        for child in node.children() {
            if child.is_text() {
                raw.text.push_str(child.text().unwrap_or_default());
            } else if child.is_element() {
                raw.children
                    .push(Self::build(element.child(child, "element"), depth + 1)?);
            }
        }
        Ok(raw)
    }
}
