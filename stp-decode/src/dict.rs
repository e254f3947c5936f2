//! A user dictionary: values on a channel turned into names (as TI's analyser does with enums), and
//! channels given names.
//!
//! The file is text, one entry a line; `#` starts a comment; fields are separated by blanks:
//!
//! ```text
//! # value [MASTER:]CHANNEL VALUE NAME   a value sent on a channel, by any master or by MASTER alone
//! value 5 1 FRAME_START
//! value 5 0x2 FRAME_END
//! value DSP3:7 0 IDLE
//! # channel [MASTER:]CHANNEL NAME        the channel's name on the timeline
//! channel 5 frames
//! ```
//!
//! Numbers are decimal or `0x` hexadecimal; a master is a number or, with a device, a core name (`DSP3`,
//! `Arm0`); a name is the rest of the line. An entry for one master is preferred to one for every master.
//!
//! ```
//! use stp_decode::dict::Dictionary;
//! use stp_decode::keystone::{Device, Masters};
//! let dict = Dictionary::parse("value 5 1 FRAME_START\nvalue DSP3:5 1 START(3)\nchannel 5 frames\n",
//!     &Masters::for_device(Device::K2h)).unwrap();
//! assert_eq!(dict.value_name(0, 5, 1), Some("FRAME_START"));
//! assert_eq!(dict.value_name(3, 5, 1), Some("START(3)"));
//! assert_eq!(dict.value_name(3, 5, 2), None);
//! assert_eq!(dict.channel_name(1, 5), Some("frames"));
//! ```

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};

use crate::keystone::{parse_number, Masters};

/// Why a dictionary could not be read. Lines count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum DictError {
    /// A line starts with a word other than `value` or `channel`.
    #[error("line {line}: an entry starts with 'value' or 'channel'")]
    UnknownEntry {
        /// The line.
        line: usize,
    },
    /// A field is missing.
    #[error("line {line}: the {field} is missing")]
    Missing {
        /// The line.
        line: usize,
        /// The field: `channel`, `value` or `name`.
        field: &'static str,
    },
    /// A field is not a number (or does not fit its size: 16 bits for a channel, 64 for a value).
    #[error("line {line}: the {field} is not a number of its size")]
    BadNumber {
        /// The line.
        line: usize,
        /// The field: `channel` or `value`.
        field: &'static str,
    },
    /// A master that is neither a number nor a core of the device.
    #[error("line {line}: unknown master (a number, or DSPn/Armn with a device)")]
    BadMaster {
        /// The line.
        line: usize,
    },
    /// The same entry was given twice.
    #[error("line {line}: the same entry as line {first}")]
    Duplicate {
        /// The line.
        line: usize,
        /// The line that gave it first.
        first: usize,
    },
}

/// Names for values and channels, read from a dictionary file. Memory: the entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dictionary {
    values: BTreeMap<(Option<u16>, u16, u64), (String, usize)>,
    channels: BTreeMap<(Option<u16>, u16), (String, usize)>,
}

impl Dictionary {
    /// An empty dictionary.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads a dictionary; `masters` resolves core names.
    pub fn parse(text: &str, masters: &Masters) -> Result<Dictionary, DictError> {
        let mut dict = Dictionary::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let (keyword, rest) = split_word(content);
            let (target, rest) = split_word(rest);
            if !matches!(keyword, "value" | "channel") {
                return Err(DictError::UnknownEntry { line });
            }
            if target.is_empty() {
                return Err(DictError::Missing {
                    line,
                    field: "channel",
                });
            }
            let (master, channel) = match target.split_once(':') {
                Some((m, c)) => (
                    Some(masters.parse(m).ok_or(DictError::BadMaster { line })?),
                    c,
                ),
                None => (None, target),
            };
            let channel = parse_number(channel)
                .and_then(|c| u16::try_from(c).ok())
                .ok_or(DictError::BadNumber {
                    line,
                    field: "channel",
                })?;
            if keyword == "channel" {
                let name = name(rest, line)?;
                if let Some((_, first)) = dict.channels.get(&(master, channel)) {
                    return Err(DictError::Duplicate {
                        line,
                        first: *first,
                    });
                }
                dict.channels.insert((master, channel), (name, line));
                continue;
            }
            let (value, rest) = split_word(rest);
            if value.is_empty() {
                return Err(DictError::Missing {
                    line,
                    field: "value",
                });
            }
            let value = parse_number(value).ok_or(DictError::BadNumber {
                line,
                field: "value",
            })?;
            let name = name(rest, line)?;
            if let Some((_, first)) = dict.values.get(&(master, channel, value)) {
                return Err(DictError::Duplicate {
                    line,
                    first: *first,
                });
            }
            dict.values.insert((master, channel, value), (name, line));
        }
        Ok(dict)
    }

    /// Adds (or replaces) a value's name, for `master` alone or every master (`None`).
    pub fn insert_value(&mut self, master: Option<u16>, channel: u16, value: u64, name: &str) {
        self.values
            .insert((master, channel, value), (name.to_string(), 0));
    }

    /// Adds (or replaces) a channel's name.
    pub fn insert_channel(&mut self, master: Option<u16>, channel: u16, name: &str) {
        self.channels
            .insert((master, channel), (name.to_string(), 0));
    }

    /// True when it holds no entry.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.channels.is_empty()
    }

    /// Number of value entries.
    pub fn values(&self) -> usize {
        self.values.len()
    }

    /// The name of `value` sent by `master` on `channel`.
    #[inline]
    pub fn value_name(&self, master: u16, channel: u16, value: u64) -> Option<&str> {
        if self.values.is_empty() {
            return None;
        }
        self.values
            .get(&(Some(master), channel, value))
            .or_else(|| self.values.get(&(None, channel, value)))
            .map(|(name, _)| name.as_str())
    }

    /// The name of `master`'s `channel`.
    pub fn channel_name(&self, master: u16, channel: u16) -> Option<&str> {
        self.channels
            .get(&(Some(master), channel))
            .or_else(|| self.channels.get(&(None, channel)))
            .map(|(name, _)| name.as_str())
    }
}

fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim_start()),
        None => (text, ""),
    }
}

fn name(rest: &str, line: usize) -> Result<String, DictError> {
    let name = rest.trim();
    if name.is_empty() {
        return Err(DictError::Missing {
            line,
            field: "name",
        });
    }
    Ok(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keystone::Device;

    fn parse(text: &str) -> Result<Dictionary, DictError> {
        Dictionary::parse(text, &Masters::for_device(Device::K2e))
    }

    #[test]
    fn comments_blanks_and_names_with_spaces() {
        let d = parse(
            "# header\n\n  value 0x10 0xff  frame start   # note\nchannel Arm0:3 my channel\n",
        )
        .unwrap();
        assert_eq!(d.value_name(1, 16, 255), Some("frame start"));
        assert_eq!(d.channel_name(8, 3), Some("my channel"));
        assert_eq!(d.channel_name(9, 3), None);
        assert_eq!(d.values(), 1);
    }

    #[test]
    fn every_bad_line_says_why() {
        assert_eq!(
            parse("values 1 2 x"),
            Err(DictError::UnknownEntry { line: 1 })
        );
        assert_eq!(
            parse("\nvalue"),
            Err(DictError::Missing {
                line: 2,
                field: "channel"
            })
        );
        assert_eq!(
            parse("value 1"),
            Err(DictError::Missing {
                line: 1,
                field: "value"
            })
        );
        assert_eq!(
            parse("value 1 2"),
            Err(DictError::Missing {
                line: 1,
                field: "name"
            })
        );
        assert_eq!(
            parse("channel 1"),
            Err(DictError::Missing {
                line: 1,
                field: "name"
            })
        );
        assert_eq!(
            parse("value 70000 2 x"),
            Err(DictError::BadNumber {
                line: 1,
                field: "channel"
            })
        );
        assert_eq!(
            parse("value 1 two x"),
            Err(DictError::BadNumber {
                line: 1,
                field: "value"
            })
        );
        assert_eq!(
            parse("value DSP1:1 2 x"),
            Err(DictError::BadMaster { line: 1 })
        );
        assert_eq!(
            parse("value 1 2 x\nvalue 1 0x2 y"),
            Err(DictError::Duplicate { line: 2, first: 1 })
        );
        assert_eq!(
            parse("channel 1 a\nchannel 1 b"),
            Err(DictError::Duplicate { line: 2, first: 1 })
        );
    }
}
