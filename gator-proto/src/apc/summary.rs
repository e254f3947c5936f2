//! SUMMARY frames (type 1): the capture's clocks and attributes, and per-CPU names.
//!
//! Layout: `packInt message_type`, then for message type 1 (SUMMARY) the newline canary string, three int64 clocks
//! before protocol 910 (realtime, boottime, monotonic_raw) or four from 910 (… plus monotonic), then string
//! key/value pairs ending with an empty key. Message type 3 (CORE_NAME) is `packInt core, packInt cpuid, string`.

use super::cursor::{put_string, Cursor};
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::encode_i32;
use crate::sleb128::encode_i64;
use crate::version::ProtocolVersion;

/// The canary string gatord puts first so that readers can detect newline mangling.
pub const NEWLINE_CANARY: &[u8] = b"1\n2\r\n3\r4\n\r5";

/// Message type of [`Summary`].
pub const MESSAGE_SUMMARY: i32 = 1;
/// Message type of [`CoreName`].
pub const MESSAGE_CORE_NAME: i32 = 3;

/// A decoded SUMMARY frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryFrame<'a> {
    /// Message type 1: clocks and attributes.
    Summary(Summary<'a>),
    /// Message type 3: the name of one CPU.
    CoreName(CoreName<'a>),
    /// Any other message type, kept opaque.
    Other {
        /// The message type.
        message_type: i32,
        /// The bytes after the message type.
        body: &'a [u8],
    },
}

/// The clocks read at capture start, in nanoseconds. With the `serde` feature it serializes as a map of its
/// fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Clocks {
    /// CLOCK_REALTIME.
    pub realtime_ns: i64,
    /// CLOCK_BOOTTIME ("uptime" before protocol 910).
    pub boottime_ns: i64,
    /// CLOCK_MONOTONIC_RAW: the reference every frame timestamp is a delta from.
    pub monotonic_raw_ns: i64,
    /// CLOCK_MONOTONIC, sent from protocol 910 only.
    pub monotonic_ns: Option<i64>,
}

/// Message type 1: the capture summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary<'a> {
    /// The canary string as received (normally [`NEWLINE_CANARY`]).
    pub canary: &'a [u8],
    /// The start clocks.
    pub clocks: Clocks,
    /// The key/value attributes (`uname`, `PAGESIZE`, `nosync`, `perf.*` …).
    pub attributes: Attributes<'a>,
}

/// Validated string key/value pairs, borrowed from the frame; iterate with [`Attributes::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attributes<'a> {
    /// The pairs without the terminating empty key.
    raw: &'a [u8],
}

/// Message type 3: the name of one CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoreName<'a> {
    /// The CPU number.
    pub core: i32,
    /// `(implementer << 12) | part number` from the MIDR.
    pub cpuid: i32,
    /// The core's name, e.g. `Cortex-A53`.
    pub name: &'a [u8],
}

impl<'a> SummaryFrame<'a> {
    /// Decodes the body that follows the frame type byte.
    pub fn parse(body: &'a [u8], version: ProtocolVersion) -> Result<SummaryFrame<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let message_type = cursor.i32("message_type")?;
        match message_type {
            MESSAGE_SUMMARY => {
                let canary = cursor.string("canary")?;
                let realtime_ns = cursor.i64("realtime")?;
                let boottime_ns = cursor.i64("boottime")?;
                let monotonic_raw_ns = cursor.i64("monotonic_raw")?;
                let monotonic_ns = if version.summary_clock_count() == 4 {
                    Some(cursor.i64("monotonic")?)
                } else {
                    None
                };
                let attributes = Attributes::parse(&mut cursor)?;
                cursor.finish("attributes")?;
                let clocks = Clocks {
                    realtime_ns,
                    boottime_ns,
                    monotonic_raw_ns,
                    monotonic_ns,
                };
                Ok(SummaryFrame::Summary(Summary {
                    canary,
                    clocks,
                    attributes,
                }))
            }
            MESSAGE_CORE_NAME => {
                let core = cursor.i32("core")?;
                let cpuid = cursor.i32("cpuid")?;
                let name = cursor.string("name")?;
                cursor.finish("name")?;
                Ok(SummaryFrame::CoreName(CoreName { core, cpuid, name }))
            }
            other => Ok(SummaryFrame::Other {
                message_type: other,
                body: cursor.take_rest(),
            }),
        }
    }

    /// Appends the whole frame (frame type included) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        encode_i32(FrameType::Summary.code(), out);
        match self {
            SummaryFrame::Summary(summary) => {
                encode_i32(MESSAGE_SUMMARY, out);
                put_string(summary.canary, out);
                encode_clocks(&summary.clocks, out);
                out.extend_from_slice(summary.attributes.raw);
                out.push(0);
            }
            SummaryFrame::CoreName(core) => core.encode_message(out),
            SummaryFrame::Other { message_type, body } => {
                encode_i32(*message_type, out);
                out.extend_from_slice(body);
            }
        }
    }
}

impl<'a> Attributes<'a> {
    /// Reads pairs up to and including the empty-key terminator.
    fn parse(cursor: &mut Cursor<'a>) -> Result<Attributes<'a>, FrameError> {
        let start = cursor.rest();
        loop {
            let before = cursor.rest().len();
            let key = cursor.string("attribute key")?;
            if key.is_empty() {
                let used = start.len() - before;
                return Ok(Attributes {
                    raw: &start[..used],
                });
            }
            cursor.string("attribute value")?;
        }
    }

    /// The pairs in wire order.
    pub fn iter(&self) -> AttributeIter<'a> {
        AttributeIter {
            cursor: Cursor::new(self.raw),
        }
    }

    /// The value of the first attribute named `key`.
    pub fn get(&self, key: &[u8]) -> Option<&'a [u8]> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Appends string pairs and the empty-key terminator, as the end of a SUMMARY message.
    pub fn encode<'p>(pairs: impl IntoIterator<Item = (&'p [u8], &'p [u8])>, out: &mut Vec<u8>) {
        for (key, value) in pairs {
            put_string(key, out);
            put_string(value, out);
        }
        out.push(0);
    }
}

/// Iterator over [`Attributes`]: `(key, value)` byte strings.
#[derive(Debug, Clone)]
pub struct AttributeIter<'a> {
    cursor: Cursor<'a>,
}

impl<'a> Iterator for AttributeIter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        // The bytes were validated by `Attributes::parse`, so these reads cannot fail; stop if they ever do.
        let key = self.cursor.string("attribute key").ok()?;
        let value = self.cursor.string("attribute value").ok()?;
        Some((key, value))
    }
}

impl CoreName<'_> {
    fn encode_message(&self, out: &mut Vec<u8>) {
        encode_i32(MESSAGE_CORE_NAME, out);
        encode_i32(self.core, out);
        encode_i32(self.cpuid, out);
        put_string(self.name, out);
    }
}

fn encode_clocks(clocks: &Clocks, out: &mut Vec<u8>) {
    encode_i64(clocks.realtime_ns, out);
    encode_i64(clocks.boottime_ns, out);
    encode_i64(clocks.monotonic_raw_ns, out);
    if let Some(monotonic) = clocks.monotonic_ns {
        encode_i64(monotonic, out);
    }
}

/// Appends a complete SUMMARY frame (type 1, message 1) as a daemon speaking `version` would send it: the canary,
/// three clocks before protocol 910 or four from 910 (a missing CLOCK_MONOTONIC is sent as the raw clock), and
/// the attributes.
pub fn encode_summary<'p>(
    version: ProtocolVersion,
    clocks: &Clocks,
    attributes: impl IntoIterator<Item = (&'p [u8], &'p [u8])>,
    out: &mut Vec<u8>,
) {
    encode_i32(FrameType::Summary.code(), out);
    encode_i32(MESSAGE_SUMMARY, out);
    put_string(NEWLINE_CANARY, out);
    let monotonic = if version.summary_clock_count() == 4 {
        Some(clocks.monotonic_ns.unwrap_or(clocks.monotonic_raw_ns))
    } else {
        None
    };
    encode_clocks(
        &Clocks {
            monotonic_ns: monotonic,
            ..*clocks
        },
        out,
    );
    Attributes::encode(attributes, out);
}

/// Appends a complete SUMMARY frame carrying a CORE_NAME message.
pub fn encode_core_name(core: i32, cpuid: i32, name: &[u8], out: &mut Vec<u8>) {
    encode_i32(FrameType::Summary.code(), out);
    CoreName { core, cpuid, name }.encode_message(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SUMMARY bytes observed from gatord 9.7.2 (research notes §5.5), cut after `nosync` and terminated.
    fn observed_950() -> Vec<u8> {
        let mut body = vec![0x01, 0x0b];
        body.extend_from_slice(NEWLINE_CANARY);
        body.extend_from_slice(&[0x93, 0xc3, 0x83, 0xc8, 0x80, 0xb1, 0xa1, 0xf6, 0x18]);
        body.extend_from_slice(&[0xe3, 0xbb, 0xf6, 0xd2, 0xa2, 0x18]);
        body.extend_from_slice(&[0x96, 0x8f, 0x98, 0xbf, 0xa1, 0x18]);
        body.extend_from_slice(&[0xb3, 0xce, 0xca, 0xd2, 0xa2, 0x18]);
        body.extend_from_slice(b"\x08PAGESIZE\x044096\x06nosync\x00\x00");
        body
    }

    #[test]
    fn observed_clocks_decode() {
        let body = observed_950();
        let SummaryFrame::Summary(summary) =
            SummaryFrame::parse(&body, ProtocolVersion::V950).unwrap()
        else {
            panic!("not a summary message");
        };
        assert_eq!(summary.canary, NEWLINE_CANARY);
        // Values checked by hand against the same bytes in `d2c.bin` (offset 3139263).
        assert_eq!(summary.clocks.realtime_ns, 1_795_957_170_727_084_435);
        assert_eq!(summary.clocks.boottime_ns, 833_934_433_763);
        assert_eq!(summary.clocks.monotonic_raw_ns, 833_624_606_614);
        assert_eq!(summary.clocks.monotonic_ns, Some(833_933_715_251));
        assert_eq!(summary.attributes.get(b"PAGESIZE"), Some(&b"4096"[..]));
        assert_eq!(summary.attributes.get(b"nosync"), Some(&b""[..]));
        assert_eq!(summary.attributes.iter().count(), 2);
    }

    #[test]
    fn a_950_summary_read_as_670_has_trailing_bytes_or_misreads() {
        // With 3 clocks the fourth clock is read as an attribute key length: never silently accepted as equal.
        let body = observed_950();
        let parsed = SummaryFrame::parse(&body, ProtocolVersion::V670);
        assert!(
            parsed.is_err()
                || parsed.unwrap() != SummaryFrame::parse(&body, ProtocolVersion::V950).unwrap()
        );
    }

    #[test]
    fn encoder_writes_three_clocks_before_910_and_four_after() {
        let clocks = Clocks {
            realtime_ns: 1,
            boottime_ns: 2,
            monotonic_raw_ns: 3,
            monotonic_ns: Some(4),
        };
        let attrs: [(&[u8], &[u8]); 1] = [(b"uname", b"Linux")];
        for (version, expected) in [
            (ProtocolVersion::V670, None),
            (ProtocolVersion::V950, Some(4)),
        ] {
            let mut out = Vec::new();
            encode_summary(version, &clocks, attrs, &mut out);
            assert_eq!(out[0], 1);
            let SummaryFrame::Summary(summary) = SummaryFrame::parse(&out[1..], version).unwrap()
            else {
                panic!("not a summary message");
            };
            assert_eq!(summary.clocks.monotonic_ns, expected);
            assert_eq!(summary.attributes.get(b"uname"), Some(&b"Linux"[..]));
            let mut again = Vec::new();
            SummaryFrame::Summary(summary).encode(&mut again);
            assert_eq!(again, out);
        }
    }

    #[test]
    fn core_name_round_trips() {
        let mut out = Vec::new();
        encode_core_name(2, 0x41d03, b"Cortex-A53", &mut out);
        let frame = SummaryFrame::parse(&out[1..], ProtocolVersion::V950).unwrap();
        assert_eq!(
            frame,
            SummaryFrame::CoreName(CoreName {
                core: 2,
                cpuid: 0x41d03,
                name: b"Cortex-A53"
            })
        );
    }

    #[test]
    fn missing_attribute_terminator_is_an_error() {
        let mut body = observed_950();
        body.pop();
        assert!(matches!(
            SummaryFrame::parse(&body, ProtocolVersion::V950),
            Err(FrameError::Int {
                field: "attribute key",
                ..
            })
        ));
    }

    #[test]
    fn bytes_after_the_terminator_are_an_error() {
        let mut body = observed_950();
        body.push(0x55);
        assert!(matches!(
            SummaryFrame::parse(&body, ProtocolVersion::V950),
            Err(FrameError::TrailingBytes { count: 1, .. })
        ));
    }

    #[test]
    fn unknown_message_types_stay_opaque() {
        let frame = SummaryFrame::parse(&[0x09, 1, 2], ProtocolVersion::V950).unwrap();
        assert_eq!(
            frame,
            SummaryFrame::Other {
                message_type: 9,
                body: &[1, 2]
            }
        );
        let mut out = Vec::new();
        frame.encode(&mut out);
        assert_eq!(out, [1, 9, 1, 2]);
    }
}
