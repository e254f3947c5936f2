//! The messages of Perfetto's trace schema that [`TraceWriter`](crate::TraceWriter) writes, with the schema's
//! field numbers (`protos/perfetto/trace/trace_packet.proto`, `track_event/track_descriptor.proto`,
//! `track_event/counter_descriptor.proto`, `track_event/track_event.proto`,
//! `track_event/debug_annotation.proto`, `gpu/gpu_counter_event.proto`,
//! `common/gpu_counter_descriptor.proto`, `clock_snapshot.proto`, `interned_data/interned_data.proto`). Only
//! the fields written are declared: a reader of the full schema reads them as its own. `TracePacket`'s data
//! fields are one `oneof` in the schema; here they are separate optional fields, which encode the same way
//! when one is set. `prost` writes a message's fields in the order of their numbers, as the writer's own
//! encoder of events does: both give the same bytes.

/// `perfetto.protos.Trace`: the file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Trace {
    /// The packets.
    #[prost(message, repeated, tag = "1")]
    pub packet: Vec<TracePacket>,
}

/// `perfetto.protos.TracePacket`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    /// Time of the packet, in the clock of `timestamp_clock_id` (the trace's clock when unset).
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    /// The writer's sequence.
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    /// `SequenceFlags`.
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    /// Set on the first packet of the sequence.
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
    /// Clock readings taken at one instant.
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    /// Strings defined for this and later packets of the sequence, referred to by their ids.
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    /// A slice, instant or counter value on a track.
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    /// A GPU counter sample (and, on the first, the counters' descriptor).
    #[prost(message, optional, tag = "52")]
    pub gpu_counter_event: Option<GpuCounterEvent>,
    /// A track.
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
}

/// `TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED`: interned strings before this packet are
/// forgotten.
pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// `TracePacket.SequenceFlags.SEQ_NEEDS_INCREMENTAL_STATE`: the packet refers to interned strings.
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

/// `perfetto.protos.InternedData`: strings given ids on the packet's sequence.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    /// Event categories (`TrackEvent.category_iids`).
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<EventCategory>,
    /// Event names (`TrackEvent.name_iid`).
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<EventName>,
    /// Debug annotation names (`DebugAnnotation.name_iid`).
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<DebugAnnotationName>,
}

/// `perfetto.protos.EventCategory`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventCategory {
    /// The id.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The category.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `perfetto.protos.EventName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventName {
    /// The id.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `perfetto.protos.DebugAnnotationName`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotationName {
    /// The id.
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    /// The name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
}

/// `perfetto.protos.ClockSnapshot`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    /// The clocks read.
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    /// `BuiltinClock` of the trace's timestamps.
    #[prost(int32, optional, tag = "2")]
    pub primary_trace_clock: Option<i32>,
}

/// `perfetto.protos.ClockSnapshot.Clock`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    /// `BuiltinClock` or a sequence-scoped id (64–127).
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    /// The clock's reading.
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
}

/// `BuiltinClock.BUILTIN_CLOCK_BOOTTIME`: Perfetto's default trace clock.
pub const BUILTIN_CLOCK_BOOTTIME: i32 = 6;

/// `perfetto.protos.TrackDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    /// The track's id, unique in the trace.
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    /// The track this one nests under.
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    /// The track's name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// What the track shows, for people.
    #[prost(string, optional, tag = "14")]
    pub description: Option<String>,
    /// The process the track belongs to.
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    /// Present on a counter track.
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

/// `perfetto.protos.ProcessDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    /// The process id.
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    /// The process's name.
    #[prost(string, optional, tag = "6")]
    pub process_name: Option<String>,
}

/// `perfetto.protos.CounterDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    /// Categories of the counter.
    #[prost(string, repeated, tag = "2")]
    pub categories: Vec<String>,
    /// `CounterDescriptor.Unit`.
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    /// The unit's name, when no `unit` says it.
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
    /// What every value is multiplied by to be in the unit.
    #[prost(int64, optional, tag = "4")]
    pub unit_multiplier: Option<i64>,
    /// Values are changes since the previous value; readers show the running total.
    #[prost(bool, optional, tag = "5")]
    pub is_incremental: Option<bool>,
}

/// `CounterDescriptor.Unit.UNIT_TIME_NS`.
pub const UNIT_TIME_NS: i32 = 1;
/// `CounterDescriptor.Unit.UNIT_COUNT`.
pub const UNIT_COUNT: i32 = 2;
/// `CounterDescriptor.Unit.UNIT_SIZE_BYTES`.
pub const UNIT_SIZE_BYTES: i32 = 3;

/// `perfetto.protos.TrackEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    /// `TrackEvent.Type`.
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    /// The track the event is on.
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    /// The event's categories, by interned id.
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    /// The event's name, by interned id.
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    /// The event's name as text (slices and instants).
    #[prost(string, optional, tag = "23")]
    pub name: Option<String>,
    /// The event's categories as text.
    #[prost(string, repeated, tag = "22")]
    pub categories: Vec<String>,
    /// An integer counter value.
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    /// A floating-point counter value.
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    /// Named values shown with the event.
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
}

/// `TrackEvent.Type.TYPE_SLICE_BEGIN`.
pub const TYPE_SLICE_BEGIN: i32 = 1;
/// `TrackEvent.Type.TYPE_SLICE_END`.
pub const TYPE_SLICE_END: i32 = 2;
/// `TrackEvent.Type.TYPE_INSTANT`.
pub const TYPE_INSTANT: i32 = 3;
/// `TrackEvent.Type.TYPE_COUNTER`.
pub const TYPE_COUNTER: i32 = 4;

/// `perfetto.protos.DebugAnnotation`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    /// The value's name, by interned id.
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    /// The value's name as text.
    #[prost(string, optional, tag = "10")]
    pub name: Option<String>,
    /// An unsigned value.
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    /// A signed value.
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    /// A floating-point value.
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    /// A text value.
    #[prost(string, optional, tag = "6")]
    pub string_value: Option<String>,
}

/// `perfetto.protos.GpuCounterEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterEvent {
    /// The counters' descriptions: on the first event of the trace.
    #[prost(message, optional, tag = "1")]
    pub counter_descriptor: Option<GpuCounterDescriptor>,
    /// The values of this sample.
    #[prost(message, repeated, tag = "2")]
    pub counters: Vec<GpuCounter>,
    /// Which GPU.
    #[prost(int32, optional, tag = "3")]
    pub gpu_id: Option<i32>,
}

/// `perfetto.protos.GpuCounterEvent.GpuCounter`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounter {
    /// The counter, as its spec numbers it.
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    /// An integer value.
    #[prost(int64, optional, tag = "2")]
    pub int_value: Option<i64>,
    /// A floating-point value.
    #[prost(double, optional, tag = "3")]
    pub double_value: Option<f64>,
}

/// `perfetto.protos.GpuCounterDescriptor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterDescriptor {
    /// One per counter.
    #[prost(message, repeated, tag = "1")]
    pub specs: Vec<GpuCounterSpecMessage>,
}

/// `perfetto.protos.GpuCounterDescriptor.GpuCounterSpec`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterSpecMessage {
    /// The counter's number in the events.
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    /// The counter's name.
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    /// What it counts.
    #[prost(string, optional, tag = "3")]
    pub description: Option<String>,
    /// `GpuCounterDescriptor.MeasureUnit`s of the value's numerator.
    #[prost(int32, repeated, packed = "false", tag = "7")]
    pub numerator_units: Vec<i32>,
    /// `GpuCounterDescriptor.MeasureUnit`s of the value's denominator.
    #[prost(int32, repeated, packed = "false", tag = "8")]
    pub denominator_units: Vec<i32>,
}
