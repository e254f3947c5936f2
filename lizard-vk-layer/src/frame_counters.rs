//! lizard's counters beside the application: `lizard_core`'s engine (CPU counters of this process,
//! the Mali GPU through the kbase driver, gatord), capturing from the session's start, read over each
//! frame (from one present to the next) and, in `submit` mode, over each command buffer's window.

use lizard_core::{counter_names, Config as EngineConfig, Counter, Lizard, NoValue, Window};

use crate::clock::Zero;
use crate::config::{Config, Counters, Gatord};

/// Why lizard's engine gives no counters here.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CountersError {
    /// No source of the engine works.
    #[error("lizard's engine found no counter source")]
    Engine(#[source] lizard_core::Error),
    /// `LIZARD_VK_COUNTERS` names a counter the engine does not have.
    #[error("LIZARD_VK_COUNTERS names an unknown counter")]
    Unknown(#[source] counter_names::UnknownName),
    /// `LIZARD_VK_GATORD` is not an address.
    #[error("LIZARD_VK_GATORD={0} is not host:port")]
    Address(String),
    /// The capture did not start.
    #[error("lizard's capture did not start")]
    Start(#[source] lizard_core::Error),
    /// Nothing to count.
    #[error("no counter chosen")]
    NoneChosen,
}

/// The engine capturing the chosen counters.
pub(crate) struct FrameCounters {
    lizard: Lizard,
    chosen: Vec<Counter>,
    /// `CLOCK_MONOTONIC` at the engine's time zero.
    engine_zero_monotonic: u64,
    pruned_to: u64,
}

impl FrameCounters {
    /// Starts the engine on the chosen counters; `None` when none are asked for.
    pub(crate) fn start(
        config: &Config,
        zero: &Zero,
    ) -> Option<Result<FrameCounters, CountersError>> {
        if config.counters == Counters::None {
            return None;
        }
        Some(Self::start_chosen(config, zero))
    }

    fn start_chosen(config: &Config, zero: &Zero) -> Result<FrameCounters, CountersError> {
        let mut engine = EngineConfig::default();
        match &config.gatord {
            Gatord::Default => {}
            Gatord::Off => engine.gatord = None,
            Gatord::At(address) => {
                engine.gatord = Some(
                    address
                        .parse()
                        .map_err(|_| CountersError::Address(address.clone()))?,
                )
            }
        }
        let mut lizard = Lizard::configure(engine).map_err(CountersError::Engine)?;
        let ids: Vec<u32> = match &config.counters {
            Counters::Named(names) => counter_names::select(lizard.counters(), names)
                .map_err(CountersError::Unknown)?
                .iter()
                .map(|c| c.id)
                .collect(),
            _ => lizard.default_counters().ids,
        };
        if ids.is_empty() {
            return Err(CountersError::NoneChosen);
        }
        let mut chosen = Vec::new();
        for id in ids {
            if lizard.enable(id).is_ok() {
                if let Ok(c) = lizard.counter(id) {
                    chosen.push(c.clone());
                }
            }
        }
        lizard.start_capture().map_err(CountersError::Start)?;
        // The engine's samples are on its own time base: nanoseconds since its zero, whose CLOCK_BOOTTIME
        // it gives; the trace's zero relates CLOCK_BOOTTIME and CLOCK_MONOTONIC.
        let engine_zero_monotonic = (i128::from(lizard.boottime_at_zero_ns())
            - i128::from(zero.boottime_ns)
            + i128::from(zero.monotonic_ns))
        .clamp(0, i128::from(u64::MAX)) as u64;
        Ok(FrameCounters {
            lizard,
            chosen,
            engine_zero_monotonic,
            pruned_to: 0,
        })
    }

    /// The counters read, in order.
    pub(crate) fn chosen(&self) -> &[Counter] {
        &self.chosen
    }

    /// The engine's time of `CLOCK_MONOTONIC` `monotonic_ns`.
    fn engine_ns(&self, monotonic_ns: u64) -> u64 {
        monotonic_ns.saturating_sub(self.engine_zero_monotonic)
    }

    /// Each chosen counter's reading over `[start, end]` (`CLOCK_MONOTONIC`); `None` while some counter's
    /// samples do not reach the window's end yet (the engine's sources deliver late: the kernel's rings
    /// are drained every 200 ms, gatord sends every `live_rate`) unless `final_read`, which gives each
    /// counter's reading or why it has none.
    pub(crate) fn read(
        &mut self,
        start: u64,
        end: u64,
        final_read: bool,
    ) -> Option<Vec<Result<f64, String>>> {
        let window = Window {
            start_ns: self.engine_ns(start),
            end_ns: self.engine_ns(end),
        };
        let mut values = Vec::with_capacity(self.chosen.len());
        for c in &self.chosen {
            match self.lizard.read_window(c.id, window) {
                Ok(v) => values.push(Ok(v)),
                Err(lizard_core::Error::NoValue {
                    reason: NoValue::NoSamples | NoValue::NotEnclosed,
                    ..
                }) if !final_read => return None,
                Err(e) => values.push(Err(lizard_core::error_chain(&e))),
            }
        }
        Some(values)
    }

    /// Stops the capture: the sources' last samples are stored; windows still read.
    pub(crate) fn stop(&mut self) -> Result<(), String> {
        self.lizard
            .stop_capture()
            .map_err(|e| lizard_core::error_chain(&e))
    }

    /// Forgets samples before `monotonic_ns`: no window read later starts before it.
    pub(crate) fn forget_before(&mut self, monotonic_ns: u64) {
        let t = self.engine_ns(monotonic_ns);
        // Pruning walks every counter's samples: once every 100 ms of samples is enough.
        if t > self.pruned_to + 100_000_000 {
            self.lizard.prune_before(t);
            self.pruned_to = t;
        }
    }
}
