//! The CPU's counters: `perf_event_open` probed for software and hardware events, for this process and for
//! a whole CPU, with the settings that explain a refusal (`perf_event_paranoid`, Android's
//! `security.perf_harden`, `perf_user_access`, the process's capabilities) and the Arm PMU as the kernel
//! describes it.

use std::path::Path;
use std::process::Command;

use hwcpipe::cpu::PMU_DATA_VAR;
use hwcpipe::sys::arm_pmu::{ArmPmu, SYSFS_PMU_DEVICES};
use hwcpipe::sys::perf_event_attr::{flag, PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE};
use hwcpipe::sys::{LinuxPerf, PerfEventAttr, PerfSys};

use crate::errno::{perf_open_refusal, Paranoia};
use crate::{Check, SourceKind, SourceReport, Status};

/// `PERF_COUNT_HW_CPU_CYCLES`.
const HW_CPU_CYCLES: u64 = 0;
/// `PERF_COUNT_SW_TASK_CLOCK`.
const SW_TASK_CLOCK: u64 = 1;
/// `PERF_COUNT_SW_CPU_CLOCK`.
const SW_CPU_CLOCK: u64 = 0;
/// `CAP_SYS_ADMIN`'s bit in the capability sets.
const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_PERFMON`'s bit.
const CAP_PERFMON: u32 = 38;

/// Checks the CPU's counters on this machine.
pub fn cpu() -> SourceReport {
    let mut checks = Vec::new();
    if !hwcpipe::sys::perf_event_open_implemented() {
        let (cause, fix) = perf_open_refusal(rustix::io::Errno::NOSYS.raw_os_error(), None);
        checks.push(
            Check::new(
                "perf_event_open",
                Status::Failed,
                "the kernel has no perf events",
            )
            .because(cause)
            .fix(fix.unwrap_or_default()),
        );
        return SourceReport::new(SourceKind::Cpu, checks);
    }
    let paranoid = LinuxPerf.perf_event_paranoid().ok();
    let privileged = privileged();
    checks.push(paranoid_check(paranoid, privileged));
    if let Some(check) = perf_harden() {
        checks.push(check);
    }
    if let Some(check) = perf_user_access() {
        checks.push(check);
    }
    checks.push(match privileged {
        Some(caps) => Check::new(
            "privileges",
            Status::Info,
            format!("this process has {caps}: perf_event_paranoid does not limit it"),
        ),
        None => Check::new(
            "privileges",
            Status::Info,
            "this process has neither CAP_PERFMON nor CAP_SYS_ADMIN: perf_event_paranoid applies",
        ),
    });
    checks.push(probe(
        "software events",
        PERF_TYPE_SOFTWARE,
        SW_TASK_CLOCK,
        0,
        -1,
        "task-clock of this process counts",
        Status::Failed,
        paranoid,
    ));
    checks.push(probe(
        "hardware events",
        PERF_TYPE_HARDWARE,
        HW_CPU_CYCLES,
        0,
        -1,
        "CPU cycles of this process count (user space)",
        Status::Failed,
        paranoid,
    ));
    checks.push(probe(
        "whole CPUs",
        PERF_TYPE_SOFTWARE,
        SW_CPU_CLOCK,
        -1,
        0,
        "CPU 0 can be counted as a whole (lizard capture --system-wide)",
        Status::Warning,
        paranoid,
    ));
    checks.extend(arm_pmu());
    SourceReport::new(SourceKind::Cpu, checks)
}

/// What `perf_event_paranoid` allows this process. A fact, not a verdict: the probes that follow say what
/// opens (mainline kernels treat 3 as 2, Debian's and Android's forbid everything at 3).
fn paranoid_check(paranoid: Option<i32>, privileged: Option<&'static str>) -> Check {
    let Some(level) = paranoid else {
        return Check::new(
            "perf_event_paranoid",
            Status::Warning,
            "/proc/sys/kernel/perf_event_paranoid cannot be read",
        );
    };
    let allowed = Paranoia::from_level(level);
    let mut found = format!("kernel.perf_event_paranoid = {level}: {allowed}");
    if privileged.is_some() {
        found.push_str(" (not for this process: it has the capability)");
    }
    let check = Check::new("perf_event_paranoid", Status::Info, found);
    match (allowed.allows_cpu_wide(), privileged) {
        (false, None) => check.fix(
            "sudo sysctl kernel.perf_event_paranoid=-1 to count whole CPUs (1 for one's own processes with the kernel)",
        ),
        _ => check,
    }
}

/// The capability that lifts `perf_event_paranoid`'s limits from this process, if it has one.
fn privileged() -> Option<&'static str> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())?;
    if effective & (1 << CAP_PERFMON) != 0 {
        Some("CAP_PERFMON")
    } else if effective & (1 << CAP_SYS_ADMIN) != 0 {
        Some("CAP_SYS_ADMIN")
    } else {
        None
    }
}

/// Android's `security.perf_harden`, where there is a `getprop` that knows it.
fn perf_harden() -> Option<Check> {
    let out = Command::new("getprop")
        .arg("security.perf_harden")
        .output()
        .ok()?;
    let value = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match value.as_str() {
        "1" => Some(
            Check::new(
                "security.perf_harden",
                Status::Failed,
                "security.perf_harden = 1: Android forbids perf events to apps and the shell",
            )
            .fix("adb shell setprop security.perf_harden 0"),
        ),
        "" => None,
        other => Some(Check::new(
            "security.perf_harden",
            Status::Info,
            format!("security.perf_harden = {other}"),
        )),
    }
}

/// `kernel.perf_user_access` (arm64, Linux 5.17 on): whether user space may read the counters directly.
fn perf_user_access() -> Option<Check> {
    let text = std::fs::read_to_string("/proc/sys/kernel/perf_user_access").ok()?;
    let value = text.trim();
    Some(match value {
        "1" => Check::new(
            "perf_user_access",
            Status::Ok,
            "kernel.perf_user_access = 1: counters are read in user space (MRS), without a system call",
        ),
        _ => Check::new(
            "perf_user_access",
            Status::Warning,
            format!("kernel.perf_user_access = {value}: every read is a read() system call"),
        )
        .because(el0_read_reason())
        .fix("sudo sysctl kernel.perf_user_access=1"),
    })
}

/// Why a user-space read of a counter traps while `perf_user_access` is 0, as the PMU's own diagnosis gives
/// it: the kernel leaves PMUSERENR_EL0 clear.
fn el0_read_reason() -> String {
    use pmu_regs::diagnosis::{AccessKind, AccessPath, Counter, PmuSnapshot};
    use pmu_regs::soft_pmu::ExecContext;
    use pmu_regs::{Pmcr, PmuVersion};
    let pmcr = Pmcr::default();
    let pmcr = pmcr.with_n(6).unwrap_or(pmcr).with_e(true);
    let snapshot = PmuSnapshot::new(PmuVersion::V3, pmcr, ExecContext::USER, AccessPath::El0);
    let reasons: Vec<String> = snapshot
        .why_access_denied(Counter::Event(0), AccessKind::Read)
        .iter()
        .map(|r| r.to_string())
        .collect();
    if reasons.is_empty() {
        "the kernel leaves PMUSERENR_EL0 clear".to_owned()
    } else {
        format!(
            "the kernel leaves PMUSERENR_EL0 clear, so {}",
            reasons.join("; ")
        )
    }
}

/// Opens event `config` of `type_` for `pid` on `cpu` (user space only), closes it, and says what that means;
/// a refusal gets `refused` as its verdict.
#[allow(clippy::too_many_arguments)]
fn probe(
    name: &str,
    type_: u32,
    config: u64,
    pid: i32,
    cpu: i32,
    works: &str,
    refused: Status,
    paranoid: Option<i32>,
) -> Check {
    let mut attr = PerfEventAttr::counting(type_, config);
    attr.flags |= flag::DISABLED | flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV;
    match LinuxPerf.perf_event_open(&attr, pid, cpu, None) {
        Ok(fd) => {
            let _ = LinuxPerf.close(fd);
            Check::new(name, Status::Ok, works)
        }
        Err(err) => {
            let errno = err.raw_os_error().unwrap_or(0);
            let (cause, fix) = perf_open_refusal(errno, paranoid);
            // A hardware event the kernel has no PMU driver for is not here, rather than refused.
            let absent = type_ == PERF_TYPE_HARDWARE
                && [rustix::io::Errno::NOENT, rustix::io::Errno::OPNOTSUPP]
                    .iter()
                    .any(|e| e.raw_os_error() == errno);
            let refused = if absent { Status::Absent } else { refused };
            let check =
                Check::new(name, refused, format!("perf_event_open refused: {err}")).because(cause);
            match fix {
                Some(fix) => check.fix(fix),
                None => check,
            }
        }
    }
}

/// The Arm PMUs the kernel describes: name, CPUs, counters and how many common events PMCEID lists.
fn arm_pmu() -> Vec<Check> {
    let pmus = match ArmPmu::discover(Path::new(SYSFS_PMU_DEVICES)) {
        Ok(pmus) => pmus,
        Err(err) => {
            return vec![Check::new(
                "Arm PMU",
                Status::Warning,
                format!("the kernel's PMU description cannot be read: {err}"),
            )]
        }
    };
    if pmus.is_empty() {
        return vec![Check::new(
            "Arm PMU",
            Status::Info,
            "the kernel describes no Arm PMU (another architecture, or no PMU driver)",
        )];
    }
    let mut checks: Vec<Check> = pmus
        .iter()
        .map(|pmu| {
            let slots = pmu.slots.map_or_else(
                || {
                    "PMMIR_EL1.SLOTS not shown (caps/slots): the top-down metrics need it"
                        .to_owned()
                },
                |n| {
                    format!("{n} issue slots a cycle (PMMIR_EL1.SLOTS, the top-down metrics' unit)")
                },
            );
            Check::new(
                format!("Arm PMU {}", pmu.name),
                Status::Info,
                format!(
                    "type {}, CPUs {:?}, {slots}, {} common events implemented (PMCEID0/1)",
                    pmu.perf_type,
                    pmu.cpus,
                    {
                        let set = pmu.common_events();
                        set.pmceid0().count_ones() + set.pmceid1().count_ones()
                    }
                ),
            )
        })
        .collect();
    checks.push(event_lists());
    checks
}

/// Whether Arm's per-core event lists are given (`LIZARD_PMU_DATA`) and have this CPU's cores.
fn event_lists() -> Check {
    let name = "Arm's PMU event lists";
    let unset = || {
        Check::new(
            name,
            Status::Info,
            format!(
                "{PMU_DATA_VAR} is not set: events are named by the architecture and the kernel's list only"
            ),
        )
        .fix(format!(
            "for every event of the core and its description: export {PMU_DATA_VAR}=DIR, a copy of \
             https://github.com/ARM-software/data"
        ))
    };
    match hwcpipe::cpu::PmuData::from_env() {
        Ok(None) => unset(),
        Err(err) => Check::new(
            name,
            Status::Warning,
            format!(
                "{PMU_DATA_VAR} cannot be read: {}",
                lizard_core::error_chain(&err)
            ),
        )
        .fix(format!(
            "point {PMU_DATA_VAR} at a copy of https://github.com/ARM-software/data"
        )),
        Ok(Some(data)) => {
            match hwcpipe::cpu::CpuPmus::discover_with(&hwcpipe::sys::LinuxPerf, Some(&data)) {
                Ok(pmus) => {
                    let cores: Vec<String> = pmus
                        .pmus()
                        .iter()
                        .map(|p| match &p.core {
                            Some(core) => format!("{} (listed)", core),
                            None => format!("{} (no list for its MIDR)", p.name),
                        })
                        .collect();
                    Check::new(
                        name,
                        Status::Info,
                        format!("{}: {}", data.dir().display(), cores.join(", ")),
                    )
                }
                Err(err) => Check::new(
                    name,
                    Status::Warning,
                    format!(
                        "{}: {}",
                        data.dir().display(),
                        lizard_core::error_chain(&err)
                    ),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paranoid_level_is_a_fact_with_a_fix_where_it_limits() {
        assert_eq!(paranoid_check(Some(3), None).status, Status::Info);
        assert!(paranoid_check(Some(3), None)
            .fix
            .unwrap()
            .contains("perf_event_paranoid=-1"));
        assert!(paranoid_check(Some(3), Some("CAP_PERFMON")).fix.is_none());
        assert!(paranoid_check(Some(-1), None).fix.is_none());
        assert_eq!(paranoid_check(None, None).status, Status::Warning);
    }

    #[test]
    fn a_trapping_user_space_read_is_explained_by_the_pmus_own_diagnosis() {
        let reason = el0_read_reason();
        assert!(reason.contains("PMUSERENR"), "{reason}");
    }

    #[test]
    fn this_machine_answers_every_check() {
        // Whatever this machine allows, every check has a verdict, and a refusal a cause.
        let report = cpu();
        assert!(!report.checks.is_empty());
        for check in &report.checks {
            if check.status == Status::Failed {
                assert!(check.cause.is_some() || check.fix.is_some(), "{check:?}");
            }
        }
    }
}
