//! The direct counter source: the [`HwcBackend`] seam, its HWCPipe implementation and the sampler thread.

pub(crate) mod backend;
mod hwcpipe_backend;
pub(crate) mod sampler;

pub use backend::{HwcBackend, HwcCounterInfo};
pub use hwcpipe_backend::HwcPipeBackend;

use crate::counter::{Counter, CounterClass, Source};
use crate::error::Error;

/// Opens HWCPipe on this machine (CPU perf events and, if present, the Mali GPU).
pub(crate) fn open_hwcpipe() -> Result<Box<dyn HwcBackend>, Error> {
    Ok(Box::new(HwcPipeBackend::open()?))
}

/// The title of the direct CPU counters: they count only the calling process (perf events opened for it),
/// unlike gatord's system-wide counters, and say so wherever they are shown.
pub const CPU_TITLE: &str = "HWCPipe CPU (this process)";

/// The title of the direct GPU counters (the whole Mali GPU).
pub const GPU_TITLE: &str = "HWCPipe GPU";

/// The engine counter for a backend counter (id assigned later). Every direct counter reports per-sample
/// deltas, so it is a delta counter: readings are sums over the capture. Key and name are both the HWCPipe
/// counter name; the title is [`CPU_TITLE`] or [`GPU_TITLE`].
pub(crate) fn counter_from(info: HwcCounterInfo) -> Counter {
    let (title, category) = match info.source {
        Source::HwcPipeGpu => (GPU_TITLE, "HWCPipe GPU Counter"),
        _ => (CPU_TITLE, "HWCPipe CPU Counter"),
    };
    Counter {
        id: 0,
        key: info.name.clone(),
        name: info.name,
        title: title.to_owned(),
        description: info.description,
        category: category.to_owned(),
        multiplier: 1.0,
        units: info.units,
        class: CounterClass::Delta,
        source: info.source,
        result_type: info.result_type,
    }
}
