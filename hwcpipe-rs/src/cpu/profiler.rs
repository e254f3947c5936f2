//! [`CpuProfiler`]: CPU counters opened with `perf_event_open` in groups, read with one `read()`
//! per group or from user space (see [`super::user_read`]), reduced to per-sample deltas.

use std::fmt;

use std::os::fd::AsFd;
use std::process::Child;
use std::sync::Arc;

use super::config::{CpuConfig, CpuTarget, KernelCounting};
use super::counter::CpuCounter;
use super::error::{CpuError, UnavailableReason};
use super::event_status::EventStatus;
use super::group::{Group, Totals, UserMiss};
use super::opener::{self, Opener};
use super::sample::CpuSample;
use super::user_read::{ReadPath, SyscallReason};
use crate::sys::{self, GatedChild, LinuxPerf, PerfIoctl, PerfSys};

/// The child process being measured, if any.
#[derive(Debug)]
enum ChildState {
    None,
    Gated(GatedChild),
    Running(Child),
}

/// `(pid, cpu, child)` of `target` for `perf_event_open`: a task on any CPU (`cpu` −1), or everything on one
/// CPU (`pid` −1). A command is forked here and waits at its gate until [`CpuProfiler::run`].
fn open_target(target: CpuTarget) -> Result<(i32, i32, ChildState), CpuError> {
    Ok(match target {
        CpuTarget::CallingThread => (0, -1, ChildState::None),
        CpuTarget::Pid(pid) => (pid, -1, ChildState::None),
        CpuTarget::Spawn(command) => {
            let gated = sys::spawn_gated(command).map_err(CpuError::Spawn)?;
            (gated.pid(), -1, ChildState::Gated(gated))
        }
        CpuTarget::Cpu(cpu) => {
            let cpu = i32::try_from(cpu).map_err(|_| CpuError::NoSuchCpu(cpu))?;
            (-1, cpu, ChildState::None)
        }
    })
}

/// CPU counters of one target, read through `perf_event_open`.
///
/// Call order: [`new`](Self::new) (opens every selected counter it can, records why the others
/// failed) → [`run`](Self::run) → [`sample`](Self::sample) any number of times →
/// [`stop`](Self::stop); `run` may be called again to start over. Getters
/// ([`available_counters`](Self::available_counters),
/// [`unavailable_counters`](Self::unavailable_counters), ...) work at any time.
///
/// Software events share one group and hardware events are put in groups of at most
/// [`CpuConfig::hardware_group_size`]; a sample is one `read()` per group. Each value is the
/// change since the previous sample, scaled by `time_enabled / time_running` when the kernel
/// multiplexed the group ([`CpuReading::is_multiplexed`](super::CpuReading::is_multiplexed) says so).
pub struct CpuProfiler {
    sys: Arc<dyn PerfSys>,
    /// The groups of counters.
    groups: Vec<Group>,
    /// The groups of Arm PMU events, after the counters' (each PMU's pinned group first).
    event_groups: Vec<Group>,
    available: Vec<CpuCounter>,
    unavailable: Vec<(CpuCounter, UnavailableReason)>,
    enabled: Vec<CpuCounter>,
    sample: CpuSample,
    totals: Totals,
    /// What became of each Arm PMU event of the configuration.
    events: Vec<EventStatus>,
    running: bool,
    started_once: bool,
    kernel_excluded: bool,
    pid: i32,
    child: ChildState,
}

/// Group `group` read with `read()`, for `miss`: out of line, so that the loop over the groups keeps
/// its registers for the user-space path.
#[inline(never)]
fn sample_group_with_read(
    group: &mut Group,
    sys: &dyn PerfSys,
    totals: &mut Totals,
    sample: &mut CpuSample,
    miss: UserMiss,
) -> Result<(), CpuError> {
    group.sample_with_read::<false>(sys, totals, sample, miss)
}

/// The groups of Arm PMU events read, out of line: a profiler of counters alone has none.
#[inline(never)]
fn sample_event_groups(
    groups: &mut [Group],
    sys: &dyn PerfSys,
    totals: &mut Totals,
    sample: &mut CpuSample,
    force_read: bool,
) -> Result<(), CpuError> {
    for group in groups {
        let miss = if force_read {
            UserMiss::group(SyscallReason::Forced)
        } else if group.user.is_none() {
            UserMiss::group(group.no_user_reason)
        } else {
            match group.sample_user::<true>(totals, sample) {
                Ok(()) => continue,
                Err(miss) => miss,
            }
        };
        group.sample_with_read::<true>(sys, totals, sample, miss)?;
    }
    Ok(())
}

impl fmt::Debug for CpuProfiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuProfiler")
            .field("available", &self.available)
            .field("unavailable", &self.unavailable)
            .field("events", &self.events)
            .field("enabled", &self.enabled)
            .field("running", &self.running)
            .field("kernel_excluded", &self.kernel_excluded)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl CpuProfiler {
    /// Opens the counters of `config` with the real kernel.
    pub fn new(config: CpuConfig) -> Result<Self, CpuError> {
        Self::with_sys(config, Arc::new(LinuxPerf))
    }

    /// Opens the counters of `config` through `sys` (a simulated kernel in tests).
    ///
    /// The steps: the selection without repeats; the target (a spawned command is forked here and
    /// waits at its gate); whether the calling thread's counters may be read from user space; the
    /// events opened and packed into groups (the opener's plan); a typed error when none opened
    /// (permission, or every counter with its reason); then one baseline read per group, so that a counter is listed as
    /// available only once its group has been read.
    pub fn with_sys(config: CpuConfig, sys: Arc<dyn PerfSys>) -> Result<Self, CpuError> {
        let requested = opener::selection(&config.counters, config.events.len())?;
        let (pid, cpu, child) = open_target(config.target)?;
        let user = opener::user_read_policy(config.user_reads, pid, sys.as_ref());
        let mut opener = Opener {
            sys: sys.as_ref(),
            pid,
            cpu,
            mode: config.kernel,
            exclude_kernel: config.kernel == KernelCounting::Exclude,
            enable_on_exec: matches!(child, ChildState::Gated(_)),
            inherit: user.is_err(),
            user_reads: user.is_ok(),
            last_denial: None,
            paranoid: None,
        };
        let plan = opener.plan(
            &requested,
            &config.events,
            config.hardware_group_size.max(1),
            user,
        );
        let kernel_excluded = opener.exclude_kernel;
        if plan.available.is_empty() && plan.part_of.is_empty() {
            let events = plan
                .events
                .iter()
                .filter_map(|status| Some((status.event.name.clone(), status.unavailable()?)))
                .collect();
            return Err(opener::open_failure(
                plan.unavailable,
                events,
                opener.last_denial.take(),
                opener.paranoid.flatten(),
                cpu,
            ));
        }
        let (event_groups, counter_groups): (Vec<Group>, Vec<Group>) =
            plan.groups.into_iter().partition(Group::has_events);
        let mut profiler = CpuProfiler {
            sample: CpuSample::with_events(
                plan.available.clone(),
                plan.part_of.clone(),
                plan.events.len(),
            ),
            enabled: plan.available.clone(),
            sys,
            groups: counter_groups,
            event_groups,
            available: plan.available,
            unavailable: plan.unavailable,
            totals: Totals::new(plan.part_of.len(), plan.pmus),
            events: plan.events,
            running: false,
            started_once: false,
            kernel_excluded,
            pid,
            child,
        };
        // A counter is only listed as available once its group has been read successfully.
        let sys = Arc::clone(&profiler.sys);
        for group in profiler.all_groups_mut() {
            group.baseline(sys.as_ref())?;
        }
        Ok(profiler)
    }

    /// The counters that opened and are read, in selection order.
    pub fn available_counters(&self) -> &[CpuCounter] {
        &self.available
    }

    /// The selected counters that could not be opened, with the reason.
    pub fn unavailable_counters(&self) -> &[(CpuCounter, UnavailableReason)] {
        &self.unavailable
    }

    /// The Arm PMU events of the configuration, in its order, each with the PMUs it is counted on and why
    /// not on the others. A sample's readings name an event by its position here
    /// ([`CpuSample::event`]).
    pub fn events(&self) -> &[EventStatus] {
        &self.events
    }

    /// `Ok` when `counter` is read, else why not ([`UnavailableReason::NotSelected`] when it was
    /// not in the selection).
    pub fn availability(&self, counter: CpuCounter) -> Result<(), UnavailableReason> {
        if self.available.contains(&counter) {
            return Ok(());
        }
        Err(self
            .unavailable
            .iter()
            .find(|(c, _)| *c == counter)
            .map_or(UnavailableReason::NotSelected, |(_, r)| *r))
    }

    /// The counters reported by [`sample`](Self::sample).
    pub fn enabled_counters(&self) -> &[CpuCounter] {
        &self.enabled
    }

    /// Chooses the counters reported by [`sample`](Self::sample); each must be available.
    pub fn set_enabled(&mut self, counters: &[CpuCounter]) -> Result<(), CpuError> {
        for &counter in counters {
            self.availability(counter)
                .map_err(|reason| CpuError::Unavailable { counter, reason })?;
        }
        self.enabled.clear();
        for &c in counters {
            if !self.enabled.contains(&c) {
                self.enabled.push(c);
            }
        }
        self.sample.set_order(&self.enabled);
        Ok(())
    }

    /// How `counter` was read at the last sample (before the first: why it will not be read from user
    /// space, or [`SyscallReason::NotSampledYet`]); `None` when it is not available.
    pub fn read_path(&self, counter: CpuCounter) -> Option<ReadPath> {
        self.all_groups().find_map(|g| {
            g.members
                .iter()
                .find(|m| g.has_counter(counter) && m.counter == counter)
                .map(|m| g.path_of(m))
        })
    }

    /// Whether samples try user-space reads ([`UserReads::Auto`](super::UserReads::Auto) for the calling thread, on a system
    /// where it is safe); whether each counter really is read that way is [`read_path`](Self::read_path).
    pub fn user_reads_enabled(&self) -> bool {
        self.all_groups().any(|g| g.user.is_some())
    }

    /// Whether kernel code is excluded from the counts (asked for, or the automatic fallback).
    pub fn kernel_excluded(&self) -> bool {
        self.kernel_excluded
    }

    /// The process id counted: 0 for the calling thread, −1 for a CPU-wide target.
    pub fn target_pid(&self) -> i32 {
        self.pid
    }

    /// The measured child process, once `run()` has let it start.
    pub fn child(&mut self) -> Option<&mut Child> {
        match &mut self.child {
            ChildState::Running(child) => Some(child),
            _ => None,
        }
    }

    /// Whether `run()` was called and `stop()` was not.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// Zeroes the counts and starts counting; the next [`sample`](Self::sample) covers the time
    /// from here. A spawned child starts running now.
    pub fn run(&mut self) -> Result<(), CpuError> {
        let sys = self.sys.as_ref();
        let first_exec = matches!(self.child, ChildState::Gated(_)) && !self.started_once;
        for group in self.groups.iter_mut().chain(self.event_groups.iter_mut()) {
            let leader = group.fds[0].as_fd();
            // The group starts and stops with its leader alone: the members stay enabled from their
            // opening. Disabling and enabling every member (PERF_IOC_FLAG_GROUP) leaves the clock
            // members of another task's group off until that task is next scheduled in (Linux 6.18:
            // a busy process's cpu-clock read 0 for whole windows after the first), see
            // `tests/cpu_real.rs`.
            if group.user.is_some() {
                // Reset only while the group is off the PMU: a reset of a counting event publishes
                // a page whose offset is off by a wrap until the counter is next programmed (see
                // pmu-regs' `tests/user_read.rs`); enabling it again programs the counter.
                ioctl(sys, leader, PerfIoctl::Disable)?;
            }
            ioctl(sys, leader, PerfIoctl::ResetGroup)?;
            if !first_exec {
                ioctl(sys, leader, PerfIoctl::Enable)?;
            }
            group.baseline(sys)?;
        }
        self.totals.reset();
        self.sample.reset();
        self.running = true;
        self.started_once = true;
        if let ChildState::Gated(_) = self.child {
            let ChildState::Gated(gated) = std::mem::replace(&mut self.child, ChildState::None)
            else {
                unreachable!("matched just above")
            };
            match gated.release() {
                Ok(child) => self.child = ChildState::Running(child),
                Err(e) => {
                    self.running = false;
                    return Err(CpuError::Spawn(e));
                }
            }
        }
        Ok(())
    }

    /// Reads every group once and returns the change of each enabled counter since the previous
    /// sample. Allocates nothing.
    ///
    /// With [`UserReads::Auto`](super::UserReads::Auto), a group whose counters the kernel lets this thread read from user
    /// space is read without a system call; each reading's [`path`](super::CpuReading::path) says how it
    /// was read.
    #[inline]
    pub fn sample(&mut self) -> Result<&CpuSample, CpuError> {
        self.sample_groups(false)
    }

    /// Like [`sample`](Self::sample), but every group is read with `read()`, whatever the pages
    /// allow ([`SyscallReason::Forced`]): the kernel's own view, which the user-space path is
    /// checked against, in the same sequence of deltas and totals.
    pub fn sample_with_read(&mut self) -> Result<&CpuSample, CpuError> {
        self.sample_groups(true)
    }

    /// In line in [`sample`](Self::sample) and so in its callers' own sampling loops (`HwcPipe`'s): a
    /// call would pass the result through memory and save and restore what the loop holds.
    #[inline(always)]
    fn sample_groups(&mut self, force_read: bool) -> Result<&CpuSample, CpuError> {
        if !self.running {
            return Err(CpuError::NotRunning);
        }
        self.sample.begin();
        let CpuProfiler {
            sys,
            groups,
            sample,
            totals,
            ..
        } = self;
        for group in groups.iter_mut() {
            // A group without pages goes to `read()` without entering the user-space path.
            let miss = if force_read {
                UserMiss::group(SyscallReason::Forced)
            } else if group.user.is_none() {
                UserMiss::group(group.no_user_reason)
            } else {
                match group.sample_user::<false>(totals, sample) {
                    Ok(()) => continue,
                    Err(miss) => miss,
                }
            };
            sample_group_with_read(group, sys.as_ref(), totals, sample, miss)?;
        }
        if !self.event_groups.is_empty() {
            sample_event_groups(
                &mut self.event_groups,
                self.sys.as_ref(),
                &mut self.totals,
                &mut self.sample,
                force_read,
            )?;
        }
        Ok(&self.sample)
    }

    /// The most recent sample.
    pub fn last_sample(&self) -> &CpuSample {
        &self.sample
    }

    /// Stops counting. Calling it when not running does nothing.
    pub fn stop(&mut self) -> Result<(), CpuError> {
        if !self.running {
            return Ok(());
        }
        self.running = false;
        for group in self.all_groups() {
            ioctl(self.sys.as_ref(), group.fds[0].as_fd(), PerfIoctl::Disable)?;
        }
        Ok(())
    }

    /// Closes every descriptor, reporting the first error `close` gave.
    pub fn close(mut self) -> Result<(), CpuError> {
        self.close_all()
    }

    fn close_all(&mut self) -> Result<(), CpuError> {
        let mut first = Ok(());
        let groups = std::mem::take(&mut self.groups);
        let event_groups = std::mem::take(&mut self.event_groups);
        for group in groups.into_iter().chain(event_groups) {
            // Members first, the leader last.
            for fd in group.fds.into_iter().rev() {
                if let Err(e) = self.sys.close(fd) {
                    if first.is_ok() {
                        first = Err(CpuError::Close(e));
                    }
                }
            }
        }
        first
    }
}

impl CpuProfiler {
    /// Every group: the counters', then the events'.
    fn all_groups(&self) -> impl Iterator<Item = &Group> + '_ {
        self.groups.iter().chain(&self.event_groups)
    }

    /// Every group, mutably.
    fn all_groups_mut(&mut self) -> impl Iterator<Item = &mut Group> + '_ {
        self.groups.iter_mut().chain(self.event_groups.iter_mut())
    }
}

fn ioctl(
    sys: &dyn PerfSys,
    fd: std::os::fd::BorrowedFd<'_>,
    request: PerfIoctl,
) -> Result<(), CpuError> {
    sys.ioctl(fd, request)
        .map(drop)
        .map_err(|source| CpuError::Ioctl {
            request: request.name(),
            source,
        })
}

impl Drop for CpuProfiler {
    fn drop(&mut self) {
        // Errors of close cannot be reported from drop; `close()` reports them.
        let _ = self.close_all();
    }
}
