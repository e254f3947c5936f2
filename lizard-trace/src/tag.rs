//! Fixed-size, zero-padded UTF-8 text fields: the 10-byte module tag and the 20-byte file name of a record.

use std::fmt;

use crate::error::TagError;

/// Text of at most `N` UTF-8 bytes, stored zero-padded in an `N`-byte field. It never contains NUL.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FixedText<const N: usize> {
    /// The text followed by zero bytes.
    bytes: [u8; N],
    /// Length of the text.
    len: u8,
}

/// A record's module tag: which part of the application recorded it (at most 10 bytes).
pub type ModuleTag = FixedText<10>;

/// A record's source file name: the file name without directories (at most 20 bytes).
pub type FileTag = FixedText<20>;

impl<const N: usize> FixedText<N> {
    /// Size of the field in bytes.
    pub const SIZE: usize = N;

    /// The empty text.
    pub const fn empty() -> Self {
        FixedText {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Takes `text` as is; it must fit `N` bytes and contain no NUL.
    pub fn new(text: &str) -> Result<Self, TagError> {
        if text.len() > N {
            return Err(TagError::TooLong {
                len: text.len(),
                max: N,
            });
        }
        if let Some(at) = text.bytes().position(|b| b == 0) {
            return Err(TagError::Nul { at });
        }
        let mut bytes = [0; N];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(FixedText {
            bytes,
            len: text.len() as u8,
        })
    }

    /// Keeps the longest prefix of `text` that fits `N` bytes, ends on a character boundary and has no NUL.
    pub fn truncating(text: &str) -> Self {
        let text = text.split('\0').next().unwrap_or("");
        let mut end = text.len().min(N);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; N];
        bytes[..end].copy_from_slice(&text.as_bytes()[..end]);
        FixedText {
            bytes,
            len: end as u8,
        }
    }

    /// The file name part of a path (after the last `/` or `\`), truncated like [`FixedText::truncating`].
    /// This is what the record macro stores for `file!()`.
    pub fn file_name(path: &str) -> Self {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        Self::truncating(name)
    }

    /// Decodes a zero-padded field: text, then only zero bytes.
    pub fn decode(field: &[u8; N]) -> Result<Self, TagError> {
        let len = field.iter().position(|&b| b == 0).unwrap_or(N);
        if let Some(at) = field[len..].iter().position(|&b| b != 0) {
            return Err(TagError::BadPadding { at: len + at });
        }
        std::str::from_utf8(&field[..len]).map_err(TagError::NotUtf8)?;
        Ok(FixedText {
            bytes: *field,
            len: len as u8,
        })
    }

    /// The zero-padded field.
    pub fn field(&self) -> &[u8; N] {
        &self.bytes
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Every constructor checks UTF-8, so the fallback is never taken.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }
}

impl<const N: usize> Default for FixedText<N> {
    fn default() -> Self {
        Self::empty()
    }
}

impl<const N: usize> fmt::Debug for FixedText<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> fmt::Display for FixedText<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_and_pads() {
        let tag = ModuleTag::new("render").unwrap();
        assert_eq!(tag.as_str(), "render");
        assert_eq!(tag.field(), b"render\0\0\0\0");
        assert_eq!(ModuleTag::decode(tag.field()).unwrap(), tag);
        let full = ModuleTag::new("0123456789").unwrap();
        assert_eq!(
            ModuleTag::decode(full.field()).unwrap().as_str(),
            "0123456789"
        );
    }

    #[test]
    fn too_long_is_rejected() {
        assert_eq!(
            ModuleTag::new("0123456789a"),
            Err(TagError::TooLong { len: 11, max: 10 })
        );
    }

    #[test]
    fn nul_is_rejected() {
        assert_eq!(ModuleTag::new("ab\0c"), Err(TagError::Nul { at: 2 }));
    }

    #[test]
    fn bad_padding_is_rejected() {
        assert_eq!(
            ModuleTag::decode(b"ab\0c\0\0\0\0\0\0"),
            Err(TagError::BadPadding { at: 3 })
        );
    }

    #[test]
    fn non_utf8_is_rejected() {
        assert!(matches!(
            ModuleTag::decode(b"\xff\xfe\0\0\0\0\0\0\0\0"),
            Err(TagError::NotUtf8(_))
        ));
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        // "é" is two bytes; 9 'a' + 'é' is 11 bytes, cut back to the 9 'a'.
        assert_eq!(ModuleTag::truncating("aaaaaaaaaé").as_str(), "aaaaaaaaa");
        assert_eq!(ModuleTag::truncating("ab\0cd").as_str(), "ab");
    }

    #[test]
    fn file_name_drops_directories() {
        assert_eq!(
            FileTag::file_name("src/gpu/submit.rs").as_str(),
            "submit.rs"
        );
        assert_eq!(FileTag::file_name(r"C:\x\y.rs").as_str(), "y.rs");
        assert_eq!(
            FileTag::file_name("a/very_long_module_file_name.rs").as_str(),
            "very_long_module_fil"
        );
    }
}
