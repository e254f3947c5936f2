//! How the outputs show per-core counters: gatord reads its per-CPU counters (perf-backed PMU events) once
//! per core, and the engine keeps each sample's CPU and combines them (`lizard_core::reduce`); `capture
//! --per-core` also shows each core's part, named `COUNTER@cpuN` like the local counters' per-CPU series.

/// How the outputs show a counter counted per core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cores {
    /// One series and one reading per counter, the cores combined.
    Combined,
    /// The combined series and reading, and beside them one per core.
    PerCore,
}

impl Cores {
    /// `combined` or `per-core`, as the JSON and chrome-trace outputs say it.
    pub fn name(self) -> &'static str {
        match self {
            Cores::Combined => "combined",
            Cores::PerCore => "per-core",
        }
    }
}

/// The sentence the outputs carry when a counter was counted per core.
pub const COMBINED_NOTE: &str =
    "values counted per core are combined: delta counters summed over the cores \
     (the samples of one instant added), absolute ones averaged";

/// The name of `counter`'s series on `core`: `NAME@cpuN`.
pub fn core_name(name: &str, core: u32) -> String {
    format!("{name}@cpu{core}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cores_series_is_named_after_it() {
        assert_eq!(core_name("X", 3), "X@cpu3");
    }
}
