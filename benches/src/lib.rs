//! Shared inputs for the criterion benches in `benches/benches/`.
//!
//! Every bench reads its inputs from the real recordings in `../shared/data/` (relative to the
//! repository root) and reports its result beside a baseline measured in the same run.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The folder of real recordings shared with the tests: `../shared/data` beside the repository.
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}
