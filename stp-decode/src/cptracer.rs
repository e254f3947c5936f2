//! CP Tracer words: the 32-bit data of KeyStone II's hardware masters, and a field layout the user gives.
//!
//! The bit layout of CP Tracer event and statistics words is **not public** (TI's SPRUHM4 has it;
//! `docs/stm.md` §11), so this crate ships none: words are counted raw per hardware master, and only a
//! layout read from the user's file ([`Layout::parse`]) splits them into fields. The file names bit
//! ranges, one a line; `#` starts a comment:
//!
//! ```text
//! # NAME  BITS   [ROLE]     BITS is HIGH:LOW or one bit; ROLE is `bytes` or `master`
//! event   31:28
//! mstid   23:16  master     the master id of the transaction (transactions are counted per value)
//! bytes   15:0   bytes      the transaction's byte count (bytes per window give the throughput)
//! ```
//!
//! Exactly one field is marked `bytes` and one `master`.
//!
//! ```
//! use stp_decode::cptracer::Layout;
//! let layout = Layout::parse("mstid 23:16 master\nbytes 15:0 bytes\nevent 31:28\n").unwrap();
//! let word = 0x3_0_8C_0040;
//! assert_eq!(layout.bytes(word), 0x40);
//! assert_eq!(layout.master_id(word), 0x8c);
//! let fields: Vec<_> = layout.fields().iter().map(|f| (f.name.as_str(), f.get(word))).collect();
//! assert_eq!(fields, [("mstid", 0x8c), ("bytes", 0x40), ("event", 0x3)]);
//! ```

use alloc::string::{String, ToString};
use alloc::vec::Vec;

/// What a field of the layout is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// The transaction's byte count.
    Bytes,
    /// The id of the master that made the transaction.
    Master,
}

/// A named bit range of a CP Tracer word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// Highest bit (0–31).
    pub high: u8,
    /// Lowest bit.
    pub low: u8,
    /// What it is used for, if marked.
    pub role: Option<Role>,
}

impl Field {
    /// The field's value in `word`.
    #[inline]
    pub const fn get(&self, word: u32) -> u32 {
        let width = self.high - self.low + 1;
        let mask = if width >= 32 {
            u32::MAX
        } else {
            (1u32 << width) - 1
        };
        (word >> self.low) & mask
    }
}

/// Why a layout could not be read. Lines count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// A line without a bit range.
    #[error("line {line}: a field is NAME HIGH:LOW [bytes|master]")]
    MissingBits {
        /// The line.
        line: usize,
    },
    /// A bit range that is not `HIGH:LOW` with 31 ≥ HIGH ≥ LOW, or one bit.
    #[error("line {line}: bits are HIGH:LOW with 31 >= HIGH >= LOW")]
    BadBits {
        /// The line.
        line: usize,
    },
    /// A role other than `bytes` or `master`, or more words after it.
    #[error("line {line}: the role is 'bytes' or 'master'")]
    BadRole {
        /// The line.
        line: usize,
    },
    /// Two fields of the same name.
    #[error("line {line}: a second field of the same name")]
    DuplicateName {
        /// The line.
        line: usize,
    },
    /// A second field marked with the same role.
    #[error("line {line}: a second field marked '{}'", role_name(*role))]
    DuplicateRole {
        /// The line.
        line: usize,
        /// The role.
        role: Role,
    },
    /// No field is marked with a role.
    #[error("no field is marked '{}'", role_name(*role))]
    MissingRole {
        /// The role.
        role: Role,
    },
}

const fn role_name(role: Role) -> &'static str {
    match role {
        Role::Bytes => "bytes",
        Role::Master => "master",
    }
}

/// A user's layout of CP Tracer words.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layout {
    fields: Vec<Field>,
    bytes: usize,
    master: usize,
}

impl Layout {
    /// Reads a layout file.
    pub fn parse(text: &str) -> Result<Layout, LayoutError> {
        let mut fields: Vec<Field> = Vec::new();
        let mut roles = [None::<usize>; 2];
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let mut words = content.split_whitespace();
            let name = words.next().unwrap_or_default();
            let bits = words.next().ok_or(LayoutError::MissingBits { line })?;
            let (high, low) = match bits.split_once(':') {
                Some((h, l)) => (h.parse::<u8>(), l.parse::<u8>()),
                None => (bits.parse::<u8>(), bits.parse::<u8>()),
            };
            let (Ok(high), Ok(low)) = (high, low) else {
                return Err(LayoutError::BadBits { line });
            };
            if high > 31 || low > high {
                return Err(LayoutError::BadBits { line });
            }
            let role = match words.next() {
                None => None,
                Some("bytes") => Some(Role::Bytes),
                Some("master") => Some(Role::Master),
                Some(_) => return Err(LayoutError::BadRole { line }),
            };
            if words.next().is_some() {
                return Err(LayoutError::BadRole { line });
            }
            if fields.iter().any(|f| f.name == name) {
                return Err(LayoutError::DuplicateName { line });
            }
            if let Some(role) = role {
                let slot = &mut roles[role as usize];
                if slot.is_some() {
                    return Err(LayoutError::DuplicateRole { line, role });
                }
                *slot = Some(fields.len());
            }
            fields.push(Field {
                name: name.to_string(),
                high,
                low,
                role,
            });
        }
        let bytes =
            roles[Role::Bytes as usize].ok_or(LayoutError::MissingRole { role: Role::Bytes })?;
        let master =
            roles[Role::Master as usize].ok_or(LayoutError::MissingRole { role: Role::Master })?;
        Ok(Layout {
            fields,
            bytes,
            master,
        })
    }

    /// The fields, in file order.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The byte count of the transaction `word` describes.
    #[inline]
    pub fn bytes(&self, word: u32) -> u32 {
        self.fields[self.bytes].get(word)
    }

    /// The master id of the transaction `word` describes.
    #[inline]
    pub fn master_id(&self, word: u32) -> u32 {
        self.fields[self.master].get(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bad_layout_says_why() {
        let e = |t: &str| Layout::parse(t).unwrap_err();
        assert_eq!(e("a"), LayoutError::MissingBits { line: 1 });
        assert_eq!(e("a 32:0"), LayoutError::BadBits { line: 1 });
        assert_eq!(e("a 3:4"), LayoutError::BadBits { line: 1 });
        assert_eq!(e("a x:1"), LayoutError::BadBits { line: 1 });
        assert_eq!(e("a 3:0 size"), LayoutError::BadRole { line: 1 });
        assert_eq!(e("a 3:0 bytes extra"), LayoutError::BadRole { line: 1 });
        assert_eq!(e("a 3:0\na 5:4"), LayoutError::DuplicateName { line: 2 });
        assert_eq!(
            e("a 3:0 bytes\nb 5:4 bytes"),
            LayoutError::DuplicateRole {
                line: 2,
                role: Role::Bytes
            }
        );
        assert_eq!(
            e("a 3:0 master"),
            LayoutError::MissingRole { role: Role::Bytes }
        );
        assert_eq!(
            e("# nothing\n"),
            LayoutError::MissingRole { role: Role::Bytes }
        );
        assert_eq!(
            e("a 3:0 bytes"),
            LayoutError::MissingRole { role: Role::Master }
        );
    }

    #[test]
    fn whole_words_and_single_bits() {
        let l = Layout::parse("all 31:0 bytes\nflag 31 master").unwrap();
        assert_eq!(l.bytes(0xFFFF_FFFF), 0xFFFF_FFFF);
        assert_eq!(l.master_id(0x8000_0000), 1);
    }
}
