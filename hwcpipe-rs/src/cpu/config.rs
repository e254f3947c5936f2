//! [`CpuConfig`]: which counters to open, for which process, and whether kernel code is counted.

use std::process::Command;

use super::counter::CpuCounter;
use super::pmu_event::PmuEvent;
use super::user_read::UserReads;

/// Whose execution the CPU counters count.
#[derive(Debug, Default)]
pub enum CpuTarget {
    /// The thread that builds the profiler, and the threads and processes it creates afterwards
    /// (HWCPipe's behaviour). Threads that already exist are not counted.
    #[default]
    CallingThread,
    /// An existing thread by id (for a process, its pid names its main thread), with the
    /// threads and processes it creates afterwards.
    Pid(i32),
    /// A child process started from this command. It is held just before `execve` until
    /// `run()`, so exactly the program is counted, from its first instruction.
    Spawn(Command),
    /// Everything that runs on one CPU (by its number), whatever the process: a CPU-wide event
    /// (`pid` −1). The kernel allows it with `perf_event_paranoid` ≤ 0, or to a process with
    /// `CAP_PERFMON` (`CAP_SYS_ADMIN` before Linux 5.8); otherwise every open is refused and
    /// [`CpuProfiler::new`](super::CpuProfiler::new) fails with
    /// [`CpuError::PermissionDenied`](super::CpuError::PermissionDenied).
    Cpu(u32),
}

/// Whether counters include time spent in the kernel.
///
/// Counting kernel code needs `perf_event_paranoid` ≤ 1 (or `CAP_PERFMON`); with paranoid at 2,
/// the default of many distributions and of Android with `security.perf_harden` unset, only
/// user-space counting is allowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelCounting {
    /// Count kernel code too; fail where the kernel does not allow it.
    Include,
    /// Count user space only (`exclude_kernel` and `exclude_hv` set).
    Exclude,
    /// Count kernel code when allowed; when the kernel refuses with `EACCES`/`EPERM`, retry
    /// with user-space counting only.
    #[default]
    Auto,
}

/// The settings of a CPU profiler.
#[derive(Debug)]
#[non_exhaustive]
pub struct CpuConfig {
    /// The counters to open, in the order they are reported. Duplicates are ignored.
    pub counters: Vec<CpuCounter>,
    /// Whose execution is counted.
    pub target: CpuTarget,
    /// Whether kernel code is counted.
    pub kernel: KernelCounting,
    /// Most hardware events put in one group. A group is scheduled onto the PMU as a whole, so a
    /// group larger than the PMU never counts; Arm cores have 6 programmable counters at the least
    /// (plus the cycle counter). Software events form their own group.
    pub hardware_group_size: usize,
    /// Whether samples may read counters from user space, without a system call
    /// ([`UserReads`]; off by default).
    pub user_reads: UserReads,
    /// Arm PMU events counted beside the counters, each on every PMU that has it (resolved with
    /// [`CpuPmus::resolve`](super::CpuPmus::resolve)); none by default.
    pub events: Vec<PmuEvent>,
}

impl CpuConfig {
    /// The default group size for hardware events: 6.
    pub const DEFAULT_HARDWARE_GROUP_SIZE: usize = 6;

    /// `counters` for the calling thread, kernel counting automatic.
    pub fn new(counters: &[CpuCounter]) -> Self {
        CpuConfig {
            counters: counters.to_vec(),
            target: CpuTarget::CallingThread,
            kernel: KernelCounting::Auto,
            hardware_group_size: Self::DEFAULT_HARDWARE_GROUP_SIZE,
            user_reads: UserReads::Off,
            events: Vec::new(),
        }
    }

    /// Sets the Arm PMU events counted beside the counters.
    pub fn events(mut self, events: Vec<PmuEvent>) -> Self {
        self.events = events;
        self
    }

    /// Every counter this crate knows: HWCPipe's 17 and the software ones.
    pub fn all() -> Self {
        Self::new(&CpuCounter::ALL)
    }

    /// Sets the target.
    pub fn target(mut self, target: CpuTarget) -> Self {
        self.target = target;
        self
    }

    /// Sets whether samples may read counters from user space.
    pub fn user_reads(mut self, user_reads: UserReads) -> Self {
        self.user_reads = user_reads;
        self
    }

    /// Sets kernel counting.
    pub fn kernel(mut self, kernel: KernelCounting) -> Self {
        self.kernel = kernel;
        self
    }
}
