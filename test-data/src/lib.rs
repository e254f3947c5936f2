#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The environment variable that, when set, names the data folder instead of `../shared/data`.
pub const DIR_VARIABLE: &str = "LIZARD_TEST_DATA";

/// The folder of gatord 9.7.2's recordings, below [`root`].
pub const GATORD: &str = "gatord-9.7.2";

/// The data folder: `$LIZARD_TEST_DATA` when set, else `shared/data` beside the repository
/// (`<repository>/../shared/data`). It may not exist; [`path`] says so.
pub fn root() -> PathBuf {
    match std::env::var_os(DIR_VARIABLE) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
    }
}

/// The path of `relative` (e.g. `gatord-9.7.2/live-session/d2c.bin`) inside [`root`], or `None` with a
/// printed skip message when it is not there.
pub fn path(relative: &str) -> Option<PathBuf> {
    let full = root().join(relative);
    if full.exists() {
        Some(full)
    } else {
        eprintln!(
            "skipped: {} missing (the recordings live in ../shared/data beside the repository, or in ${DIR_VARIABLE})",
            full.display()
        );
        None
    }
}

/// The bytes of `relative` inside [`root`], or `None` with a printed skip message when it is not there.
///
/// # Panics
///
/// When the file is there but cannot be read: a broken data folder is a test failure, not a skip.
pub fn bytes(relative: &str) -> Option<Vec<u8>> {
    let full = path(relative)?;
    Some(std::fs::read(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display())))
}

/// The text of `relative` inside [`root`], or `None` with a printed skip message when it is not there.
///
/// # Panics
///
/// When the file is there but cannot be read as UTF-8 text.
pub fn text(relative: &str) -> Option<String> {
    let bytes = bytes(relative)?;
    Some(String::from_utf8(bytes).unwrap_or_else(|e| panic!("{relative}: {e}")))
}

/// [`path`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord(relative: &str) -> Option<PathBuf> {
    path(&format!("{GATORD}/{relative}"))
}

/// [`bytes`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord_bytes(relative: &str) -> Option<Vec<u8>> {
    bytes(&format!("{GATORD}/{relative}"))
}

/// [`text`] of `relative` inside gatord 9.7.2's folder ([`GATORD`]).
pub fn gatord_text(relative: &str) -> Option<String> {
    text(&format!("{GATORD}/{relative}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_a_skip_not_a_failure() {
        assert_eq!(path("no-such-folder/no-such-file"), None);
        assert_eq!(bytes("no-such-folder/no-such-file"), None);
        assert_eq!(gatord_text("no-such-file"), None);
    }

    #[test]
    fn present_files_are_read() {
        // The data folder's own README, when the folder is there.
        if let Some(text) = text("README.md") {
            assert!(!text.is_empty());
            assert_eq!(bytes("README.md").map(|b| b.len()), Some(text.len()));
        }
    }
}
