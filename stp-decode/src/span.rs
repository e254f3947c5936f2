//! Named begin/end pairs of messages (`--span 'NAME=START..END'`): the time from a message matching START
//! to the next message of the same master matching END.
//!
//! START and END each match a message by its decoded text or by a value it carries:
//!
//! - a number (`0x1`, `42`) matches a message carrying that value (a message without an STMLib header,
//!   e.g. a state or marker value written to a channel);
//! - anything else matches a message whose text contains it; quotes (`"…"` or `'…'`) make a number or a
//!   text with `..` in it a text. A dictionary name matches too: the text of a value message shows the
//!   names of its values.
//!
//! A channel may be named before either with `@CHANNEL:` (`frame=@5:0x1..@5:0x2`): only messages on that
//! channel match.
//!
//! ```
//! use stp_decode::span::{Matcher, SpanSpec};
//! let spec: SpanSpec = "frame=frame start..frame end".parse().unwrap();
//! assert_eq!(spec.name, "frame");
//! assert_eq!(spec.start, Matcher::Text("frame start".into()));
//! let spec: SpanSpec = "dma=@7:0x10..'0x11'".parse().unwrap();
//! assert_eq!((spec.start, spec.start_channel), (Matcher::Value(0x10), Some(7)));
//! assert_eq!(spec.end, Matcher::Text("0x11".into()));
//! ```

use alloc::string::{String, ToString};
use core::str::FromStr;

use crate::keystone::parse_number;
use crate::message::{Message, MessageKind};

/// What a span's start or end matches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Matcher {
    /// A message carrying this value.
    Value(u64),
    /// A message whose text contains this.
    Text(String),
}

impl Matcher {
    /// Whether `message` matches.
    #[inline]
    pub fn matches(&self, message: &Message<'_>) -> bool {
        match self {
            Matcher::Value(v) => message.kind == MessageKind::Values && message.values.contains(v),
            Matcher::Text(t) => contains(message.text, t),
        }
    }
}

/// The longest pattern [`contains`] searches a word at a time; longer ones go to `str::contains`.
const SHORT: usize = 64;

/// `0x80` in each byte of a word that is zero in `x`, nothing elsewhere.
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// The eight bytes of `bytes` at `at`, little-endian.
#[inline]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether `pattern` occurs in `text`: `str::contains`, eight starting positions at a time for a short
/// pattern. Each word of starts is matched on the pattern's first and last bytes at once; only the
/// positions where both match are compared whole.
#[inline]
fn contains(text: &str, pattern: &str) -> bool {
    if pattern.len() > SHORT {
        return text.contains(pattern);
    }
    let (text, pattern) = (text.as_bytes(), pattern.as_bytes());
    let n = pattern.len();
    let (Some(&first), Some(&last)) = (pattern.first(), pattern.last()) else {
        return true;
    };
    if n > text.len() {
        return false;
    }
    let middle = pattern.get(1..n - 1).unwrap_or_default();
    let first_word = u64::from(first) * 0x0101_0101_0101_0101;
    let last_word = u64::from(last) * 0x0101_0101_0101_0101;
    // The eight starts from `at` on, matched on the first and last bytes, then whole.
    let word_has = |at: usize| {
        let mut hits =
            zero_bytes((word(text, at) ^ first_word) | (word(text, at + n - 1) ^ last_word));
        while hits != 0 {
            let start = at + (hits.trailing_zeros() / 8) as usize;
            if n <= 2 || &text[start + 1..start + n - 1] == middle {
                return true;
            }
            hits &= hits - 1;
        }
        false
    };
    let last_start = text.len() - n;
    if last_start < 7 {
        // Fewer than eight starts: one by one, on the first and last bytes first.
        return (0..=last_start).any(|start| {
            text[start] == first
                && text[start + n - 1] == last
                && (n <= 2 || &text[start + 1..start + n - 1] == middle)
        });
    }
    let mut at = 0;
    while at + 7 <= last_start {
        if word_has(at) {
            return true;
        }
        at += 8;
    }
    // The last starts, in a word that overlaps the one before.
    at <= last_start && word_has(last_start - 7)
}

/// A span: its name, and what starts and ends it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SpanSpec {
    /// The name.
    pub name: String,
    /// What starts it.
    pub start: Matcher,
    /// Only messages on this channel start it.
    pub start_channel: Option<u16>,
    /// What ends it.
    pub end: Matcher,
    /// Only messages on this channel end it.
    pub end_channel: Option<u16>,
}

impl SpanSpec {
    /// Whether `message` starts the span.
    #[inline]
    pub fn starts(&self, message: &Message<'_>) -> bool {
        self.start_channel.is_none_or(|c| c == message.channel) && self.start.matches(message)
    }

    /// Whether `message` ends the span.
    #[inline]
    pub fn ends(&self, message: &Message<'_>) -> bool {
        self.end_channel.is_none_or(|c| c == message.channel) && self.end.matches(message)
    }
}

/// Why a span could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum SpanError {
    /// No `=` after the name, or an empty name.
    #[error("a span is NAME=START..END: the name is missing")]
    MissingName,
    /// No `..` between START and END.
    #[error("a span is NAME=START..END: '..' is missing")]
    MissingRange,
    /// START or END is empty.
    #[error("a span's {0} is empty")]
    Empty(&'static str),
    /// `@CHANNEL:` whose channel is not a 16-bit number.
    #[error("a span's {0} names a channel that is not a 16-bit number")]
    BadChannel(&'static str),
    /// A quote that is not closed at the end of START or END.
    #[error("a span's {0} opens a quote that does not close at its end")]
    Unclosed(&'static str),
}

fn matcher(text: &str, what: &'static str) -> Result<(Option<u16>, Matcher), SpanError> {
    let text = text.trim();
    let (channel, text) = match text.strip_prefix('@') {
        Some(rest) => {
            let (ch, rest) = rest.split_once(':').ok_or(SpanError::BadChannel(what))?;
            let ch = parse_number(ch)
                .and_then(|c| u16::try_from(c).ok())
                .ok_or(SpanError::BadChannel(what))?;
            (Some(ch), rest)
        }
        None => (None, text),
    };
    if text.is_empty() {
        return Err(SpanError::Empty(what));
    }
    for quote in ['"', '\''] {
        if let Some(rest) = text.strip_prefix(quote) {
            let inner = rest.strip_suffix(quote).ok_or(SpanError::Unclosed(what))?;
            if inner.is_empty() {
                return Err(SpanError::Empty(what));
            }
            return Ok((channel, Matcher::Text(inner.to_string())));
        }
    }
    Ok((
        channel,
        match parse_number(text) {
            Some(v) => Matcher::Value(v),
            None => Matcher::Text(text.to_string()),
        },
    ))
}

/// Splits at the `..` that is outside quotes.
fn split_range(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut quote = None;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'.' && bytes[i + 1] == b'.' => return Some((&text[..i], &text[i + 2..])),
            None => {}
        }
        i += 1;
    }
    None
}

impl FromStr for SpanSpec {
    type Err = SpanError;

    fn from_str(text: &str) -> Result<SpanSpec, SpanError> {
        let (name, range) = text.split_once('=').ok_or(SpanError::MissingName)?;
        let name = name.trim();
        if name.is_empty() {
            return Err(SpanError::MissingName);
        }
        let (start, end) = split_range(range).ok_or(SpanError::MissingRange)?;
        let (start_channel, start) = matcher(start, "start")?;
        let (end_channel, end) = matcher(end, "end")?;
        Ok(SpanSpec {
            name: name.to_string(),
            start,
            start_channel,
            end,
            end_channel,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The word-at-a-time search finds what `str::contains` finds, on texts of few letters (so that
        /// patterns occur, partly and whole, at every offset of a word) and on any text.
        #[test]
        fn contains_is_str_contains(
            text in "[ab\u{e9}]{0,90}",
            pattern in "[ab\u{e9}]{0,70}",
            any_text in ".{0,40}",
            cut in any::<prop::sample::Index>(),
            len in 0usize..80,
        ) {
            prop_assert_eq!(contains(&text, &pattern), text.contains(pattern.as_str()));
            prop_assert_eq!(contains(&any_text, &pattern), any_text.contains(pattern.as_str()));
            // A piece of the text itself, which occurs.
            let bytes = text.as_bytes();
            let start = cut.index(bytes.len() + 1);
            let end = (start + len).min(bytes.len());
            if let Ok(piece) = core::str::from_utf8(&bytes[start..end]) {
                prop_assert!(contains(&text, piece));
                let mut longer = String::from(piece);
                longer.push('b');
                prop_assert_eq!(contains(&text, &longer), text.contains(longer.as_str()));
            }
        }
    }

    #[test]
    fn contains_at_every_offset_of_a_word() {
        let text = "x".repeat(40);
        for n in 1..=20 {
            for at in 0..=40 - n {
                let mut t = text.clone();
                let pattern: String = "ab".repeat(n).chars().take(n).collect();
                t.replace_range(at..at + n, &pattern);
                assert!(contains(&t, &pattern), "{n} at {at}");
                let mut near = pattern.clone().into_bytes();
                near[n / 2] = b'z';
                let near = String::from_utf8(near).unwrap();
                assert_eq!(
                    contains(&t, &near),
                    t.contains(near.as_str()),
                    "{n} at {at}"
                );
            }
        }
    }

    #[test]
    fn every_bad_span_says_why() {
        let e = |t: &str| t.parse::<SpanSpec>().unwrap_err();
        assert_eq!(e("frame"), SpanError::MissingName);
        assert_eq!(e("=a..b"), SpanError::MissingName);
        assert_eq!(e("x=a-b"), SpanError::MissingRange);
        assert_eq!(e("x='a..b'"), SpanError::MissingRange);
        assert_eq!(e("x=..b"), SpanError::Empty("start"));
        assert_eq!(e("x=a.. "), SpanError::Empty("end"));
        assert_eq!(e("x=a..''"), SpanError::Empty("end"));
        assert_eq!(e("x=@99999:1..2"), SpanError::BadChannel("start"));
        assert_eq!(e("x=1..@5"), SpanError::BadChannel("end"));
        assert_eq!(e("x='a'b..c"), SpanError::Unclosed("start"));
        assert_eq!(e("x=a..\"b"), SpanError::Unclosed("end"));
    }

    #[test]
    fn quotes_keep_dots_and_numbers_as_text() {
        let s: SpanSpec = "io='read..'..\"done 1.5\"".parse().unwrap();
        assert_eq!(s.start, Matcher::Text("read..".into()));
        assert_eq!(s.end, Matcher::Text("done 1.5".into()));
        let s: SpanSpec = "v=1..0x02".parse().unwrap();
        assert_eq!((s.start, s.end), (Matcher::Value(1), Matcher::Value(2)));
    }
}
