//! The Arm CPU PMUs as the Linux kernel describes them in sysfs, and the core they belong to.
//!
//! Each PMU the kernel's Arm PMUv3 driver registers is a folder of
//! `/sys/bus/event_source/devices/` named `armv8_*` or `armv9_*` (`armv8_pmuv3`, `armv8_pmuv3_0`,
//! `armv8_cortex_a53`, …) holding:
//! - `type`: the `perf_event_attr.type` that reaches this PMU;
//! - `cpus`: the CPUs it serves, as a CPU list (`0-3,6`);
//! - `events/NAME`: one file per common event the core implements, as the driver read it from
//!   PMCEID0/1_EL0, containing `event=0xNN`;
//! - `format/NAME`: where an attribute field goes, e.g. `event` → `config:0-15`;
//! - `caps/slots` (Linux 5.14 and later, where the core has PMMIR_EL1): PMMIR_EL1.SLOTS, the most
//!   operations the core can issue per cycle, which the top-down metrics' `STALL_SLOT*` events count.
//!
//! The core is named by its MIDR_EL1, which the kernel shows in
//! `/sys/devices/system/cpu/cpuN/regs/identification/midr_el1`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pmu_regs::CommonEventSet;

use crate::cpu_list::parse_cpu_list;

/// Where the kernel lists its PMUs.
pub const SYSFS_PMU_DEVICES: &str = "/sys/bus/event_source/devices";
/// Where the kernel shows each CPU's identification registers (`cpuN/regs/identification`).
pub const SYSFS_CPUS: &str = "/sys/devices/system/cpu";

/// A sysfs PMU description that could not be read or understood.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArmPmuError {
    /// A file or folder could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// The error of the read.
        #[source]
        source: io::Error,
    },
    /// A file held something other than what the kernel writes there.
    #[error("{path} holds {text:?}, expected {expected}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What it held (at most 64 bytes of it).
        text: String,
        /// What it should hold.
        expected: &'static str,
    },
}

/// One Arm CPU PMU the kernel drives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArmPmu {
    /// The folder name, e.g. `armv8_pmuv3_0`.
    pub name: String,
    /// The `perf_event_attr.type` of its events.
    pub perf_type: u32,
    /// The CPUs it serves.
    pub cpus: Vec<u32>,
    /// The events the kernel lists (name, event number), sorted by name.
    pub events: Vec<(String, u16)>,
    /// The attribute fields (name, placement such as `config:0-15`), sorted by name.
    pub formats: Vec<(String, String)>,
    /// PMMIR_EL1.SLOTS from `caps/slots`, when the kernel shows it and it is not 0.
    pub slots: Option<u32>,
}

impl ArmPmu {
    /// Every Arm CPU PMU listed under `devices` (normally [`SYSFS_PMU_DEVICES`]), by name. A
    /// machine without one (another architecture, a kernel without the driver) gives an empty list.
    pub fn discover(devices: &Path) -> Result<Vec<ArmPmu>, ArmPmuError> {
        let mut pmus = Vec::new();
        for name in list_dir(devices)? {
            if name.starts_with("armv8_") || name.starts_with("armv9_") {
                pmus.push(ArmPmu::read(&devices.join(&name), name)?);
            }
        }
        Ok(pmus)
    }

    /// Reads the PMU described by the folder `dir`.
    pub fn read(dir: &Path, name: String) -> Result<ArmPmu, ArmPmuError> {
        let type_path = dir.join("type");
        let type_text = read_text(&type_path)?;
        let perf_type = type_text
            .trim()
            .parse()
            .map_err(|_| malformed(&type_path, "a decimal perf type", &type_text))?;
        let cpus_path = dir.join("cpus");
        let cpus_text = read_text(&cpus_path)?;
        let cpus = parse_cpu_list(&cpus_text)
            .map_err(|_| malformed(&cpus_path, "a CPU list such as 0-3,6", &cpus_text))?;
        let mut events = Vec::new();
        let events_dir = dir.join("events");
        for event in list_dir(&events_dir)? {
            let path = events_dir.join(&event);
            let text = read_text(&path)?;
            let code =
                parse_event(text.trim()).ok_or_else(|| malformed(&path, "event=0xNNNN", &text))?;
            events.push((event, code));
        }
        let mut formats = Vec::new();
        let format_dir = dir.join("format");
        for field in list_dir(&format_dir)? {
            let text = read_text(&format_dir.join(&field))?;
            formats.push((field, text.trim().to_owned()));
        }
        let slots_path = dir.join("caps/slots");
        let slots = match fs::read_to_string(&slots_path) {
            Ok(text) => Some(
                parse_number(text.trim())
                    .ok_or_else(|| malformed(&slots_path, "a number such as 0x00000008", &text))?,
            )
            .filter(|&n| n > 0),
            // Older kernels, and cores without PMMIR_EL1, have no `caps/slots`.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(ArmPmuError::Read {
                    path: slots_path,
                    source,
                })
            }
        };
        Ok(ArmPmu {
            name,
            perf_type,
            cpus,
            events,
            formats,
            slots,
        })
    }

    /// The number of the event the kernel lists as `name` (e.g. `"cpu_cycles"`).
    pub fn event(&self, name: &str) -> Option<u16> {
        self.events
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, code)| code)
    }

    /// The placement of attribute field `name` (e.g. `"event"` → `"config:0-15"`).
    pub fn format(&self, name: &str) -> Option<&str> {
        self.formats
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, placement)| placement.as_str())
    }

    /// The common events (PMCEID-discoverable numbers) the kernel lists, as PMCEID0/1 would show them.
    /// Events outside 0x0000–0x003F and 0x4000–0x403F are not discoverable and not in the set.
    pub fn common_events(&self) -> CommonEventSet {
        let mut set = CommonEventSet::default();
        for &(_, code) in &self.events {
            // Numbers PMCEID cannot describe say nothing about the others; they are skipped.
            let _ = set.insert(code);
        }
        set
    }
}

/// MIDR_EL1 of `cpu`, from `cpus`/cpuN/regs/identification/midr_el1 (`cpus` normally [`SYSFS_CPUS`]).
pub fn midr(cpus: &Path, cpu: u32) -> Result<u64, ArmPmuError> {
    let path = cpus.join(format!("cpu{cpu}/regs/identification/midr_el1"));
    let text = read_text(&path)?;
    let digits = text.trim().strip_prefix("0x").unwrap_or("");
    u64::from_str_radix(digits, 16).map_err(|_| {
        malformed(
            &path,
            "a hexadecimal MIDR such as 0x00000000410fd083",
            &text,
        )
    })
}

fn read_text(path: &Path) -> Result<String, ArmPmuError> {
    fs::read_to_string(path).map_err(|source| ArmPmuError::Read {
        path: path.to_owned(),
        source,
    })
}

/// The names in folder `dir`, sorted.
fn list_dir(dir: &Path) -> Result<Vec<String>, ArmPmuError> {
    let read_err = |source| ArmPmuError::Read {
        path: dir.to_owned(),
        source,
    };
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(read_err)? {
        let entry = entry.map_err(read_err)?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

fn malformed(path: &Path, expected: &'static str, text: &str) -> ArmPmuError {
    ArmPmuError::Malformed {
        path: path.to_owned(),
        text: text.chars().take(64).collect(),
        expected,
    }
}

/// `0x00000008` or `8` → 8.
fn parse_number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(digits) => u32::from_str_radix(digits, 16).ok(),
        None => text.parse().ok(),
    }
}

/// `event=0x11` (the kernel may add further terms after a comma) → 0x11.
fn parse_event(text: &str) -> Option<u16> {
    let term = text.split(',').find_map(|t| t.strip_prefix("event="))?;
    let digits = term.strip_prefix("0x")?;
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs-like tree in a fresh temporary folder, removed on drop.
    struct Tree(PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir =
                std::env::temp_dir().join(format!("hwcpipe-armpmu-{}-{name}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn file(&self, path: &str, text: &str) -> &Tree {
            let path = self.0.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
            self
        }

        /// What the Debian 6.1 kernel shows for QEMU's Cortex-A72 model.
        fn a72(&self) -> &Tree {
            self.file("armv8_pmuv3/type", "8\n")
                .file("armv8_pmuv3/cpus", "0\n")
                .file("armv8_pmuv3/events/cpu_cycles", "event=0x0011\n")
                .file("armv8_pmuv3/events/inst_retired", "event=0x0008\n")
                .file("armv8_pmuv3/format/event", "config:0-15\n")
                .file("armv8_pmuv3/format/long", "config1:0\n")
                .file("software/type", "1\n")
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn reads_type_cpus_events_and_formats() {
        let tree = Tree::new("good");
        tree.a72().file("armv8_pmuv3/cpus", "0-2,5\n");
        let pmus = ArmPmu::discover(&tree.0).unwrap();
        assert_eq!(pmus.len(), 1, "software is not an Arm PMU");
        let pmu = &pmus[0];
        assert_eq!(pmu.name, "armv8_pmuv3");
        assert_eq!(pmu.perf_type, 8);
        assert_eq!(pmu.cpus, [0, 1, 2, 5]);
        assert_eq!(pmu.event("cpu_cycles"), Some(0x11));
        assert_eq!(pmu.event("l1d_cache"), None);
        assert_eq!(pmu.format("event"), Some("config:0-15"));
        assert_eq!(pmu.slots, None, "no caps/slots");
        let set = pmu.common_events();
        assert!(set.contains(0x11) && set.contains(0x08));
        assert!(!set.contains(0x04));
    }

    #[test]
    fn the_slots_capability_is_read_when_shown() {
        let tree = Tree::new("slots");
        tree.a72().file("armv8_pmuv3/caps/slots", "0x00000008\n");
        assert_eq!(ArmPmu::discover(&tree.0).unwrap()[0].slots, Some(8));
        tree.file("armv8_pmuv3/caps/slots", "0x00000000\n");
        assert_eq!(
            ArmPmu::discover(&tree.0).unwrap()[0].slots,
            None,
            "0: unknown"
        );
        tree.file("armv8_pmuv3/caps/slots", "eight\n");
        assert!(matches!(
            ArmPmu::discover(&tree.0),
            Err(ArmPmuError::Malformed { path, .. }) if path.ends_with("caps/slots")
        ));
    }

    #[test]
    fn no_arm_pmu_is_an_empty_list() {
        let tree = Tree::new("none");
        tree.file("software/type", "1\n");
        assert!(ArmPmu::discover(&tree.0).unwrap().is_empty());
    }

    #[test]
    fn malformed_files_are_typed_errors_naming_the_file() {
        for (name, file, text) in [
            ("type", "armv8_pmuv3/type", "eight\n"),
            ("cpus", "armv8_pmuv3/cpus", "3-1\n"),
            ("event", "armv8_pmuv3/events/cpu_cycles", "config=0x11\n"),
            ("code", "armv8_pmuv3/events/cpu_cycles", "event=0x1ffff\n"),
        ] {
            let tree = Tree::new(name);
            tree.a72().file(file, text);
            match ArmPmu::discover(&tree.0) {
                Err(ArmPmuError::Malformed {
                    path, text: held, ..
                }) => {
                    assert!(path.ends_with(file), "{name}: {}", path.display());
                    assert_eq!(held, text, "{name}");
                }
                other => panic!("{name}: {other:?}"),
            }
        }
    }

    #[test]
    fn missing_files_are_read_errors() {
        let tree = Tree::new("missing");
        tree.a72();
        fs::remove_file(tree.0.join("armv8_pmuv3/cpus")).unwrap();
        assert!(matches!(
            ArmPmu::discover(&tree.0),
            Err(ArmPmuError::Read { path, .. }) if path.ends_with("cpus")
        ));
        assert!(matches!(
            ArmPmu::discover(&tree.0.join("absent")),
            Err(ArmPmuError::Read { .. })
        ));
    }

    #[test]
    fn midr_is_read_as_hexadecimal() {
        let tree = Tree::new("midr");
        tree.file("cpu0/regs/identification/midr_el1", "0x00000000410fd083\n")
            .file("cpu1/regs/identification/midr_el1", "410fd083\n");
        assert_eq!(midr(&tree.0, 0).unwrap(), 0x410f_d083);
        assert!(matches!(
            midr(&tree.0, 1),
            Err(ArmPmuError::Malformed { .. })
        ));
        assert!(matches!(midr(&tree.0, 2), Err(ArmPmuError::Read { .. })));
    }
}
