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
