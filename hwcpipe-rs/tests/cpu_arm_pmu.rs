//! The CPU side against a real Arm kernel and PMU: the kernel's `armv8_pmuv3` driver, as on a phone or
//! an Arm server, here driven by QEMU's emulated PMUv3 in the system that `.ci/arm-vm` boots. Elsewhere
//! each test prints why it skips. Under `.ci/arm-vm --icount` (`-icount shift=0 -smp 1`) every
//! instruction is one cycle and counts are exact and repeatable, so the loops below are counted to the
//! instruction.
#![allow(unsafe_code)]

#[path = "support/real_kernel.rs"]
mod real_kernel;

use std::hint::black_box;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use hwcpipe::cpu::arm_pmu::{self, ArmPmu, SYSFS_CPUS};
use hwcpipe::cpu::{CpuConfig, CpuCounter, CpuProfiler, KernelCounting, UnavailableReason};
use hwcpipe::sys::perf_event_attr::{flag, PERF_TYPE_HARDWARE, PERF_TYPE_RAW};
use hwcpipe::sys::{LinuxPerf, PerfEventAttr, PerfIoctl, PerfSys};
use pmu_regs::catalog::CpuList;
use real_kernel::{arm_pmu, counts_are_exact};

/// `PERF_COUNT_HW_CPU_CYCLES` and `PERF_COUNT_HW_INSTRUCTIONS`.
const HW_CYCLES: u64 = 0;
const HW_INSTRUCTIONS: u64 = 1;
/// Arm's CPU_CYCLES and INST_RETIRED event numbers.
const CPU_CYCLES: u64 = 0x11;
const INST_RETIRED: u64 = 0x08;

/// Arm's published CPU list (`cpus.json` of ARM-software/data, Apache-2.0), kept in
/// `../shared/data/arm-pmu-data/`; `None` after a skip message when the data folder is absent.
fn cpus_json() -> Option<PathBuf> {
    test_data::path("arm-pmu-data/cpus.json")
}

/// User-space instructions of the measured region of [`counted_loop`] besides the loop itself.
#[cfg(target_arch = "aarch64")]
const LOOP_OVERHEAD: u64 = 4;

/// Enables the event `fd`, runs a loop of exactly `iterations` × 2 instructions, disables it: all in
/// one `asm!` block, so the user-space instructions counted are known one by one. Returns the count.
///
/// Counted (at EL0, between the two `svc`): `mov` of the enable result, two `mov`s that set up the
/// disable call, the loop (`subs` and `b.ne`, `iterations` times), and the `svc` that disables the
/// event, which retires at EL0 before the kernel runs — [`LOOP_OVERHEAD`] = 4 beside the loop.
#[cfg(target_arch = "aarch64")]
fn counted_loop(fd: std::os::fd::BorrowedFd<'_>, iterations: u64) -> u64 {
    use std::os::fd::AsRawFd;
    assert!(iterations > 0, "the loop runs at least once");
    let raw = fd.as_raw_fd() as u64;
    let enabled: i64;
    let disabled: i64;
    // SAFETY: the block makes two ioctl(2) system calls (number 29 on arm64) on a perf descriptor we
    // own, PERF_EVENT_IOC_ENABLE (0x2400) and PERF_EVENT_IOC_DISABLE (0x2401) with argument 0, which
    // touch no user memory; every register it writes is declared as an output, and the stack is
    // not used.
    unsafe {
        std::arch::asm!(
            "mov x8, #29",
            "mov x0, {fd}",
            "mov x1, #0x2400",
            "mov x2, #0",
            "svc #0",
            "mov {enabled}, x0",
            "mov x0, {fd}",
            "mov x1, #0x2401",
            "2:",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            "svc #0",
            fd = in(reg) raw,
            n = inout(reg) iterations => _,
            enabled = out(reg) enabled,
            out("x0") disabled,
            out("x1") _,
            out("x2") _,
            out("x8") _,
            options(nostack),
        );
    }
    assert_eq!(enabled, 0, "PERF_EVENT_IOC_ENABLE");
    assert_eq!(disabled, 0, "PERF_EVENT_IOC_DISABLE");
    let mut value = [0u8; 8];
    let n = LinuxPerf.read(fd, &mut value).expect("read the count");
    assert_eq!(n, 8);
    u64::from_ne_bytes(value)
}

/// A disabled, user-space-only counting event of the calling thread.
fn user_event(type_: u32, config: u64) -> std::io::Result<std::os::fd::OwnedFd> {
    let mut attr = PerfEventAttr::counting(type_, config);
    attr.flags = flag::DISABLED | flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV;
    LinuxPerf.perf_event_open(&attr, 0, -1, None)
}

/// Cycles and instructions, each by its generic perf number, by its Arm event number as a raw event,
/// and by the Arm event number with the PMU's own sysfs type.
fn cycle_and_instruction_events(pmu: &ArmPmu) -> [(&'static str, u32, u64); 6] {
    [
        ("generic cycles", PERF_TYPE_HARDWARE, HW_CYCLES),
        ("raw CPU_CYCLES", PERF_TYPE_RAW, CPU_CYCLES),
        ("PMU-typed CPU_CYCLES", pmu.perf_type, CPU_CYCLES),
        ("generic instructions", PERF_TYPE_HARDWARE, HW_INSTRUCTIONS),
        ("raw INST_RETIRED", PERF_TYPE_RAW, INST_RETIRED),
        ("PMU-typed INST_RETIRED", pmu.perf_type, INST_RETIRED),
    ]
}

#[test]
fn cycles_and_instructions_count_through_the_arm_pmu() {
    let Some(pmu) = arm_pmu() else { return };
    for (name, type_, config) in cycle_and_instruction_events(&pmu) {
        let fd = user_event(type_, config).unwrap_or_else(|e| panic!("{name}: {e}"));
        LinuxPerf.ioctl(fd.as_fd(), PerfIoctl::EnableGroup).unwrap();
        black_box((0..200_000u64).map(black_box).sum::<u64>());
        LinuxPerf
            .ioctl(fd.as_fd(), PerfIoctl::DisableGroup)
            .unwrap();
        let mut value = [0u8; 8];
        assert_eq!(LinuxPerf.read(fd.as_fd(), &mut value).unwrap(), 8);
        let count = u64::from_ne_bytes(value);
        assert!(
            count > 200_000,
            "{name} counted {count} for 200000 iterations"
        );
    }
}

#[test]
fn a_known_loop_is_counted_to_the_instruction() {
    let Some(pmu) = arm_pmu() else { return };
    if !counts_are_exact() {
        return;
    }
    #[cfg(target_arch = "aarch64")]
    for (name, type_, config) in cycle_and_instruction_events(&pmu) {
        for iterations in [1u64, 1000, 1_000_000] {
            let fd = user_event(type_, config).unwrap_or_else(|e| panic!("{name}: {e}"));
            let count = counted_loop(fd.as_fd(), iterations);
            assert_eq!(
                count,
                2 * iterations + LOOP_OVERHEAD,
                "{name} of a loop of {iterations} × 2 instructions"
            );
        }
    }
    let _ = pmu;
}

#[test]
fn the_profiler_reads_cycles_and_instructions_in_one_group() {
    let Some(_pmu) = arm_pmu() else { return };
    let counters = [
        CpuCounter::Cycles,
        CpuCounter::Instructions,
        CpuCounter::InstrRetired,
    ];
    let config = CpuConfig::new(&counters).kernel(KernelCounting::Exclude);
    let mut profiler = CpuProfiler::new(config).expect("Arm PMU counters");
    for c in counters {
        assert_eq!(profiler.availability(c), Ok(()), "{c}");
    }
    profiler.run().unwrap();
    let mut deltas = Vec::new();
    // The first samples run a little more code (first use of each path); from the third on, the
    // profiler's own instructions between two samples are the same every time.
    for iterations in [100_000u64, 100_000, 100_000, 300_000, 200_000] {
        black_box((0..iterations).map(black_box).sum::<u64>());
        let sample = profiler.sample().unwrap();
        let readings: Vec<_> = counters
            .iter()
            .map(|&c| *sample.reading(c).expect("read"))
            .collect();
        // One group: one read, one enabled time for all three, never multiplexed.
        for r in &readings {
            assert_eq!(r.time_enabled, readings[0].time_enabled, "{:?}", r.counter);
            assert!(!r.is_multiplexed(), "{:?}", r.counter);
            assert!(r.delta >= iterations, "{:?}: {}", r.counter, r.delta);
        }
        // The generic instruction event is INST_RETIRED: the same count over the same interval.
        assert_eq!(readings[1].delta, readings[2].delta);
        deltas.push(readings[1].delta);
    }
    if counts_are_exact() {
        // Each delta is (the loop's instructions per iteration × iterations) + one constant: the
        // 300000-iteration delta exceeds the 200000 one exactly as much as that one exceeds the
        // 100000 one.
        assert_eq!(deltas[3] - deltas[4], deltas[4] - deltas[2], "{deltas:?}");
    }
    profiler.stop().unwrap();
}

#[test]
fn pmu_discovery_names_the_core_and_its_events() {
    let Some(pmu) = arm_pmu() else { return };
    assert!(
        pmu.perf_type > 5,
        "a dynamic PMU type, not a fixed perf type"
    );
    assert!(!pmu.cpus.is_empty());
    assert_eq!(pmu.format("event"), Some("config:0-15"));
    assert_eq!(pmu.event("cpu_cycles"), Some(0x11));
    let midr = arm_pmu::midr(Path::new(SYSFS_CPUS), pmu.cpus[0]).expect("MIDR_EL1 of the CPU");
    let Some(cpus_json) = cpus_json() else {
        return;
    };
    let list = CpuList::from_json(&std::fs::read_to_string(cpus_json).expect("cpus.json"))
        .expect("Arm's CPU list");
    let core = list.by_midr(midr).map(|c| c.name.as_str());
    eprintln!(
        "MIDR_EL1 {midr:#x}: {core:?}, PMU {} type {}",
        pmu.name, pmu.perf_type
    );
    if std::env::var_os("LIZARD_ARM_VM").is_some() {
        // .ci/arm-vm runs QEMU's Cortex-A72 model.
        assert_eq!(midr, 0x410f_d083);
        assert_eq!(core, Some("Cortex-A72"));
    }
}

#[test]
fn events_the_pmu_lacks_are_unavailable_with_the_reason() {
    let Some(pmu) = arm_pmu() else { return };
    let listed = pmu.common_events();
    let mut profiler =
        CpuProfiler::new(CpuConfig::new(&CpuCounter::HWCPIPE)).expect("some counters open");
    for c in CpuCounter::HWCPIPE {
        let hwcpipe::cpu::PerfEvent::Arm(event) = c.event() else {
            continue;
        };
        let (code, discoverable) = (event.code(), event.is_discoverable());
        match profiler.availability(c) {
            Err(UnavailableReason::NotImplementedByCpu { event }) => {
                assert_eq!(event, code);
                assert!(discoverable && !listed.contains(code), "{c} is listed");
                let why = UnavailableReason::NotImplementedByCpu { event }.to_string();
                assert!(why.contains("does not implement"), "{why}");
            }
            Ok(()) => assert!(!discoverable || listed.contains(code), "{c} is not listed"),
            Err(other) => assert!(!discoverable, "{c}: {other}"),
        }
    }
    if std::env::var_os("LIZARD_ARM_VM").is_some() {
        // QEMU's PMU implements CPU_CYCLES and INST_RETIRED but no cache events.
        assert_eq!(profiler.availability(CpuCounter::InstrRetired), Ok(()));
        assert_eq!(
            profiler.availability(CpuCounter::L1Accesses),
            Err(UnavailableReason::NotImplementedByCpu { event: 0x04 })
        );
    }
    profiler.run().unwrap();
    black_box((0..10_000u64).map(black_box).sum::<u64>());
    let sample = profiler.sample().unwrap();
    assert!(sample.get(CpuCounter::L1Accesses).is_none() || listed.contains(0x04));
}

#[test]
fn arm_pmu_events_by_name_are_opened_with_the_pmus_type_and_refused_where_not_implemented() {
    use hwcpipe::cpu::{CpuPmus, EventUnavailable, NotOnPmu, PartStatus};
    let Some(pmu) = arm_pmu() else { return };
    let pmus = CpuPmus::from_kernel(&LinuxPerf).expect("the kernel's PMUs");
    assert_eq!(pmus.pmus()[0].perf_type, pmu.perf_type);
    assert!(pmus.pmus()[0].midr.is_some(), "MIDR_EL1 of the PMU's CPUs");
    let names: Vec<String> = ["INST_RETIRED", "cpu_cycles", "0x24"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let events = pmus.resolve_all(&names).expect("architected events");
    let config = CpuConfig::new(&[CpuCounter::Instructions])
        .events(events)
        .kernel(KernelCounting::Exclude);
    let mut profiler = CpuProfiler::new(config).expect("Arm PMU events");
    let statuses = profiler.events();
    assert!(statuses[0].is_counted() && statuses[1].is_counted());
    if std::env::var_os("LIZARD_ARM_VM").is_some() {
        // QEMU's PMU does not implement STALL_BACKEND (0x24): refused before anything is opened.
        assert!(matches!(
            &statuses[2].parts[0],
            PartStatus::Unavailable(EventUnavailable::NotOnPmu(NotOnPmu::NotImplemented {
                code: 0x24,
                ..
            }))
        ));
    }
    profiler.run().unwrap();
    let mut deltas = Vec::new();
    for iterations in [100_000u64, 200_000, 300_000] {
        black_box((0..iterations).map(black_box).sum::<u64>());
        let sample = profiler.sample().unwrap();
        let inst = sample.event(0).expect("INST_RETIRED");
        let cycles = sample.event(1).expect("CPU_CYCLES");
        assert!(inst.delta >= iterations && cycles.delta >= iterations);
        assert_eq!((inst.pmus, inst.counted_share()), (1, Some(1.0)));
        deltas.push((inst.delta, sample.get(CpuCounter::Instructions).unwrap()));
    }
    if counts_are_exact() {
        // INST_RETIRED by the PMU's type and the generic instructions event count the same loop: after
        // the first sample (which runs each path's code for the first time), each interval between two
        // reads holds the same instructions for both, to the instruction.
        assert_eq!(deltas[1].0, deltas[1].1, "{deltas:?}");
        assert_eq!(deltas[2].0, deltas[2].1, "{deltas:?}");
    }
    profiler.stop().unwrap();
}
