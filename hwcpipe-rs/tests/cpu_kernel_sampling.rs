//! `KernelSampler` over the `PerfSys` seam, driven by the simulated perf kernel `hwcpipe::cpu::sim::FakePerf`:
//! the timers and their groups opened, the rings mapped (smaller where the kernel will not lock more), the
//! records the fake writes drained whole, the reads after the stop, and the refusals and failures of one
//! CPU. What the records mean is perf-record's to decode, and lizard-core's account of them is tested there
//! (`lizard-core/tests/kernel_sampling.rs`).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use rustix::io::Errno;

use hwcpipe::counting::{CpuPlan, KernelSampler, PlannedEvent, TIMER_KEY};
use hwcpipe::cpu::sim::FakePerf;
use hwcpipe::sys::arm_pmu::{ArmPmu, ArmPmuError};
use hwcpipe::sys::perf_event_attr::{flag, PERF_TYPE_SOFTWARE};
use hwcpipe::sys::{PerfEventAttr, PerfIoctl, PerfSys};
use perf_record::{PerfRecords, ReadValues, SampleLayout, SampleRecord, TypedRecord};

/// `PERF_COUNT_SW_CONTEXT_SWITCHES`.
const CONTEXT_SWITCHES: u64 = 3;
/// `PERF_COUNT_SW_PAGE_FAULTS`.
const PAGE_FAULTS: u64 = 2;
const INTERVAL: Duration = Duration::from_millis(1);

/// Context switches (key 0) and page faults (key 1) on each of `cpus`.
fn plan(cpus: &[u32]) -> Vec<CpuPlan> {
    let software = |config| PlannedEvent {
        type_: PERF_TYPE_SOFTWARE,
        config,
        hardware: false,
    };
    cpus.iter()
        .map(|&cpu| CpuPlan {
            cpu,
            counters: vec![(0, software(CONTEXT_SWITCHES)), (1, software(PAGE_FAULTS))],
        })
        .collect()
}

fn open(fake: &Arc<FakePerf>, cpus: &[u32]) -> std::io::Result<KernelSampler> {
    KernelSampler::open_with(fake.clone(), &plan(cpus), INTERVAL, false, 6)
}

/// Each ring's records since the last drain, as `(ring, cpu, words)`.
fn drain(sampler: &mut KernelSampler) -> Vec<(usize, u32, Vec<u64>)> {
    let mut drained = Vec::new();
    sampler
        .drain(&mut Vec::new(), |ring, cpu, words| {
            drained.push((ring, cpu, words.to_vec()))
        })
        .unwrap();
    drained
}

#[test]
fn each_cpus_timer_writes_a_read_of_its_group_every_period_into_its_ring() {
    let fake = Arc::new(FakePerf::new(0));
    let mut sampler = open(&fake, &[0, 2]).unwrap();
    assert_eq!(sampler.rings(), 2);
    assert_eq!(sampler.ring_cpus().collect::<Vec<_>>(), [0, 2]);
    // The timer and both counters on each CPU, each id under its key.
    let keys: Vec<i32> = sampler.ids().iter().map(|&(_, key)| key).collect();
    assert_eq!(keys, [TIMER_KEY, 0, 1, TIMER_KEY, 0, 1]);
    let timer = sampler.events()[0].1;
    assert!(timer.on_monotonic_raw() && timer.has(flag::DISABLED));
    assert_eq!(timer.sample_period(), Some(1_000_000));
    // Disabled until the start: a period writes nothing.
    fake.fire_timers(|_, _| 1);
    assert!(drain(&mut sampler).is_empty());
    sampler.start().unwrap();
    for _ in 0..3 {
        fake.fire_timers(|_, config| config);
    }
    let layout = SampleLayout {
        sample_type: timer.sample_type,
        read_format: timer.read_format,
    };
    let drained = drain(&mut sampler);
    assert_eq!(drained.len(), 2);
    for (ring, cpu, words) in &drained {
        let samples: Vec<SampleRecord<'_>> = PerfRecords::raw(words)
            .map(|record| SampleRecord::parse(&record.unwrap(), layout).unwrap())
            .collect();
        assert_eq!(samples.len(), 3, "ring {ring} on CPU {cpu}");
        let last: Vec<u64> = samples[2].read.unwrap().values().map(|v| v.value).collect();
        assert_eq!(last, [3_000_000, 3 * CONTEXT_SWITCHES, 3 * PAGE_FAULTS]);
        assert!(samples
            .iter()
            .all(|s| s.identifier == sampler.ring_id(*ring)));
    }
    assert!(drain(&mut sampler).is_empty(), "nothing twice");
    sampler.stop().unwrap();
    fake.fire_timers(|_, _| 1);
    assert!(drain(&mut sampler).is_empty(), "stopped");
    let mut reads = Vec::new();
    sampler
        .read_groups(|ring, cpu, words| reads.push((ring, cpu, words.to_vec())))
        .unwrap();
    assert_eq!(reads.len(), 2);
    for (ring, _, words) in &reads {
        let read = ReadValues::parse(words, timer.read_format).unwrap();
        let first = read.values().next().unwrap();
        assert_eq!(first.id, sampler.ring_id(*ring), "the timer leads its read");
        assert_eq!(first.value, 3_000_000);
    }
    let (started, stopped) = sampler.ring_window(1);
    assert!(started.is_some() && stopped >= started);
}

#[test]
fn a_ring_the_kernel_will_not_lock_is_mapped_smaller_and_drained_more_often() {
    let fake = Arc::new(FakePerf::new(0));
    let roomy = open(&fake, &[0]).unwrap();
    fake.faults(|f| f.ring_page_limit = Some(1));
    let mut small = KernelSampler::open_with(
        fake.clone(),
        &plan(&[0]),
        Duration::from_micros(100),
        false,
        6,
    )
    .unwrap();
    assert!(small.drain_period() < roomy.drain_period());
    // A full ring loses records, and says so before the next one it can write.
    small.start().unwrap();
    for _ in 0..200 {
        fake.fire_timers(|_, _| 1);
    }
    let lost = fake.unannounced_lost();
    assert!(lost > 0);
    drain(&mut small);
    fake.fire_timers(|_, _| 1);
    let drained = drain(&mut small);
    let first = PerfRecords::raw(&drained[0].2)
        .typed()
        .next()
        .unwrap()
        .unwrap();
    assert!(
        matches!(first, TypedRecord::Lost(l) if l.lost == lost),
        "{first:?}"
    );
}

#[test]
fn an_offline_cpu_fails_the_open_with_the_kernels_errno() {
    let fake = Arc::new(FakePerf::new(0));
    fake.faults(|f| f.offline_cpus = vec![1]);
    let err = open(&fake, &[0, 1]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(Errno::NODEV.raw_os_error()));
    // Every ring the kernel will not map at all is a refusal too.
    fake.faults(|f| {
        f.offline_cpus.clear();
        f.ring_page_limit = Some(0);
    });
    let err = open(&fake, &[0]).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(Errno::PERM.raw_os_error()));
}

#[test]
fn a_read_that_fails_on_one_cpu_is_reported_after_the_other_groups_are_read() {
    let fake = Arc::new(FakePerf::new(0));
    let mut sampler = open(&fake, &[0, 1, 2]).unwrap();
    sampler.start().unwrap();
    fake.fire_timers(|_, _| 1);
    sampler.stop().unwrap();
    fake.faults(|f| {
        f.read_errno_on_cpu.insert(1, Errno::IO.raw_os_error());
    });
    let mut cpus = Vec::new();
    let err = sampler.read_groups(|_, cpu, _| cpus.push(cpu)).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(Errno::IO.raw_os_error()));
    assert_eq!(cpus, [0, 2]);
    // A short read is an error too.
    fake.faults(|f| {
        f.read_errno_on_cpu.clear();
        f.short_read = Some(16);
    });
    let err = sampler.read_groups(|_, _, _| {}).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
}

#[test]
fn a_refused_start_or_stop_is_the_kernels_errno() {
    let fake = Arc::new(FakePerf::new(0));
    let mut sampler = open(&fake, &[0]).unwrap();
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_ENABLE", Errno::NODEV.raw_os_error());
    });
    let err = sampler.start().unwrap_err();
    assert_eq!(err.raw_os_error(), Some(Errno::NODEV.raw_os_error()));
    fake.faults(|f| {
        f.ioctl_errno
            .insert("PERF_EVENT_IOC_DISABLE", Errno::NODEV.raw_os_error());
    });
    let err = sampler.stop().unwrap_err();
    assert_eq!(err.raw_os_error(), Some(Errno::NODEV.raw_os_error()));
}

/// The simulated kernel without rings: every call but `map_ring`, which keeps the trait's default.
#[derive(Debug)]
struct NoRings(FakePerf);

impl PerfSys for NoRings {
    fn perf_event_open(
        &self,
        attr: &PerfEventAttr,
        pid: i32,
        cpu: i32,
        group: Option<BorrowedFd<'_>>,
    ) -> io::Result<OwnedFd> {
        self.0.perf_event_open(attr, pid, cpu, group)
    }

    fn read(&self, fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(fd, buf)
    }

    fn ioctl(&self, fd: BorrowedFd<'_>, request: PerfIoctl) -> io::Result<u64> {
        self.0.ioctl(fd, request)
    }

    fn close(&self, fd: OwnedFd) -> io::Result<()> {
        self.0.close(fd)
    }

    fn arm_common_events(&self) -> Option<pmu_regs::CommonEventSet> {
        self.0.arm_common_events()
    }

    fn arm_pmu_count(&self) -> usize {
        self.0.arm_pmu_count()
    }

    fn arm_pmus(&self) -> Result<Vec<ArmPmu>, ArmPmuError> {
        self.0.arm_pmus()
    }

    fn midr(&self, cpu: u32) -> Option<u64> {
        self.0.midr(cpu)
    }

    fn perf_event_paranoid(&self) -> io::Result<i32> {
        self.0.perf_event_paranoid()
    }
}

#[test]
fn a_kernel_without_rings_refuses_kernel_sampling() {
    let err = KernelSampler::open_with(
        Arc::new(NoRings(FakePerf::new(0))),
        &plan(&[0]),
        INTERVAL,
        false,
        6,
    )
    .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::Unsupported);
}
