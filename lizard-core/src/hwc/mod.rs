//! The direct counter source: the [`HwcBackend`] seam, its HWCPipe implementation and the sampler thread.

pub(crate) mod backend;
mod hwcpipe_backend;
mod kernel_sampling;
mod pmu_events;
pub(crate) mod sampler;
mod sampling;
mod target_backend;

pub use backend::{
    GpuDevice, GpuDump, GpuMiss, GpuPlan, GpuSource, HwcBackend, HwcCounterInfo, KernelPlan,
    NoKernelSampling, Scaling, UnreadableCounter,
};
pub use hwcpipe_backend::HwcPipeBackend;
pub use pmu_events::{event_counter_names, events_of, resolve_cpu_events, CpuEventsError};
pub use sampling::{
    CpuStart, GpuPace, GpuSampling, Sampling, SamplingMethod, StartSkew, MIN_SAMPLE_INTERVAL,
};
pub use target_backend::{
    open_target, open_target_with, CommandWatch, OpenedTarget, PMU_EVENT_CATEGORY,
};

use std::sync::Arc;

use crate::counter::{Counter, CpuScope, Scope, Source};
use crate::error::Error;

/// Opens HWCPipe on this machine (CPU perf events, the Arm PMU events among `events` and, if present, the
/// Mali GPU, dumped as `gpu_dumps` says).
pub(crate) fn open_hwcpipe(
    events: &[String],
    gpu_dumps: crate::GpuDumps,
) -> Result<Box<dyn HwcBackend>, Error> {
    let events = resolve_cpu_events(events).map_err(crate::DirectError::from)?;
    Ok(Box::new(
        HwcPipeBackend::open_with_events(events)?.with_gpu_dumps(gpu_dumps),
    ))
}

/// The title of HWCPipe's CPU counters: they count only the calling process (perf events opened for it),
/// unlike gatord's system-wide counters, and say so wherever they are shown. A backend counting something
/// else names it instead ([`HwcBackend::cpu_scope`]).
pub const CPU_TITLE: &str = "HWCPipe CPU (this process)";

/// The title of the direct GPU counters (the whole Mali GPU).
pub const GPU_TITLE: &str = "HWCPipe GPU";

/// The engine counter for a backend counter (id assigned later), of the class the backend gives (HWCPipe's
/// counters and hardware counts are per-sample deltas, summed over the capture; a Mali database
/// percentage or rate is averaged). Key and name are both the backend's counter name; the title is
/// [`GPU_TITLE`], or `HWCPipe CPU (what it counts)` ([`CPU_TITLE`] for this process).
pub(crate) fn counter_from(info: HwcCounterInfo, cpu_scope: &CpuScope) -> Counter {
    let (title, category, scope) = match info.source {
        Source::HwcPipeGpu => (GPU_TITLE.to_owned(), "HWCPipe GPU Counter", Scope::Gpu),
        _ => (
            format!("HWCPipe CPU ({})", cpu_scope.text()),
            "HWCPipe CPU Counter",
            Scope::Cpus(cpu_scope.clone()),
        ),
    };
    Counter {
        id: 0,
        key: info.name.clone(),
        name: info.name,
        title,
        description: info.description,
        category: info.category.unwrap_or_else(|| category.to_owned()),
        multiplier: 1.0,
        units: info.units,
        class: info.class,
        source: info.source,
        scope,
        result_type: info.result_type,
        set_event: None,
        derivation: info.derivation.map(Arc::new),
        cpu_series: info.cpu_series,
        pmu_part: info.pmu_part,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::{CounterClass, CpuSeries, ResultType, Units};
    use hwcpipe::counting::Target;

    fn info(source: Source) -> HwcCounterInfo {
        HwcCounterInfo {
            name: "TaskClock".into(),
            description: String::new(),
            units: Units::parse("ns"),
            source,
            result_type: ResultType::Integer,
            class: CounterClass::Delta,
            category: None,
            derivation: None,
            cpu_series: None,
            pmu_part: None,
        }
    }

    #[test]
    fn one_cpus_series_keeps_its_counter_and_cpu() {
        let series = CpuSeries {
            counter: "TaskClock".into(),
            cpu: 3,
        };
        let counter = counter_from(
            HwcCounterInfo {
                name: "TaskClock@cpu3".into(),
                cpu_series: Some(series.clone()),
                pmu_part: None,
                ..info(Source::HwcPipeCpu)
            },
            &CpuScope::Target(Target::Cpus {
                cpus: vec![3],
                per_cpu: true,
                all: false,
            }),
        );
        assert_eq!(counter.key, "TaskClock@cpu3");
        assert_eq!(counter.cpu_series, Some(series));
        assert_eq!(
            counter_from(info(Source::HwcPipeCpu), &CpuScope::ThisProcess).cpu_series,
            None
        );
    }

    #[test]
    fn cpu_titles_name_what_is_counted_and_gpu_titles_do_not_change() {
        assert_eq!(
            counter_from(info(Source::HwcPipeCpu), &CpuScope::ThisProcess).title,
            CPU_TITLE
        );
        assert_eq!(
            counter_from(info(Source::HwcPipeCpu), &CpuScope::Target(Target::Pid(42))).title,
            "HWCPipe CPU (process 42, all threads)"
        );
        assert_eq!(
            counter_from(info(Source::HwcPipeGpu), &CpuScope::Target(Target::Pid(42))).title,
            GPU_TITLE
        );
    }

    #[test]
    fn the_scope_is_kept_as_what_it_is_not_read_back_from_the_title() {
        // A scope with brackets of its own would not survive being read back out of `HWCPipe CPU (…)`.
        let odd = CpuScope::Target(Target::Command(vec![
            "sh".into(),
            "-c".into(),
            "(true)".into(),
        ]));
        let cpu = counter_from(info(Source::HwcPipeCpu), &odd);
        assert_eq!(cpu.scope, Scope::Cpus(odd.clone()));
        assert_eq!(cpu.scope.name(), "command 'sh -c (true)' and its children");
        assert_eq!(
            counter_from(info(Source::HwcPipeGpu), &odd).scope,
            Scope::Gpu
        );
        assert_eq!(Scope::Gpu.name(), "gpu");
        assert_eq!(Scope::System.name(), "system");
    }
}
