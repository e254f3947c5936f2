//! Text made safe to place in HTML: element content and double-quoted attribute values.

use std::fmt;

/// Displays its text with `&`, `<`, `>`, `"` and `'` replaced by character references, so that text from a
/// daemon, an events file or an application (counter names, units, trace record modules) is shown as text
/// and never read as markup. Valid in element content (HTML and inline SVG) and in double-quoted attribute
/// values; the report never places such text anywhere else (not in scripts, styles, URLs or unquoted
/// attributes).
pub struct Esc<'a>(pub &'a str);

impl fmt::Display for Esc<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let mut plain = 0;
        for (index, byte) in text.bytes().enumerate() {
            let reference = match byte {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                b'\'' => "&#39;",
                _ => continue,
            };
            // The replaced bytes are ASCII, so `index` is always a character boundary.
            f.write_str(&text[plain..index])?;
            f.write_str(reference)?;
            plain = index + 1;
        }
        f.write_str(&text[plain..])
    }
}

#[cfg(test)]
mod tests {
    use super::Esc;
    use proptest::prelude::*;

    #[test]
    fn markup_characters_become_references() {
        assert_eq!(
            Esc("<script>alert(\"x\" & 'y')</script>").to_string(),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
        assert_eq!(Esc("Mali-G78 °C µs").to_string(), "Mali-G78 °C µs");
        assert_eq!(Esc("").to_string(), "");
    }

    proptest! {
        #[test]
        fn escaped_text_holds_no_markup_and_unescapes_to_the_original(text in any::<String>()) {
            let escaped = Esc(&text).to_string();
            prop_assert!(!escaped.contains(['<', '>', '"', '\'']));
            let back = escaped
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&amp;", "&");
            prop_assert_eq!(back, text);
        }
    }
}
