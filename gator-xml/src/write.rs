//! Escaping for the writers: attribute values and text are always escaped, so any name round-trips.

/// The XML declaration every written document starts with (gatord looks for it before the root).
pub(crate) const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";

/// Appends `value` escaped for a double-quoted attribute.
pub(crate) fn push_attr_value(out: &mut String, value: &str) {
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
pub(crate) fn push_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    push_attr_value(out, value);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

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
