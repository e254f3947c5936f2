//! [`WordSlice`]: the words of perf records, borrowed as they came — plain u64 words read from a perf ring, or
//! gatord's PERF_DATA words packed as SLEB128 (`packInt64`) — and [`Words`], their iterator.

use crate::record::PerfRecordError;
use crate::sleb128::{decode_i64, Sleb128Error};

/// A run of perf record words, borrowed as they came: gatord's packed bytes (each u64 word a `packInt64`) or
/// plain u64 words (a perf ring read by this process). Records and samples decode the same from either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordSlice<'a> {
    /// Words packed as gatord sends them in a PERF_DATA frame.
    Packed(&'a [u8]),
    /// Plain words, as the kernel writes them into a perf ring.
    Raw(&'a [u64]),
}

impl<'a> From<&'a [u64]> for WordSlice<'a> {
    fn from(words: &'a [u64]) -> Self {
        WordSlice::Raw(words)
    }
}

impl Default for WordSlice<'_> {
    fn default() -> Self {
        WordSlice::Raw(&[])
    }
}

impl<'a> WordSlice<'a> {
    /// The words in order.
    pub fn iter(&self) -> Words<'a> {
        Words { rest: *self }
    }

    /// Whether no word (and no packed byte) is left.
    pub fn is_empty(&self) -> bool {
        match self {
            WordSlice::Packed(bytes) => bytes.is_empty(),
            WordSlice::Raw(words) => words.is_empty(),
        }
    }

    /// The first word and the words after it; `None` when empty.
    pub(crate) fn split_first(&self) -> Option<Result<(u64, WordSlice<'a>), Sleb128Error>> {
        match *self {
            WordSlice::Packed([]) => None,
            WordSlice::Packed(bytes) => Some(
                decode_i64(bytes)
                    .map(|(value, len)| (value as u64, WordSlice::Packed(&bytes[len..]))),
            ),
            WordSlice::Raw(words) => words
                .split_first()
                .map(|(&first, rest)| Ok((first, WordSlice::Raw(rest)))),
        }
    }

    /// The part of `self` that `rest`, a later part of it, does not hold.
    pub(crate) fn before(&self, rest: &WordSlice<'a>) -> WordSlice<'a> {
        match (*self, *rest) {
            (WordSlice::Packed(all), WordSlice::Packed(rest)) => {
                WordSlice::Packed(&all[..all.len() - rest.len()])
            }
            (WordSlice::Raw(all), WordSlice::Raw(rest)) => {
                WordSlice::Raw(&all[..all.len() - rest.len()])
            }
            _ => WordSlice::default(),
        }
    }
}

/// Iterator over the words of a [`WordSlice`]; after an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct Words<'a> {
    rest: WordSlice<'a>,
}

impl<'a> Words<'a> {
    /// An iterator over the packed words in `packed` (each a `packInt64`).
    pub fn new(packed: &'a [u8]) -> Words<'a> {
        WordSlice::Packed(packed).iter()
    }

    /// An iterator over plain words (it never fails).
    pub fn raw(words: &'a [u64]) -> Words<'a> {
        WordSlice::Raw(words).iter()
    }
}

impl Iterator for Words<'_> {
    type Item = Result<u64, PerfRecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.rest.split_first()? {
            Ok((value, rest)) => {
                self.rest = rest;
                Some(Ok(value))
            }
            Err(source) => {
                self.rest = WordSlice::default();
                Some(Err(PerfRecordError::Word {
                    field: "word",
                    source,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sleb128::encode_i64;

    #[test]
    fn packed_and_plain_words_read_the_same() {
        let words = [
            0u64,
            1,
            u64::MAX,
            0x8000_0000_0000_0000,
            0x0000_0030_0000_0009,
        ];
        let mut packed = Vec::new();
        for &word in &words {
            encode_i64(word as i64, &mut packed);
        }
        let from_packed: Vec<u64> = Words::new(&packed).map(Result::unwrap).collect();
        assert_eq!(from_packed, words);
        let from_plain: Vec<u64> = Words::raw(&words).map(Result::unwrap).collect();
        assert_eq!(from_plain, words);
        assert!(WordSlice::default().is_empty());
    }

    #[test]
    fn a_truncated_packed_word_is_an_error_then_nothing() {
        let mut words = Words::new(&[0x01, 0x80]);
        assert_eq!(words.next(), Some(Ok(1)));
        assert!(matches!(
            words.next(),
            Some(Err(PerfRecordError::Word { field: "word", .. }))
        ));
        assert_eq!(words.next(), None);
    }
}
