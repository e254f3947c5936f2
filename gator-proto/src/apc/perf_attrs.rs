//! PERF_ATTRS frames (type 11): perf event attributes, id→key maps, process and kernel metadata.
//!
//! Layout: `packInt core` (0), `packInt code`, then a body that depends on the code. Text bodies are raw bytes
//! followed by one NUL (no length prefix). Codes without a variant here are kept as [`PerfAttrsMessage::Other`].

use super::cursor::{put_c_string, put_string, Cursor};
use super::error::FrameError;
use super::frame_type::FrameType;
use crate::sleb128::{encode_i32, encode_i64};
use perf_record::MetricEventRole;

/// Code of [`PerfAttrsMessage::Pea`].
pub const CODE_PEA: i32 = 1;
/// Code of [`PerfAttrsMessage::Keys`].
pub const CODE_KEYS: i32 = 2;
/// Code of [`PerfAttrsMessage::Format`].
pub const CODE_FORMAT: i32 = 3;
/// Code of [`PerfAttrsMessage::Maps`].
pub const CODE_MAPS: i32 = 4;
/// Code of [`PerfAttrsMessage::Comm`].
pub const CODE_COMM: i32 = 5;
/// Code of the legacy KEYS_OLD message (kept opaque).
pub const CODE_KEYS_OLD: i32 = 6;
/// Code of [`PerfAttrsMessage::OnlineCpu`].
pub const CODE_ONLINE_CPU: i32 = 7;
/// Code of [`PerfAttrsMessage::OfflineCpu`].
pub const CODE_OFFLINE_CPU: i32 = 8;
/// Code of [`PerfAttrsMessage::Kallsyms`].
pub const CODE_KALLSYMS: i32 = 9;
/// Code of [`PerfAttrsMessage::Counters`].
pub const CODE_COUNTERS: i32 = 10;
/// Code of [`PerfAttrsMessage::HeaderPage`].
pub const CODE_HEADER_PAGE: i32 = 11;
/// Code of [`PerfAttrsMessage::HeaderEvent`].
pub const CODE_HEADER_EVENT: i32 = 12;
/// Code of [`PerfAttrsMessage::MetricEventKey`].
pub const CODE_METRIC_EVENT_KEY: i32 = 13;
/// Code of [`PerfAttrsMessage::KernelBuildId`].
pub const CODE_KERNEL_BUILD_ID: i32 = 14;
/// Code of the KERNEL_MODULE_BUILD_ID message (kept opaque).
pub const CODE_KERNEL_MODULE_BUILD_ID: i32 = 15;

/// Offset of the `size` field inside `struct perf_event_attr`.
const PEA_SIZE_OFFSET: usize = 4;

/// A PERF_ATTRS frame: the legacy core field, then any number of messages (gatord packs several PEA, COMM or
/// MAPS messages into one frame, and sometimes sends a frame with none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfAttrs<'a> {
    /// The legacy core field.
    pub core: i32,
    /// How many messages the frame holds.
    pub count: usize,
    /// The validated messages, encoded.
    raw_messages: &'a [u8],
}

/// One message of a [`PerfAttrs`] frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfAttrsMessage<'a> {
    /// 1: a raw `struct perf_event_attr` (its own `size` field gives the length) and the gator key it feeds.
    Pea {
        /// The attribute bytes, in the daemon's native byte order (little-endian on Arm and x86).
        attr: &'a [u8],
        /// The counter key.
        key: i32,
    },
    /// 2: perf sample ids mapped to gator keys.
    Keys(KeyMap<'a>),
    /// 3: tracepoint format text.
    Format(&'a [u8]),
    /// 4: a process's `/proc/<pid>/maps`.
    Maps {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// The maps text.
        text: &'a [u8],
    },
    /// 5: a thread's image and command name.
    Comm {
        /// Process id.
        pid: i32,
        /// Thread id.
        tid: i32,
        /// The executable path.
        image: &'a [u8],
        /// The command name.
        comm: &'a [u8],
    },
    /// 7: a CPU came online.
    OnlineCpu {
        /// ns since capture start.
        timestamp: i64,
        /// The CPU.
        cpu: i32,
    },
    /// 8: a CPU went offline.
    OfflineCpu {
        /// ns since capture start.
        timestamp: i64,
        /// The CPU.
        cpu: i32,
    },
    /// 9: the kernel symbol table text.
    Kallsyms(&'a [u8]),
    /// 10: counter values read at start or stop.
    Counters(CounterValues<'a>),
    /// 11: the ftrace `header_page` text.
    HeaderPage(&'a [u8]),
    /// 12: the ftrace `header_event` text.
    HeaderEvent(&'a [u8]),
    /// 13: one perf event that a metric counter (`metric="yes"`, e.g. `ARMv8_Cortex_A72_metric_ipc`) is
    /// computed from. gatord opens no event for the metric itself and sends no value under its key: it opens
    /// the metric's PMU events (and the cycle counter) under keys of their own, announces them with PEA
    /// messages and links each to the metric with one of these (`PerfAttrsBuffer::marshalMetricKey`: five
    /// packed ints, code included). The client computes the metric from the events' values.
    MetricEventKey {
        /// The metric counter's key (the one the `captured` document gives the metric).
        metric_key: i32,
        /// The PMU event number (`0x11` CPU_CYCLES, `0x08` INST_RETIRED, ...).
        event_code: i32,
        /// The key the event's values arrive under (announced by a PEA message).
        event_key: i32,
        /// What the event is to the metric.
        role: MetricEventRole,
    },
    /// 14: the kernel's build id.
    KernelBuildId(&'a [u8]),
    /// Any other code, kept opaque. Its length is unknown, so it takes the rest of the frame.
    Other {
        /// The message code.
        code: i32,
        /// The bytes after the code.
        body: &'a [u8],
    },
}

/// The validated pairs of a KEYS message; iterate with [`KeyMap::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyMap<'a> {
    /// The number of pairs.
    pub count: usize,
    raw: &'a [u8],
}

/// The validated samples of a COUNTERS message; iterate with [`CounterValues::iter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterValues<'a> {
    /// ns since capture start.
    pub timestamp: i64,
    raw: &'a [u8],
}

/// One value of a COUNTERS message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterValue {
    /// The core.
    pub core: i32,
    /// The counter key.
    pub key: i32,
    /// The value.
    pub value: i64,
}

impl<'a> PerfAttrs<'a> {
    /// Decodes the body that follows the frame type byte, checking every message.
    pub fn parse(body: &'a [u8]) -> Result<PerfAttrs<'a>, FrameError> {
        let mut cursor = Cursor::new(body);
        let core = cursor.i32("core")?;
        let raw_messages = cursor.rest();
        let mut count = 0;
        while !cursor.rest().is_empty() {
            PerfAttrsMessage::parse(&mut cursor)?;
            count += 1;
        }
        Ok(PerfAttrs {
            core,
            count,
            raw_messages,
        })
    }

    /// The messages in wire order.
    pub fn messages(&self) -> impl Iterator<Item = PerfAttrsMessage<'a>> + 'a {
        let mut cursor = Cursor::new(self.raw_messages);
        // Validated by `parse`, so a read cannot fail; stop if one ever does.
        std::iter::from_fn(move || {
            if cursor.rest().is_empty() {
                return None;
            }
            PerfAttrsMessage::parse(&mut cursor).ok()
        })
    }

    /// Appends the whole frame (frame type included) as it was received.
    pub fn encode(&self, out: &mut Vec<u8>) {
        Self::encode_header(self.core, out);
        out.extend_from_slice(self.raw_messages);
    }

    /// Appends a whole frame holding `messages`.
    pub fn encode_messages(core: i32, messages: &[PerfAttrsMessage<'_>], out: &mut Vec<u8>) {
        Self::encode_header(core, out);
        for message in messages {
            message.encode(out);
        }
    }

    /// Appends the frame type and core field; follow with messages ([`PerfAttrsMessage::encode`],
    /// [`encode_keys_message`], [`encode_counters_message`]).
    pub fn encode_header(core: i32, out: &mut Vec<u8>) {
        encode_i32(FrameType::PerfAttrs.code(), out);
        encode_i32(core, out);
    }
}

impl<'a> PerfAttrsMessage<'a> {
    /// Reads one message (code and body) at the cursor.
    fn parse(cursor: &mut Cursor<'a>) -> Result<PerfAttrsMessage<'a>, FrameError> {
        let code = cursor.i32("code")?;
        let message = match code {
            CODE_PEA => {
                let rest = cursor.rest();
                let size_bytes = rest.get(PEA_SIZE_OFFSET..PEA_SIZE_OFFSET + 4).ok_or(
                    FrameError::Truncated {
                        field: "perf_event_attr.size",
                        needed: (PEA_SIZE_OFFSET + 4) as u64,
                        available: rest.len(),
                    },
                )?;
                let size = u32::from_le_bytes([
                    size_bytes[0],
                    size_bytes[1],
                    size_bytes[2],
                    size_bytes[3],
                ]);
                let attr = cursor.bytes(u64::from(size), "perf_event_attr")?;
                let key = cursor.i32("key")?;
                PerfAttrsMessage::Pea { attr, key }
            }
            CODE_KEYS => {
                let n = cursor.i32("key count")?;
                let count = usize::try_from(n).map_err(|_| FrameError::NegativeLength {
                    field: "key count",
                    length: n.into(),
                })?;
                let start = cursor.rest();
                for _ in 0..count {
                    cursor.i64("perf id")?;
                    cursor.i32("key")?;
                }
                let used = start.len() - cursor.rest().len();
                PerfAttrsMessage::Keys(KeyMap {
                    count,
                    raw: &start[..used],
                })
            }
            CODE_FORMAT => PerfAttrsMessage::Format(cursor.c_string("format")?),
            CODE_MAPS => PerfAttrsMessage::Maps {
                pid: cursor.i32("pid")?,
                tid: cursor.i32("tid")?,
                text: cursor.c_string("maps")?,
            },
            CODE_COMM => PerfAttrsMessage::Comm {
                pid: cursor.i32("pid")?,
                tid: cursor.i32("tid")?,
                image: cursor.c_string("image")?,
                comm: cursor.c_string("comm")?,
            },
            CODE_ONLINE_CPU => PerfAttrsMessage::OnlineCpu {
                timestamp: cursor.i64("timestamp")?,
                cpu: cursor.i32("cpu")?,
            },
            CODE_OFFLINE_CPU => PerfAttrsMessage::OfflineCpu {
                timestamp: cursor.i64("timestamp")?,
                cpu: cursor.i32("cpu")?,
            },
            CODE_KALLSYMS => PerfAttrsMessage::Kallsyms(cursor.c_string("kallsyms")?),
            CODE_COUNTERS => {
                let timestamp = cursor.i64("timestamp")?;
                let start = cursor.rest();
                loop {
                    let core = cursor.i32("core")?;
                    if core == -1 {
                        break;
                    }
                    cursor.i32("key")?;
                    cursor.i64("value")?;
                }
                let used = start.len() - cursor.rest().len();
                PerfAttrsMessage::Counters(CounterValues {
                    timestamp,
                    raw: &start[..used],
                })
            }
            CODE_HEADER_PAGE => PerfAttrsMessage::HeaderPage(cursor.c_string("header_page")?),
            CODE_HEADER_EVENT => PerfAttrsMessage::HeaderEvent(cursor.c_string("header_event")?),
            CODE_METRIC_EVENT_KEY => PerfAttrsMessage::MetricEventKey {
                metric_key: cursor.i32("metric key")?,
                event_code: cursor.i32("metric event code")?,
                event_key: cursor.i32("metric event key")?,
                role: MetricEventRole::from_wire(cursor.i32("metric event type")?),
            },
            CODE_KERNEL_BUILD_ID => PerfAttrsMessage::KernelBuildId(cursor.string("build id")?),
            code => PerfAttrsMessage::Other {
                code,
                body: cursor.take_rest(),
            },
        };
        Ok(message)
    }

    /// Appends the message (code and body).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            PerfAttrsMessage::Pea { attr, key } => {
                encode_i32(CODE_PEA, out);
                out.extend_from_slice(attr);
                encode_i32(key, out);
            }
            PerfAttrsMessage::Keys(map) => {
                encode_i32(CODE_KEYS, out);
                encode_i32(i32::try_from(map.count).unwrap_or(i32::MAX), out);
                out.extend_from_slice(map.raw);
            }
            PerfAttrsMessage::Format(text) => text_message(CODE_FORMAT, text, out),
            PerfAttrsMessage::Maps { pid, tid, text } => {
                encode_i32(CODE_MAPS, out);
                encode_i32(pid, out);
                encode_i32(tid, out);
                put_c_string(text, out);
            }
            PerfAttrsMessage::Comm {
                pid,
                tid,
                image,
                comm,
            } => {
                encode_i32(CODE_COMM, out);
                encode_i32(pid, out);
                encode_i32(tid, out);
                put_c_string(image, out);
                put_c_string(comm, out);
            }
            PerfAttrsMessage::OnlineCpu { timestamp, cpu } => {
                cpu_message(CODE_ONLINE_CPU, timestamp, cpu, out)
            }
            PerfAttrsMessage::OfflineCpu { timestamp, cpu } => {
                cpu_message(CODE_OFFLINE_CPU, timestamp, cpu, out)
            }
            PerfAttrsMessage::Kallsyms(text) => text_message(CODE_KALLSYMS, text, out),
            PerfAttrsMessage::Counters(values) => {
                encode_i32(CODE_COUNTERS, out);
                encode_i64(values.timestamp, out);
                out.extend_from_slice(values.raw);
            }
            PerfAttrsMessage::HeaderPage(text) => text_message(CODE_HEADER_PAGE, text, out),
            PerfAttrsMessage::HeaderEvent(text) => text_message(CODE_HEADER_EVENT, text, out),
            PerfAttrsMessage::MetricEventKey {
                metric_key,
                event_code,
                event_key,
                role,
            } => {
                encode_i32(CODE_METRIC_EVENT_KEY, out);
                encode_i32(metric_key, out);
                encode_i32(event_code, out);
                encode_i32(event_key, out);
                encode_i32(role.to_wire(), out);
            }
            PerfAttrsMessage::KernelBuildId(id) => {
                encode_i32(CODE_KERNEL_BUILD_ID, out);
                put_string(id, out);
            }
            PerfAttrsMessage::Other { code, body } => {
                encode_i32(code, out);
                out.extend_from_slice(body);
            }
        }
    }
}

/// Appends a PEA message announcing `attr` for counter `key` (after [`PerfAttrs::encode_header`]).
pub fn encode_pea_message(key: i32, attr: &perf_record::PerfEventAttr, out: &mut Vec<u8>) {
    encode_i32(CODE_PEA, out);
    attr.encode(out);
    encode_i32(key, out);
}

/// Appends a KEYS message mapping perf sample ids to gator keys (after [`PerfAttrs::encode_header`]).
pub fn encode_keys_message(pairs: &[(i64, i32)], out: &mut Vec<u8>) {
    encode_i32(CODE_KEYS, out);
    encode_i32(i32::try_from(pairs.len()).unwrap_or(i32::MAX), out);
    for &(id, key) in pairs {
        encode_i64(id, out);
        encode_i32(key, out);
    }
}

/// Appends a COUNTERS message with its `-1` terminator (after [`PerfAttrs::encode_header`]).
pub fn encode_counters_message(timestamp: i64, values: &[CounterValue], out: &mut Vec<u8>) {
    encode_i32(CODE_COUNTERS, out);
    encode_i64(timestamp, out);
    for value in values {
        encode_i32(value.core, out);
        encode_i32(value.key, out);
        encode_i64(value.value, out);
    }
    encode_i32(-1, out);
}

fn text_message(code: i32, text: &[u8], out: &mut Vec<u8>) {
    encode_i32(code, out);
    put_c_string(text, out);
}

fn cpu_message(code: i32, timestamp: i64, cpu: i32, out: &mut Vec<u8>) {
    encode_i32(code, out);
    encode_i64(timestamp, out);
    encode_i32(cpu, out);
}

impl<'a> KeyMap<'a> {
    /// The `(perf id, key)` pairs.
    pub fn iter(&self) -> impl Iterator<Item = (i64, i32)> + 'a {
        let mut cursor = Cursor::new(self.raw);
        // Validated by `PerfAttrs::parse`; the reads cannot fail.
        std::iter::from_fn(move || Some((cursor.i64("perf id").ok()?, cursor.i32("key").ok()?)))
    }
}

impl<'a> CounterValues<'a> {
    /// The values, without the terminator.
    pub fn iter(&self) -> impl Iterator<Item = CounterValue> + 'a {
        let mut cursor = Cursor::new(self.raw);
        // Validated by `PerfAttrs::parse`; stops at the `-1` terminator.
        std::iter::from_fn(move || {
            let core = cursor.i32("core").ok()?;
            if core == -1 {
                return None;
            }
            Some(CounterValue {
                core,
                key: cursor.i32("key").ok()?,
                value: cursor.i64("value").ok()?,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(messages: &[PerfAttrsMessage<'_>]) {
        let mut out = Vec::new();
        PerfAttrs::encode_messages(0, messages, &mut out);
        let frame = PerfAttrs::parse(&out[1..]).unwrap();
        assert_eq!(frame.count, messages.len());
        assert_eq!(frame.messages().collect::<Vec<_>>(), messages);
        let mut again = Vec::new();
        frame.encode(&mut again);
        assert_eq!(again, out);
    }

    fn only(body: &[u8]) -> PerfAttrsMessage<'_> {
        let frame = PerfAttrs::parse(body).unwrap();
        assert_eq!(frame.count, 1);
        frame.messages().next().unwrap()
    }

    #[test]
    fn observed_online_cpu_decodes() {
        // `0b 00 07 e5 bb 82 39 00` from the gatord 9.7.2 capture.
        let message = only(&[0x00, 0x07, 0xe5, 0xbb, 0x82, 0x39, 0x00]);
        assert_eq!(
            message,
            PerfAttrsMessage::OnlineCpu {
                timestamp: 119_578_085,
                cpu: 0
            }
        );
    }

    #[test]
    fn metric_event_keys_are_five_packed_ints_and_the_frame_goes_on_after_them() {
        // As gatord 9.7.2's `marshalMetricKey` writes ipc in EBS mode: cycles (type 1) then
        // INST_RETIRED (type 0), then the PEA of the next group in the same frame.
        let mut body = vec![0x00];
        body.extend_from_slice(&[0x0d, 0x20, 0x11, 0xfe, 0xff, 0xff, 0xff, 0x07, 0x01]);
        body.extend_from_slice(&[0x0d, 0x20, 0x08, 0xfd, 0xff, 0xff, 0xff, 0x07, 0x00]);
        // The return counter 0x79 packs as `f9 00`.
        body.extend_from_slice(&[0x0d, 0x20, 0xf9, 0x00, 0xfc, 0xff, 0xff, 0xff, 0x07, 0x02]);
        body.extend_from_slice(&[0x07, 0x00, 0x01]);
        let frame = PerfAttrs::parse(&body).unwrap();
        let messages: Vec<_> = frame.messages().collect();
        assert_eq!(
            messages,
            [
                PerfAttrsMessage::MetricEventKey {
                    metric_key: 0x20,
                    event_code: 0x11,
                    event_key: 0x7fff_fffe,
                    role: MetricEventRole::CycleCounter,
                },
                PerfAttrsMessage::MetricEventKey {
                    metric_key: 0x20,
                    event_code: 0x08,
                    event_key: 0x7fff_fffd,
                    role: MetricEventRole::Event,
                },
                PerfAttrsMessage::MetricEventKey {
                    metric_key: 0x20,
                    event_code: 0x79,
                    event_key: 0x7fff_fffc,
                    role: MetricEventRole::ReturnCounter,
                },
                PerfAttrsMessage::OnlineCpu {
                    timestamp: 0,
                    cpu: 1
                },
            ]
        );
        round_trip(&messages);
        assert_eq!(MetricEventRole::from_wire(7), MetricEventRole::Unknown(7));
        assert_eq!(MetricEventRole::Unknown(7).to_wire(), 7);
    }

    #[test]
    fn a_truncated_metric_event_key_is_an_error_naming_the_field() {
        // The event key's varint ends in the middle.
        let err = PerfAttrs::parse(&[0x00, 0x0d, 0x20, 0x11, 0xfe, 0xff]).unwrap_err();
        assert!(err.to_string().contains("metric event key"), "{err}");
        let err = PerfAttrs::parse(&[0x00, 0x0d, 0x20, 0x11, 0x05]).unwrap_err();
        assert!(err.to_string().contains("metric event type"), "{err}");
    }

    #[test]
    fn observed_empty_frame_has_no_messages() {
        // `0b 00` is sent twice in the gatord 9.7.2 capture.
        let frame = PerfAttrs::parse(&[0x00]).unwrap();
        assert_eq!(frame.count, 0);
        assert_eq!(frame.messages().count(), 0);
    }

    #[test]
    fn messages_round_trip() {
        let attr = {
            let mut attr = vec![0u8; 16];
            attr[PEA_SIZE_OFFSET] = 16;
            attr
        };
        round_trip(&[
            PerfAttrsMessage::Format(b"name: sched_switch"),
            PerfAttrsMessage::Kallsyms(b"ffff t _text\n"),
            PerfAttrsMessage::HeaderPage(b"field: u64 timestamp"),
            PerfAttrsMessage::HeaderEvent(b"type_len : 5 bits"),
            PerfAttrsMessage::Maps {
                pid: 1,
                tid: 1,
                text: b"00400000",
            },
            PerfAttrsMessage::Comm {
                pid: 7,
                tid: 8,
                image: b"/bin/sleep",
                comm: b"sleep",
            },
            PerfAttrsMessage::KernelBuildId(&[0xab; 20]),
            PerfAttrsMessage::OfflineCpu {
                timestamp: 5,
                cpu: 3,
            },
            PerfAttrsMessage::Pea {
                attr: &attr,
                key: 0x10,
            },
            PerfAttrsMessage::Pea {
                attr: &attr,
                key: 0x7fff_fffd,
            },
            PerfAttrsMessage::Other {
                code: 15,
                body: &[1, 2],
            },
        ]);
        round_trip(&[]);
    }

    #[test]
    fn pea_size_errors() {
        // A size larger than the frame is truncated.
        let body = [0x00, 0x01, 1, 0, 0, 0, 0x90, 0, 0, 0, 0];
        assert!(matches!(
            PerfAttrs::parse(&body),
            Err(FrameError::Truncated {
                field: "perf_event_attr",
                needed: 0x90,
                ..
            })
        ));
        // Too short to even hold the size field.
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x01, 1, 0]),
            Err(FrameError::Truncated {
                field: "perf_event_attr.size",
                ..
            })
        ));
    }

    #[test]
    fn keys_and_counters_round_trip() {
        let mut out = Vec::new();
        PerfAttrs::encode_header(0, &mut out);
        encode_keys_message(&[(1001, 4), (1002, 6), (-1, 8)], &mut out);
        let values = [
            CounterValue {
                core: 0,
                key: 4,
                value: 10,
            },
            CounterValue {
                core: 1,
                key: 6,
                value: -2,
            },
        ];
        encode_counters_message(77, &values, &mut out);
        let frame = PerfAttrs::parse(&out[1..]).unwrap();
        let messages: Vec<_> = frame.messages().collect();
        let PerfAttrsMessage::Keys(map) = messages[0] else {
            panic!("not keys")
        };
        assert_eq!(map.count, 3);
        assert_eq!(
            map.iter().collect::<Vec<_>>(),
            [(1001, 4), (1002, 6), (-1, 8)]
        );
        let PerfAttrsMessage::Counters(read) = messages[1] else {
            panic!("not counters")
        };
        assert_eq!(read.timestamp, 77);
        assert_eq!(read.iter().collect::<Vec<_>>(), values);
        round_trip(&messages);
    }

    #[test]
    fn malformed_bodies_are_errors() {
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x02, 0x7f]),
            Err(FrameError::NegativeLength { .. })
        ));
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x02, 0x02, 0x01, 0x04]),
            Err(FrameError::Int { .. })
        ));
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x0a, 0x05, 0x00]),
            Err(FrameError::Int { .. })
        ));
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x03, b'x']),
            Err(FrameError::MissingTerminator { .. })
        ));
        // A second message that breaks off.
        assert!(matches!(
            PerfAttrs::parse(&[0x00, 0x03, b'x', 0, 0x07]),
            Err(FrameError::Int { .. })
        ));
        assert!(matches!(
            PerfAttrs::parse(&[]),
            Err(FrameError::Int { field: "core", .. })
        ));
    }
}
