//! C programs compiled ahead of time, for a test machine without a C compiler.
//!
//! The Arm system that `.ci/arm-tests` boots has no compiler: that script compiles every C source
//! these tests use on the build machine, with the flags the tests would use, and names the folder in
//! `LIZARD_PREBUILT_C`. A program there is called `<source stem>-<language>`, the language being
//! gcc's `-x` name (`lizard_demo-c`, `lizard_demo-c++`, `abuse-c`, `header_probe-c`, …).

use std::path::{Path, PathBuf};

/// The folder of programs compiled ahead of time, if `LIZARD_PREBUILT_C` names one.
pub fn folder() -> Option<PathBuf> {
    std::env::var_os("LIZARD_PREBUILT_C").map(PathBuf::from)
}

/// The program compiled ahead of time from `source` as `lang` (`"c"` or `"c++"`), or `None` when
/// programs are compiled by the tests themselves. A program missing from the folder is a test
/// failure that names it.
pub fn program(source: &Path, lang: &str) -> Option<PathBuf> {
    let dir = folder()?;
    let stem = source
        .file_stem()
        .unwrap_or_else(|| panic!("{} has no file name", source.display()));
    let program = dir.join(format!("{}-{lang}", stem.to_string_lossy()));
    assert!(
        program.is_file(),
        "LIZARD_PREBUILT_C is set but {} is missing (compile {} as {lang} into {})",
        program.display(),
        source.display(),
        dir.display()
    );
    Some(program)
}
