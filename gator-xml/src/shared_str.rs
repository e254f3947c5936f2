//! [`SharedStr`]: an immutable string that is a view into the text of the document it was read from, and
//! [`DocumentText`], which hands the views out while a document is read.
//!
//! The merged events document holds about 12,800 events, each with a name, a title and a description. Reading
//! each value into its own `String` costs an allocation and a free per attribute, and looking values up in a
//! table of the distinct ones costs a hash of the whole text. A view costs neither: the reader keeps one shared
//! copy of the document text and each value is a range of it.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// An immutable, cheaply cloned string: a range of a reference-counted text.
///
/// Values read from a document are views into one shared copy of the document's text, so a model read from a
/// document keeps that text alive (about the size of the document) for as long as any of its strings lives;
/// `String::from` makes an independent copy. It reads like a `&str` (it dereferences to `str`), compares equal
/// to `str`, `&str` and `String`, and turns into a `String` with `String::from` or `to_string`. Equality,
/// ordering and hashing are those of the text.
#[derive(Clone)]
pub struct SharedStr {
    text: Arc<str>,
    start: usize,
    end: usize,
}

impl SharedStr {
    /// The text.
    pub fn as_str(&self) -> &str {
        // The range lies on character boundaries of `text` by construction.
        self.text.get(self.start..self.end).unwrap_or_default()
    }

    /// The whole of `text`.
    fn whole(text: Arc<str>) -> Self {
        let end = text.len();
        Self {
            text,
            start: 0,
            end,
        }
    }
}

impl PartialEq for SharedStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedStr {}

impl PartialOrd for SharedStr {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedStr {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SharedStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// The empty text, allocated once: a default [`Event`](crate::Event) costs no allocation.
static EMPTY: OnceLock<SharedStr> = OnceLock::new();

impl Default for SharedStr {
    fn default() -> Self {
        EMPTY.get_or_init(|| Self::whole(Arc::from(""))).clone()
    }
}

impl Deref for SharedStr {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        Self::whole(Arc::from(text))
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self::whole(Arc::from(text))
    }
}

impl From<&String> for SharedStr {
    fn from(text: &String) -> Self {
        Self::whole(Arc::from(text.as_str()))
    }
}

impl From<SharedStr> for String {
    fn from(text: SharedStr) -> Self {
        text.as_str().to_owned()
    }
}

impl From<&SharedStr> for String {
    fn from(text: &SharedStr) -> Self {
        text.as_str().to_owned()
    }
}

macro_rules! eq_text {
    ($($t:ty),*) => {$(
        impl PartialEq<$t> for SharedStr {
            fn eq(&self, other: &$t) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }

        impl PartialEq<SharedStr> for $t {
            fn eq(&self, other: &SharedStr) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}
eq_text!(str, &str, String);

/// The shared copy of a document's text, which hands out [`SharedStr`] views of the values read from it.
pub(crate) struct DocumentText {
    text: Arc<str>,
}

impl DocumentText {
    /// Shares `text`, the text the document is parsed from.
    pub(crate) fn new(text: Arc<str>) -> Self {
        Self { text }
    }

    /// The text to parse.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// `value` as a view when it lies within the document text (an attribute value as written); otherwise (a
    /// value with entities, which the parser rewrote) a copy of its own.
    pub(crate) fn get(&self, value: &str) -> SharedStr {
        let start = (value.as_ptr() as usize).wrapping_sub(self.text.as_ptr() as usize);
        match start.checked_add(value.len()) {
            Some(end) if end <= self.text.len() => SharedStr {
                text: Arc::clone(&self.text),
                start,
                end,
            },
            _ => SharedStr::from(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_compares_and_converts_like_a_string() {
        let s = SharedStr::from("Cycles");
        assert_eq!(s, "Cycles");
        assert_eq!("Cycles", s);
        assert_eq!(s, String::from("Cycles"));
        assert_eq!(s.as_str(), "Cycles");
        assert_eq!(s.len(), 6);
        assert_eq!(format!("{s} {s:?}"), "Cycles \"Cycles\"");
        assert_eq!(String::from(s.clone()), "Cycles");
        let (a, b) = (SharedStr::from("a"), SharedStr::from("b"));
        assert!(a < b);
        assert_eq!(SharedStr::default(), "");
    }

    #[test]
    fn values_within_the_document_are_views_of_it() {
        let doc = DocumentText::new(Arc::from("Cache Cache Pipeline é"));
        let text = doc.text();
        let (a, b, c) = (
            doc.get(&text[0..5]),
            doc.get(&text[6..11]),
            doc.get(&text[12..20]),
        );
        assert_eq!(
            (a.as_str(), b.as_str(), c.as_str()),
            ("Cache", "Cache", "Pipeline")
        );
        assert_eq!(a, b);
        assert!(Arc::ptr_eq(&a.text, &doc.text) && Arc::ptr_eq(&c.text, &doc.text));
        assert_eq!(doc.get(&text[21..]), "é");
        assert_eq!(doc.get(&text[text.len()..]), "");
    }

    #[test]
    fn values_elsewhere_are_copies() {
        let doc = DocumentText::new(Arc::from("<a b='x &amp; y'/>"));
        // A value the parser rewrote lives outside the document text.
        let rewritten = String::from("x & y");
        let value = doc.get(&rewritten);
        assert_eq!(value, "x & y");
        assert!(!Arc::ptr_eq(&value.text, &doc.text));
        drop(rewritten);
        assert_eq!(value, "x & y");
    }

    #[test]
    fn equality_ordering_and_hashing_are_the_text_s() {
        use std::collections::hash_map::DefaultHasher;
        let doc = DocumentText::new(Arc::from("abc"));
        let view = doc.get(&doc.text()[1..]);
        let own = SharedStr::from("bc");
        assert_eq!(view, own);
        assert_eq!(view.cmp(&own), std::cmp::Ordering::Equal);
        let hash = |s: &SharedStr| {
            let mut h = DefaultHasher::new();
            s.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&view), hash(&own));
        let set: std::collections::HashSet<SharedStr> = [view].into_iter().collect();
        assert!(set.contains("bc"));
    }
}
