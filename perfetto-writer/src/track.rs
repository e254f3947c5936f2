//! What a trace's tracks are: its clock, a counter track's unit and description, a GPU counter's.

use crate::ids::TrackId;
#[cfg(doc)]
use crate::TraceWriter;

/// Where a [`TraceWriter`]'s timestamps are on the trace's clock (`CLOCK_BOOTTIME`, Perfetto's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Timestamps given to the writer are nanoseconds after `zero_ns` of the host's `CLOCK_BOOTTIME`: the
    /// trace lines up with other traces of the same machine.
    Boottime {
        /// `CLOCK_BOOTTIME` at the writer's time zero.
        zero_ns: u64,
    },
    /// Only the time since the capture's start is known: the trace's time zero is that start.
    CaptureStart,
}

impl Clock {
    pub(crate) fn zero_ns(self) -> u64 {
        match self {
            Clock::Boottime { zero_ns } => zero_ns,
            Clock::CaptureStart => 0,
        }
    }
}

/// The unit of a counter track's values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds (`UNIT_TIME_NS`).
    TimeNs,
    /// Bytes (`UNIT_SIZE_BYTES`).
    Bytes,
    /// A count of events (`UNIT_COUNT`).
    Count,
    /// Any other unit, by name (`unit_name`: `Hz`, `cycles`, `°C`, …).
    Named(String),
}

/// A counter track's description.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterTrack<'a> {
    /// The track's name.
    pub name: &'a str,
    /// The track it nests under (a group, a process, a CPU).
    pub parent: Option<TrackId>,
    /// What the counter counts, for people.
    pub description: &'a str,
    /// The values' unit.
    pub unit: Unit,
    /// What each written value is multiplied by to be in `unit` (1: written in the unit).
    pub multiplier: i64,
    /// Each value is the change since the previous one (a delta counter): readers show the running total.
    pub incremental: bool,
    /// Categories, e.g. the source.
    pub categories: &'a [&'a str],
}

impl<'a> CounterTrack<'a> {
    /// A track named `name` under `parent`, counting in [`Unit::Count`], values written as they are.
    pub fn new(name: &'a str, parent: Option<TrackId>) -> Self {
        CounterTrack {
            name,
            parent,
            description: "",
            unit: Unit::Count,
            multiplier: 1,
            incremental: false,
            categories: &[],
        }
    }
}

/// `GpuCounterDescriptor.MeasureUnit`: what a GPU counter's values are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GpuUnit {
    /// A plain count (`NONE`).
    None,
    /// Bytes (`BYTE`).
    Byte,
    /// Nanoseconds (`NANOSECOND`).
    Nanosecond,
    /// Hertz (`HERTZ`).
    Hertz,
    /// Percent (`PERCENT`).
    Percent,
    /// Vertices (`VERTEX`).
    Vertex,
    /// Pixels (`PIXEL`).
    Pixel,
    /// Primitives (`PRIMITIVE`).
    Primitive,
    /// Fragments (`FRAGMENT`).
    Fragment,
    /// Instructions (`INSTRUCTION`).
    Instruction,
}

impl GpuUnit {
    /// The schema's number of the unit.
    pub(crate) fn number(self) -> i32 {
        match self {
            GpuUnit::None => 0,
            GpuUnit::Byte => 7,
            GpuUnit::Hertz => 13,
            GpuUnit::Nanosecond => 19,
            GpuUnit::Vertex => 25,
            GpuUnit::Pixel => 26,
            GpuUnit::Percent => 37,
            GpuUnit::Primitive => 38,
            GpuUnit::Fragment => 39,
            GpuUnit::Instruction => 40,
        }
    }
}

/// One GPU counter of the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuCounterSpec<'a> {
    /// The counter's number in [`TraceWriter::gpu_values`].
    pub id: u32,
    /// Its name (Perfetto UI's track name).
    pub name: &'a str,
    /// What it counts.
    pub description: &'a str,
    /// The values' unit.
    pub unit: GpuUnit,
}
