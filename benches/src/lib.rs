//! Shared inputs and the ratio report for the criterion benches in `benches/benches/`.
//!
//! Every bench reads its inputs from the real recordings in `../shared/data/` (relative to the
//! repository root) and reports its result beside a baseline measured in the same run: [`Ratios`]
//! keeps the per-iteration times criterion measured for each function of a group and prints each
//! function's throughput as a multiple of the baseline's.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod ratio;
pub mod stm;

pub use ratio::Ratios;

use std::path::PathBuf;

/// The folder of real recordings shared with the tests (`test_data::root`: `../shared/data` beside the
/// repository).
pub fn data_dir() -> PathBuf {
    test_data::root()
}
