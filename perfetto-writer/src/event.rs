//! Track event packets (instants, slice begins and ends, counter values) encoded field by field from
//! borrowed data into the writer's one buffer: no message is built and nothing is allocated per event.
//! A packet is written from its last field to its first, so that each message's length is known when it
//! goes in front of the message: one pass over the event.
//!
//! The bytes are those `prost` gives for the same `TracePacket` in a one-packet `Trace`:
//! fields in the order of their numbers, every length the shortest varint. A property test holds the two
//! encodings to each other.

use crate::ids::ArgId;
#[cfg(test)]
use crate::proto;
use crate::value::{Arg, CounterValue};

/// An event's name as the encoder writes it.
#[derive(Debug, Clone, Copy)]
pub(super) enum EventName<'a> {
    /// `TrackEvent.name_iid`.
    Interned(u64),
    /// `TrackEvent.name`.
    Text(&'a str),
}

/// One track event, borrowed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Event<'a, 'b> {
    /// `TracePacket.timestamp`.
    pub timestamp: u64,
    /// `TrackEvent.type`.
    pub kind: i32,
    /// `TrackEvent.track_uuid`.
    pub track: u64,
    /// `TrackEvent.category_iids`: one or none.
    pub category: Option<u64>,
    /// The name, if any.
    pub name: Option<EventName<'a>>,
    /// `counter_value` or `double_counter_value`.
    pub value: Option<CounterValue>,
    /// `TrackEvent.debug_annotations`: interned name ids and values.
    pub args: &'b [(ArgId, Arg<'a>)],
}

// Keys: field number << 3 | wire type (0 varint, 1 fixed64, 2 length-delimited).
const TRACE_PACKET: u8 = 1 << 3 | 2;
const PACKET_TIMESTAMP: u8 = 8 << 3;
const PACKET_SEQUENCE_ID: u8 = 10 << 3;
const PACKET_TRACK_EVENT: u8 = 11 << 3 | 2;
const PACKET_INTERNED_DATA: u8 = 12 << 3 | 2;
const PACKET_SEQUENCE_FLAGS: u8 = 13 << 3;
const EVENT_CATEGORY_IID: u8 = 3 << 3;
const EVENT_ANNOTATION: u8 = 4 << 3 | 2;
const EVENT_TYPE: u8 = 9 << 3;
const EVENT_NAME_IID: u8 = 10 << 3;
const EVENT_TRACK_UUID: u8 = 11 << 3;
const EVENT_NAME: [u8; 2] = two_byte_key(23, 2);
const EVENT_COUNTER_VALUE: [u8; 2] = two_byte_key(30, 0);
const EVENT_DOUBLE_COUNTER_VALUE: [u8; 2] = two_byte_key(44, 1);
const ANNOTATION_NAME_IID: u8 = 1 << 3;
const ANNOTATION_UINT: u8 = 3 << 3;
const ANNOTATION_INT: u8 = 4 << 3;
const ANNOTATION_DOUBLE: u8 = 5 << 3 | 1;
const ANNOTATION_STRING: u8 = 6 << 3 | 2;
const INTERNED_IID: u8 = 1 << 3;
const INTERNED_NAME: u8 = 2 << 3 | 2;

/// The key of field `field` (16 to 2047) with wire type `wire`: a varint of two bytes.
const fn two_byte_key(field: u32, wire: u32) -> [u8; 2] {
    let key = field << 3 | wire;
    assert!(key >= 0x80 && key < 0x4000);
    [(key & 0x7f) as u8 | 0x80, (key >> 7) as u8]
}

/// The bytes of `v` as a varint.
#[inline]
pub(super) fn varint_len(v: u64) -> usize {
    // (significant bits + 6) / 7, with a multiply for the division: 9/64 is close enough to 1/7 here.
    ((((v | 1).leading_zeros() ^ 63) * 9 + 73) / 64) as usize
}

/// Appends `v` as a varint.
#[inline]
pub(super) fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// Writes a packet from its end towards its start, so that a message's length is known when its key and
/// length go in front of it: one pass, no length computed beforehand.
struct Backwards<'b> {
    out: &'b mut [u8],
    /// Where the bytes written so far start.
    at: usize,
}

impl Backwards<'_> {
    #[inline(always)]
    fn byte(&mut self, b: u8) {
        self.at -= 1;
        self.out[self.at] = b;
    }

    #[inline(always)]
    fn bytes(&mut self, bytes: &[u8]) {
        self.at -= bytes.len();
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
    }

    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        if v < 0x80 {
            return self.byte(v as u8);
        }
        self.at -= varint_len(v);
        let mut i = self.at;
        while v >= 0x80 {
            self.out[i] = v as u8 | 0x80;
            v >>= 7;
            i += 1;
        }
        self.out[i] = v as u8;
    }

    /// The key and length of the message written since `end`, in front of it.
    #[inline(always)]
    fn delimit(&mut self, key: u8, end: usize) {
        self.varint((end - self.at) as u64);
        self.byte(key);
    }
}

/// A length-delimited field's bytes after its key: the length, then the contents.
#[inline]
fn delimited_len(len: usize) -> usize {
    varint_len(len as u64) + len
}

/// Appends an `InternedData` entry (`EventCategory`, `EventName`, `DebugAnnotationName`: iid 1, name 2) as
/// field `field` of the `InternedData` being built in `buf`.
pub(super) fn put_interned(buf: &mut Vec<u8>, field: u8, iid: u64, name: &str) {
    let len = 1 + varint_len(iid) + 1 + delimited_len(name.len());
    buf.push(field << 3 | 2);
    put_varint(buf, len as u64);
    buf.push(INTERNED_IID);
    put_varint(buf, iid);
    buf.push(INTERNED_NAME);
    put_varint(buf, name.len() as u64);
    buf.extend_from_slice(name.as_bytes());
}

/// The most bytes `event` takes as a packet with `interned` and flags: every varint counted at its longest.
#[inline]
fn bound(event: &Event<'_, '_>, interned: &[u8]) -> usize {
    let mut bound = 128 + interned.len() + event.args.len() * 33;
    if let Some(EventName::Text(text)) = event.name {
        bound += text.len();
    }
    for (_, arg) in event.args {
        if let Arg::Str(text) = arg {
            bound += text.len();
        }
    }
    bound
}

/// Writes `event` as one `Trace.packet` on sequence `sequence`, with `interned` (the contents of an
/// `InternedData`, empty for none) and `flags` (`sequence_flags`, 0 for none), at the end of `buf` (grown
/// as needed, never shrunk): the packet is `buf[returned..]`.
pub(super) fn encode(
    buf: &mut Vec<u8>,
    event: &Event<'_, '_>,
    sequence: u32,
    interned: &[u8],
    flags: u32,
) -> usize {
    let bound = bound(event, interned);
    if buf.len() < bound {
        buf.resize(bound, 0);
    }
    let end = buf.len();
    let mut w = Backwards { out: buf, at: end };
    // Fields in the reverse of their numbers' order.
    if flags != 0 {
        w.varint(flags.into());
        w.byte(PACKET_SEQUENCE_FLAGS);
    }
    if !interned.is_empty() {
        w.bytes(interned);
        w.varint(interned.len() as u64);
        w.byte(PACKET_INTERNED_DATA);
    }
    let event_end = w.at;
    match event.value {
        None => {}
        Some(CounterValue::Int(v)) => {
            w.varint(v as u64);
            w.bytes(&EVENT_COUNTER_VALUE);
        }
        Some(CounterValue::Float(v)) => {
            w.bytes(&v.to_le_bytes());
            w.bytes(&EVENT_DOUBLE_COUNTER_VALUE);
        }
    }
    if let Some(EventName::Text(text)) = event.name {
        w.bytes(text.as_bytes());
        w.varint(text.len() as u64);
        w.bytes(&EVENT_NAME);
    }
    w.varint(event.track);
    w.byte(EVENT_TRACK_UUID);
    if let Some(EventName::Interned(id)) = event.name {
        w.varint(id);
        w.byte(EVENT_NAME_IID);
    }
    w.varint(event.kind as u64);
    w.byte(EVENT_TYPE);
    for (name, arg) in event.args.iter().rev() {
        let annotation_end = w.at;
        match *arg {
            Arg::Uint(v) => {
                w.varint(v);
                w.byte(ANNOTATION_UINT);
            }
            Arg::Int(v) => {
                w.varint(v as u64);
                w.byte(ANNOTATION_INT);
            }
            Arg::Float(v) => {
                w.bytes(&v.to_le_bytes());
                w.byte(ANNOTATION_DOUBLE);
            }
            Arg::Str(text) => {
                w.bytes(text.as_bytes());
                w.varint(text.len() as u64);
                w.byte(ANNOTATION_STRING);
            }
        }
        w.varint(name.0);
        w.byte(ANNOTATION_NAME_IID);
        w.delimit(EVENT_ANNOTATION, annotation_end);
    }
    if let Some(category) = event.category {
        w.varint(category);
        w.byte(EVENT_CATEGORY_IID);
    }
    w.delimit(PACKET_TRACK_EVENT, event_end);
    w.varint(sequence.into());
    w.byte(PACKET_SEQUENCE_ID);
    w.varint(event.timestamp);
    w.byte(PACKET_TIMESTAMP);
    w.delimit(TRACE_PACKET, end);
    w.at
}

/// `event` as `prost`'s message, as [`encode`] writes it.
#[cfg(test)]
pub(super) fn message(
    event: &Event<'_, '_>,
    sequence: u32,
    interned: Option<proto::InternedData>,
    flags: u32,
) -> proto::TracePacket {
    let (name_iid, name) = match event.name {
        None => (None, None),
        Some(EventName::Interned(id)) => (Some(id), None),
        Some(EventName::Text(text)) => (None, Some(text.to_owned())),
    };
    let (counter_value, double_counter_value) = match event.value {
        None => (None, None),
        Some(CounterValue::Int(v)) => (Some(v), None),
        Some(CounterValue::Float(v)) => (None, Some(v)),
    };
    let debug_annotations = event
        .args
        .iter()
        .map(|&(name, arg)| {
            let mut annotation = proto::DebugAnnotation {
                name_iid: Some(name.0),
                ..proto::DebugAnnotation::default()
            };
            match arg {
                Arg::Str(text) => annotation.string_value = Some(text.to_owned()),
                Arg::Uint(v) => annotation.uint_value = Some(v),
                Arg::Int(v) => annotation.int_value = Some(v),
                Arg::Float(v) => annotation.double_value = Some(v),
            }
            annotation
        })
        .collect();
    proto::TracePacket {
        timestamp: Some(event.timestamp),
        trusted_packet_sequence_id: Some(sequence),
        sequence_flags: (flags != 0).then_some(flags),
        interned_data: interned,
        track_event: Some(proto::TrackEvent {
            r#type: Some(event.kind),
            track_uuid: Some(event.track),
            category_iids: event.category.into_iter().collect(),
            name_iid,
            name,
            counter_value,
            double_counter_value,
            debug_annotations,
            ..proto::TrackEvent::default()
        }),
        ..proto::TracePacket::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message;

    fn arg() -> impl Strategy<Value = (u64, ArgValue)> {
        (
            any::<u64>(),
            prop_oneof![
                any::<u64>().prop_map(ArgValue::Uint),
                any::<i64>().prop_map(ArgValue::Int),
                any::<f64>()
                    .prop_filter("NaN is not equal to itself", |v| !v.is_nan())
                    .prop_map(ArgValue::Float),
                // Lengths on both sides of one- and two-byte varints.
                proptest::string::string_regex(".{0,200}")
                    .unwrap()
                    .prop_map(ArgValue::Str),
            ],
        )
    }

    /// An owned [`Arg`], for the strategies.
    #[derive(Debug, Clone)]
    enum ArgValue {
        Str(String),
        Uint(u64),
        Int(i64),
        Float(f64),
    }

    impl ArgValue {
        fn arg(&self) -> Arg<'_> {
            match self {
                ArgValue::Str(s) => Arg::Str(s),
                ArgValue::Uint(v) => Arg::Uint(*v),
                ArgValue::Int(v) => Arg::Int(*v),
                ArgValue::Float(v) => Arg::Float(*v),
            }
        }
    }

    #[test]
    fn varint_lengths_are_prosts() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1] {
                assert_eq!(varint_len(v), prost::encoding::encoded_len_varint(v), "{v}");
            }
        }
        assert_eq!(varint_len(u64::MAX), 10);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Every event encodes to the bytes prost gives for the same packet, and decodes back to it.
        #[test]
        fn hand_encoded_events_are_prosts_bytes(
            timestamp in any::<u64>(),
            kind in prop_oneof![Just(proto::TYPE_SLICE_BEGIN), Just(proto::TYPE_SLICE_END),
                Just(proto::TYPE_INSTANT), Just(proto::TYPE_COUNTER)],
            track in any::<u64>(),
            category in proptest::option::of(any::<u64>()),
            name in proptest::option::of(prop_oneof![
                any::<u64>().prop_map(|id| (Some(id), String::new())),
                proptest::string::string_regex(".{0,300}").unwrap().prop_map(|t| (None, t)),
            ]),
            value in proptest::option::of(prop_oneof![
                any::<i64>().prop_map(CounterValue::Int),
                any::<f64>().prop_filter("NaN", |v| !v.is_nan()).prop_map(CounterValue::Float),
            ]),
            args in proptest::collection::vec(arg(), 0..20),
            interned_names in proptest::collection::vec(
                (any::<u64>(), proptest::string::string_regex(".{0,150}").unwrap()), 0..3),
            flags in prop_oneof![Just(0u32), Just(proto::SEQ_NEEDS_INCREMENTAL_STATE), any::<u32>()],
            sequence in any::<u32>(),
        ) {
            let args: Vec<(ArgId, Arg<'_>)> = args.iter().map(|(n, a)| (ArgId(*n), a.arg())).collect();
            let event = Event {
                timestamp,
                kind,
                track,
                category,
                name: name.as_ref().map(|(id, text)| match id {
                    Some(id) => EventName::Interned(*id),
                    None => EventName::Text(text),
                }),
                value,
                args: &args,
            };
            let mut interned = Vec::new();
            for (iid, name) in &interned_names {
                put_interned(&mut interned, 2, *iid, name);
            }
            let interned_message = (!interned.is_empty()).then(|| proto::InternedData {
                event_names: interned_names
                    .iter()
                    .map(|(iid, name)| proto::EventName { iid: Some(*iid), name: Some(name.clone()) })
                    .collect(),
                ..proto::InternedData::default()
            });
            let mut buf = vec![0xff; 3];
            let start = encode(&mut buf, &event, sequence, &interned, flags);
            let ours = buf[start..].to_vec();
            let expected = message(&event, sequence, interned_message, flags);
            let prosts = proto::Trace { packet: vec![expected.clone()] }.encode_to_vec();
            prop_assert_eq!(&ours, &prosts);
            let decoded = proto::Trace::decode(ours.as_slice()).unwrap();
            prop_assert_eq!(decoded.packet, vec![expected]);
        }
    }
}
