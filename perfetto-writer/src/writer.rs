//! [`TraceWriter`]: tracks, counter values, GPU counters, instants and slices, one packet at a time.

use std::io::{self, Write};

use prost::Message;

use crate::event::{encode, Event, EventName};
use crate::ids::{ArgId, CategoryId, Name, NameId, TrackId};
use crate::interned::{Interned, ARG_NAMES, CATEGORIES, NAMES};
use crate::proto::{
    self, ClockSnapshot, CounterDescriptor, GpuCounter, GpuCounterDescriptor, GpuCounterEvent,
    GpuCounterSpecMessage, ProcessDescriptor, Trace, TracePacket, TrackDescriptor,
};
use crate::track::{Clock, CounterTrack, GpuCounterSpec, GpuUnit, Unit};
use crate::value::{Arg, CounterValue};

/// The sequence every packet of a [`TraceWriter`] is on.
const SEQUENCE: u32 = 1;

/// Writes a Perfetto trace to `W`, packet by packet (nothing is kept but the next track number and the
/// interned strings): give tracks first, then their values, in any time order.
///
/// Names, categories and argument names that many events share are interned once
/// ([`TraceWriter::intern_name`], [`TraceWriter::intern_category`], [`TraceWriter::intern_arg`]) and the
/// events carry their ids: each string is written once, in the `interned_data` of the first packet that
/// uses it, and every packet that uses one says so (`SEQ_NEEDS_INCREMENTAL_STATE`); the first packet of
/// the trace clears the sequence's state. Instants, slices and counter values are encoded straight from
/// the borrowed arguments into one reused buffer.
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
    clock: Clock,
    next_uuid: u64,
    first_packet: bool,
    gpu_described: bool,
    buf: Vec<u8>,
    /// The `InternedData` of the event being written.
    interned: Vec<u8>,
    names: Interned,
    categories: Interned,
    args: Interned,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace on `out`: its first packet clears the sequence's state and states the clock.
    pub fn new(out: W, clock: Clock) -> io::Result<Self> {
        let mut writer = TraceWriter {
            out,
            clock,
            next_uuid: 1,
            first_packet: true,
            gpu_described: false,
            buf: Vec::with_capacity(256),
            interned: Vec::new(),
            names: Interned::default(),
            categories: Interned::default(),
            args: Interned::default(),
        };
        let snapshot = ClockSnapshot {
            clocks: vec![proto::Clock {
                clock_id: Some(proto::BUILTIN_CLOCK_BOOTTIME as u32),
                timestamp: Some(clock.zero_ns()),
            }],
            primary_trace_clock: Some(proto::BUILTIN_CLOCK_BOOTTIME),
        };
        writer.packet(TracePacket {
            timestamp: Some(clock.zero_ns()),
            clock_snapshot: Some(snapshot),
            ..TracePacket::default()
        })?;
        Ok(writer)
    }

    /// A track that only groups others: `name` under `parent` (top level when `None`).
    pub fn group(&mut self, name: &str, parent: Option<TrackId>) -> io::Result<TrackId> {
        self.group_described(name, "", parent)
    }

    /// A grouping track with a description for people.
    pub fn group_described(
        &mut self,
        name: &str,
        description: &str,
        parent: Option<TrackId>,
    ) -> io::Result<TrackId> {
        let id = self.uuid();
        self.track(TrackDescriptor {
            uuid: Some(id.0),
            parent_uuid: parent.map(|p| p.0),
            name: Some(name.to_owned()),
            description: (!description.is_empty()).then(|| description.to_owned()),
            ..TrackDescriptor::default()
        })?;
        Ok(id)
    }

    /// The track of process `pid`, named `name`.
    pub fn process(&mut self, pid: i32, name: &str) -> io::Result<TrackId> {
        let id = self.uuid();
        self.track(TrackDescriptor {
            uuid: Some(id.0),
            process: Some(ProcessDescriptor {
                pid: Some(pid),
                process_name: (!name.is_empty()).then(|| name.to_owned()),
            }),
            ..TrackDescriptor::default()
        })?;
        Ok(id)
    }

    /// A counter track.
    pub fn counter_track(&mut self, track: &CounterTrack<'_>) -> io::Result<TrackId> {
        let id = self.uuid();
        let (unit, unit_name) = match &track.unit {
            Unit::TimeNs => (Some(proto::UNIT_TIME_NS), None),
            Unit::Bytes => (Some(proto::UNIT_SIZE_BYTES), None),
            Unit::Count => (Some(proto::UNIT_COUNT), None),
            Unit::Named(name) => (None, Some(name.clone())),
        };
        self.track(TrackDescriptor {
            uuid: Some(id.0),
            parent_uuid: track.parent.map(|p| p.0),
            name: Some(track.name.to_owned()),
            description: (!track.description.is_empty()).then(|| track.description.to_owned()),
            counter: Some(CounterDescriptor {
                categories: track.categories.iter().map(|c| (*c).to_owned()).collect(),
                unit,
                unit_name,
                unit_multiplier: (track.multiplier != 1).then_some(track.multiplier),
                is_incremental: track.incremental.then_some(true),
            }),
            ..TrackDescriptor::default()
        })?;
        Ok(id)
    }

    /// A value of counter track `track` at `t_ns` (nanoseconds after the clock's zero).
    pub fn counter(&mut self, track: TrackId, t_ns: u64, value: CounterValue) -> io::Result<()> {
        self.event(Event {
            timestamp: self.timestamp(t_ns),
            kind: proto::TYPE_COUNTER,
            track: track.0,
            category: None,
            name: None,
            value: Some(value),
            args: &[],
        })
    }

    /// An instant named `name` on `track` at `t_ns`, in `category` if any, with `args` shown beside it.
    pub fn instant(
        &mut self,
        track: TrackId,
        t_ns: u64,
        name: Name<'_>,
        category: Option<CategoryId>,
        args: &[(ArgId, Arg<'_>)],
    ) -> io::Result<()> {
        self.named_event(proto::TYPE_INSTANT, track, t_ns, name, category, args)
    }

    /// The start of a slice named `name` on `track` at `t_ns`; [`TraceWriter::slice_end`] ends it. Slices
    /// of one track nest: an end closes the slice begun last on the track.
    pub fn slice_begin(
        &mut self,
        track: TrackId,
        t_ns: u64,
        name: Name<'_>,
        category: Option<CategoryId>,
        args: &[(ArgId, Arg<'_>)],
    ) -> io::Result<()> {
        self.named_event(proto::TYPE_SLICE_BEGIN, track, t_ns, name, category, args)
    }

    /// The end, at `t_ns`, of the slice begun last on `track`.
    pub fn slice_end(&mut self, track: TrackId, t_ns: u64) -> io::Result<()> {
        self.event(Event {
            timestamp: self.timestamp(t_ns),
            kind: proto::TYPE_SLICE_END,
            track: track.0,
            category: None,
            name: None,
            value: None,
            args: &[],
        })
    }

    /// A whole slice from `begin_ns` to `end_ns`: [`TraceWriter::slice_begin`] then
    /// [`TraceWriter::slice_end`].
    pub fn slice(
        &mut self,
        track: TrackId,
        begin_ns: u64,
        end_ns: u64,
        name: Name<'_>,
        category: Option<CategoryId>,
        args: &[(ArgId, Arg<'_>)],
    ) -> io::Result<()> {
        self.slice_begin(track, begin_ns, name, category, args)?;
        self.slice_end(track, end_ns)
    }

    fn named_event(
        &mut self,
        kind: i32,
        track: TrackId,
        t_ns: u64,
        name: Name<'_>,
        category: Option<CategoryId>,
        args: &[(ArgId, Arg<'_>)],
    ) -> io::Result<()> {
        self.event(Event {
            timestamp: self.timestamp(t_ns),
            kind,
            track: track.0,
            category: category.map(|c| c.0),
            name: Some(match name {
                Name::Interned(id) => EventName::Interned(id.0),
                Name::Text(text) => EventName::Text(text),
            }),
            value: None,
            args,
        })
    }

    /// An event name as an id, the name written once in the trace (with the first event that uses it)
    /// however many events refer to it. The same name gives the same id.
    pub fn intern_name(&mut self, name: &str) -> NameId {
        NameId(self.names.intern(name))
    }

    /// A category as an id, as [`TraceWriter::intern_name`] does names.
    pub fn intern_category(&mut self, category: &str) -> CategoryId {
        CategoryId(self.categories.intern(category))
    }

    /// The name of an event's argument as an id, as [`TraceWriter::intern_name`] does names.
    pub fn intern_arg(&mut self, name: &str) -> ArgId {
        ArgId(self.args.intern(name))
    }

    /// One sample of GPU `gpu`'s counters at `t_ns`: `(id, value)` by the ids of `specs`. The first call
    /// of the trace also describes the counters (`specs`; later calls may pass an empty slice).
    pub fn gpu_values(
        &mut self,
        gpu: i32,
        t_ns: u64,
        specs: &[GpuCounterSpec<'_>],
        values: &[(u32, CounterValue)],
    ) -> io::Result<()> {
        let counter_descriptor = (!self.gpu_described).then(|| GpuCounterDescriptor {
            specs: specs
                .iter()
                .map(|spec| GpuCounterSpecMessage {
                    counter_id: Some(spec.id),
                    name: Some(spec.name.to_owned()),
                    description: (!spec.description.is_empty())
                        .then(|| spec.description.to_owned()),
                    numerator_units: match spec.unit {
                        GpuUnit::None => Vec::new(),
                        unit => vec![unit.number()],
                    },
                    denominator_units: Vec::new(),
                })
                .collect(),
        });
        self.gpu_described = true;
        let counters = values
            .iter()
            .map(|&(id, value)| match value {
                CounterValue::Int(v) => GpuCounter {
                    counter_id: Some(id),
                    int_value: Some(v),
                    double_value: None,
                },
                CounterValue::Float(v) => GpuCounter {
                    counter_id: Some(id),
                    int_value: None,
                    double_value: Some(v),
                },
            })
            .collect();
        let timestamp = self.timestamp(t_ns);
        self.packet(TracePacket {
            timestamp: Some(timestamp),
            gpu_counter_event: Some(GpuCounterEvent {
                counter_descriptor,
                counters,
                gpu_id: Some(gpu),
            }),
            ..TracePacket::default()
        })
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    fn uuid(&mut self) -> TrackId {
        let id = TrackId(self.next_uuid);
        self.next_uuid += 1;
        id
    }

    fn timestamp(&self, t_ns: u64) -> u64 {
        self.clock.zero_ns().saturating_add(t_ns)
    }

    fn track(&mut self, descriptor: TrackDescriptor) -> io::Result<()> {
        self.packet(TracePacket {
            track_descriptor: Some(descriptor),
            ..TracePacket::default()
        })
    }

    /// Writes `event`, with the interned strings it is the first to use.
    fn event(&mut self, event: Event<'_, '_>) -> io::Result<()> {
        debug_assert!(!self.first_packet, "the clock's packet is the first");
        self.interned.clear();
        let mut uses_interned = false;
        if let Some(id) = event.category {
            uses_interned = true;
            self.categories.send(CATEGORIES, id, &mut self.interned);
        }
        if let Some(EventName::Interned(id)) = event.name {
            uses_interned = true;
            self.names.send(NAMES, id, &mut self.interned);
        }
        for &(id, _) in event.args {
            uses_interned = true;
            self.args.send(ARG_NAMES, id.0, &mut self.interned);
        }
        let flags = if uses_interned {
            proto::SEQ_NEEDS_INCREMENTAL_STATE
        } else {
            0
        };
        let start = encode(&mut self.buf, &event, SEQUENCE, &self.interned, flags);
        self.out.write_all(&self.buf[start..])
    }

    /// Writes `packet` as the next `Trace.packet` field, on the writer's sequence.
    fn packet(&mut self, mut packet: TracePacket) -> io::Result<()> {
        packet.trusted_packet_sequence_id = Some(SEQUENCE);
        if self.first_packet {
            packet.sequence_flags = Some(proto::SEQ_INCREMENTAL_STATE_CLEARED);
            packet.first_packet_on_sequence = Some(true);
            self.first_packet = false;
        }
        self.buf.clear();
        // Trace { packet: [packet] } is the packet's field 1 and nothing else: one packet of the file.
        Trace {
            packet: vec![packet],
        }
        .encode(&mut self.buf)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        self.out.write_all(&self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packets of `bytes`, decoded with the writer's own subset of the schema.
    fn packets(bytes: &[u8]) -> Vec<TracePacket> {
        Trace::decode(bytes).expect("a trace").packet
    }

    #[test]
    fn the_first_packet_clears_the_sequence_and_states_the_clock() {
        let trace = TraceWriter::new(Vec::new(), Clock::Boottime { zero_ns: 5_000 }).unwrap();
        let packets = packets(&trace.finish().unwrap());
        assert_eq!(packets.len(), 1);
        let first = &packets[0];
        assert_eq!(
            first.sequence_flags,
            Some(proto::SEQ_INCREMENTAL_STATE_CLEARED)
        );
        assert_eq!(first.trusted_packet_sequence_id, Some(SEQUENCE));
        let snapshot = first.clock_snapshot.as_ref().unwrap();
        assert_eq!(snapshot.clocks[0].timestamp, Some(5_000));
        assert_eq!(
            snapshot.primary_trace_clock,
            Some(proto::BUILTIN_CLOCK_BOOTTIME)
        );
    }

    #[test]
    fn a_counter_track_keeps_its_unit_multiplier_and_values_on_the_clock() {
        let mut trace = TraceWriter::new(Vec::new(), Clock::Boottime { zero_ns: 1_000 }).unwrap();
        let group = trace.group("gatord", None).unwrap();
        let freq = trace
            .counter_track(&CounterTrack {
                unit: Unit::Named("Hz".into()),
                multiplier: 1_000_000,
                ..CounterTrack::new("freq", Some(group))
            })
            .unwrap();
        trace.counter(freq, 10, CounterValue::Int(1_800)).unwrap();
        trace.counter(freq, 20, CounterValue::Float(0.5)).unwrap();
        let packets = packets(&trace.finish().unwrap());
        let track = packets[2].track_descriptor.as_ref().unwrap();
        assert_eq!(
            track.parent_uuid,
            packets[1].track_descriptor.as_ref().unwrap().uuid
        );
        let counter = track.counter.as_ref().unwrap();
        assert_eq!(counter.unit_name.as_deref(), Some("Hz"));
        assert_eq!(counter.unit_multiplier, Some(1_000_000));
        assert_eq!(counter.is_incremental, None);
        assert_eq!(packets[3].timestamp, Some(1_010));
        let event = packets[3].track_event.as_ref().unwrap();
        assert_eq!(event.track_uuid, track.uuid);
        assert_eq!(event.counter_value, Some(1_800));
        let event = packets[4].track_event.as_ref().unwrap();
        assert_eq!(event.double_counter_value, Some(0.5));
        assert!(packets[1..].iter().all(|p| p.sequence_flags.is_none()));
    }

    #[test]
    fn only_the_first_gpu_event_describes_the_counters() {
        let mut trace = TraceWriter::new(Vec::new(), Clock::CaptureStart).unwrap();
        let specs = [GpuCounterSpec {
            id: 7,
            name: "GpuCycles",
            description: "GPU active cycles",
            unit: GpuUnit::None,
        }];
        trace
            .gpu_values(0, 100, &specs, &[(7, CounterValue::Int(42))])
            .unwrap();
        trace
            .gpu_values(0, 200, &specs, &[(7, CounterValue::Int(43))])
            .unwrap();
        let packets = packets(&trace.finish().unwrap());
        let first = packets[1].gpu_counter_event.as_ref().unwrap();
        let spec = &first.counter_descriptor.as_ref().unwrap().specs[0];
        assert_eq!(
            (spec.counter_id, spec.name.as_deref()),
            (Some(7), Some("GpuCycles"))
        );
        assert!(packets[2]
            .gpu_counter_event
            .as_ref()
            .unwrap()
            .counter_descriptor
            .is_none());
        assert_eq!(
            packets[2].gpu_counter_event.as_ref().unwrap().counters[0].int_value,
            Some(43)
        );
        assert_eq!(packets[2].timestamp, Some(200));
    }

    #[test]
    fn a_slice_is_a_named_begin_and_an_end_on_its_track() {
        let mut trace = TraceWriter::new(Vec::new(), Clock::CaptureStart).unwrap();
        let group = trace.group("DSP3", None).unwrap();
        let track = trace.group("frame", Some(group)).unwrap();
        let frame = trace.intern_name("frame");
        let span = trace.intern_category("span");
        let master = trace.intern_arg("master");
        trace
            .slice(
                track,
                100,
                250,
                frame.into(),
                Some(span),
                &[(master, Arg::Uint(3))],
            )
            .unwrap();
        trace
            .slice_begin(track, 300, Name::Text("open"), None, &[])
            .unwrap();
        trace.slice_end(track, 310).unwrap();
        let packets = packets(&trace.finish().unwrap());
        let nested = packets[2].track_descriptor.as_ref().unwrap();
        assert_eq!(
            nested.parent_uuid,
            packets[1].track_descriptor.as_ref().unwrap().uuid
        );
        let begin = packets[3].track_event.as_ref().unwrap();
        assert_eq!(begin.r#type, Some(proto::TYPE_SLICE_BEGIN));
        let interned = packets[3].interned_data.as_ref().unwrap();
        assert_eq!(begin.name_iid, interned.event_names[0].iid);
        assert_eq!(interned.event_names[0].name.as_deref(), Some("frame"));
        assert_eq!(
            begin.category_iids,
            [interned.event_categories[0].iid.unwrap()]
        );
        assert_eq!(interned.event_categories[0].name.as_deref(), Some("span"));
        assert_eq!(
            begin.debug_annotations[0].name_iid,
            interned.debug_annotation_names[0].iid
        );
        assert_eq!(
            interned.debug_annotation_names[0].name.as_deref(),
            Some("master")
        );
        assert_eq!(begin.debug_annotations[0].uint_value, Some(3));
        assert_eq!(begin.track_uuid, nested.uuid);
        assert_eq!(
            packets[3].sequence_flags,
            Some(proto::SEQ_NEEDS_INCREMENTAL_STATE)
        );
        let end = packets[4].track_event.as_ref().unwrap();
        assert_eq!(
            (end.r#type, end.name.as_deref(), end.name_iid),
            (Some(proto::TYPE_SLICE_END), None, None)
        );
        assert_eq!(
            (packets[3].timestamp, packets[4].timestamp),
            (Some(100), Some(250))
        );
        let open = packets[5].track_event.as_ref().unwrap();
        assert_eq!(open.name.as_deref(), Some("open"));
        assert!(open.category_iids.is_empty());
        // Nothing interned is used: the packet needs no state.
        assert_eq!(packets[5].sequence_flags, None);
        assert_eq!(packets[6].timestamp, Some(310));
    }

    #[test]
    fn each_interned_string_is_written_once_with_the_first_event_that_uses_it() {
        let mut trace = TraceWriter::new(Vec::new(), Clock::CaptureStart).unwrap();
        let track = trace.group("t", None).unwrap();
        let a = trace.intern_arg("a");
        let b = trace.intern_arg("b");
        assert_eq!(trace.intern_arg("a"), a);
        let name = trace.intern_name("n");
        let category = trace.intern_category("c");
        trace
            .instant(track, 1, "text".into(), None, &[(a, Arg::Int(-1))])
            .unwrap();
        trace
            .instant(
                track,
                2,
                name.into(),
                Some(category),
                &[(a, Arg::Float(0.5)), (b, Arg::Str("x")), (b, Arg::Uint(2))],
            )
            .unwrap();
        trace
            .instant(track, 3, name.into(), Some(category), &[(b, Arg::Uint(3))])
            .unwrap();
        let packets = packets(&trace.finish().unwrap());
        let first = packets[2].interned_data.as_ref().unwrap();
        assert_eq!(first.debug_annotation_names.len(), 1);
        assert!(first.event_names.is_empty() && first.event_categories.is_empty());
        let second = packets[3].interned_data.as_ref().unwrap();
        let names: Vec<_> = second
            .debug_annotation_names
            .iter()
            .map(|n| n.name.as_deref().unwrap())
            .collect();
        assert_eq!(names, ["b"]);
        assert_eq!(second.event_names.len(), 1);
        assert_eq!(second.event_categories.len(), 1);
        assert!(packets[4].interned_data.is_none());
        assert!(packets[2..]
            .iter()
            .all(|p| p.sequence_flags == Some(proto::SEQ_NEEDS_INCREMENTAL_STATE)));
        let event = packets[3].track_event.as_ref().unwrap();
        assert_eq!(event.debug_annotations[0].double_value, Some(0.5));
        assert_eq!(
            event.debug_annotations[1].string_value.as_deref(),
            Some("x")
        );
        assert_eq!(
            packets[2].track_event.as_ref().unwrap().debug_annotations[0].int_value,
            Some(-1)
        );
    }

    #[test]
    fn memory_stays_one_packet_whatever_the_length() {
        // The writer keeps one packet's bytes: after a million values its buffer is as large as after one.
        let mut trace = TraceWriter::new(io::sink(), Clock::CaptureStart).unwrap();
        let track = trace.counter_track(&CounterTrack::new("c", None)).unwrap();
        trace.counter(track, 0, CounterValue::Int(1)).unwrap();
        let after_one = trace.buf.capacity();
        for t in 0..1_000_000 {
            trace
                .counter(track, t, CounterValue::Int(t as i64))
                .unwrap();
        }
        assert_eq!(trace.buf.capacity(), after_one);
    }
}
