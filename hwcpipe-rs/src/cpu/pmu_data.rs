//! [`PmuData`]: Arm's per-core PMU event lists (the `ARM-software/data` repository's `cpus.json` and
//! `pmu/<core>.json`), read from a folder the user names. This crate ships none of them: the folder is
//! given by [`PMU_DATA_VAR`] (`LIZARD_PMU_DATA`), or by path. With them, every event of the core in hand
//! is known by Arm's mnemonic and description (IMPLEMENTATION DEFINED ones included), and an event the
//! list lacks is unavailable before anything is opened.
//!
//! The folder holds `cpus.json` (MIDR part numbers to core names) and `pmu/`, as the repository lays
//! them out: `git clone https://github.com/ARM-software/data` and point [`PMU_DATA_VAR`] at it. Every
//! file is read under [`MAX_LIST_BYTES`].

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use pmu_regs::catalog::{CatalogError, CpuList, EventCatalog};

/// The environment variable naming the folder of Arm's PMU data (`cpus.json` and `pmu/*.json`).
pub const PMU_DATA_VAR: &str = "LIZARD_PMU_DATA";

/// The largest file of the folder that is read (Arm's largest list is about 200 KiB).
pub const MAX_LIST_BYTES: u64 = 16 << 20;

/// Why Arm's PMU data could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PmuDataError {
    /// A file or folder could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// The error of the read.
        #[source]
        source: io::Error,
    },
    /// A file is larger than [`MAX_LIST_BYTES`].
    #[error("{path} is larger than {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// A file is not the JSON document it should be.
    #[error("{path} is not one of Arm's PMU data files")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: CatalogError,
    },
    /// The file of a core names another core.
    #[error("{path} describes cpuid {found:#x}, not {expected:#x} ({core})")]
    WrongCore {
        /// The file.
        path: PathBuf,
        /// The core's name in `cpus.json`.
        core: String,
        /// The cpuid `cpus.json` gives the core.
        expected: u32,
        /// The cpuid in the file.
        found: u32,
    },
}

/// The event list of one core, as found in the folder.
#[derive(Debug, Clone)]
pub struct CoreList {
    /// The core's name (`Cortex-A72`).
    pub core: String,
    /// Its events.
    pub catalog: EventCatalog,
}

/// Arm's PMU data in a folder (see the module documentation).
#[derive(Debug, Clone)]
pub struct PmuData {
    dir: PathBuf,
    cpus: CpuList,
}

impl PmuData {
    /// The folder [`PMU_DATA_VAR`] names, or `None` when it is unset or empty.
    pub fn from_env() -> Result<Option<PmuData>, PmuDataError> {
        match std::env::var_os(PMU_DATA_VAR) {
            Some(dir) if !dir.is_empty() => PmuData::open(Path::new(&dir)).map(Some),
            _ => Ok(None),
        }
    }

    /// The data in `dir`: reads its `cpus.json`.
    pub fn open(dir: &Path) -> Result<PmuData, PmuDataError> {
        let path = dir.join("cpus.json");
        let text = read_limited(&path)?;
        let cpus =
            CpuList::from_json(&text).map_err(|source| PmuDataError::Malformed { path, source })?;
        Ok(PmuData {
            dir: dir.to_owned(),
            cpus,
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The event list of the core a MIDR_EL1 value names, or `None` when `cpus.json` does not know the core
    /// or the folder has no list for it.
    pub fn for_midr(&self, midr: u64) -> Result<Option<CoreList>, PmuDataError> {
        let Some(cpu) = self.cpus.by_midr(midr) else {
            return Ok(None);
        };
        // Arm names each list after the core: `Neoverse N1` → `pmu/neoverse-n1.json`.
        let file = format!("{}.json", cpu.name.to_ascii_lowercase().replace(' ', "-"));
        let path = self.dir.join("pmu").join(file);
        let text = match read_limited(&path) {
            Ok(text) => text,
            Err(PmuDataError::Read { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        let catalog = EventCatalog::from_json(&text).map_err(|source| PmuDataError::Malformed {
            path: path.clone(),
            source,
        })?;
        if let Some(found) = catalog.cpuid().filter(|&found| found != cpu.cpuid) {
            return Err(PmuDataError::WrongCore {
                path,
                core: cpu.name.clone(),
                expected: cpu.cpuid,
                found,
            });
        }
        Ok(Some(CoreList {
            core: cpu.name.clone(),
            catalog,
        }))
    }
}

/// The text of `path`, at most [`MAX_LIST_BYTES`] of it.
fn read_limited(path: &Path) -> Result<String, PmuDataError> {
    let read_err = |source| PmuDataError::Read {
        path: path.to_owned(),
        source,
    };
    let file = fs::File::open(path).map_err(read_err)?;
    let mut text = String::new();
    file.take(MAX_LIST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read_err)?;
    if text.len() as u64 > MAX_LIST_BYTES {
        return Err(PmuDataError::TooLarge {
            path: path.to_owned(),
            limit: MAX_LIST_BYTES,
        });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data folder in a fresh temporary folder, removed on drop.
    struct Folder(PathBuf);

    impl Folder {
        fn new(name: &str) -> Folder {
            let dir =
                std::env::temp_dir().join(format!("hwcpipe-pmudata-{}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(dir.join("pmu")).unwrap();
            Folder(dir)
        }

        fn file(&self, path: &str, text: &str) -> &Folder {
            fs::write(self.0.join(path), text).unwrap();
            self
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    const CPUS: &str = r#"{"_type": "CPUs", "cpus": [
        {"implementer": 65, "name": "Cortex-A72", "arch": "armv8-a", "cpuid": "0x41d08"},
        {"implementer": 65, "name": "Neoverse N1", "arch": "armv8.2-a", "cpuid": "0x41d0c"}]}"#;

    fn list(cpuid: &str) -> String {
        format!(
            r#"{{"_type": "Events", "cpu": "X", "cpuid": "{cpuid}", "architecture": "armv8-a",
                "counters": 6, "events": [{{"code": 17, "name": "CPU_CYCLES", "description": "Cycle"}}]}}"#
        )
    }

    #[test]
    fn a_core_is_found_by_its_midr_and_its_file_by_its_name() {
        let folder = Folder::new("good");
        folder
            .file("cpus.json", CPUS)
            .file("pmu/cortex-a72.json", &list("0x41d08"));
        let data = PmuData::open(&folder.0).unwrap();
        let a72 = data.for_midr(0x410f_d083).unwrap().expect("Cortex-A72");
        assert_eq!(a72.core, "Cortex-A72");
        assert_eq!(a72.catalog.counters(), Some(6));
        // Neoverse N1 is in cpus.json but has no list here; an unknown core is not in cpus.json.
        assert!(data.for_midr(0x414f_d0c1).unwrap().is_none());
        assert!(data.for_midr(0x000f_0510).unwrap().is_none());
    }

    #[test]
    fn every_bad_folder_is_a_typed_error() {
        let missing = Folder::new("missing");
        assert!(matches!(
            PmuData::open(&missing.0),
            Err(PmuDataError::Read { .. })
        ));
        let bad = Folder::new("bad");
        bad.file("cpus.json", "{");
        assert!(matches!(
            PmuData::open(&bad.0),
            Err(PmuDataError::Malformed { .. })
        ));
        let wrong = Folder::new("wrong");
        wrong
            .file("cpus.json", CPUS)
            .file("pmu/cortex-a72.json", &list("0x41d0c"));
        let data = PmuData::open(&wrong.0).unwrap();
        assert!(matches!(
            data.for_midr(0x410f_d083),
            Err(PmuDataError::WrongCore {
                expected: 0x41d08,
                found: 0x41d0c,
                ..
            })
        ));
        wrong.file("pmu/cortex-a72.json", "[]");
        assert!(matches!(
            data.for_midr(0x410f_d083),
            Err(PmuDataError::Malformed { .. })
        ));
        let big = Folder::new("big");
        let huge = " ".repeat(MAX_LIST_BYTES as usize + 1);
        big.file("cpus.json", &huge);
        assert!(matches!(
            PmuData::open(&big.0),
            Err(PmuDataError::TooLarge { .. })
        ));
    }
}
