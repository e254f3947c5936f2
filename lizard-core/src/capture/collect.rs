//! The capture document built from the engine after a capture: each counter's reading, series and (with
//! [`Cores::PerCore`]) each core's part, as the engine reduced them.

use std::time::Duration;

use serde_json::Number;

use super::cores::{self, Cores};
use super::{
    Capture, CapturedCounter, CoreId, CorePart, Counted, CounterInfo, CpuStartNs, GatordInfo,
    GpuSamplingDoc, LocalSampling, Method, Pace, RunInfo, SamplePoint, TraceRecord, SCHEMA_VERSION,
};
use crate::{
    error_chain, Counter, Error as EngineError, GpuPace, Lizard, Machine, NoValue, ResultType,
    Sample, SamplingMethod, Value,
};

/// What the engine says of a capture beyond its counters: how long it ran, how it ended, what was traced.
pub struct Ending<'a> {
    /// How long the capture ran.
    pub elapsed: Duration,
    /// The error the capture stopped with, when it did.
    pub stop_error: Option<&'a EngineError>,
    /// The trace records of the capture window.
    pub records: Vec<TraceRecord>,
    /// The command line of the capture.
    pub command: Vec<String>,
    /// The version of the tool that captured (`lizard`'s).
    pub tool_version: String,
}

/// The document of the capture of counters `ids` that `lizard` has just stopped. A counter the source lists
/// but does not deliver says why in [`CapturedCounter::unavailable`].
pub fn capture(
    lizard: &Lizard,
    ids: &[u32],
    mode: Cores,
    ending: Ending<'_>,
) -> Result<Capture, EngineError> {
    let counters = ids
        .iter()
        .map(|&id| counter(lizard, id, mode))
        .collect::<Result<Vec<_>, _>>()?;
    let window_ns = sample_span(&counters);
    let cores_note = cores_note(&counters, mode);
    let sampling = lizard.sampling().map(|s| {
        let mut local = LocalSampling {
            interval_ns: nanos(s.interval),
            sampled_ns: nanos(s.window),
            expected: s.expected,
            delivered: s.delivered,
            missed: s.missed,
            largest_gap_ns: nanos(s.largest_gap),
            method: Method::from(&s.method),
            ..LocalSampling::default()
        };
        match &s.method {
            SamplingMethod::Kernel {
                rings,
                lost_records,
                throttled,
                throttled_time,
                idle_periods,
                ..
            } => {
                local.rings = Some(*rings as u64);
                local.lost_records = Some(*lost_records);
                local.throttled = Some(*throttled);
                local.throttled_ns = Some(nanos(*throttled_time));
                local.idle_periods = Some(*idle_periods);
                if let Some(start) = &s.start {
                    local.start_skew_ns = Some(nanos(start.largest));
                    local.cpu_starts = start
                        .cpus
                        .iter()
                        .map(|c| CpuStartNs {
                            cpu: c.cpu,
                            after_start_ns: nanos(c.after_start),
                        })
                        .collect();
                    local.unknown_starts = Some(start.unknown as u64);
                }
            }
            SamplingMethod::Thread { reason } => {
                local.thread_reason = (!reason.is_empty()).then(|| reason.clone());
            }
            _ => {}
        }
        local.gpu = s.gpu.as_ref().map(|g| GpuSamplingDoc {
            pace: Pace::from(&g.pace),
            manual_reason: match &g.pace {
                GpuPace::Manual { reason } => Some(reason.clone()),
                _ => None,
            },
            interval_ns: nanos(g.interval),
            sampled_ns: nanos(g.window),
            expected: g.expected,
            delivered: g.delivered,
            folded: g.folded,
            missed: g.missed,
            missed_reason: g.missed_reason.clone(),
            not_counting: g.not_counting,
            not_counting_reason: g.not_counting_reason.clone(),
            largest_gap_ns: nanos(g.largest_gap),
        });
        local
    });
    let machine = Machine::this();
    let run = RunInfo {
        lizard_version: ending.tool_version,
        command: ending.command,
        host: machine.host,
        kernel: machine.kernel,
        arch: machine.arch.to_owned(),
        online_cpus: machine.online_cpus,
        cores: machine
            .midr
            .into_iter()
            .map(|(cpu, midr)| CoreId {
                cpu,
                midr: format!("{midr:#x}"),
            })
            .collect(),
        cpu_model: machine.cpu_model,
        gatord_protocol: lizard.protocol_version().map(|v| v.0),
        gatord: lizard.gatord_device().map(|d| GatordInfo {
            build_id: d.build_id.clone(),
            src_md5sum: d.src_md5sum.clone(),
            model: d.model.clone(),
            os: d.os.clone(),
            os_version: d.os_version.clone(),
            cpuid: d.cpuid.map(|id| format!("{id:#x}")),
            cores: d.cores,
            gpu: d.gpu.clone(),
        }),
        gpu: lizard.gpu().map(|g| g.product.clone()),
        gpu_driver: lizard.gpu().map(|g| g.driver.clone()),
    };
    Ok(Capture {
        schema_version: SCHEMA_VERSION,
        run: Some(run),
        sampling,
        duration_s: window_ns.map(|[first, last]| (last - first) as f64 / 1e9),
        window_ns,
        started_ns: lizard.capture_started_ns(),
        boottime_zero_ns: Some(lizard.boottime_at_zero_ns()),
        wall_s: Some(ending.elapsed.as_secs_f64()),
        warning: ending.stop_error.map(|e| error_chain(e)),
        cores: mode,
        cores_note,
        counters,
        trace_records: ending.records,
    })
}

/// A duration in whole nanoseconds, saturating.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// What `counter` is, as the documents describe it. Its `units` are those of the values the tool writes (MHz
/// counters are read in Hz), so a unit always agrees with the numbers beside it.
pub fn info(counter: &Counter) -> CounterInfo {
    CounterInfo {
        id: counter.id,
        source: counter.source.into(),
        scope: counter.scope.name().into_owned(),
        counter: counter.key.clone(),
        name: counter.name.clone(),
        title: counter.title.clone(),
        description: counter.description.clone(),
        category: counter.category.clone(),
        units: counter.units.of_readings(),
        multiplier: counter.multiplier,
        class: counter.class.into(),
        result_type: counter.result_type.into(),
        event: counter
            .set_event
            .as_ref()
            .map(|e| format!("{:#04x}", e.code)),
        cpu_series: counter.cpu_series.clone(),
        pmu_event: counter.pmu_part.clone(),
    }
}

fn counter(lizard: &Lizard, id: u32, mode: Cores) -> Result<CapturedCounter, EngineError> {
    let counter = lizard.counter(id)?;
    let reading = match counter.result_type {
        ResultType::Integer => lizard.read_int(id).map(Value::Int),
        ResultType::Floating => lizard.read_double(id).map(Value::Float),
    };
    let implausible = match &reading {
        Ok(value) => lizard
            .implausible(id, value.as_f64())?
            .map(|why| why.to_string()),
        Err(_) => None,
    };
    let (value, no_value, unavailable) = match reading {
        Ok(value) => match number(value) {
            Some(number) => (Some(number), None, None),
            None => (None, Some(NOT_A_NUMBER.to_owned()), None),
        },
        Err(EngineError::NoValue { reason, .. }) => {
            let unavailable = match &reason {
                NoValue::Unavailable(why) => Some(why.to_string()),
                _ => None,
            };
            (None, Some(reason.to_string()), unavailable)
        }
        Err(other) => return Err(other),
    };
    let per_core = lizard.counted_per_core(id)?;
    let parts = match (mode, per_core) {
        (Cores::PerCore, true) => Some(
            lizard
                .core_readings(id)?
                .into_iter()
                .map(|part| {
                    let value = part.value.and_then(number);
                    CorePart {
                        core: part.core,
                        no_value: match (part.value, &value) {
                            (None, _) => Some(NoValue::NoSamples.to_string()),
                            (Some(_), None) => Some(NOT_A_NUMBER.to_owned()),
                            (Some(_), Some(_)) => None,
                        },
                        value,
                        samples: points(counter, &part.samples),
                    }
                })
                .collect(),
        ),
        _ => None,
    };
    let samples = points(counter, &lizard.series(id)?);
    let covered_s = match (samples.first(), samples.last()) {
        (Some(first), Some(last)) if samples.len() > 1 => Some((last.0 - first.0) as f64 / 1e9),
        _ => None,
    };
    Ok(CapturedCounter {
        info: info(counter),
        covered_s,
        value,
        no_value,
        implausible,
        unavailable,
        dropped: lizard.dropped(id)?,
        samples,
        counted: per_core.then_some(Counted::PerCore),
        scaling: lizard.scaling(id)?,
        per_core: parts,
    })
}

/// The reason written for a reading that is not a number (NaN or infinite).
const NOT_A_NUMBER: &str = "the reading is not a number";

/// A reading as a JSON number: integers exact, doubles as they are; `None` for NaN and infinities.
fn number(value: Value) -> Option<Number> {
    match value {
        Value::Int(v) => Some(v.into()),
        Value::Float(v) => Number::from_f64(v),
    }
}

/// `samples` scaled like the counter's readings (multiplier, MHz → Hz).
fn points(counter: &Counter, samples: &[Sample]) -> Vec<SamplePoint> {
    samples
        .iter()
        .map(|s| (s.timestamp_ns, scaled(counter, s.value)))
        .collect()
}

/// A sample value scaled like the counter's readings: integer values with a whole scale (1, or 1 000 000 for
/// MHz) stay exact integers; `None` when the result is not a number.
pub fn scaled(counter: &Counter, value: Value) -> Option<Number> {
    let scale = counter.scale();
    if let Value::Int(v) = value {
        if scale.fract() == 0.0 && scale.abs() < 9.0e15 {
            if let Some(scaled) = v.checked_mul(scale as i64) {
                return Some(scaled.into());
            }
        }
    }
    Number::from_f64(value.as_f64() * scale)
}

/// The first and last sample timestamps over every counter: the window the samples cover.
fn sample_span(counters: &[CapturedCounter]) -> Option<[u64; 2]> {
    let first = counters
        .iter()
        .filter_map(|c| c.samples.first())
        .map(|s| s.0)
        .min()?;
    let last = counters
        .iter()
        .filter_map(|c| c.samples.last())
        .map(|s| s.0)
        .max()?;
    Some([first, last])
}

/// What the outputs say about counters counted per core, when any was: that their values combine the
/// cores, and (with `--per-core`) that the `@cpuN` readings and series are each core's part.
fn cores_note(counters: &[CapturedCounter], mode: Cores) -> Option<String> {
    if !counters.iter().any(|c| c.counted.is_some()) {
        return None;
    }
    Some(match mode {
        Cores::Combined => format!("{}; --per-core shows each core", cores::COMBINED_NOTE),
        Cores::PerCore => format!("{}; COUNTER@cpuN is one core's part", cores::COMBINED_NOTE),
    })
}
