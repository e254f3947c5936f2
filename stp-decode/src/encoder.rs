//! The STP encoder: packets in, bytes out (for property tests and for tools that emit STP).

use alloc::vec::Vec;

use crate::decoder::ASYNC_F_NIBBLES;
use crate::error::EncodeError;
use crate::packet::{IdWidth, PacketKind};
use crate::timestamp::{nibble_from_length, Timestamp, TsFormat};

/// Packs nibbles into bytes, first nibble in bits 3:0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NibbleWriter {
    bytes: Vec<u8>,
    odd: bool,
}

impl NibbleWriter {
    /// An empty writer.
    pub const fn new() -> Self {
        NibbleWriter {
            bytes: Vec::new(),
            odd: false,
        }
    }

    /// Nibbles written so far.
    pub fn nibble_len(&self) -> u64 {
        self.bytes.len() as u64 * 2 - u64::from(self.odd)
    }

    /// Appends one nibble (the low 4 bits of `nibble`).
    pub fn push(&mut self, nibble: u8) {
        let nibble = nibble & 0xF;
        if self.odd {
            if let Some(last) = self.bytes.last_mut() {
                *last |= nibble << 4;
            }
        } else {
            self.bytes.push(nibble);
        }
        self.odd = !self.odd;
    }

    /// Appends the low `nibbles` nibbles of `value`, most significant first.
    pub fn push_value(&mut self, value: u64, nibbles: u8) {
        for i in (0..u32::from(nibbles)).rev() {
            self.push((value >> (4 * i)) as u8);
        }
    }

    /// The nibbles written, as one nibble per element.
    pub fn nibbles(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() * 2);
        for b in &self.bytes {
            out.push(b & 0xF);
            out.push(b >> 4);
        }
        if self.odd {
            out.pop();
        }
        out
    }

    /// The packed bytes; an odd final nibble is followed by a `0` (a NULL packet).
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

fn fit(field: &'static str, value: u64, nibbles: u8) -> Result<u64, EncodeError> {
    if nibbles < 16 && value >> (4 * u32::from(nibbles)) != 0 {
        return Err(EncodeError::ValueTooWide {
            field,
            value,
            nibbles,
        });
    }
    Ok(value)
}

/// Encodes STP packets. It tracks the timestamp format set by the VERSION packets it writes, so that
/// timestamps are written in the form a decoder expects.
#[derive(Debug, Clone, Default)]
pub struct StpEncoder {
    out: NibbleWriter,
    ts_format: Option<TsFormat>,
}

impl StpEncoder {
    /// An encoder with an empty output and no VERSION written yet (timestamps use the STPv2 length form).
    pub const fn new() -> Self {
        StpEncoder {
            out: NibbleWriter::new(),
            ts_format: None,
        }
    }

    /// The output so far.
    pub fn writer(&self) -> &NibbleWriter {
        &self.out
    }

    /// Takes the output.
    pub fn finish(self) -> NibbleWriter {
        self.out
    }

    /// Writes an ASYNC (21 × `F`, `0`).
    pub fn async_packet(&mut self) {
        for _ in 0..ASYNC_F_NIBBLES {
            self.out.push(0xF);
        }
        self.out.push(0);
    }

    /// Writes one packet. The `absolute` part of timestamps is ignored; `nibbles` and `update` are sent.
    ///
    /// Errors leave the output unchanged.
    ///
    /// ```
    /// use stp_decode::encoder::StpEncoder;
    /// use stp_decode::{DataWidth, IdWidth, PacketKind, Timestamp};
    /// let mut e = StpEncoder::new();
    /// e.packet(&PacketKind::Version { version: 3 }).unwrap();
    /// let before = e.writer().nibble_len();
    /// e.packet(&PacketKind::Master { width: IdWidth::W8, master: 0 }).unwrap();
    /// e.packet(&PacketKind::Channel { width: IdWidth::W8, channel: 1 }).unwrap();
    /// let ts = Timestamp { nibbles: 2, update: 0x5A, absolute: None };
    /// e.packet(&PacketKind::Data { width: DataWidth::W32, value: 0xDEADBEEF, marker: true, ts: Some(ts) })
    ///     .unwrap();
    /// assert_eq!(before, 4);
    /// // docs/stm.md §1.2: M8(0) C8(1) D32MTS(0xDEADBEEF, TS 0x5A) = 01 30 10 DA AE BD EE 2F A5.
    /// assert_eq!(&e.finish().into_bytes()[2..], &[0x01, 0x30, 0x10, 0xDA, 0xAE, 0xBD, 0xEE, 0x2F, 0xA5]);
    /// ```
    pub fn packet(&mut self, kind: &PacketKind) -> Result<(), EncodeError> {
        let mut w = NibbleWriter {
            bytes: Vec::new(),
            odd: false,
        };
        let (opcode, op_nibbles) = kind.packet_type().opcode();
        if *kind == PacketKind::Async {
            self.async_packet();
            return Ok(());
        }
        w.push_value(u64::from(opcode), op_nibbles);
        let mut new_format = self.ts_format;
        match *kind {
            PacketKind::Null { .. } | PacketKind::Flag { .. } | PacketKind::Async => {}
            PacketKind::Master { width, master }
            | PacketKind::Channel {
                width,
                channel: master,
            } => {
                let n = if width == IdWidth::W8 { 2 } else { 4 };
                w.push_value(fit("master/channel", u64::from(master), n)?, n);
            }
            PacketKind::MasterError { value } | PacketKind::GlobalError { value } => {
                w.push_value(u64::from(value), 2)
            }
            PacketKind::Data { width, value, .. } => {
                w.push_value(fit("data", value, width.nibbles())?, width.nibbles())
            }
            PacketKind::User { nibbles, value, .. } => {
                if !(1..=16).contains(&nibbles) {
                    return Err(EncodeError::BadLength {
                        field: "USER payload",
                        nibbles,
                    });
                }
                w.push(nibbles - 1);
                w.push_value(fit("USER payload", value, nibbles)?, nibbles);
            }
            PacketKind::Time {
                clock,
                version,
                nibbles,
                time,
                ..
            } => {
                let code = nibble_from_length(nibbles).ok_or(EncodeError::BadLength {
                    field: "TIME value",
                    nibbles,
                })?;
                w.push(fit("TIME clock", u64::from(clock), 1)? as u8);
                w.push(fit("TIME version", u64::from(version), 1)? as u8);
                w.push(code);
                w.push_value(fit("TIME value", time, nibbles)?, nibbles);
            }
            PacketKind::Trigger { value, .. } => w.push_value(u64::from(value), 2),
            PacketKind::Frequency { wide, hz, .. } => {
                let n = if wide { 10 } else { 8 };
                w.push_value(fit("frequency", hz, n)?, n);
            }
            PacketKind::Xsync { id, .. } => w.push_value(u64::from(id), 2),
            PacketKind::Version { version } => {
                w.push(fit("version", u64::from(version), 1)? as u8);
                new_format = TsFormat::from_version(version);
            }
        }
        if let Some(ts) = kind.timestamp() {
            self.timestamp(&mut w, ts)?;
        }
        for n in w.nibbles() {
            self.out.push(n);
        }
        self.ts_format = new_format;
        Ok(())
    }

    fn timestamp(&self, w: &mut NibbleWriter, ts: Timestamp) -> Result<(), EncodeError> {
        if self.ts_format == Some(TsFormat::Legacy) {
            if ts.nibbles != 2 {
                return Err(EncodeError::BadLength {
                    field: "legacy timestamp",
                    nibbles: ts.nibbles,
                });
            }
        } else {
            let code = nibble_from_length(ts.nibbles).ok_or(EncodeError::BadLength {
                field: "timestamp",
                nibbles: ts.nibbles,
            })?;
            w.push(code);
        }
        w.push_value(fit("timestamp", ts.update, ts.nibbles)?, ts.nibbles);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::DataWidth;

    #[test]
    fn writer_packs_low_nibble_first() {
        let mut w = NibbleWriter::new();
        for n in [0xF, 0x0, 0x0, 0x3, 0x1] {
            w.push(n);
        }
        assert_eq!(w.nibble_len(), 5);
        assert_eq!(w.nibbles(), [0xF, 0, 0, 3, 1]);
        assert_eq!(w.into_bytes(), [0x0F, 0x30, 0x01]);
    }

    #[test]
    fn too_wide_values_are_rejected() {
        let mut e = StpEncoder::new();
        let err = e.packet(&PacketKind::Master {
            width: IdWidth::W8,
            master: 0x100,
        });
        assert_eq!(
            err,
            Err(EncodeError::ValueTooWide {
                field: "master/channel",
                value: 0x100,
                nibbles: 2
            })
        );
        let err = e.packet(&PacketKind::Data {
            width: DataWidth::W4,
            value: 0x10,
            marker: false,
            ts: None,
        });
        assert!(matches!(err, Err(EncodeError::ValueTooWide { .. })));
        assert!(matches!(
            e.packet(&PacketKind::Version { version: 16 }),
            Err(EncodeError::ValueTooWide { .. })
        ));
        assert_eq!(e.writer().nibble_len(), 0, "errors write nothing");
    }

    #[test]
    fn uncodable_lengths_are_rejected() {
        let mut e = StpEncoder::new();
        let ts = |nibbles| Timestamp {
            nibbles,
            update: 0,
            absolute: None,
        };
        for bad in [13, 15, 17] {
            assert_eq!(
                e.packet(&PacketKind::Flag { ts: Some(ts(bad)) }),
                Err(EncodeError::BadLength {
                    field: "timestamp",
                    nibbles: bad
                })
            );
        }
        for bad in [0, 17] {
            assert!(matches!(
                e.packet(&PacketKind::User {
                    nibbles: bad,
                    value: 0,
                    ts: None
                }),
                Err(EncodeError::BadLength { .. })
            ));
        }
        assert!(matches!(
            e.packet(&PacketKind::Time {
                clock: 0,
                version: 0,
                nibbles: 13,
                time: 0,
                ts: None
            }),
            Err(EncodeError::BadLength { .. })
        ));
        e.packet(&PacketKind::Version { version: 1 }).unwrap();
        assert_eq!(
            e.packet(&PacketKind::Flag { ts: Some(ts(3)) }),
            Err(EncodeError::BadLength {
                field: "legacy timestamp",
                nibbles: 3
            })
        );
    }
}
