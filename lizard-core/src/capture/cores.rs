//! How the outputs show per-core counters: gatord reads its per-CPU counters (perf-backed PMU events) once
//! per core, and the engine keeps each sample's CPU and combines them ([`crate::reduce`]); `lizard capture
//! --per-core` also shows each core's part, named `COUNTER@cpuN` like the local counters' per-CPU series.

/// How the outputs show a counter counted per core (`combined` or `per-core` in the capture document).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cores {
    /// One series and one reading per counter, the cores combined.
    #[default]
    Combined,
    /// The combined series and reading, and beside them one per core.
    PerCore,
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
