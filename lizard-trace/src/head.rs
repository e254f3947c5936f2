//! The record head stored in the ring and in ring files (format version 2, little-endian, 100 bytes).
//!
//! | Offset | Size | Field |
//! |---|---|---|
//! | 0 | 8 | `seq`: the ring's sequence number, consecutive over every record the ring ever stored |
//! | 8 | 4 | `len`: payload bytes that follow the head |
//! | 12 | 10 | `module`: module tag, UTF-8, zero-padded |
//! | 22 | 8 | `timestamp_ns`: `CLOCK_MONOTONIC_RAW` at the client's record call |
//! | 30 | 20 | `file`: source file name, UTF-8, zero-padded |
//! | 50 | 4 | `line`: source line |
//! | 54 | 4 | `client_pid`: the sender's process id, from the kernel (`SO_PEERCRED`), not from the sender |
//! | 58 | 8 | `client_seq`: the sender's own record counter; a gap means the client dropped records |
//! | 66 | 1 | `origin`: where the payload came from: 0 not known, 1 inline in the message, 2 a sealed memfd, 3 GPU device memory |
//! | 67 | 1 | for device memory, the copy mode: 1 the client waited for the copy, 2 it did not; 0 otherwise |
//! | 68 | 8 | `stored_ns`: `CLOCK_MONOTONIC_RAW` when the server copied the payload (0: not known) |
//! | 76 | 8 | for device memory, the offset of the payload inside its allocation; 0 otherwise |
//! | 84 | 16 | for device memory, the UUID of the GPU it came from; 0 otherwise |
//!
//! Version 1 heads (ring files of versions 1 and 2) are the first 66 bytes alone; [`RecordHead::decode_v1`]
//! reads them, with an origin that is not known.

use crate::device::{CopyMode, DeviceUuid};
use crate::error::{HeadError, TagError};
use crate::tag::{FileTag, ModuleTag};

/// Bytes of a record head.
pub const HEAD_LEN: usize = 100;

/// Bytes of a version 1 record head, as ring files of versions 1 and 2 store them.
pub const HEAD_LEN_V1: usize = 66;

/// Version of the record head layout.
pub const FORMAT_VERSION: u32 = 2;

/// Where a record's payload came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// Not known: a record of a ring file older than version 3, or stored by a caller that did not say.
    #[default]
    Unknown,
    /// Host memory, carried inside the client's message.
    Inline,
    /// Host memory, in a sealed memfd attached to the client's message.
    Memfd,
    /// GPU device memory, copied by the server through the allocation's CUDA IPC handle.
    Device {
        /// Whether the client waited for the copy.
        mode: CopyMode,
        /// The GPU the bytes came from.
        device: DeviceUuid,
        /// Where the bytes start inside their allocation.
        offset: u64,
    },
}

impl std::fmt::Display for Origin {
    /// `unknown`, `inline`, `memfd`, or `device MODE UUID+OFFSET` (`device sync GPU-…+0x100`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Unknown => f.write_str("unknown"),
            Origin::Inline => f.write_str("inline"),
            Origin::Memfd => f.write_str("memfd"),
            Origin::Device {
                mode,
                device,
                offset,
            } => write!(f, "device {mode} {device}+{offset:#x}"),
        }
    }
}

impl Origin {
    /// Writes bytes 66..68 and 76..100 of a head.
    fn encode_into(&self, out: &mut [u8; HEAD_LEN]) {
        let (kind, mode, device, offset) = match *self {
            Origin::Unknown => (0, 0, DeviceUuid::ANY, 0),
            Origin::Inline => (1, 0, DeviceUuid::ANY, 0),
            Origin::Memfd => (2, 0, DeviceUuid::ANY, 0),
            Origin::Device {
                mode,
                device,
                offset,
            } => (3, mode.code(), device, offset),
        };
        out[66] = kind;
        out[67] = mode;
        out[76..84].copy_from_slice(&offset.to_le_bytes());
        out[84..100].copy_from_slice(&device.0);
    }

    /// Reads bytes 66..68 and 76..100 of a head.
    fn decode(bytes: &[u8; HEAD_LEN]) -> Result<Origin, HeadError> {
        let offset = u64_at(bytes, 76);
        let mut device = [0; 16];
        device.copy_from_slice(&bytes[84..100]);
        let device = DeviceUuid(device);
        let mode = bytes[67];
        let host = |origin| {
            if mode == 0 && offset == 0 && device.is_any() {
                Ok(origin)
            } else {
                Err(HeadError::Origin {
                    kind: bytes[66],
                    mode,
                })
            }
        };
        match bytes[66] {
            0 => host(Origin::Unknown),
            1 => host(Origin::Inline),
            2 => host(Origin::Memfd),
            3 => match CopyMode::from_code(mode) {
                Some(mode) => Ok(Origin::Device {
                    mode,
                    device,
                    offset,
                }),
                None => Err(HeadError::Origin { kind: 3, mode }),
            },
            kind => Err(HeadError::Origin { kind, mode }),
        }
    }
}

/// What a writer says about a record: everything in the head except the ring's `seq` and the payload `len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordMeta {
    /// Module tag.
    pub module: ModuleTag,
    /// `CLOCK_MONOTONIC_RAW` nanoseconds when the record was made.
    pub timestamp_ns: u64,
    /// Source file name.
    pub file: FileTag,
    /// Source line.
    pub line: u32,
    /// Process id of the client.
    pub client_pid: u32,
    /// The client's own sequence number for this record.
    pub client_seq: u64,
    /// Where the payload came from.
    pub origin: Origin,
    /// `CLOCK_MONOTONIC_RAW` nanoseconds when the server copied the payload (0: not known). For an
    /// asynchronous device record it is later than `timestamp_ns`, the time of the client's call.
    pub stored_ns: u64,
}

impl RecordMeta {
    /// Metadata with a module tag, file name and line; the other fields are zero.
    pub fn new(module: &str, file: &str, line: u32) -> Result<RecordMeta, TagError> {
        Ok(RecordMeta {
            module: ModuleTag::new(module)?,
            file: FileTag::new(file)?,
            line,
            ..RecordMeta::default()
        })
    }
}

/// A decoded record head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordHead {
    /// The ring's sequence number.
    pub seq: u64,
    /// Payload length in bytes.
    pub len: u32,
    /// Everything the writer supplied.
    pub meta: RecordMeta,
}

/// Reads a little-endian u32 at `at` of a slice known to be long enough.
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    let mut v = [0; 4];
    v.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(v)
}

/// Reads a little-endian u64 at `at` of a slice known to be long enough.
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    let mut v = [0; 8];
    v.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(v)
}

impl RecordHead {
    /// Size of the whole record, head and payload, in bytes.
    pub fn record_len(&self) -> u64 {
        HEAD_LEN as u64 + u64::from(self.len)
    }

    /// Writes the head's 100 bytes.
    pub fn encode(&self) -> [u8; HEAD_LEN] {
        let mut out = [0; HEAD_LEN];
        out[0..8].copy_from_slice(&self.seq.to_le_bytes());
        out[8..12].copy_from_slice(&self.len.to_le_bytes());
        out[12..22].copy_from_slice(self.meta.module.field());
        out[22..30].copy_from_slice(&self.meta.timestamp_ns.to_le_bytes());
        out[30..50].copy_from_slice(self.meta.file.field());
        out[50..54].copy_from_slice(&self.meta.line.to_le_bytes());
        out[54..58].copy_from_slice(&self.meta.client_pid.to_le_bytes());
        out[58..66].copy_from_slice(&self.meta.client_seq.to_le_bytes());
        self.meta.origin.encode_into(&mut out);
        out[68..76].copy_from_slice(&self.meta.stored_ns.to_le_bytes());
        out
    }

    /// Decodes a head from the start of `bytes` (extra bytes are ignored).
    pub fn decode(bytes: &[u8]) -> Result<RecordHead, HeadError> {
        let bytes: &[u8; HEAD_LEN] = bytes
            .get(..HEAD_LEN)
            .and_then(|b| b.try_into().ok())
            .ok_or(HeadError::Truncated {
                len: bytes.len(),
                needed: HEAD_LEN,
            })?;
        let mut head = Self::decode_v1(bytes)?;
        head.meta.origin = Origin::decode(bytes)?;
        head.meta.stored_ns = u64_at(bytes, 68);
        Ok(head)
    }

    /// Decodes a version 1 head (66 bytes, as ring files of versions 1 and 2 hold them) from the start of
    /// `bytes`; its origin is [`Origin::Unknown`] and its `stored_ns` 0.
    pub fn decode_v1(bytes: &[u8]) -> Result<RecordHead, HeadError> {
        let bytes: &[u8; HEAD_LEN_V1] = bytes
            .get(..HEAD_LEN_V1)
            .and_then(|b| b.try_into().ok())
            .ok_or(HeadError::Truncated {
                len: bytes.len(),
                needed: HEAD_LEN_V1,
            })?;
        let mut module = [0; 10];
        module.copy_from_slice(&bytes[12..22]);
        let mut file = [0; 20];
        file.copy_from_slice(&bytes[30..50]);
        Ok(RecordHead {
            seq: u64_at(bytes, 0),
            len: u32_at(bytes, 8),
            meta: RecordMeta {
                module: ModuleTag::decode(&module).map_err(HeadError::Module)?,
                timestamp_ns: u64_at(bytes, 22),
                file: FileTag::decode(&file).map_err(HeadError::File)?,
                line: u32_at(bytes, 50),
                client_pid: u32_at(bytes, 54),
                client_seq: u64_at(bytes, 58),
                origin: Origin::Unknown,
                stored_ns: 0,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn origins_as_text() {
        let device = Origin::Device {
            mode: CopyMode::Sync,
            device: DeviceUuid([0x11; 16]),
            offset: 0x100,
        };
        let texts = [Origin::Unknown, Origin::Inline, Origin::Memfd, device].map(|o| o.to_string());
        assert_eq!(
            texts,
            [
                "unknown",
                "inline",
                "memfd",
                "device sync GPU-11111111-1111-1111-1111-111111111111+0x100"
            ]
        );
    }

    fn sample() -> RecordHead {
        RecordHead {
            seq: 0x0102_0304_0506_0708,
            len: 0x0A0B_0C0D,
            meta: RecordMeta {
                module: ModuleTag::new("gpu").unwrap(),
                timestamp_ns: 0x1112_1314_1516_1718,
                file: FileTag::new("submit.rs").unwrap(),
                line: 42,
                client_pid: 4321,
                client_seq: 7,
                origin: Origin::Device {
                    mode: CopyMode::Async,
                    device: DeviceUuid([0xd0; 16]),
                    offset: 0x2122_2324_2526_2728,
                },
                stored_ns: 0x3132_3334_3536_3738,
            },
        }
    }

    #[test]
    fn layout_is_little_endian_at_documented_offsets() {
        let bytes = sample().encode();
        assert_eq!(&bytes[0..8], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(&bytes[8..12], &[0x0D, 0x0C, 0x0B, 0x0A]);
        assert_eq!(&bytes[12..22], b"gpu\0\0\0\0\0\0\0");
        assert_eq!(
            &bytes[22..30],
            &[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]
        );
        assert_eq!(&bytes[30..50], b"submit.rs\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(&bytes[50..54], &[42, 0, 0, 0]);
        assert_eq!(&bytes[54..58], &4321u32.to_le_bytes());
        assert_eq!(&bytes[58..66], &[7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bytes[66], 3);
        assert_eq!(bytes[67], 2);
        assert_eq!(
            &bytes[68..76],
            &[0x38, 0x37, 0x36, 0x35, 0x34, 0x33, 0x32, 0x31]
        );
        assert_eq!(
            &bytes[76..84],
            &[0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21]
        );
        assert_eq!(&bytes[84..100], &[0xd0; 16]);
        assert_eq!(RecordHead::decode(&bytes).unwrap(), sample());
        assert_eq!(sample().record_len(), 100 + 0x0A0B_0C0D);
    }

    #[test]
    fn version_1_heads_are_the_first_66_bytes() {
        let bytes = sample().encode();
        let old = RecordHead::decode_v1(&bytes[..HEAD_LEN_V1]).unwrap();
        let mut want = sample();
        want.meta.origin = Origin::Unknown;
        want.meta.stored_ns = 0;
        assert_eq!(old, want);
        assert_eq!(
            RecordHead::decode_v1(&bytes[..65]),
            Err(HeadError::Truncated {
                len: 65,
                needed: HEAD_LEN_V1
            })
        );
    }

    #[test]
    fn bad_origins_are_rejected() {
        let mut bytes = sample().encode();
        bytes[66] = 4;
        assert_eq!(
            RecordHead::decode(&bytes),
            Err(HeadError::Origin { kind: 4, mode: 2 })
        );
        let mut bytes = sample().encode();
        bytes[67] = 0;
        assert_eq!(
            RecordHead::decode(&bytes),
            Err(HeadError::Origin { kind: 3, mode: 0 })
        );
        // A host record has no copy mode, offset or device.
        let mut bytes = sample().encode();
        bytes[66] = 1;
        assert_eq!(
            RecordHead::decode(&bytes),
            Err(HeadError::Origin { kind: 1, mode: 2 })
        );
        bytes[67] = 0;
        assert!(RecordHead::decode(&bytes).is_err());
        bytes[76..100].fill(0);
        assert_eq!(
            RecordHead::decode(&bytes).unwrap().meta.origin,
            Origin::Inline
        );
    }

    #[test]
    fn every_short_prefix_is_truncated() {
        let bytes = sample().encode();
        for len in 0..HEAD_LEN {
            assert_eq!(
                RecordHead::decode(&bytes[..len]),
                Err(HeadError::Truncated {
                    len,
                    needed: HEAD_LEN
                })
            );
        }
    }

    #[test]
    fn bad_module_and_file_are_rejected() {
        let mut bytes = sample().encode();
        bytes[12] = 0xFF;
        assert!(matches!(
            RecordHead::decode(&bytes),
            Err(HeadError::Module(TagError::NotUtf8(_)))
        ));
        let mut bytes = sample().encode();
        bytes[49] = b'x';
        assert!(matches!(
            RecordHead::decode(&bytes),
            Err(HeadError::File(TagError::BadPadding { at: 19 }))
        ));
    }

    proptest! {
        #[test]
        fn round_trip(seq: u64, len: u32, ts: u64, line: u32, pid: u32, cseq: u64,
                      module in "[a-z]{0,10}", file in "[a-z._]{0,20}",
                      kind in 0u8..5, uuid: [u8; 16], offset: u64, stored: u64) {
            let origin = match kind {
                0 => Origin::Unknown,
                1 => Origin::Inline,
                2 => Origin::Memfd,
                3 => Origin::Device { mode: CopyMode::Sync, device: DeviceUuid(uuid), offset },
                _ => Origin::Device { mode: CopyMode::Async, device: DeviceUuid(uuid), offset },
            };
            let head = RecordHead {
                seq, len,
                meta: RecordMeta {
                    module: ModuleTag::new(&module).unwrap(),
                    timestamp_ns: ts,
                    file: FileTag::new(&file).unwrap(),
                    line, client_pid: pid, client_seq: cseq,
                    origin, stored_ns: stored,
                },
            };
            prop_assert_eq!(RecordHead::decode(&head.encode()).unwrap(), head);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = RecordHead::decode(&bytes);
            let _ = RecordHead::decode_v1(&bytes);
        }
    }
}
