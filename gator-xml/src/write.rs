//! The pieces every writer of this crate is made of, public for writers of gatord documents this crate does
//! not model: attribute values and text are always escaped, so any name round-trips. This is the one XML
//! escaper of the workspace.

use crate::raw::RawElement;
use crate::Attributes;

/// The XML declaration every written document starts with (gatord looks for it before the root).
pub const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

/// Appends `value` escaped for a double-quoted attribute: `& < > " '` and the white space an attribute
/// would otherwise normalise (newline, carriage return, tab) become references.
pub fn push_attr_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
}

/// Appends ` name="value"` with the value escaped.
pub fn push_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    push_attr_value(out, value);
    out.push('"');
}

/// `value` escaped for a double-quoted attribute (see [`push_attr_value`]).
pub fn escape_attr(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    push_attr_value(&mut out, value);
    out
}

/// Appends ` name="value"` when there is a value.
pub(crate) fn push_opt(out: &mut String, name: &str, value: Option<&str>) {
    if let Some(value) = value {
        push_attr(out, name, value);
    }
}

/// Appends ` name="N"` in decimal when there is a value.
pub(crate) fn push_int(out: &mut String, name: &str, value: Option<impl std::fmt::Display>) {
    if let Some(value) = value {
        push_attr(out, name, &value.to_string());
    }
}

/// Appends ` name="yes"` or ` name="no"` when there is a value.
pub(crate) fn push_yes_no(out: &mut String, name: &str, value: Option<bool>) {
    if let Some(value) = value {
        push_attr(out, name, if value { "yes" } else { "no" });
    }
}

/// Appends every attribute of `extra`.
pub(crate) fn push_extra(out: &mut String, extra: &Attributes) {
    for (name, value) in extra {
        push_attr(out, name, value);
    }
}

/// Appends `text` escaped for element content: `& < >`, and carriage returns, which a reader would turn into
/// newlines.
pub fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
}

/// Appends `<name>text</name>` with the text escaped.
pub(crate) fn push_text_element(out: &mut String, name: &str, text: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    push_text(out, text);
    out.push_str("</");
    out.push_str(name);
    out.push_str(">\n");
}

/// Appends a kept element as it was read: name, attributes, text, then children. Iterative, so an element of
/// any depth is written without deep recursion.
pub fn push_raw(out: &mut String, element: &RawElement) {
    // Each entry: an element and how many of its children are written.
    let mut open: Vec<(&RawElement, usize)> = Vec::new();
    let start = |out: &mut String, e: &RawElement| {
        out.push('<');
        out.push_str(&e.name);
        for (name, value) in &e.attributes {
            push_attr(out, name, value);
        }
        if e.text.is_empty() && e.children.is_empty() {
            out.push_str("/>");
            false
        } else {
            out.push('>');
            push_text(out, &e.text);
            true
        }
    };
    if start(out, element) {
        open.push((element, 0));
    }
    while let Some((e, next)) = open.last_mut() {
        if let Some(child) = e.children.get(*next) {
            *next += 1;
            if start(out, child) {
                open.push((child, 0));
            }
        } else {
            out.push_str("</");
            out.push_str(&e.name);
            out.push('>');
            open.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_element_is_written_back_as_read() {
        let leaf = RawElement {
            name: "t".into(),
            attributes: vec![("a".into(), "x<y".into())],
            ..RawElement::default()
        };
        let element = RawElement {
            name: "templates".into(),
            text: "a & b".into(),
            children: vec![leaf.clone(), leaf],
            ..RawElement::default()
        };
        let mut s = String::new();
        push_raw(&mut s, &element);
        assert_eq!(
            s,
            "<templates>a &amp; b<t a=\"x&lt;y\"/><t a=\"x&lt;y\"/></templates>"
        );
    }

    #[test]
    fn a_deep_element_is_written_without_recursion() {
        let mut element = RawElement {
            name: "e".into(),
            ..RawElement::default()
        };
        // Deep enough to overflow a recursive writer's stack (Miri, far slower, checks a shallower one).
        let depth = if cfg!(miri) { 1_000 } else { 100_000 };
        for _ in 0..depth {
            element = RawElement {
                name: "e".into(),
                children: vec![element],
                ..RawElement::default()
            };
        }
        let mut s = String::new();
        push_raw(&mut s, &element);
        assert_eq!(s.len(), depth * "<e></e>".len() + "<e/>".len());
        // Dropping a deep tree recurses too; take it apart from the top.
        let mut next = Some(element);
        while let Some(mut e) = next {
            next = e.children.pop();
        }
    }

    #[test]
    fn special_characters_are_escaped() {
        let mut s = String::new();
        push_attr(&mut s, "counter", "a&b\"c<d>e'f\ng\th\ri");
        assert_eq!(
            s,
            " counter=\"a&amp;b&quot;c&lt;d&gt;e&apos;f&#10;g&#9;h&#13;i\""
        );
    }
}
