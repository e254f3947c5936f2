//! The Mali GPU's side of a counting: one sample covering the whole counting.

use hwcpipe::gpu::{GpuProfiler, MaliCounter, MaliValues};
use hwcpipe::GpuCounter;

use super::choice::known_names;
use super::error::{GpuUnavailable, StatError};
use super::report::{DatabaseTotal, GpuTotal};

/// A database counter resolved on the open GPU.
struct Resolved {
    counter: MaliCounter,
    name: &'static str,
    units: &'static str,
}

/// The GPU's chosen counters over a counting. Call order: [`open`](Self::open) → [`run`](Self::run) →
/// [`finish`](Self::finish).
pub(crate) struct GpuCounting {
    /// The profiler; `None` when nothing was asked of the GPU.
    profiler: Option<Result<GpuProfiler, GpuUnavailable>>,
    database: Vec<Resolved>,
}

/// What the GPU gave.
pub(crate) struct GpuValues {
    pub(crate) gpu: Vec<GpuTotal>,
    pub(crate) database: Vec<DatabaseTotal>,
    pub(crate) unavailable: Option<GpuUnavailable>,
}

impl GpuCounting {
    /// Opens the GPU and enables `chosen` (those it can measure) and the database counters named in
    /// `database`; nothing asked, nothing opened. A name that is no counter of this GPU's database (or any
    /// name, without a GPU to read it) is an unknown counter.
    /// `events` are the Arm PMU event names known here, offered beside the counter names to a name that is
    /// none.
    pub(crate) fn open(
        chosen: &[GpuCounter],
        database: &[String],
        events: &[String],
    ) -> Result<Self, StatError> {
        if chosen.is_empty() && database.is_empty() {
            return Ok(GpuCounting {
                profiler: None,
                database: Vec::new(),
            });
        }
        let profiler = GpuProfiler::open()
            .map_err(GpuUnavailable::Open)
            .and_then(|mut p| {
                let measurable: Vec<GpuCounter> = chosen
                    .iter()
                    .copied()
                    .filter(|c| p.supported_counters().contains(c))
                    .collect();
                p.set_enabled(&measurable).map_err(GpuUnavailable::Enable)?;
                Ok(p)
            });
        // Arm's database is read from the GPU: without one, a name that is no other counter is unknown.
        let profiler = match (profiler, database.first()) {
            (Err(gpu), Some(name)) => {
                return Err(StatError::NoGpuForDatabase {
                    name: name.clone(),
                    candidates: known_names()
                        .map(str::to_owned)
                        .chain(events.iter().cloned())
                        .collect(),
                    gpu,
                })
            }
            (profiler, _) => profiler,
        };
        let resolved = match &profiler {
            Ok(p) => resolve(p, database, events)?,
            Err(_) => Vec::new(),
        };
        Ok(GpuCounting {
            profiler: Some(profiler),
            database: resolved,
        })
    }

    /// Starts counting.
    pub(crate) fn run(&mut self) {
        if let Some(profiler) = &mut self.profiler {
            if let Ok(p) = profiler {
                if let Err(e) = p.run() {
                    *profiler = Err(GpuUnavailable::Run(e));
                }
            }
        }
    }

    /// Takes the one sample covering the whole counting, and stops.
    pub(crate) fn finish(self) -> GpuValues {
        let mut values = GpuValues {
            gpu: Vec::new(),
            database: Vec::new(),
            unavailable: None,
        };
        let mut mali = MaliValues::default();
        match self.profiler {
            None => {}
            Some(Err(why)) => values.unavailable = Some(why),
            Some(Ok(mut p)) => match p.sample() {
                Ok(sample) => {
                    values.gpu = sample
                        .iter()
                        .map(|(counter, value)| GpuTotal { counter, value })
                        .collect();
                    p.mali_values(&mut mali);
                    let _ = p.stop();
                }
                Err(e) => values.unavailable = Some(GpuUnavailable::Sample(e)),
            },
        }
        values.database = self
            .database
            .iter()
            .map(|d| DatabaseTotal {
                name: d.name,
                units: d.units,
                value: mali.get(d.counter).and_then(Result::ok),
            })
            .collect();
        values
    }
}

/// The database counters named in `names` on the GPU `profiler` reads.
fn resolve(
    profiler: &GpuProfiler,
    names: &[String],
    events: &[String],
) -> Result<Vec<Resolved>, StatError> {
    let catalog = profiler.mali_counters();
    let mut resolved = Vec::new();
    for name in names {
        let found = catalog
            .iter()
            .find(|(_, c)| c.name().eq_ignore_ascii_case(name));
        let Some((counter, info)) = found else {
            let database = catalog.iter().map(|(_, c)| c.name());
            return Err(StatError::UnknownCounter {
                name: name.clone(),
                candidates: known_names()
                    .chain(database)
                    .map(str::to_owned)
                    .chain(events.iter().cloned())
                    .collect(),
            });
        };
        if let Err(reason) = &info.availability {
            return Err(StatError::NotCountable {
                name: info.name(),
                reason: reason.clone(),
            });
        }
        resolved.push(Resolved {
            counter,
            name: info.name(),
            units: info.spec.units,
        });
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use hwcpipe::gpu::{SimConfig, SimGpu, SimulatedKbase, Workload};

    use super::*;

    /// A Mali-G78 of the simulated kbase driver, every counter counting 7 a dump.
    fn simulated() -> GpuProfiler {
        let device = SimulatedKbase::new(SimGpu::G78, Workload::from_fn(|_, _, _, _| 7));
        GpuProfiler::with_device(device).unwrap()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_database_counter_of_the_gpu_is_resolved_ignoring_case() {
        let resolved = resolve(&simulated(), &names(&["maligpuactivecy"]), &[]).unwrap();
        assert_eq!(resolved[0].name, "MaliGPUActiveCy");
    }

    #[test]
    fn a_name_of_no_database_counter_is_unknown_with_the_databases_names() {
        match resolve(&simulated(), &names(&["MaliGPUActiveCyc"]), &[]) {
            Err(StatError::UnknownCounter { name, candidates }) => {
                assert_eq!(name, "MaliGPUActiveCyc");
                assert!(candidates.iter().any(|c| c == "MaliGPUActiveCy"));
                assert!(candidates.iter().any(|c| c == "TaskClock"));
            }
            other => panic!("{:?}", other.map(|r| r.len())),
        }
    }

    #[test]
    fn a_database_counter_this_gpu_cannot_give_says_why() {
        // The first of the kbase driver's dummy GPUs with a database counter it cannot give.
        let found = hwcpipe::gpu::KBASE_R35P0_DUMMY_GPUS
            .iter()
            .filter_map(|(name, _, _)| SimConfig::kbase_r35p0_dummy(name))
            .filter_map(|config| {
                let device = SimulatedKbase::with_config(config, Workload::from_fn(|_, _, _, _| 7));
                GpuProfiler::with_device(device).ok()
            })
            .find_map(|p| {
                let name = p
                    .mali_counters()
                    .iter()
                    .find(|(_, c)| !c.is_available())?
                    .1
                    .name();
                Some((p, name))
            });
        let (profiler, unavailable) = found.expect("a dummy GPU lacks a database counter");
        match resolve(&profiler, &names(&[unavailable]), &[]) {
            Err(StatError::NotCountable { name, .. }) => assert_eq!(name, unavailable),
            other => panic!("{:?}", other.map(|r| r.len())),
        }
    }
}
