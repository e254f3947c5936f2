//! The capture document written as a native Perfetto trace (`lizard capture --format perfetto`, a
//! `.pftrace`; feature `perfetto`), through [`perfetto_writer`]:
//!
//! - one top-level track, `lizard capture`, whose description says the run, the clock and what was lost
//!   (missed sampling periods, the cores note, the capture's warning); a counter without a value is an
//!   instant there, with the reason;
//! - a group per source (`gatord`, `cpu (process 42)`) holding a counter track per counter, with the
//!   counter's unit, its description and, for a delta counter, `is_incremental` (Perfetto shows the
//!   running total); an integer multiplier (a gatord counter's) is kept as the track's `unit_multiplier`
//!   when every value is a whole multiple of it;
//! - a counter's per-core parts, and a counter of one CPU (`TaskClock@cpu1`, `capture --per-cpu`), as tracks
//!   of the counter's name under `CPU n`;
//! - the Mali GPU's counters, read here or served by gatord (`ARM_Mali-…`), as Perfetto GPU counters
//!   (`GpuCounterDescriptor`, one `GpuCounterEvent` per sampling instant), so Perfetto UI shows them under
//!   the GPU;
//! - `lizard-trace` records as instants on their process's track.
//!
//! Timestamps are the host's `CLOCK_BOOTTIME` (the document's `boottime_zero_ns` added to its own), or the
//! capture's time base for a document without it.
//!
//! ```
//! use lizard_core::capture::Capture;
//! use lizard_render::perfetto;
//!
//! let capture = Capture::from_json(
//!     r#"{"window_ns": [0, 1000], "boottime_zero_ns": 5000000, "counters": [{"id": 1,
//!         "counter": "Sim_ccnt", "units": "cycles", "class": "delta", "value": 3,
//!         "samples": [[0, 1], [1000, 2]]}]}"#,
//! )?;
//! let mut trace = Vec::new();
//! perfetto::write(&capture, &mut trace)?;
//! assert_eq!(trace[0], 0x0a); // Trace.packet, length-delimited
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};

use lizard_core::capture::{Capture, CapturedCounter, SamplePoint, Source};
use perfetto_writer::{
    Arg, Clock, CounterTrack, CounterValue, GpuCounterSpec, GpuUnit, Name, TraceWriter, TrackId,
    Unit,
};
use serde_json::Number;

/// The GPU every Mali counter is on (one per machine).
const GPU_ID: i32 = 0;

/// Writes `capture` as a Perfetto trace to `out`, packet by packet.
pub fn write(capture: &Capture, out: impl Write) -> io::Result<()> {
    let clock = match capture.boottime_zero_ns {
        Some(zero_ns) => Clock::Boottime { zero_ns },
        None => Clock::CaptureStart,
    };
    let mut trace = TraceWriter::new(out, clock)?;
    let top = trace.group_described("lizard capture", &description(capture, clock), None)?;
    let start = capture.window_ns.map_or(0, |[first, _]| first);

    let mut groups: BTreeMap<String, TrackId> = BTreeMap::new();
    let mut cpus: BTreeMap<u32, TrackId> = BTreeMap::new();
    for c in capture.counters.iter().filter(|c| !is_mali(c)) {
        let label = c.info.source_label();
        let group = match groups.get(&label) {
            Some(&group) => group,
            None => {
                let group = trace.group(&label, Some(top))?;
                groups.insert(label.clone(), group);
                group
            }
        };
        let description = counter_description(c);
        // A counter of one CPU (`--per-cpu`: `TaskClock@cpu1`) is that CPU's track of the counter.
        let (name, own_core) = match &c.info.cpu_series {
            Some(series) => (series.counter.as_str(), Some(series.cpu)),
            None => (c.counter_name(), None),
        };
        for (core, samples) in c.series() {
            let parent = match core.or(own_core) {
                None => group,
                Some(core) => match cpus.get(&core) {
                    Some(&cpu) => cpu,
                    None => {
                        let cpu = trace.group(&format!("CPU {core}"), None)?;
                        cpus.insert(core, cpu);
                        cpu
                    }
                },
            };
            let multiplier = whole_multiplier(c.info.multiplier, samples);
            let track = trace.counter_track(&CounterTrack {
                name,
                parent: Some(parent),
                description: &description,
                unit: unit(&c.value_units().to_string()),
                multiplier,
                incremental: c.is_delta(),
                categories: &[c.info.source.as_str()],
            })?;
            for (t, value) in samples {
                if let Some(value) = value.as_ref().and_then(|v| counter_value(v, multiplier)) {
                    trace.counter(track, *t, value)?;
                }
            }
        }
        mark_without_value(&mut trace, c, top, start)?;
    }

    gpu_counters(&mut trace, capture, top, start)?;

    let mut processes: BTreeMap<u32, TrackId> = BTreeMap::new();
    let category = trace.intern_category("lizard-trace");
    let [file, line, seq, bytes] = ["file", "line", "seq", "bytes"].map(|a| trace.intern_arg(a));
    for r in &capture.trace_records {
        let process = match processes.get(&r.pid) {
            Some(&process) => process,
            None => {
                let pid = i32::try_from(r.pid).unwrap_or(i32::MAX);
                let process = trace.process(pid, "")?;
                processes.insert(r.pid, process);
                process
            }
        };
        // A module names many records: its name is written once.
        let module = trace.intern_name(&r.module);
        trace.instant(
            process,
            r.timestamp_ns,
            module.into(),
            Some(category),
            &[
                (file, Arg::Str(&r.file)),
                (line, Arg::Uint(u64::from(r.line))),
                (seq, Arg::Uint(r.seq)),
                (bytes, Arg::Uint(r.bytes)),
            ],
        )?;
    }
    trace.finish()?;
    Ok(())
}

/// The Mali counters as Perfetto GPU counters: their descriptor on the first event, then one event per
/// sampling instant with every counter sampled then.
fn gpu_counters<W: Write>(
    trace: &mut TraceWriter<W>,
    capture: &Capture,
    top: TrackId,
    start: u64,
) -> io::Result<()> {
    let gpu: Vec<&CapturedCounter> = capture.counters.iter().filter(|c| is_mali(c)).collect();
    if gpu.is_empty() {
        return Ok(());
    }
    let descriptions: Vec<String> = gpu.iter().map(|c| counter_description(c)).collect();
    let specs: Vec<GpuCounterSpec<'_>> = gpu
        .iter()
        .zip(&descriptions)
        .enumerate()
        .map(|(id, (c, description))| GpuCounterSpec {
            id: id as u32,
            name: c.counter_name(),
            description,
            unit: gpu_unit(&c.value_units().to_string()),
        })
        .collect();
    let mut instants: BTreeMap<u64, Vec<(u32, CounterValue)>> = BTreeMap::new();
    for (id, c) in gpu.iter().enumerate() {
        for (t, value) in &c.samples {
            if let Some(value) = value.as_ref().and_then(|v| counter_value(v, 1)) {
                instants.entry(*t).or_default().push((id as u32, value));
            }
        }
        mark_without_value(trace, c, top, start)?;
    }
    if instants.is_empty() {
        // The counters are still described, so that Perfetto lists them.
        return trace.gpu_values(GPU_ID, start, &specs, &[]);
    }
    for (t, values) in instants {
        trace.gpu_values(GPU_ID, t, &specs, &values)?;
    }
    Ok(())
}

/// A counter without a value, as an instant on the top track at the window's start with the reason.
fn mark_without_value<W: Write>(
    trace: &mut TraceWriter<W>,
    c: &CapturedCounter,
    top: TrackId,
    start: u64,
) -> io::Result<()> {
    if c.value.is_some() {
        return Ok(());
    }
    let reason = c.no_value.as_deref().unwrap_or("no value");
    let category = trace.intern_category("no value");
    let reason_arg = trace.intern_arg("reason");
    trace.instant(
        top,
        start,
        Name::Text(&format!("{}: no value", c.counter_name())),
        Some(category),
        &[(reason_arg, Arg::Str(reason))],
    )
}

/// Whether `c` is a Mali GPU counter: read from the driver here (`gpu`), or one of the Mali counters gatord
/// serves (`ARM_Mali-…`, its constants aside).
fn is_mali(c: &CapturedCounter) -> bool {
    match c.info.source {
        Source::Gpu => true,
        Source::Gatord => {
            c.counter_name().starts_with("ARM_Mali-") && !c.counter_name().contains("-CONST_")
        }
        _ => false,
    }
}

/// The top track's description: the run, the clock, and what the capture lost or noted.
fn description(capture: &Capture, clock: Clock) -> String {
    let mut lines = Vec::new();
    if let Some(run) = &capture.run {
        lines.push(run.summary());
    }
    lines.push(match clock {
        Clock::Boottime { .. } => "timestamps: the capturing host's CLOCK_BOOTTIME".to_owned(),
        Clock::CaptureStart => "timestamps: nanoseconds of the capture's own time base".to_owned(),
    });
    if let Some(sampling) = &capture.sampling {
        lines.extend(sampling.summary_lines());
    }
    if let Some(note) = &capture.cores_note {
        lines.push(note.clone());
    }
    if let Some(warning) = &capture.warning {
        lines.push(format!("warning: {warning}"));
    }
    lines.join("\n")
}

/// A counter's description for its track: title and description as the source gives them.
fn counter_description(c: &CapturedCounter) -> String {
    match (c.info.title.trim(), c.info.description.trim()) {
        ("", description) => description.to_owned(),
        (title, "") => title.to_owned(),
        (title, description) => format!("{title}: {description}"),
    }
}

/// The Perfetto unit of a counter's values.
fn unit(units: &str) -> Unit {
    match units {
        "ns" => Unit::TimeNs,
        "B" => Unit::Bytes,
        "" => Unit::Count,
        other => Unit::Named(other.to_owned()),
    }
}

/// The Perfetto GPU unit of a Mali counter's values.
fn gpu_unit(units: &str) -> GpuUnit {
    match units {
        "B" => GpuUnit::Byte,
        "ns" => GpuUnit::Nanosecond,
        "Hz" => GpuUnit::Hertz,
        "%" => GpuUnit::Percent,
        _ => GpuUnit::None,
    }
}

/// `multiplier` as the track's `unit_multiplier` when it is a whole number above 1 and every integer value
/// of `samples` is a multiple of it (so that dividing loses nothing); 1 otherwise.
fn whole_multiplier(multiplier: f64, samples: &[SamplePoint]) -> i64 {
    if !(multiplier > 1.0 && multiplier.fract() == 0.0 && multiplier < 9.0e15) {
        return 1;
    }
    let m = multiplier as i64;
    let exact = samples.iter().all(|(_, v)| match v {
        None => true,
        Some(v) => v.as_i64().is_some_and(|v| v % m == 0),
    });
    if exact {
        m
    } else {
        1
    }
}

/// A document number as a counter value, divided by `multiplier` (an integer that divides it).
fn counter_value(value: &Number, multiplier: i64) -> Option<CounterValue> {
    match value.as_i64() {
        Some(v) => Some(CounterValue::Int(v / multiplier)),
        None => value.as_f64().map(CounterValue::Float),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiplier_is_kept_only_where_it_divides_every_value() {
        let whole: Vec<SamplePoint> = vec![(0, Some(2_000.into())), (1, Some(4_000.into()))];
        assert_eq!(whole_multiplier(1_000.0, &whole), 1_000);
        let ragged: Vec<SamplePoint> = vec![(0, Some(2_001.into()))];
        assert_eq!(whole_multiplier(1_000.0, &ragged), 1);
        assert_eq!(whole_multiplier(0.001, &whole), 1);
        assert_eq!(whole_multiplier(f64::NAN, &whole), 1);
        assert_eq!(
            counter_value(&Number::from(4_000), 1_000),
            Some(CounterValue::Int(4))
        );
    }

    #[test]
    fn units_map_to_perfettos() {
        assert_eq!(unit("ns"), Unit::TimeNs);
        assert_eq!(unit("B"), Unit::Bytes);
        assert_eq!(unit(""), Unit::Count);
        assert_eq!(unit("Hz"), Unit::Named("Hz".into()));
        assert_eq!(gpu_unit("B"), GpuUnit::Byte);
        assert_eq!(gpu_unit("cycles"), GpuUnit::None);
    }
}
