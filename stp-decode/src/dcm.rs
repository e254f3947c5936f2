//! The `.dcm` sidecar TI's tools save beside a trace buffer dump (`docs/stm.md` §11, from `dsptop`'s
//! `etb_handler.c`): one `key=decimal` line each. TI-specific.
//!
//! | key | meaning | supported |
//! |---|---|---|
//! | `STM_data_flip` | 1 for STPv1's flipped data order, 0 for STPv2 | 0 |
//! | `STM_Buffer_Wrapped` | 0: the dump was put in order (oldest word first) before it was saved | 0 (a raw circular buffer is read with its write pointer instead, see [`crate::tbr`]) |
//! | `HEAD_Present_0`, `HEAD_Pointer_0`, `HEAD_Present_1`, `HEAD_Pointer_1` | STPv1's ATB head pointer (the STM's ATBHEADPTR), **not** the buffer's write pointer; all 0 for STPv2 | present = 0 |
//! | `STM_STP_Version` | 2 for STPv2 | 2 |
//! | `TWP_Protocol` | 1: the buffer holds TWP (CoreSight formatter) frames; 0: the bare STP stream | 0 or 1 |
//!
//! [`Dcm::parse`] reads the lines (a missing key, a value that is not decimal, a key given twice are errors
//! naming the key); [`Dcm::layout`] says how to read the dump, or which key says something this crate
//! does not read. Unknown keys are kept count of ([`Dcm::unknown_keys`]).
//!
//! ```
//! use stp_decode::dcm::{Dcm, DcmError, DcmKey};
//! let text = "STM_data_flip=0\nSTM_Buffer_Wrapped=0\nHEAD_Present_0=0\nHEAD_Pointer_0=0\n\
//!             HEAD_Present_1=0\nHEAD_Pointer_1=0\nSTM_STP_Version=2\nTWP_Protocol=1\n";
//! let dcm = Dcm::parse(text).unwrap();
//! assert!(dcm.layout().unwrap().twp_frames);
//! let stpv1 = Dcm::parse(&text.replace("Version=2", "Version=1")).unwrap();
//! assert_eq!(stpv1.layout(), Err(DcmError::Unsupported { key: DcmKey::StmStpVersion, value: 1 }));
//! ```

use core::fmt;

/// A key of the sidecar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DcmKey {
    /// `STM_data_flip`.
    StmDataFlip,
    /// `STM_Buffer_Wrapped`.
    StmBufferWrapped,
    /// `HEAD_Present_0`.
    HeadPresent0,
    /// `HEAD_Pointer_0`.
    HeadPointer0,
    /// `HEAD_Present_1`.
    HeadPresent1,
    /// `HEAD_Pointer_1`.
    HeadPointer1,
    /// `STM_STP_Version`.
    StmStpVersion,
    /// `TWP_Protocol`.
    TwpProtocol,
}

impl DcmKey {
    /// Every key, in the order TI's tools write them.
    pub const ALL: [DcmKey; 8] = [
        DcmKey::StmDataFlip,
        DcmKey::StmBufferWrapped,
        DcmKey::HeadPresent0,
        DcmKey::HeadPointer0,
        DcmKey::HeadPresent1,
        DcmKey::HeadPointer1,
        DcmKey::StmStpVersion,
        DcmKey::TwpProtocol,
    ];

    /// The key as written in the file.
    pub const fn name(self) -> &'static str {
        match self {
            DcmKey::StmDataFlip => "STM_data_flip",
            DcmKey::StmBufferWrapped => "STM_Buffer_Wrapped",
            DcmKey::HeadPresent0 => "HEAD_Present_0",
            DcmKey::HeadPointer0 => "HEAD_Pointer_0",
            DcmKey::HeadPresent1 => "HEAD_Present_1",
            DcmKey::HeadPointer1 => "HEAD_Pointer_1",
            DcmKey::StmStpVersion => "STM_STP_Version",
            DcmKey::TwpProtocol => "TWP_Protocol",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for DcmKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a sidecar cannot be used. Lines count from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum DcmError {
    /// A line that is not `key=value` (and not blank).
    #[error("line {line}: not key=value")]
    BadLine {
        /// The line.
        line: usize,
    },
    /// A known key whose value is not a decimal number.
    #[error("line {line}: {key} is not a decimal number")]
    BadValue {
        /// The line.
        line: usize,
        /// The key.
        key: DcmKey,
    },
    /// A key given twice.
    #[error("line {line}: {key} given a second time")]
    Duplicate {
        /// The line.
        line: usize,
        /// The key.
        key: DcmKey,
    },
    /// A key TI's tools always write is missing.
    #[error("{key} is missing")]
    Missing {
        /// The key.
        key: DcmKey,
    },
    /// The key says something this crate does not read: STPv1 (a version other than 2, flipped data,
    /// a head pointer present), a dump saved without being put in order, or an unknown framing.
    #[error("{key}={value} is not supported ({})", unsupported_why(*key))]
    Unsupported {
        /// The key.
        key: DcmKey,
        /// Its value.
        value: u64,
    },
}

fn unsupported_why(key: DcmKey) -> &'static str {
    match key {
        DcmKey::StmStpVersion => "only STPv2 (2) is decoded",
        DcmKey::StmDataFlip => "STPv1's flipped data order",
        DcmKey::HeadPresent0 | DcmKey::HeadPresent1 => "an STPv1 ATB head pointer",
        DcmKey::StmBufferWrapped => {
            "a dump saved as the raw circular buffer: read it with its write pointer"
        }
        DcmKey::TwpProtocol => "0 (bare STP) or 1 (TWP frames)",
        DcmKey::HeadPointer0 | DcmKey::HeadPointer1 => "a head pointer",
    }
}

/// A sidecar's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dcm {
    values: [u64; 8],
    unknown: usize,
}

/// How a dump with this sidecar is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DumpLayout {
    /// The buffer holds TWP (CoreSight formatter) frames; otherwise the bare STP stream.
    pub twp_frames: bool,
}

impl Dcm {
    /// Reads the sidecar's lines. Every key of [`DcmKey::ALL`] must be there once; other keys are counted.
    pub fn parse(text: &str) -> Result<Dcm, DcmError> {
        let mut values = [None::<u64>; 8];
        let mut unknown = 0;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.trim();
            if content.is_empty() {
                continue;
            }
            let Some((key, value)) = content.split_once('=') else {
                return Err(DcmError::BadLine { line });
            };
            let Some(key) = DcmKey::ALL.into_iter().find(|k| k.name() == key.trim()) else {
                unknown += 1;
                continue;
            };
            let value = value.trim();
            let parsed = (!value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()))
                .then(|| value.parse::<u64>().ok())
                .flatten()
                .ok_or(DcmError::BadValue { line, key })?;
            let slot = &mut values[key.index()];
            if slot.is_some() {
                return Err(DcmError::Duplicate { line, key });
            }
            *slot = Some(parsed);
        }
        let mut out = [0; 8];
        for key in DcmKey::ALL {
            out[key.index()] = values[key.index()].ok_or(DcmError::Missing { key })?;
        }
        Ok(Dcm {
            values: out,
            unknown,
        })
    }

    /// The value of `key`.
    pub fn get(&self, key: DcmKey) -> u64 {
        self.values[key.index()]
    }

    /// Lines with keys this crate does not know (ignored).
    pub fn unknown_keys(&self) -> usize {
        self.unknown
    }

    /// How to read the dump, or the first key (in file order) whose value is not supported.
    pub fn layout(&self) -> Result<DumpLayout, DcmError> {
        let unsupported = |key: DcmKey, ok: &dyn Fn(u64) -> bool| {
            let value = self.get(key);
            if ok(value) {
                Ok(())
            } else {
                Err(DcmError::Unsupported { key, value })
            }
        };
        unsupported(DcmKey::StmDataFlip, &|v| v == 0)?;
        unsupported(DcmKey::StmBufferWrapped, &|v| v == 0)?;
        unsupported(DcmKey::HeadPresent0, &|v| v == 0)?;
        unsupported(DcmKey::HeadPresent1, &|v| v == 0)?;
        unsupported(DcmKey::StmStpVersion, &|v| v == 2)?;
        unsupported(DcmKey::TwpProtocol, &|v| v <= 1)?;
        Ok(DumpLayout {
            twp_frames: self.get(DcmKey::TwpProtocol) == 1,
        })
    }

    /// The sidecar TI's tools write for an STPv2 dump put in order (`twp_frames`: TWP framing).
    pub fn stpv2(twp_frames: bool) -> Dcm {
        let mut values = [0; 8];
        values[DcmKey::StmStpVersion.index()] = 2;
        values[DcmKey::TwpProtocol.index()] = u64::from(twp_frames);
        Dcm { values, unknown: 0 }
    }
}

impl fmt::Display for Dcm {
    /// The sidecar as TI's tools write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for key in DcmKey::ALL {
            writeln!(f, "{}={}", key.name(), self.get(key))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::ToString;

    #[test]
    fn written_and_read_back() {
        let dcm = Dcm::stpv2(true);
        let text = dcm.to_string();
        assert_eq!(Dcm::parse(&text), Ok(dcm));
        assert_eq!(dcm.layout(), Ok(DumpLayout { twp_frames: true }));
        let with_unknown = Dcm::parse(&std::format!("{text}\nOTHER_KEY=7\n")).unwrap();
        assert_eq!(with_unknown.unknown_keys(), 1);
    }

    #[test]
    fn every_bad_sidecar_names_its_key() {
        let good = Dcm::stpv2(false).to_string();
        for key in DcmKey::ALL {
            let without: std::string::String = good
                .lines()
                .filter(|l| !l.starts_with(&std::format!("{}=", key.name())))
                .map(|l| std::format!("{l}\n"))
                .collect();
            assert_eq!(Dcm::parse(&without), Err(DcmError::Missing { key }));
        }
        assert_eq!(
            Dcm::parse(&std::format!("{good}TWP_Protocol=1\n")),
            Err(DcmError::Duplicate {
                line: 9,
                key: DcmKey::TwpProtocol
            })
        );
        assert_eq!(
            Dcm::parse(&good.replace("STM_data_flip=0", "STM_data_flip=-1")),
            Err(DcmError::BadValue {
                line: 1,
                key: DcmKey::StmDataFlip
            })
        );
        assert_eq!(
            Dcm::parse(&good.replace("HEAD_Pointer_0=0", "HEAD_Pointer_0=0x10")),
            Err(DcmError::BadValue {
                line: 4,
                key: DcmKey::HeadPointer0
            })
        );
        assert_eq!(
            Dcm::parse(&good.replace("STM_data_flip=0", "STM_data_flip")),
            Err(DcmError::BadLine { line: 1 })
        );
        let unsupported = |from: &str, to: &str| {
            Dcm::parse(&good.replace(from, to))
                .unwrap()
                .layout()
                .unwrap_err()
        };
        for (from, to, key, value) in [
            (
                "STM_STP_Version=2",
                "STM_STP_Version=1",
                DcmKey::StmStpVersion,
                1,
            ),
            ("STM_data_flip=0", "STM_data_flip=1", DcmKey::StmDataFlip, 1),
            (
                "STM_Buffer_Wrapped=0",
                "STM_Buffer_Wrapped=1",
                DcmKey::StmBufferWrapped,
                1,
            ),
            (
                "HEAD_Present_0=0",
                "HEAD_Present_0=1",
                DcmKey::HeadPresent0,
                1,
            ),
            (
                "HEAD_Present_1=0",
                "HEAD_Present_1=1",
                DcmKey::HeadPresent1,
                1,
            ),
            ("TWP_Protocol=0", "TWP_Protocol=2", DcmKey::TwpProtocol, 2),
        ] {
            let err = unsupported(from, to);
            assert_eq!(err, DcmError::Unsupported { key, value });
            assert!(err.to_string().contains(key.name()), "{err}");
        }
        // HEAD_Pointer_* are STPv1's, not a write pointer: their value alone is not read.
        assert!(
            Dcm::parse(&good.replace("HEAD_Pointer_1=0", "HEAD_Pointer_1=99"))
                .unwrap()
                .layout()
                .is_ok()
        );
    }
}
