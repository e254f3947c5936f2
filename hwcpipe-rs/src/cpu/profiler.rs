//! [`CpuProfiler`]: CPU counters opened with `perf_event_open` in groups, read with one `read()`
//! per group or from user space (see [`super::user_read`]), reduced to per-sample deltas.

use std::fmt;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Child;
use std::sync::Arc;

use super::config::{CpuConfig, CpuTarget, KernelCounting};
use super::counter::{CpuCounter, PerfEvent};
use super::error::{CpuError, UnavailableReason};
use super::group_read::{record_len, GroupRecord};
use super::sample::{CpuReading, CpuSample};
use super::scaling::Interval;
use super::user_read::{count, times, ReadPath, SyscallReason, UserReads, PAGE_READ_ROUNDS};
use crate::sys::perf_event_attr::{
    flag, PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_TYPE_SOFTWARE,
};
use crate::sys::perf_page::{current_thread_id, PerfPage};
use crate::sys::{self, GatedChild, LinuxPerf, PerfEventAttr, PerfIoctl, PerfSys};

/// The `read_format` of every event: one read of the leader returns the whole group, with the
/// enabled and running times for multiplex scaling and the event ids to check the order.
const READ_FORMAT: u64 = PERF_FORMAT_GROUP
    | PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID;

/// `perf_event_attr.config1` of the arm64 PMU driver: bit 1 asks for user-space access (`rdpmc`),
/// bit 0 for a 64-bit counter.
#[cfg(target_arch = "aarch64")]
const CONFIG1_RDPMC: u64 = 1 << 1;
#[cfg(target_arch = "aarch64")]
const CONFIG1_LONG: u64 = 1 << 0;

/// The `config1` values tried, in order, for a hardware event when user access is asked for: a
/// 64-bit counter with user access (the cycle counter, or a PMUv3p5 event counter), a 32-bit one
/// (cores before PMUv3p5 refuse 64-bit user access to event counters with `EOPNOTSUPP`), then
/// none (the event is then read with `read()`).
#[cfg(target_arch = "aarch64")]
const USER_ACCESS_CONFIG1: &[u64] = &[CONFIG1_RDPMC | CONFIG1_LONG, CONFIG1_RDPMC, 0];
/// On other architectures user access needs nothing in the attribute (x86: the kernel's `rdpmc`
/// policy decides).
#[cfg(not(target_arch = "aarch64"))]
const USER_ACCESS_CONFIG1: &[u64] = &[0];

/// An event just opened: its descriptor, its id, and its page when user-space reads are on (or why
/// it could not be mapped).
type Opened = (OwnedFd, u64, Option<Result<PerfPage, SyscallReason>>);

/// The mapped pages of a group read from user space when the kernel allows it.
#[derive(Debug)]
struct UserPages {
    /// One per member, leader first.
    pages: Vec<PerfPage>,
    /// The thread whose counters these are (the one that opened them).
    owner: i32,
}

/// Why a group was not read from user space at a sample: the member that could not be (`None`: the
/// group as a whole) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct UserMiss {
    member: Option<u32>,
    reason: SyscallReason,
}

impl UserMiss {
    fn group(reason: SyscallReason) -> Self {
        UserMiss {
            member: None,
            reason,
        }
    }

    fn member(i: usize, reason: SyscallReason) -> Self {
        UserMiss {
            member: u32::try_from(i).ok(),
            reason,
        }
    }
}

/// One counter of a group, with what a sample needs of it in one place.
#[derive(Clone, Copy, Debug)]
struct Member {
    counter: CpuCounter,
    /// The raw count at the previous sample (or at `run()`).
    prev_raw: u64,
    /// This sample's raw count, whichever way it was read (scratch).
    value: u64,
    /// How it was read at the last sample.
    path: ReadPath,
}

/// Events scheduled onto the PMU together, read with one `read()` of the leader (`fds[0]`), or
/// member by member from user space.
#[derive(Debug)]
struct Group {
    fds: Vec<OwnedFd>,
    ids: Vec<u64>,
    /// One per event, leader first, as `fds` and `ids`.
    members: Vec<Member>,
    prev_enabled: u64,
    prev_running: u64,
    buf: Vec<u8>,
    /// Why the group is never read from user space, when it has no pages.
    no_user_reason: SyscallReason,
    user: Option<UserPages>,
}

impl Group {
    fn new(user: Result<i32, SyscallReason>) -> Self {
        let (user, no_user_reason) = match user {
            Ok(owner) => (
                Some(UserPages {
                    pages: Vec::new(),
                    owner,
                }),
                SyscallReason::NotSampledYet,
            ),
            Err(reason) => (None, reason),
        };
        Group {
            fds: Vec::new(),
            ids: Vec::new(),
            members: Vec::new(),
            prev_enabled: 0,
            prev_running: 0,
            buf: Vec::new(),
            no_user_reason,
            user,
        }
    }

    /// Reads every member from user space and records the interval of each into `sample`; on
    /// failure nothing but the members' scratch `value` has changed, and the error names the
    /// member that could not be read (`None`: the group as a whole) and why. This is the hot path of a sample: plain loops over slices
    /// of one length, no call, in line in the profiler's loop over the groups.
    #[inline(always)]
    fn sample_user(
        &mut self,
        totals: &mut [u64; CpuCounter::COUNT],
        sample: &mut CpuSample,
    ) -> Result<(), UserMiss> {
        let Some(user) = &self.user else {
            return Err(UserMiss::group(self.no_user_reason));
        };
        if current_thread_id() != user.owner {
            return Err(UserMiss::group(SyscallReason::OtherThread));
        }
        // One page per member, in the same order: slices of one length, so that indexing them
        // below needs no bounds check.
        let pages = user.pages.as_slice();
        let n = pages.len();
        let Some(members) = self.members.get_mut(..n) else {
            return Err(UserMiss::group(SyscallReason::NotSampledYet));
        };
        if n == 0 {
            return Err(UserMiss::group(SyscallReason::NotSampledYet));
        }
        // The leader, with the clock: its times are the group's, as in a group `read()`.
        let (read, time) = pages[0]
            .read_user::<true>(PAGE_READ_ROUNDS)
            .map_err(|_| UserMiss::member(0, SyscallReason::PageBusy))?;
        let value = count(&read).map_err(|r| UserMiss::member(0, r))?;
        let (now_enabled, now_running) =
            times(&read, time.as_ref()).map_err(|r| UserMiss::member(0, r))?;
        if value < members[0].prev_raw
            || now_enabled < self.prev_enabled
            || now_running < self.prev_running
        {
            return Err(UserMiss::member(0, SyscallReason::Implausible));
        }
        members[0].value = value;
        // The other members: each value read and checked before anything is changed.
        for i in 1..n {
            let (read, _) = pages[i]
                .read_user::<false>(PAGE_READ_ROUNDS)
                .map_err(|_| UserMiss::member(i, SyscallReason::PageBusy))?;
            let value = count(&read).map_err(|r| UserMiss::member(i, r))?;
            if value < members[i].prev_raw {
                return Err(UserMiss::member(i, SyscallReason::Implausible));
            }
            members[i].value = value;
        }
        // Every value read and checked: commit.
        let enabled = now_enabled - self.prev_enabled;
        let running = now_running - self.prev_running;
        if running < enabled {
            commit_scaled(
                members,
                totals,
                sample,
                enabled,
                running,
                Some(ReadPath::UserSpace),
            );
        } else {
            commit::<false>(
                members,
                totals,
                sample,
                enabled,
                running,
                Some(ReadPath::UserSpace),
            );
        }
        self.prev_enabled = now_enabled;
        self.prev_running = now_running;
        Ok(())
    }

    /// Reads the group into `buf` and checks the record: its size, its member count, its ids.
    fn read<'b>(
        sys: &dyn PerfSys,
        leader: &OwnedFd,
        buf: &'b mut [u8],
        ids: &[u64],
    ) -> Result<GroupRecord<'b>, CpuError> {
        let expected = buf.len();
        let got = sys.read(leader.as_fd(), buf).map_err(CpuError::Read)?;
        if got < expected {
            return Err(CpuError::ShortRead { expected, got });
        }
        let record = GroupRecord::parse(&buf[..got], ids.len())?;
        for (position, ((_, found), &expected)) in record.entries().zip(ids).enumerate() {
            if found != expected {
                return Err(CpuError::UnexpectedEventId {
                    position,
                    expected,
                    found,
                });
            }
        }
        Ok(record)
    }

    /// Takes the current values as the starting point of the next interval.
    fn baseline(&mut self, sys: &dyn PerfSys) -> Result<(), CpuError> {
        let record = Self::read(sys, &self.fds[0], &mut self.buf, &self.ids)?;
        for (member, (value, _)) in self.members.iter_mut().zip(record.entries()) {
            member.prev_raw = value;
        }
        self.prev_enabled = record.time_enabled;
        self.prev_running = record.time_running;
        Ok(())
    }

    /// Reads the group with `read()` and records the interval of each member into `sample`;
    /// `miss` says why it was not read from user space.
    fn sample_with_read(
        &mut self,
        sys: &dyn PerfSys,
        totals: &mut [u64; CpuCounter::COUNT],
        sample: &mut CpuSample,
        miss: UserMiss,
    ) -> Result<(), CpuError> {
        for (i, member) in self.members.iter_mut().enumerate() {
            member.path = ReadPath::Syscall(match miss.member {
                Some(f) if f as usize != i => SyscallReason::GroupMember,
                _ => miss.reason,
            });
        }
        let record = Self::read(sys, &self.fds[0], &mut self.buf, &self.ids)?;
        for ((value, _), member) in record.entries().zip(self.members.iter_mut()) {
            member.value = value;
        }
        let (time_enabled, time_running) = (record.time_enabled, record.time_running);
        let enabled = since("time_enabled", self.prev_enabled, time_enabled)?;
        let running = since("time_running", self.prev_running, time_running)?;
        for member in &self.members {
            if member.value < member.prev_raw {
                return Err(CpuError::WentBackwards {
                    what: member.counter.name(),
                    previous: member.prev_raw,
                    current: member.value,
                });
            }
        }
        // Every value checked: commit the interval.
        if running < enabled {
            commit_scaled(&mut self.members, totals, sample, enabled, running, None);
        } else {
            commit::<false>(&mut self.members, totals, sample, enabled, running, None);
        }
        self.prev_enabled = time_enabled;
        self.prev_running = time_running;
        Ok(())
    }
}

/// Commits one interval of a group whose values are all read and checked: each member's change
/// since the previous sample (`value − prev_raw`, scaled by `enabled / running` when `SCALED`:
/// the group was multiplexed) is added to its total and recorded into `sample`, and `value`
/// becomes the previous value. `path`, when given, is how every member was read; otherwise each
/// member's own `path` is reported. Generic so that the common case carries no scaling at all.
#[inline(always)]
fn commit<const SCALED: bool>(
    members: &mut [Member],
    totals: &mut [u64; CpuCounter::COUNT],
    sample: &mut CpuSample,
    enabled: u64,
    running: u64,
    path: Option<ReadPath>,
) {
    for member in members {
        let raw = member.value - member.prev_raw;
        member.prev_raw = member.value;
        if let Some(path) = path {
            member.path = path;
        }
        let delta = if SCALED {
            Interval {
                raw,
                enabled,
                running,
            }
            .scaled()
        } else {
            raw
        };
        let total = &mut totals[member.counter.index()];
        *total = total.saturating_add(delta);
        sample.record(CpuReading {
            counter: member.counter,
            delta,
            total: *total,
            raw_delta: raw,
            time_enabled: enabled,
            time_running: running,
            path: member.path,
        });
    }
}

/// [`commit`] of a multiplexed group, out of line: it divides, and it is the rare case.
#[cold]
#[inline(never)]
fn commit_scaled(
    members: &mut [Member],
    totals: &mut [u64; CpuCounter::COUNT],
    sample: &mut CpuSample,
    enabled: u64,
    running: u64,
    path: Option<ReadPath>,
) {
    commit::<true>(members, totals, sample, enabled, running, path);
}

/// `current - previous`, or a typed error when the kernel's value went backwards.
fn since(what: &'static str, previous: u64, current: u64) -> Result<u64, CpuError> {
    current
        .checked_sub(previous)
        .ok_or(CpuError::WentBackwards {
            what,
            previous,
            current,
        })
}

/// The child process being measured, if any.
#[derive(Debug)]
enum ChildState {
    None,
    Gated(GatedChild),
    Running(Child),
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
/// multiplexed the group ([`CpuReading::is_multiplexed`] says so).
pub struct CpuProfiler {
    sys: Arc<dyn PerfSys>,
    groups: Vec<Group>,
    available: Vec<CpuCounter>,
    unavailable: Vec<(CpuCounter, UnavailableReason)>,
    enabled: Vec<CpuCounter>,
    sample: CpuSample,
    totals: [u64; CpuCounter::COUNT],
    running: bool,
    started_once: bool,
    kernel_excluded: bool,
    pid: i32,
    child: ChildState,
}

impl fmt::Debug for CpuProfiler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CpuProfiler")
            .field("available", &self.available)
            .field("unavailable", &self.unavailable)
            .field("enabled", &self.enabled)
            .field("running", &self.running)
            .field("kernel_excluded", &self.kernel_excluded)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// State while opening the events.
struct Opener<'s> {
    sys: &'s dyn PerfSys,
    pid: i32,
    /// The CPU of a CPU-wide event, −1 for a task's events on any CPU.
    cpu: i32,
    mode: KernelCounting,
    exclude_kernel: bool,
    enable_on_exec: bool,
    /// Whether `inherit` is set on a task's events (not when they are read from user space).
    inherit: bool,
    /// Whether hardware events ask for user-space access and every event's page is mapped.
    user_reads: bool,
    last_denial: Option<io::Error>,
    paranoid: Option<Option<i32>>,
}

impl Opener<'_> {
    fn attr(&self, type_: u32, config: u64, leader: bool) -> PerfEventAttr {
        let mut attr = PerfEventAttr::counting(type_, config);
        attr.read_format = READ_FORMAT;
        // A CPU-wide event already sees every task; `inherit` only has a meaning for a task's events.
        // Software events keep it even with user-space reads: their pages never allow one (index 0),
        // and a task's software clock that is a group member without `inherit` reads a stale count
        // (0 most of the time on Linux 6.1) from a group `read()`.
        if self.cpu < 0 && (self.inherit || type_ == PERF_TYPE_SOFTWARE) {
            attr.flags = flag::INHERIT;
        }
        if leader {
            attr.flags |= flag::DISABLED;
            if self.enable_on_exec {
                attr.flags |= flag::ENABLE_ON_EXEC;
            }
        }
        if self.exclude_kernel {
            attr.flags |= flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV;
        }
        attr
    }

    fn paranoid(&mut self) -> Option<i32> {
        let sys = self.sys;
        *self
            .paranoid
            .get_or_insert_with(|| sys.perf_event_paranoid().ok())
    }

    /// Opens one event with `config1`, falling back to user-space counting when allowed and needed.
    fn open_once(
        &mut self,
        type_: u32,
        config: u64,
        config1: u64,
        leader: Option<&OwnedFd>,
    ) -> io::Result<OwnedFd> {
        let attr = |opener: &Self| {
            let mut attr = opener.attr(type_, config, leader.is_none());
            attr.config1 = config1;
            attr
        };
        let group = leader.map(|fd| fd.as_fd());
        let mut result = self
            .sys
            .perf_event_open(&attr(self), self.pid, self.cpu, group);
        if let Err(e) = &result {
            let denied = matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM));
            if denied && self.mode == KernelCounting::Auto && !self.exclude_kernel {
                self.exclude_kernel = true;
                result = self
                    .sys
                    .perf_event_open(&attr(self), self.pid, self.cpu, group);
                if result.is_err() {
                    self.exclude_kernel = false;
                }
            }
        }
        result
    }

    /// Opens one event (asking for user-space access first when wanted) and maps its page when
    /// user-space reads are on.
    fn open(
        &mut self,
        type_: u32,
        config: u64,
        hardware: bool,
        leader: Option<&OwnedFd>,
    ) -> Result<Opened, UnavailableReason> {
        let config1s: &[u64] = if self.user_reads && hardware {
            USER_ACCESS_CONFIG1
        } else {
            &[0]
        };
        let mut result = Err(io::Error::from_raw_os_error(libc::EINVAL));
        for (i, &config1) in config1s.iter().enumerate() {
            result = self.open_once(type_, config, config1, leader);
            let refused_access = matches!(
                result.as_ref().map_err(io::Error::raw_os_error),
                Err(Some(libc::EOPNOTSUPP | libc::EINVAL))
            );
            if !(refused_access && i + 1 < config1s.len()) {
                break;
            }
        }
        let fd = match result {
            Ok(fd) => fd,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let paranoid = if matches!(errno, libc::EACCES | libc::EPERM) {
                    let level = self.paranoid();
                    self.last_denial = Some(e);
                    level
                } else {
                    None
                };
                return Err(UnavailableReason::from_open_errno(errno, paranoid));
            }
        };
        // A software event's page never grants a user-space read (its index is 0), and the kernel
        // refuses to map the page of an inherited task event, which software events stay (see
        // `attr`): the group is read with `read()` from the start.
        let page = self.user_reads.then(|| {
            if !hardware {
                return Err(SyscallReason::NoUserAccess);
            }
            self.sys
                .map_page(fd.as_fd())
                .map_err(|e| SyscallReason::NoPage {
                    errno: e.raw_os_error().unwrap_or(libc::ENODEV),
                })
        });
        match self.sys.ioctl(fd.as_fd(), PerfIoctl::Id) {
            Ok(id) => Ok((fd, id, page)),
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                // The event is useless without its id; the close error adds nothing to that.
                let _ = self.sys.close(fd);
                Err(UnavailableReason::NoEventId { errno })
            }
        }
    }
}

impl CpuProfiler {
    /// Opens the counters of `config` with the real kernel.
    pub fn new(config: CpuConfig) -> Result<Self, CpuError> {
        Self::with_sys(config, Arc::new(LinuxPerf))
    }

    /// Opens the counters of `config` through `sys` (a simulated kernel in tests).
    pub fn with_sys(config: CpuConfig, sys: Arc<dyn PerfSys>) -> Result<Self, CpuError> {
        let mut requested: Vec<CpuCounter> = Vec::with_capacity(config.counters.len());
        for c in config.counters {
            if !requested.contains(&c) {
                requested.push(c);
            }
        }
        if requested.is_empty() {
            return Err(CpuError::NothingSelected);
        }
        let (pid, cpu, child) = match config.target {
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
        };
        // User-space reads: the calling thread's own counters only, never on a big.LITTLE system
        // (a thread could move to a CPU of the other PMU between the check and the read).
        let user = match (config.user_reads, pid == 0) {
            (UserReads::Off, _) => Err(SyscallReason::NotRequested),
            (UserReads::Auto, true) => {
                if cfg!(target_arch = "aarch64") && sys.arm_pmu_count() > 1 {
                    Err(SyscallReason::HeterogeneousCpus)
                } else {
                    Ok(current_thread_id())
                }
            }
            (UserReads::Auto, _) => Err(SyscallReason::NotCallingThread),
        };
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
        let group_size = config.hardware_group_size.max(1);
        let mut groups: Vec<Group> = Vec::new();
        let mut software_group: Option<usize> = None;
        let mut hardware_group: Option<usize> = None;
        let mut available = Vec::new();
        let mut unavailable = Vec::new();
        let mut arm_events = None;
        for counter in requested {
            let event = counter.event();
            let Some((type_, config)) = event.type_and_config() else {
                unavailable.push((counter, UnavailableReason::NotOnThisArchitecture));
                continue;
            };
            if let PerfEvent::Arm(arm) = event {
                let implemented = arm_events.get_or_insert_with(|| sys.arm_common_events());
                if let Some(set) = implemented {
                    if arm.is_discoverable() && !set.contains(arm.code()) {
                        let reason = UnavailableReason::NotImplementedByCpu { event: arm.code() };
                        unavailable.push((counter, reason));
                        continue;
                    }
                }
            }
            let slot = if event.is_hardware() {
                match hardware_group {
                    Some(g) if groups[g].fds.len() < group_size => &mut hardware_group,
                    _ => {
                        hardware_group = None;
                        &mut hardware_group
                    }
                }
            } else {
                &mut software_group
            };
            let index = *slot.get_or_insert_with(|| {
                groups.push(Group::new(user));
                groups.len() - 1
            });
            let group = &mut groups[index];
            match opener.open(type_, config, event.is_hardware(), group.fds.first()) {
                Ok((fd, id, page)) => {
                    group.fds.push(fd);
                    group.members.push(Member {
                        counter,
                        prev_raw: 0,
                        value: 0,
                        path: ReadPath::Syscall(group.no_user_reason),
                    });
                    group.ids.push(id);
                    match page {
                        Some(Ok(page)) => {
                            if let Some(user) = &mut group.user {
                                user.pages.push(page);
                            }
                        }
                        // A group with a page missing is never read from user space.
                        Some(Err(reason)) => {
                            group.user = None;
                            group.no_user_reason = reason;
                        }
                        None => {}
                    }
                    available.push(counter);
                }
                Err(reason) => unavailable.push((counter, reason)),
            }
        }
        groups.retain(|g| !g.fds.is_empty());
        let kernel_excluded = opener.exclude_kernel;
        let last_denial = opener.last_denial.take();
        let paranoid = opener.paranoid.flatten();
        if available.is_empty() {
            // Denied by the kernel for every event it has (Arm events on another architecture, and
            // those the PMU does not implement, never reach it; events the kernel or CPU lacks, such
            // as hardware events on a VM, would not count even with permission).
            let all_denied = unavailable.iter().all(|(_, r)| {
                matches!(
                    r,
                    UnavailableReason::PermissionDenied { .. }
                        | UnavailableReason::NotOnThisArchitecture
                        | UnavailableReason::Unsupported { .. }
                        | UnavailableReason::NotImplementedByCpu { .. }
                )
            });
            return Err(match (all_denied, last_denial) {
                (true, Some(source)) if cpu >= 0 => CpuError::CpuWideDenied {
                    cpu: cpu as u32,
                    paranoid,
                    source,
                },
                (true, Some(source)) => CpuError::PermissionDenied { paranoid, source },
                _ => CpuError::NoCounterAvailable { unavailable },
            });
        }
        for group in &mut groups {
            group.buf = vec![0; record_len(group.members.len())];
            for member in &mut group.members {
                member.path = ReadPath::Syscall(group.no_user_reason);
            }
        }
        let mut profiler = CpuProfiler {
            sample: CpuSample::new(available.clone()),
            enabled: available.clone(),
            sys,
            groups,
            available,
            unavailable,
            totals: [0; CpuCounter::COUNT],
            running: false,
            started_once: false,
            kernel_excluded,
            pid,
            child,
        };
        // A counter is only listed as available once its group has been read successfully.
        for group in &mut profiler.groups {
            group.baseline(profiler.sys.as_ref())?;
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
        self.groups.iter().find_map(|g| {
            g.members
                .iter()
                .find(|m| m.counter == counter)
                .map(|m| m.path)
        })
    }

    /// Whether samples try user-space reads ([`UserReads::Auto`] for the calling thread, on a system
    /// where it is safe); whether each counter really is read that way is [`read_path`](Self::read_path).
    pub fn user_reads_enabled(&self) -> bool {
        self.groups.iter().any(|g| g.user.is_some())
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
        for group in &mut self.groups {
            let leader = group.fds[0].as_fd();
            if group.user.is_some() {
                // Reset only while the group is off the PMU: a reset of a counting event publishes
                // a page whose offset is off by a wrap until the counter is next programmed (see
                // pmu-regs' `tests/user_read.rs`); enabling it again programs the counter.
                ioctl(sys, leader, PerfIoctl::DisableGroup)?;
            }
            ioctl(sys, leader, PerfIoctl::ResetGroup)?;
            if !first_exec {
                ioctl(sys, leader, PerfIoctl::EnableGroup)?;
            }
            group.baseline(sys)?;
        }
        self.totals = [0; CpuCounter::COUNT];
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
    /// With [`UserReads::Auto`], a group whose counters the kernel lets this thread read from user
    /// space is read without a system call; each reading's [`path`](CpuReading::path) says how it
    /// was read.
    pub fn sample(&mut self) -> Result<&CpuSample, CpuError> {
        self.sample_groups(false)
    }

    /// Like [`sample`](Self::sample), but every group is read with `read()`, whatever the pages
    /// allow ([`SyscallReason::Forced`]): the kernel's own view, which the user-space path is
    /// checked against, in the same sequence of deltas and totals.
    pub fn sample_with_read(&mut self) -> Result<&CpuSample, CpuError> {
        self.sample_groups(true)
    }

    fn sample_groups(&mut self, force_read: bool) -> Result<&CpuSample, CpuError> {
        if !self.running {
            return Err(CpuError::NotRunning);
        }
        self.sample.begin();
        for index in 0..self.groups.len() {
            let Some(group) = self.groups.get_mut(index) else {
                break;
            };
            // A group without pages goes to `read()` without entering the user-space path.
            let miss = if force_read {
                UserMiss::group(SyscallReason::Forced)
            } else if group.user.is_none() {
                UserMiss::group(group.no_user_reason)
            } else {
                match group.sample_user(&mut self.totals, &mut self.sample) {
                    Ok(()) => continue,
                    Err(miss) => miss,
                }
            };
            self.sample_group_with_read(index, miss)?;
        }
        Ok(&self.sample)
    }

    /// Group `index` read with `read()`, for `miss`: out of line, so that the loop over the groups
    /// keeps its registers for the user-space path.
    #[inline(never)]
    fn sample_group_with_read(&mut self, index: usize, miss: UserMiss) -> Result<(), CpuError> {
        match self.groups.get_mut(index) {
            Some(group) => {
                group.sample_with_read(self.sys.as_ref(), &mut self.totals, &mut self.sample, miss)
            }
            None => Ok(()),
        }
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
        for group in &self.groups {
            ioctl(
                self.sys.as_ref(),
                group.fds[0].as_fd(),
                PerfIoctl::DisableGroup,
            )?;
        }
        Ok(())
    }

    /// Closes every descriptor, reporting the first error `close` gave.
    pub fn close(mut self) -> Result<(), CpuError> {
        self.close_all()
    }

    fn close_all(&mut self) -> Result<(), CpuError> {
        let mut first = Ok(());
        for group in std::mem::take(&mut self.groups) {
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
