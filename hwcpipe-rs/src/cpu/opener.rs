//! Opening a profiler's events: the attributes of each event (inherit, enable-on-exec, kernel exclusion,
//! user-space access), the retries the kernel's answers call for, and the plan of groups the counters are
//! packed into.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use perf_record::ReadFormat;
use rustix::io::Errno;

use super::config::KernelCounting;
use super::counter::{CpuCounter, PerfEvent};
use super::error::{CpuError, UnavailableReason};
use super::event_status::{EventStatus, PartStatus};
use super::group::{Group, Key, Reference};
use super::group_read::record_len;
use super::pmu_event::{EventUnavailable, PmuEvent};
use super::user_read::{ReadPath, SyscallReason, UserReads};
use crate::sys::perf_event_attr::{
    flag, PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_TYPE_SOFTWARE,
};
use crate::sys::perf_page::{current_thread_id, PerfPage};
use crate::sys::{PerfEventAttr, PerfIoctl, PerfSys};

/// The `read_format` of every event: one read of the leader returns the whole group, with the
/// enabled and running times for multiplex scaling and the event ids to check the order.
pub(super) const READ_FORMAT: ReadFormat = ReadFormat(
    PERF_FORMAT_GROUP
        | PERF_FORMAT_TOTAL_TIME_ENABLED
        | PERF_FORMAT_TOTAL_TIME_RUNNING
        | PERF_FORMAT_ID,
);

/// `perf_event_attr.config1` of the arm64 PMU driver: bit 1 asks for user-space access (`rdpmc`),
/// bit 0 for a 64-bit counter.
#[cfg(target_arch = "aarch64")]
pub(super) const CONFIG1_RDPMC: u64 = 1 << 1;
#[cfg(target_arch = "aarch64")]
pub(super) const CONFIG1_LONG: u64 = 1 << 0;

/// The `config1` values tried, in order, for a hardware event when user access is asked for: a
/// 64-bit counter with user access (the cycle counter, or a PMUv3p5 event counter), a 32-bit one
/// (cores before PMUv3p5 refuse 64-bit user access to event counters with `EOPNOTSUPP`), then
/// none (the event is then read with `read()`).
#[cfg(target_arch = "aarch64")]
pub(super) const USER_ACCESS_CONFIG1: &[u64] = &[CONFIG1_RDPMC | CONFIG1_LONG, CONFIG1_RDPMC, 0];
/// On other architectures user access needs nothing in the attribute (x86: the kernel's `rdpmc`
/// policy decides).
#[cfg(not(target_arch = "aarch64"))]
pub(super) const USER_ACCESS_CONFIG1: &[u64] = &[0];

/// An event just opened: its descriptor, its id, and its page when user-space reads are on (or why
/// it could not be mapped).
pub(super) type Opened = (OwnedFd, u64, Option<Result<PerfPage, SyscallReason>>);

/// State while opening the events.
pub(super) struct Opener<'s> {
    pub(super) sys: &'s dyn PerfSys,
    pub(super) pid: i32,
    /// The CPU of a CPU-wide event, −1 for a task's events on any CPU.
    pub(super) cpu: i32,
    pub(super) mode: KernelCounting,
    pub(super) exclude_kernel: bool,
    pub(super) enable_on_exec: bool,
    /// Whether `inherit` is set on a task's events (not when they are read from user space).
    pub(super) inherit: bool,
    /// Whether hardware events ask for user-space access and every event's page is mapped.
    pub(super) user_reads: bool,
    pub(super) last_denial: Option<io::Error>,
    pub(super) paranoid: Option<Option<i32>>,
}

impl Opener<'_> {
    pub(super) fn attr(
        &self,
        type_: u32,
        config: u64,
        leader: bool,
        pinned: bool,
    ) -> PerfEventAttr {
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
            if pinned {
                attr.flags |= flag::PINNED;
            }
        }
        if self.exclude_kernel {
            attr.flags |= flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV;
        }
        attr
    }

    pub(super) fn paranoid(&mut self) -> Option<i32> {
        let sys = self.sys;
        *self
            .paranoid
            .get_or_insert_with(|| sys.perf_event_paranoid().ok())
    }

    /// Opens one event with `config1`, falling back to user-space counting when allowed and needed.
    pub(super) fn open_once(
        &mut self,
        type_: u32,
        config: u64,
        config1: u64,
        leader: Option<&OwnedFd>,
        pinned: bool,
    ) -> io::Result<OwnedFd> {
        let attr = |opener: &Self| {
            let mut attr = opener.attr(type_, config, leader.is_none(), pinned);
            attr.config1 = config1;
            attr
        };
        let group = leader.map(|fd| fd.as_fd());
        let mut result = self
            .sys
            .perf_event_open(&attr(self), self.pid, self.cpu, group);
        if let Err(e) = &result {
            let denied = matches!(Errno::from_io_error(e), Some(Errno::ACCESS | Errno::PERM));
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
    /// user-space reads are on. `pinned` pins a group its leader starts.
    pub(super) fn open(
        &mut self,
        type_: u32,
        config: u64,
        hardware: bool,
        leader: Option<&OwnedFd>,
        pinned: bool,
    ) -> Result<Opened, UnavailableReason> {
        let config1s: &[u64] = if self.user_reads && hardware {
            USER_ACCESS_CONFIG1
        } else {
            &[0]
        };
        let mut result = Err(io::Error::from(Errno::INVAL));
        for (i, &config1) in config1s.iter().enumerate() {
            result = self.open_once(type_, config, config1, leader, pinned);
            let refused_access = matches!(
                result.as_ref().map_err(Errno::from_io_error),
                Err(Some(Errno::OPNOTSUPP | Errno::INVAL))
            );
            if !(refused_access && i + 1 < config1s.len()) {
                break;
            }
        }
        let fd = match result {
            Ok(fd) => fd,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                let paranoid =
                    if matches!(Errno::from_raw_os_error(errno), Errno::ACCESS | Errno::PERM) {
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
                    errno: e.raw_os_error().unwrap_or(Errno::NODEV.raw_os_error()),
                })
        });
        match self.sys.ioctl(fd.as_fd(), PerfIoctl::Id) {
            Ok(id) => Ok((fd, id, page)),
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(Errno::IO.raw_os_error());
                // The event is useless without its id; the close error adds nothing to that.
                let _ = self.sys.close(fd);
                Err(UnavailableReason::NoEventId { errno })
            }
        }
    }
}

/// The counters of a selection without repeats, in selection order; a selection of no counter and no
/// event (`events` of them) is [`CpuError::NothingSelected`].
pub(super) fn selection(
    counters: &[CpuCounter],
    events: usize,
) -> Result<Vec<CpuCounter>, CpuError> {
    let mut requested: Vec<CpuCounter> = Vec::with_capacity(counters.len());
    for &c in counters {
        if !requested.contains(&c) {
            requested.push(c);
        }
    }
    if requested.is_empty() && events == 0 {
        return Err(CpuError::NothingSelected);
    }
    Ok(requested)
}

/// Whether the counters of task `pid` may be read from user space: only the calling thread's own (`pid`
/// 0), and never on a big.LITTLE system (a thread could move to a CPU of the other PMU between the check
/// and the read). `Ok` holds the thread id that owns the pages, `Err` why the groups use `read()`.
pub(super) fn user_read_policy(
    reads: UserReads,
    pid: i32,
    sys: &dyn PerfSys,
) -> Result<i32, SyscallReason> {
    match (reads, pid == 0) {
        (UserReads::Off, _) => Err(SyscallReason::NotRequested),
        (UserReads::Auto, true) => {
            if cfg!(target_arch = "aarch64") && sys.arm_pmu_count() > 1 {
                Err(SyscallReason::HeterogeneousCpus)
            } else {
                Ok(current_thread_id())
            }
        }
        (UserReads::Auto, _) => Err(SyscallReason::NotCallingThread),
    }
}

/// What [`Opener::plan`] opened: the groups (none empty), each counter as available or with its reason,
/// and each event's status on each of its PMUs.
pub(super) struct GroupPlan {
    pub(super) groups: Vec<Group>,
    pub(super) available: Vec<CpuCounter>,
    pub(super) unavailable: Vec<(CpuCounter, UnavailableReason)>,
    pub(super) events: Vec<EventStatus>,
    /// The (event, PMU) of each counted part, by part.
    pub(super) part_of: Vec<(usize, usize)>,
    /// How many PMU references the groups may record (the highest PMU index plus one).
    pub(super) pmus: usize,
}

impl Opener<'_> {
    /// Opens `requested` and packs them: software events share one group, hardware events go in groups of
    /// at most `group_size` (a group larger than the PMU never counts). An Arm event the CPUs' PMU does not
    /// list is unavailable without asking the kernel; each refusal is kept with its reason. `user` is the
    /// user-space read policy ([`user_read_policy`]); a group with a page missing is never read from user
    /// space.
    pub(super) fn plan(
        &mut self,
        requested: &[CpuCounter],
        events: &[PmuEvent],
        group_size: usize,
        user: Result<i32, SyscallReason>,
    ) -> GroupPlan {
        let mut groups: Vec<Group> = Vec::new();
        let mut software_group: Option<usize> = None;
        let mut hardware_group: Option<usize> = None;
        let mut available = Vec::new();
        let mut unavailable = Vec::new();
        let mut arm_events = None;
        for &counter in requested {
            let event = counter.event();
            let Some((type_, config)) = event.type_and_config() else {
                unavailable.push((counter, UnavailableReason::NotOnThisArchitecture));
                continue;
            };
            if let PerfEvent::Arm(arm) = event {
                let sys = self.sys;
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
            match self.open(type_, config, event.is_hardware(), group.fds.first(), false) {
                Ok(opened) => {
                    group.add(Key::Counter(counter), opened);
                    available.push(counter);
                }
                Err(reason) => unavailable.push((counter, reason)),
            }
        }
        let (events, part_of, pmus) = self.plan_events(events, group_size, user, &mut groups);
        groups.retain(|g| !g.fds.is_empty());
        for group in &mut groups {
            group.buf = vec![0; record_len(group.members.len())];
            for member in &mut group.members {
                member.path = ReadPath::Syscall(group.no_user_reason);
            }
        }
        GroupPlan {
            groups,
            available,
            unavailable,
            events,
            part_of,
            pmus,
        }
    }

    /// Opens every event of `events` on each PMU that has it, in groups of that PMU (at most its number of
    /// counters when Arm's list gives it, else `group_size`). A task's events on a system with several
    /// core types are scaled against the time on each PMU, which the PMU's first group, opened pinned,
    /// gives ([`Reference`]). Returns each event's status, the (event, PMU) of each counted part, and how
    /// many PMU references the groups use.
    fn plan_events(
        &mut self,
        events: &[PmuEvent],
        group_size: usize,
        user: Result<i32, SyscallReason>,
        groups: &mut Vec<Group>,
    ) -> (Vec<EventStatus>, Vec<(usize, usize)>, usize) {
        let pinned_mode = self.cpu < 0 && self.sys.arm_pmu_count() > 1;
        let cpu = u32::try_from(self.cpu).ok();
        // How many events each PMU is to count: a pinned group holds them all when they fit the PMU's
        // counters, else only one, so that the others share the remaining counters (a pinned group of the
        // PMU's size would keep every other group off it).
        let mut per_pmu: Vec<usize> = Vec::new();
        for placement in events.iter().flat_map(|e| &e.placements) {
            if placement.status.is_ok() {
                if per_pmu.len() <= placement.pmu {
                    per_pmu.resize(placement.pmu + 1, 0);
                }
                per_pmu[placement.pmu] += 1;
            }
        }
        // The group each PMU's events are being added to.
        let mut current: Vec<(usize, usize)> = Vec::new();
        let mut part_of = Vec::new();
        let mut statuses = Vec::with_capacity(events.len());
        let mut pmus = 0;
        for (e, event) in events.iter().enumerate() {
            let mut parts = Vec::with_capacity(event.placements.len());
            for placement in &event.placements {
                let code = match &placement.status {
                    Err(why) => {
                        parts.push(PartStatus::Unavailable(EventUnavailable::NotOnPmu(
                            why.clone(),
                        )));
                        continue;
                    }
                    Ok(_) if cpu.is_some_and(|cpu| !placement.cpus.contains(&cpu)) => {
                        parts.push(PartStatus::OtherCpus);
                        continue;
                    }
                    Ok((code, _)) => *code,
                };
                let pmu = placement.pmu;
                pmus = pmus.max(pmu + 1);
                let size = placement.counters.map_or(group_size, usize::from).max(1);
                let found = current.iter().position(|&(p, _)| p == pmu);
                let fits = per_pmu.get(pmu).is_some_and(|&n| n <= size);
                // Without room for all: the pinned group holds one, the others share what it leaves.
                let size_of = |group: &Group| match group.reference {
                    Reference::Pinned(_) if !fits => 1,
                    Reference::OnPmu(_) => size.saturating_sub(1).max(1),
                    _ => size,
                };
                let index = match found.map(|i| current[i].1) {
                    Some(g) if groups[g].fds.len() < size_of(&groups[g]) => g,
                    previous => {
                        let mut group = Group::new(user);
                        group.reference = match (pinned_mode, previous) {
                            (false, _) => Reference::Enabled,
                            (true, None) => Reference::Pinned(pmu),
                            (true, Some(_)) => Reference::OnPmu(pmu),
                        };
                        groups.push(group);
                        let g = groups.len() - 1;
                        match found {
                            Some(i) => current[i].1 = g,
                            None => current.push((pmu, g)),
                        }
                        g
                    }
                };
                let group = &mut groups[index];
                let pinned = matches!(group.reference, Reference::Pinned(_));
                let opened = self.open(
                    placement.perf_type,
                    u64::from(code),
                    true,
                    group.fds.first(),
                    pinned,
                );
                parts.push(match opened {
                    Ok(opened) => {
                        let part = part_of.len();
                        group.add(Key::Part(part as u32), opened);
                        part_of.push((e, pmu));
                        PartStatus::Counted { part }
                    }
                    Err(reason) => PartStatus::Unavailable(EventUnavailable::Refused {
                        pmu: placement.pmu_name.clone(),
                        reason,
                    }),
                });
            }
            statuses.push(EventStatus {
                event: event.clone(),
                parts,
            });
        }
        (statuses, part_of, pmus)
    }
}

/// The error of a profiler none of whose counters opened: a permission refusal (CPU-wide, or of a task)
/// when the kernel denied every event it has — Arm events on another architecture, and those the PMU does
/// not implement, never reach it; events the kernel or CPU lacks, such as hardware events on a VM, would
/// not count even with permission — else every counter with its reason.
pub(super) fn open_failure(
    unavailable: Vec<(CpuCounter, UnavailableReason)>,
    events: Vec<(String, EventUnavailable)>,
    last_denial: Option<io::Error>,
    paranoid: Option<i32>,
    cpu: i32,
) -> CpuError {
    let denied = |r: &UnavailableReason| {
        matches!(
            r,
            UnavailableReason::PermissionDenied { .. }
                | UnavailableReason::NotOnThisArchitecture
                | UnavailableReason::Unsupported { .. }
                | UnavailableReason::NotImplementedByCpu { .. }
        )
    };
    let all_denied = unavailable.iter().all(|(_, r)| denied(r))
        && events.iter().all(|(_, r)| match r {
            EventUnavailable::Refused { reason, .. } => denied(reason),
            EventUnavailable::NoArmPmu
            | EventUnavailable::NotOnPmu(_)
            | EventUnavailable::NotOnThisCpu => true,
        });
    match (all_denied, last_denial, u32::try_from(cpu)) {
        (true, Some(source), Ok(cpu)) => CpuError::CpuWideDenied {
            cpu,
            paranoid,
            source,
        },
        (true, Some(source), Err(_)) => CpuError::PermissionDenied { paranoid, source },
        _ => CpuError::NoCounterAvailable {
            unavailable,
            events,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::sim::FakePerf;
    use crate::sys::perf_event_attr::{PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE};

    /// The simulated kernel at `perf_event_paranoid` 2, opening every event.
    fn fake_kernel() -> FakePerf {
        FakePerf::new(2)
    }

    fn opener(sys: &dyn PerfSys) -> Opener<'_> {
        Opener {
            sys,
            pid: 0,
            cpu: -1,
            mode: KernelCounting::Include,
            exclude_kernel: false,
            enable_on_exec: false,
            inherit: true,
            user_reads: false,
            last_denial: None,
            paranoid: None,
        }
    }

    #[test]
    fn a_selection_drops_repeats_and_may_not_be_empty() {
        use CpuCounter::*;
        assert_eq!(
            selection(&[TaskClock, Cycles, TaskClock, Cycles], 0).unwrap(),
            [TaskClock, Cycles]
        );
        assert!(matches!(selection(&[], 0), Err(CpuError::NothingSelected)));
        assert!(selection(&[], 1).unwrap().is_empty(), "events only");
    }

    #[test]
    fn user_reads_are_for_the_calling_threads_own_counters_only() {
        let kernel = fake_kernel();
        assert_eq!(
            user_read_policy(UserReads::Off, 0, &kernel),
            Err(SyscallReason::NotRequested)
        );
        assert_eq!(
            user_read_policy(UserReads::Auto, 1234, &kernel),
            Err(SyscallReason::NotCallingThread)
        );
        assert_eq!(
            user_read_policy(UserReads::Auto, 0, &kernel),
            Ok(current_thread_id())
        );
        let big_little = fake_kernel();
        big_little.set_arm_pmu_count(2);
        let expected = if cfg!(target_arch = "aarch64") {
            Err(SyscallReason::HeterogeneousCpus)
        } else {
            Ok(current_thread_id())
        };
        assert_eq!(user_read_policy(UserReads::Auto, 0, &big_little), expected);
    }

    #[test]
    fn software_events_share_a_group_and_hardware_events_fill_groups_of_the_pmus_size() {
        use CpuCounter::*;
        let kernel = fake_kernel();
        let mut opener = opener(&kernel);
        let requested = [
            Cycles,
            TaskClock,
            Instructions,
            CacheReferences,
            ContextSwitches,
            CacheMisses,
            BranchInstructions,
            BranchMisses,
        ];
        let plan = opener.plan(&requested, &[], 2, Err(SyscallReason::NotRequested));
        let groups: Vec<Vec<CpuCounter>> = plan
            .groups
            .iter()
            .map(|g| g.members.iter().map(|m| m.counter).collect())
            .collect();
        assert_eq!(
            groups,
            [
                vec![Cycles, Instructions],
                vec![TaskClock, ContextSwitches],
                vec![CacheReferences, CacheMisses],
                vec![BranchInstructions, BranchMisses],
            ]
        );
        assert_eq!(plan.available, requested);
        assert!(plan.unavailable.is_empty());
        for group in &plan.groups {
            assert_eq!(group.buf.len(), record_len(group.members.len()));
            assert_eq!(group.ids.len(), group.fds.len());
        }
    }

    #[test]
    fn a_refused_event_is_unavailable_with_its_reason_and_the_rest_open() {
        use CpuCounter::*;
        let kernel = fake_kernel();
        kernel.faults(|f| {
            f.open_errno
                .insert((PERF_TYPE_HARDWARE, 1), Errno::NOENT.raw_os_error());
            f.open_errno
                .insert((PERF_TYPE_SOFTWARE, 1), Errno::NOENT.raw_os_error());
        });
        let mut opener = opener(&kernel);
        // Hardware config 1 is Instructions, software config 1 is TaskClock: both refused.
        let plan = opener.plan(
            &[Cycles, Instructions, TaskClock, CpuClock],
            &[],
            6,
            Err(SyscallReason::NotRequested),
        );
        assert_eq!(plan.available, [Cycles, CpuClock]);
        let refused: Vec<CpuCounter> = plan.unavailable.iter().map(|(c, _)| *c).collect();
        assert_eq!(refused, [Instructions, TaskClock]);
        assert!(plan.groups.iter().all(|g| !g.fds.is_empty()));
    }

    #[test]
    fn a_profiler_with_nothing_open_says_whether_permission_was_the_cause() {
        let denied = || io::Error::from(Errno::ACCESS);
        let permission = UnavailableReason::from_open_errno(Errno::ACCESS.raw_os_error(), Some(3));
        let rejected = UnavailableReason::from_open_errno(Errno::INVAL.raw_os_error(), None);
        assert!(matches!(
            open_failure(
                vec![(CpuCounter::Cycles, permission)],
                Vec::new(),
                Some(denied()),
                Some(3),
                2
            ),
            CpuError::CpuWideDenied {
                cpu: 2,
                paranoid: Some(3),
                ..
            }
        ));
        assert!(matches!(
            open_failure(
                vec![(CpuCounter::Cycles, permission)],
                Vec::new(),
                Some(denied()),
                Some(3),
                -1
            ),
            CpuError::PermissionDenied {
                paranoid: Some(3),
                ..
            }
        ));
        // Something other than permission kept a counter closed: every reason is reported.
        assert!(matches!(
            open_failure(
                vec![
                    (CpuCounter::Cycles, permission),
                    (CpuCounter::TaskClock, rejected)
                ],
                Vec::new(),
                Some(denied()),
                Some(3),
                -1
            ),
            CpuError::NoCounterAvailable { unavailable, .. } if unavailable.len() == 2
        ));
    }
}
