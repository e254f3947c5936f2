//! What machine a capture ran on, as a run document states it: host name, kernel, architecture, the
//! online CPUs and, on Arm, each core's MIDR_EL1 (which names its design). Read from `/proc` and sysfs;
//! what cannot be read is left out (`None` or empty), never guessed.

use std::path::Path;

/// The machine this process runs on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Machine {
    /// `/proc/sys/kernel/hostname`.
    pub host: Option<String>,
    /// The kernel: `/proc/sys/kernel/ostype` and `osrelease` (`Linux 6.1.0-13-arm64`).
    pub kernel: Option<String>,
    /// The architecture this library was built for (`aarch64`, `x86_64`).
    pub arch: &'static str,
    /// The online CPUs (`/sys/devices/system/cpu/online`).
    pub online_cpus: Vec<u32>,
    /// Each online CPU's MIDR_EL1 where the kernel shows it (Arm only), as `(cpu, midr)`.
    pub midr: Vec<(u32, u64)>,
    /// The CPU model the kernel names in `/proc/cpuinfo` (`model name`, other architectures).
    pub cpu_model: Option<String>,
}

impl Machine {
    /// The machine this process runs on.
    pub fn this() -> Machine {
        Machine::under(Path::new("/"))
    }

    /// The machine whose `/proc` and `/sys` are under `root` (`/` for this one; a copied tree in tests).
    pub fn under(root: &Path) -> Machine {
        let text = |path: &str| {
            std::fs::read_to_string(root.join(path))
                .ok()
                .map(|t| t.trim().to_owned())
                .filter(|t| !t.is_empty())
        };
        let kernel = match (
            text("proc/sys/kernel/ostype"),
            text("proc/sys/kernel/osrelease"),
        ) {
            (Some(os), Some(release)) => Some(format!("{os} {release}")),
            (None, Some(release)) => Some(release),
            _ => None,
        };
        let online_cpus = text("sys/devices/system/cpu/online")
            .and_then(|list| hwcpipe::counting::parse_cpu_list(&list).ok())
            .unwrap_or_default();
        let cpus = root.join("sys/devices/system/cpu");
        let midr = online_cpus
            .iter()
            .filter_map(|&cpu| Some((cpu, hwcpipe::sys::arm_pmu::midr(&cpus, cpu).ok()?)))
            .collect();
        let cpu_model = text("proc/cpuinfo").and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        });
        Machine {
            host: text("proc/sys/kernel/hostname"),
            kernel,
            arch: std::env::consts::ARCH,
            online_cpus,
            midr,
            cpu_model,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch tree removed when dropped.
    struct Tree(std::path::PathBuf);

    impl Tree {
        fn new(name: &str) -> Tree {
            let dir =
                std::env::temp_dir().join(format!("lizard-machine-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Tree(dir)
        }

        fn file(&self, path: &str, text: &str) -> &Tree {
            let path = self.0.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
            self
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn an_arm_machine_is_named_by_its_kernel_and_cores() {
        let tree = Tree::new("arm");
        tree.file("proc/sys/kernel/hostname", "board\n")
            .file("proc/sys/kernel/ostype", "Linux\n")
            .file("proc/sys/kernel/osrelease", "6.1.0-13-arm64\n")
            .file("sys/devices/system/cpu/online", "0-1,3\n")
            .file(
                "sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
                "0x00000000410fd034\n",
            )
            .file(
                "sys/devices/system/cpu/cpu1/regs/identification/midr_el1",
                "0x00000000410fd034\n",
            )
            .file(
                "sys/devices/system/cpu/cpu3/regs/identification/midr_el1",
                "0x00000000410fd083\n",
            );
        let m = Machine::under(&tree.0);
        assert_eq!(m.host.as_deref(), Some("board"));
        assert_eq!(m.kernel.as_deref(), Some("Linux 6.1.0-13-arm64"));
        assert_eq!(m.online_cpus, [0, 1, 3]);
        assert_eq!(
            m.midr,
            [(0, 0x410f_d034), (1, 0x410f_d034), (3, 0x410f_d083)]
        );
        assert_eq!(m.cpu_model, None);
    }

    #[test]
    fn what_cannot_be_read_is_left_out() {
        let tree = Tree::new("bare");
        tree.file(
            "proc/cpuinfo",
            "processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n",
        )
        .file("sys/devices/system/cpu/online", "not a list\n")
        .file("proc/sys/kernel/hostname", "\n");
        let m = Machine::under(&tree.0);
        assert_eq!((m.host, m.kernel), (None, None));
        assert!(m.online_cpus.is_empty() && m.midr.is_empty());
        assert_eq!(m.cpu_model.as_deref(), Some("Some CPU @ 2GHz"));
        assert_eq!(m.arch, std::env::consts::ARCH);
    }

    #[test]
    fn this_machine_has_a_kernel_and_cpus() {
        let m = Machine::this();
        assert!(
            m.kernel.as_deref().is_some_and(|k| k.starts_with("Linux ")),
            "{m:?}"
        );
        assert!(!m.online_cpus.is_empty(), "{m:?}");
    }
}
