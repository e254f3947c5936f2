//! For the tests that need the machine's own `perf_event_open`.

/// `false`, after saying so on stderr, where the kernel (or an emulator such as qemu-user) has no
/// `perf_event_open`: tests that need the real call skip there.
pub fn perf_events_present() -> bool {
    let present = hwcpipe::sys::perf_event_open_implemented();
    if !present {
        test_data::skip!(
            test_data::Fixture::PerfEvents,
            "this kernel or emulator has no perf_event_open (ENOSYS)"
        );
    }
    present
}

/// The first Arm CPU PMU the kernel describes in sysfs, or `None`, after saying why on stderr, on
/// a machine without one. Inside the emulated Arm system of `.ci/arm-vm` (which sets
/// `LIZARD_ARM_VM`) a missing PMU is a failure, not a skip.
#[allow(dead_code)]
pub fn arm_pmu() -> Option<hwcpipe::cpu::arm_pmu::ArmPmu> {
    use hwcpipe::cpu::arm_pmu::{ArmPmu, SYSFS_PMU_DEVICES};
    let in_arm_vm = std::env::var_os("LIZARD_ARM_VM").is_some();
    if !cfg!(target_arch = "aarch64") {
        test_data::skip!(
            test_data::Fixture::ArmPmu,
            "the Arm PMU is only reachable from an aarch64 build"
        );
        return None;
    }
    if !perf_events_present() {
        assert!(!in_arm_vm, "the Arm VM's kernel must have perf_event_open");
        return None;
    }
    let pmus = ArmPmu::discover(std::path::Path::new(SYSFS_PMU_DEVICES))
        .unwrap_or_else(|e| panic!("sysfs PMU description: {e}"));
    let pmu = pmus.into_iter().next();
    if pmu.is_none() {
        assert!(!in_arm_vm, "the Arm VM's kernel must describe an armv8 PMU");
        test_data::skip!(
            test_data::Fixture::ArmPmu,
            "the kernel describes no Arm CPU PMU in {SYSFS_PMU_DEVICES}"
        );
    }
    pmu
}

/// Whether cycle and instruction counts are exact here: only in the Arm VM run with `--icount`
/// (`-icount shift=0 -smp 1`, every instruction one cycle), which sets `LIZARD_ARM_VM=icount`.
/// Says why on stderr when they are not.
#[allow(dead_code)]
pub fn counts_are_exact() -> bool {
    let exact = std::env::var("LIZARD_ARM_VM").as_deref() == Ok("icount");
    if !exact {
        test_data::skip!(
            test_data::Fixture::ArmIcount,
            "exact counts need the Arm VM with -icount (LIZARD_ARM_VM=icount)"
        );
    }
    exact
}
