//! [`SharedStr`]: an immutable string that equal values of one document share, and the interner that reads
//! them.
//!
//! The merged events document repeats most of its text (the same event names, titles and descriptions once
//! per CPU cluster or GPU): 12,800 events carry about 2,200 distinct names and 2,700 distinct descriptions.
//! Reading each value into its own `String` costs an allocation and a free per attribute; a reader keeps one
//! copy of each distinct value instead and hands out reference-counted handles to it.

use std::borrow::Borrow;
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// An immutable, cheaply cloned string; equal values read from one document share their storage.
///
/// It reads like a `&str` (it dereferences to `str`), compares equal to `str`, `&str` and `String`, and turns
/// into a `String` with `String::from` or `to_string`. Equality, ordering and hashing are those of the text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The empty text, allocated once: a default [`Event`](crate::Event) costs no allocation.
static EMPTY: OnceLock<SharedStr> = OnceLock::new();

impl Default for SharedStr {
    fn default() -> Self {
        EMPTY.get_or_init(|| Self(Arc::from(""))).clone()
    }
}

impl Deref for SharedStr {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
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
        Self(Arc::from(text))
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        Self(Arc::from(text))
    }
}

impl From<&String> for SharedStr {
    fn from(text: &String) -> Self {
        Self(Arc::from(text.as_str()))
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

/// Hands out one [`SharedStr`] per distinct text while a document is read.
///
/// An open-addressing table (linear probing, at most half full) of the texts seen so far with their keyed
/// hashes: a lookup is one hash of the text, usually one slot and one comparison.
pub(crate) struct Interner {
    slots: Vec<Option<(u64, SharedStr)>>,
    len: usize,
    keys: TextKeys,
}

impl Interner {
    /// An interner sized for a document of `len` bytes (about one distinct text per 512 bytes).
    pub(crate) fn for_document(len: usize) -> Self {
        let slots = (len / 256).clamp(16, 1 << 17).next_power_of_two();
        Self {
            slots: vec![None; slots],
            len: 0,
            keys: TextKeys::new(),
        }
    }

    /// The shared copy of `text`, made on first sight.
    pub(crate) fn get(&mut self, text: &str) -> SharedStr {
        let hash = self.keys.hash(text.as_bytes());
        let mask = self.slots.len() - 1;
        let mut at = hash as usize & mask;
        while let Some((h, shared)) = &self.slots[at] {
            if *h == hash && shared.as_str() == text {
                return shared.clone();
            }
            at = (at + 1) & mask;
        }
        let shared = SharedStr::from(text);
        self.slots[at] = Some((hash, shared.clone()));
        self.len += 1;
        if self.len * 2 > self.slots.len() {
            self.grow();
        }
        shared
    }

    /// Doubles the table, placing each text again by its stored hash.
    fn grow(&mut self) {
        let doubled = vec![None; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        let mask = self.slots.len() - 1;
        for (hash, shared) in old.into_iter().flatten() {
            let mut at = hash as usize & mask;
            while self.slots[at].is_some() {
                at = (at + 1) & mask;
            }
            self.slots[at] = Some((hash, shared));
        }
    }
}

/// The keys of one interner's hash: drawn from the standard library's per-process random source, so a
/// document cannot be written to make its texts collide.
struct TextKeys {
    k0: u64,
    k1: u64,
}

/// The high and low halves of the full product, folded together.
fn fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// Eight bytes as a little-endian word.
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().unwrap_or_default())
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn u32_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(word))
}

impl TextKeys {
    fn new() -> Self {
        let random = RandomState::new();
        Self {
            k0: random.hash_one(0x243f_6a88_85a3_08d3_u64),
            k1: random.hash_one(0x1319_8a2e_0370_7344_u64) | 1,
        }
    }

    fn mix(&self, state: u64, a: u64, b: u64) -> u64 {
        fold(state ^ a ^ self.k0, b ^ self.k1)
    }

    /// A keyed hash for short texts: one folded 64×64→128-bit multiply per 16 bytes.
    ///
    /// The standard SipHash costs several times more per byte, and the interner hashes every name, title and
    /// description of an events document; the keys keep the hash unpredictable to the document's author.
    fn hash(&self, bytes: &[u8]) -> u64 {
        let len = bytes.len();
        let mut state = self.k1;
        // The last 16 bytes (overlapping the blocks before them) or, when shorter, the whole text read as
        // two possibly overlapping words; the length tells apart texts that read the same.
        let (a, b) = if len >= 16 {
            for block in bytes[..len - 1].chunks_exact(16) {
                let (a, b) = block.split_at(8);
                state = self.mix(state, word(a), word(b));
            }
            (u64_at(bytes, len - 16), u64_at(bytes, len - 8))
        } else if len >= 8 {
            (u64_at(bytes, 0), u64_at(bytes, len - 8))
        } else if len >= 4 {
            (u32_at(bytes, 0), u32_at(bytes, len - 4))
        } else if len > 0 {
            let first = u64::from(bytes[0]);
            let middle = u64::from(bytes[len / 2]);
            let last = u64::from(bytes[len - 1]);
            (first | middle << 8 | last << 16, 0)
        } else {
            (0, 0)
        };
        self.mix(state, a, b ^ (len as u64).rotate_left(32))
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
    fn the_table_grows_and_keeps_every_text() {
        let texts: Vec<String> = (0..1000).map(|i| format!("event {i}")).collect();
        let mut interner = Interner::for_document(0);
        let first: Vec<SharedStr> = texts.iter().map(|t| interner.get(t)).collect();
        for (text, shared) in texts.iter().zip(&first) {
            let again = interner.get(text);
            assert_eq!(again, text.as_str());
            assert!(Arc::ptr_eq(&again.0, &shared.0));
        }
        assert_eq!(interner.len, 1000);
        assert_eq!(interner.get(""), "");
        assert_eq!(interner.get("ab"), "ab");
        assert_ne!(interner.get("ba"), "ab");
    }

    #[test]
    fn equal_texts_share_one_copy() {
        let doc = String::from("Cache Cache Pipeline");
        let mut interner = Interner::for_document(doc.len());
        let a = interner.get(&doc[0..5]);
        let b = interner.get(&doc[6..11]);
        let c = interner.get(&doc[12..]);
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert!(!Arc::ptr_eq(&a.0, &c.0));
        assert_eq!(c, "Pipeline");
    }
}
