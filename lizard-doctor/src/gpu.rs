//! The Mali GPU's counters: the device node and whether this user may open it, the kbase driver's version
//! and counter interfaces, the GPU and whether Arm's counter database knows it, and SELinux's mode.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use hwcpipe::gpu::{Backend, GpuError, GpuProfiler};

use crate::{Check, SourceKind, SourceReport, Status};

/// The device nodes `doctor` looks for.
const MAX_NODES: u32 = 8;

/// Checks the Mali GPU's counters on this machine.
pub fn gpu() -> SourceReport {
    let mut checks = Vec::new();
    let nodes: Vec<PathBuf> = (0..MAX_NODES)
        .map(|n| PathBuf::from(format!("/dev/mali{n}")))
        .filter(|p| p.exists())
        .collect();
    if nodes.is_empty() {
        // Without the module there is no Mali GPU to speak of; with it loaded, the driver found no GPU.
        let (status, state) = driver_state();
        checks.push(
            Check::new("/dev/mali*", status, "no Mali device node")
                .because(state)
                .fix("load the kbase driver: sudo modprobe mali_kbase (or insmod mali_kbase.ko)"),
        );
    }
    for node in &nodes {
        checks.extend(node_checks(node));
    }
    if let Some(check) = selinux() {
        checks.push(check);
    }
    SourceReport::new(SourceKind::Gpu, checks)
}

/// Whether the kbase module is loaded, for a machine without a device node: the verdict and why.
fn driver_state() -> (Status, String) {
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    if modules.lines().any(|l| l.starts_with("mali_kbase ")) {
        (
            Status::Failed,
            "the mali_kbase module is loaded but made no device node (no GPU probed: see dmesg)"
                .to_owned(),
        )
    } else {
        (
            Status::Absent,
            "no Mali GPU here, or its kbase driver (mali_kbase) is not loaded".to_owned(),
        )
    }
}

/// The checks of one device node.
fn node_checks(node: &Path) -> Vec<Check> {
    let name = node.display().to_string();
    let mut checks = Vec::new();
    if let Ok(meta) = std::fs::metadata(node) {
        checks.push(Check::new(
            name.clone(),
            Status::Info,
            format!(
                "mode {:04o}, owner uid {}, group gid {}",
                meta.permissions().mode() & 0o7777,
                meta.uid(),
                meta.gid()
            ),
        ));
    }
    match GpuProfiler::open_path(node, None) {
        Ok(profiler) => {
            let info = profiler.info();
            let readers: Vec<&str> = info
                .offered
                .iter()
                .map(|b| match b {
                    Backend::Vinstr => "vinstr",
                    Backend::KinstrPrfcnt => "kinstr_prfcnt",
                })
                .collect();
            checks.push(Check::new(
                "kbase driver",
                Status::Ok,
                format!(
                    "interface {}, counter readers offered: {}",
                    info.version,
                    readers.join(", ")
                ),
            ));
            let catalog = profiler.mali_counters();
            let available = catalog.iter().filter(|(_, c)| c.is_available()).count();
            let gpu = format!(
                "{} (product id {:#06x})",
                info.product.name, info.product.id
            );
            checks.push(if catalog.is_empty() {
                Check::new(
                    "Arm's counter database",
                    Status::Warning,
                    format!("{gpu}: not in Arm's database; only HWCPipe's own {} counters", profiler.supported_counters().len()),
                )
            } else {
                Check::new(
                    "Arm's counter database",
                    Status::Ok,
                    format!(
                        "{gpu}: {available} of its {} database counters readable, and {} of HWCPipe's",
                        catalog.len(),
                        profiler.supported_counters().len()
                    ),
                )
            });
        }
        Err(err) => checks.push(open_failure(&name, &err)),
    }
    checks
}

/// Why the GPU could not be opened, and the fix.
fn open_failure(name: &str, err: &GpuError) -> Check {
    let text = lizard_core::error_chain(err);
    let check = Check::new(
        name.to_owned(),
        Status::Failed,
        format!("cannot read counters: {text}"),
    );
    // The profiler names the device around the cause: the cause says what to do.
    let mut cause = err;
    while let GpuError::OnDevice { source, .. } = cause {
        cause = source;
    }
    match cause {
        GpuError::PermissionDenied { .. } => check
            .because("this user may not open the device node")
            .fix(format!(
                "sudo chmod 0666 {name} (or add this user to the node's group); on Android run from adb shell"
            )),
        GpuError::NotKbase => check.because("the device is not Arm's kbase driver (another GPU driver, such as Panfrost, has no kbase counters)"),
        GpuError::DriverTooOld { .. } => check.because("the kbase driver predates the hardware counter reader").fix("update the GPU driver"),
        _ => check,
    }
}

/// SELinux's mode, where it runs.
fn selinux() -> Option<Check> {
    let enforce = std::fs::read_to_string("/sys/fs/selinux/enforce").ok()?;
    Some(match enforce.trim() {
        "1" => Check::new(
            "SELinux",
            Status::Info,
            "enforcing: on Android it can deny /dev/mali0 and perf events to a shell or an app",
        )
        .fix("on a development device: adb shell setenforce 0"),
        _ => Check::new("SELinux", Status::Info, "permissive"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_open_says_how_to_allow_it() {
        let err = GpuError::PermissionDenied {
            path: PathBuf::from("/dev/mali0"),
            source: std::io::Error::from_raw_os_error(13),
        };
        let check = open_failure("/dev/mali0", &err);
        assert_eq!(check.status, Status::Failed);
        assert!(check.fix.unwrap().contains("chmod 0666 /dev/mali0"));
        let check = open_failure("/dev/mali0", &GpuError::NotKbase);
        assert!(check.cause.unwrap().contains("kbase"));
        // As GpuProfiler::open reports it: inside the error naming the device.
        let on_device = GpuError::OnDevice {
            device: "/dev/mali0".into(),
            version: None,
            source: Box::new(GpuError::PermissionDenied {
                path: PathBuf::from("/dev/mali0"),
                source: std::io::Error::from_raw_os_error(13),
            }),
        };
        let check = open_failure("/dev/mali0", &on_device);
        assert!(check.fix.unwrap().contains("chmod 0666 /dev/mali0"));
    }

    #[test]
    fn a_refused_open_named_by_the_profiler_says_how_to_allow_it() {
        // `GpuProfiler::open_path` names the device around the cause, once or more.
        let refused = GpuError::PermissionDenied {
            path: PathBuf::from("/dev/mali0"),
            source: std::io::Error::from_raw_os_error(13),
        };
        let named = GpuError::OnDevice {
            device: "/dev/mali0".to_owned(),
            version: None,
            source: Box::new(GpuError::OnDevice {
                device: "/dev/mali0".to_owned(),
                version: None,
                source: Box::new(refused),
            }),
        };
        let check = open_failure("/dev/mali0", &named);
        assert_eq!(check.status, Status::Failed);
        assert!(check.found.contains("permission denied"), "{}", check.found);
        assert!(check.fix.unwrap().contains("chmod 0666 /dev/mali0"));
    }

    #[test]
    fn this_machine_answers() {
        let report = gpu();
        // Without a Mali GPU (as here, usually) the report says so and how to load the driver.
        if !Path::new("/dev/mali0").exists() {
            assert!(!report.works);
            assert!(report.checks[0]
                .fix
                .as_deref()
                .unwrap()
                .contains("mali_kbase"));
        }
    }
}
